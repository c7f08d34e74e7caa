/* SPDX-License-Identifier: BSD-2-Clause
 * A NIC world shared by several processes (shared_world.h).
 *
 * Order matters: a member attaches to the coordinator before it maps the
 * segment, so that the coordinator's clean-up of a stale segment (at its
 * start, under its lock) can never remove a live one.
 */
#include "shared_world.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <arena/arena.h>
#include <fabsimd/fabsimd.h>
#include <netmodel/nm_code.h>

#define SHARED_MAGIC 0x66736d77726c6432ull /* "fsmwrld2" */
/* Address space the segment reserves; tmpfs pages are only used when
 * touched. FI_SIM_SHARED_MEMORY_MB overrides it. */
#define SHARED_DEFAULT_MB 1024
#define SHARED_MIN_MB 16
#define SHARED_MAX_MB (1024 * 1024) /* the arena's limit, 1 TiB */
/* How long an attaching process waits for the creator to build the
 * world. */
#define SHARED_BUILD_WAIT_MS 5000

/* The root of the segment. */
struct shared_root {
	uint64_t          magic;
	struct nic_world *world;
	char              preset[NM_CONFIG_NAME_MAX];
	uint64_t          seed;
	nm_code           library_check; /* the same library in every member */
};

struct shared_world {
	struct fabsimd_session *session;
	fs_arena               *arena;
	uint32_t                node;
	const char             *node_source;
	char                    fabric[FABSIMD_FABRIC_MAX + 1];
};

static int say(char *buf, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (buf && len) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Notes add up: a process may be told several things at once. */
static void note_more(char *buf, size_t len, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!buf || !len)
		return;
	used = strlen(buf);
	if (used && used + 2 < len) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

const char *shared_world_fabric(void)
{
	const char *name = getenv("FI_SIM_FABRIC");

	return name && *name ? name : NULL;
}

/* The address space to reserve; 0 (with err said) for a value that is not
 * a number of MiB in range. */
static size_t shared_capacity(char *err, size_t errlen)
{
	const char *mb = getenv("FI_SIM_SHARED_MEMORY_MB");
	char *end;
	long v;

	if (!mb || !*mb)
		return (size_t)SHARED_DEFAULT_MB << 20;
	errno = 0;
	v = strtol(mb, &end, 10);
	if (errno || *end || v < SHARED_MIN_MB || v > SHARED_MAX_MB) {
		say(err, errlen, -EINVAL, "FI_SIM_SHARED_MEMORY_MB=\"%s\": "
		    "must be a number of MiB, %d to %d", mb, SHARED_MIN_MB,
		    SHARED_MAX_MB);
		return 0;
	}
	return (size_t)v << 20;
}

int shared_world_check_settings(char *err, size_t errlen)
{
	return shared_capacity(err, errlen) ? 0 : -EINVAL;
}

/* Real time: under `fabsim run --virtual-clock` the program's nanosleep
 * is virtual time (tools/vclock), and this waits for another process. */
static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	syscall(SYS_nanosleep, &ts, NULL);
}

/* Differs when two members run different builds of the library: their
 * code numbers (nm_code) would not agree. */
static nm_code library_check(void)
{
	return NM_CODE(shared_world_attach);
}

/* How many processes the fabric should wait for before its clock starts:
 * FI_SIM_NODES, else the launcher's job size; 0 when nothing says. */
static uint32_t expected_processes(char *note, size_t notelen)
{
	static const char *const vars[] = {
		"FI_SIM_NODES", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
		"SLURM_NTASKS",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		unsigned long n;

		if (!v || !*v)
			continue;
		n = strtoul(v, &end, 10);
		if (*end || n > FABSIMD_MEMBERS_MAX) {
			note_more(note, notelen,
			    "%s=%s is not a process count (1 to %d); ignored",
			    vars[i], v, FABSIMD_MEMBERS_MAX);
			continue;
		}
		return (uint32_t)n;
	}
	return 0;
}

static int build_world(struct shared_world *sw, const nm_config *cfg,
		       const struct nic_transport_params *transport,
		       const struct nic_record_params *record,
		       struct nic_world **world, char *err, size_t errlen)
{
	struct shared_root *root;
	nm_error e;
	int ret;

	root = fs_arena_calloc(sw->arena, 1, sizeof(*root));
	if (!root)
		return say(err, errlen, -ENOMEM, "out of shared memory");
	ret = nic_world_create_in(sw->arena, cfg, transport, world, &e);
	if (ret) {
		fs_arena_free(sw->arena, root);
		return say(err, errlen, ret, "cannot build the network: %s",
			   e.msg);
	}
	if (record && record->path) {
		/* The creator starts the recording; every member writes the
		 * packets it simulates into the same files. */
		ret = nic_world_record(*world, record, &e);
		if (ret) {
			nic_world_destroy(*world);
			fs_arena_free(sw->arena, root);
			return say(err, errlen, ret, "FI_SIM_PCAP=%s: %s",
				   record->path, e.msg);
		}
	}
	root->world = *world;
	snprintf(root->preset, sizeof(root->preset), "%s", cfg->preset);
	root->seed = cfg->seed;
	root->library_check = library_check();
	root->magic = SHARED_MAGIC;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	fs_arena_set_root(sw->arena, root);
	return 0;
}

/* The process asked to record where the fabric does not: it is told. The
 * recorder is read under the world's lock (the last member to leave stops
 * it). */
static void note_recording(struct nic_world *world,
			   const struct nic_record_params *record, char *note,
			   size_t notelen)
{
	char where[300];
	bool recording, same;

	nic_world_lock(world);
	recording = nic_world_recording(world);
	same = recording && nic_world_records_as(world, record);
	if (recording)
		nic_world_record_where(world, where, sizeof(where));
	nic_world_unlock(world);
	if (!recording)
		note_more(note, notelen,
		    "FI_SIM_PCAP=%s: the fabric was started without recording "
		    "(the first process decides); nothing is recorded",
		    record->path);
	else if (!same)
		note_more(note, notelen,
		    "FI_SIM_PCAP=%s%s: the fabric records the whole network "
		    "to %s, as the process that created it asked; this "
		    "process's traffic goes there",
		    record->path, record->per_node ? " (per node)" : "",
		    where);
}

static int find_world(struct shared_world *sw, const nm_config *cfg,
		      const struct nic_record_params *record,
		      struct nic_world **world, char *err, size_t errlen,
		      char *note, size_t notelen)
{
	struct shared_root *root = NULL;

	for (long waited = 0; waited < SHARED_BUILD_WAIT_MS; waited += 10) {
		root = fs_arena_root(sw->arena);
		if (root)
			break;
		sleep_ms(10);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!root || root->magic != SHARED_MAGIC)
		return say(err, errlen, -EIO,
			   "its creator never finished building it (a crashed "
			   "run? `fabsim fabric stop %s` clears it)",
			   sw->fabric);
	if (root->library_check != library_check())
		return say(err, errlen, -EINVAL,
			   "its members run different builds of fabsim's "
			   "libraries; use the same one everywhere");
	if (strcmp(root->preset, cfg->preset) || root->seed != cfg->seed)
		note_more(note, notelen,
		    "it runs preset %s, seed %llu (set by the process that "
		    "created it); this process asked for %s, seed %llu",
		    root->preset, (unsigned long long)root->seed, cfg->preset,
		    (unsigned long long)cfg->seed);
	/* fi_getinfo told this process its own MTU as a datagram's
	 * max_msg_size; the world sends with its creator's. */
	uint32_t mtu = nic_world_mtu(root->world);

	if (mtu != cfg->link.mtu_bytes)
		note_more(note, notelen,
		    "its links' MTU is %u bytes (set by the process that "
		    "created it); this process asked for %u: datagrams of "
		    "more than %u bytes are refused",
		    mtu, (unsigned)cfg->link.mtu_bytes, mtu);
	if (record && record->path)
		note_recording(root->world, record, note, notelen);
	*world = root->world;
	return 0;
}

/* Where the segment's name came from, for whoever finds it left behind
 * (fabsimd removes a crashed run's memory once that directory is gone).
 * Without it (a directory too long to say) it is only never removed so. */
static void label_segment(fs_arena *arena)
{
	char dir[FS_ARENA_LABEL_MAX];

	if (fabsimd_segment_origin(dir, sizeof(dir)) > 0)
		fs_arena_set_label(arena, dir);
}

static int map_segment(struct shared_world *sw, const nm_config *cfg,
		       const struct nic_transport_params *transport,
		       const struct nic_record_params *record,
		       struct nic_world **world, char *err, size_t errlen,
		       char *note, size_t notelen)
{
	char name[128];
	int ret;

	ret = fabsimd_segment_name(sw->fabric, name, sizeof(name));
	if (ret < 0)
		return say(err, errlen, ret, "bad fabric name");
	for (int tries = 0; tries < 3; tries++) {
		ret = fs_arena_attach(name, &sw->arena, err, errlen);
		if (ret == 0) {
			ret = find_world(sw, cfg, record, world, err, errlen,
					 note, notelen);
			if (ret)
				fs_arena_detach(sw->arena);
			return ret;
		}
		if (ret != -ENOENT)
			return ret;
		size_t capacity = shared_capacity(err, errlen);

		if (!capacity)
			return -EINVAL;
		ret = fs_arena_create(name, capacity, &sw->arena, err, errlen);
		if (ret == 0) {
			label_segment(sw->arena);
			ret = build_world(sw, cfg, transport, record, world,
					  err, errlen);
			if (ret)
				fs_arena_detach(sw->arena);
			return ret;
		}
		if (ret != -EEXIST)
			return ret;
		/* Another member created it meanwhile: attach to theirs. */
	}
	return ret;
}

/* The other processes of the fabric read and write this one's memory
 * (process_vm_readv/writev: packets built from its buffers, one-sided
 * operations on its regions) and look at its threads in /proc, which the
 * kernel allows only to a process that may ptrace it. Where Yama restricts
 * ptrace to descendants (ptrace_scope 1), say any process of the user may,
 * as MPI libraries do for the same copies; elsewhere the call fails and
 * changes nothing. */
static void allow_peers(void)
{
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

/* The fabric this process is attached to, for a look at its exit. */
static struct shared_world *attached;

/* A process that ends without leaving the fabric (the sim provider leaves
 * it so, as a death its peers see): if the coordinator was killed and this
 * process is the last on the fabric, nobody else would remove the fabric's
 * memory. */
static void last_one_out_at_exit(void)
{
	struct shared_world *sw = attached;

	if (sw && fabsimd_session_lost(sw->session))
		fabsimd_last_one_out(sw->fabric);
}

static void look_at_exit(void)
{
	atexit(last_one_out_at_exit);
}

static void watch_exit(struct shared_world *sw)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	attached = sw;
	pthread_once(&once, look_at_exit);
}

/* A job larger than the star the preset or config describes (40 ranks, 16
 * hosts): the star grows to one host per process of the job, each link as
 * the others, unless FI_SIM_TOPOLOGY_HOSTS fixed its size. A star's figures
 * do not depend on its size; every process of the job computes the same. */
static void fit_star_to_job(nm_config *cfg, uint32_t job)
{
	if (cfg->topology.kind == NM_TOPO_STAR && job > cfg->topology.hosts &&
	    !getenv("FI_SIM_TOPOLOGY_HOSTS"))
		cfg->topology.hosts = job;
}

/* A coordinator this process started on a fabric whose processes run on
 * (the one before was killed) learns of them: it lists them and stays
 * while they run. */
static void introduce_earlier_members(struct shared_world *sw,
				      struct nic_world *world)
{
	struct nic_member members[FABSIMD_MEMBERS_MAX];
	size_t n;

	if (!fabsimd_session_started(sw->session))
		return;
	nic_world_lock(world);
	n = nic_world_members(world, members, FABSIMD_MEMBERS_MAX);
	nic_world_unlock(world);
	if (n > FABSIMD_MEMBERS_MAX)
		n = FABSIMD_MEMBERS_MAX;
	for (size_t i = 0; i < n; i++)
		fabsimd_adopt(sw->session, members[i].host, members[i].pid);
}

int shared_world_attach(const char *fabric, nm_config *cfg,
			const struct nic_transport_params *transport,
			const struct nic_record_params *record,
			struct shared_world **out, struct nic_world **world,
			char *err, size_t errlen, char *note, size_t notelen)
{
	struct fabsimd_member_info me = { 0 };
	struct shared_world *sw;
	uint32_t job;
	int ret;

	if (note && notelen)
		note[0] = '\0';
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return say(err, errlen, -ENOMEM, "out of memory");
	snprintf(sw->fabric, sizeof(sw->fabric), "%s", fabric);
	ret = fabsimd_node_identity(&sw->node, &sw->node_source, err, errlen);
	if (ret == -ENOENT) {
		ret = say(err, errlen, -EINVAL,
			  "this process has no node identity: set FI_SIM_NODE "
			  "(`fabsim run --node N`), or start it with a "
			  "launcher that sets a rank");
		goto fail;
	} else if (ret) {
		goto fail;
	}
	job = expected_processes(note, notelen);
	fit_star_to_job(cfg, job);
	if (sw->node >= cfg->topology.hosts) {
		ret = say(err, errlen, -EINVAL,
			  "node %u (from %s) is outside the topology's %u hosts "
			  "(FI_SIM_TOPOLOGY_HOSTS)",
			  sw->node, sw->node_source, cfg->topology.hosts);
		goto fail;
	}
	me.node = sw->node;
	allow_peers();
	ret = fabsimd_attach(fabric, &me, &sw->session, err, errlen);
	if (ret)
		goto fail;
	ret = map_segment(sw, cfg, transport, record, world, err, errlen,
			  note, notelen);
	if (!ret && sw->node >= nic_world_host_count(*world)) {
		/* Its creator chose a smaller star than this process would. */
		ret = say(err, errlen, -EINVAL,
			  "node %u (from %s) is outside the %u hosts of fabric "
			  "%s, as the process that created it built it (this "
			  "process's job: %u processes); start every process "
			  "of a job with the same FI_SIM_NODES or under one "
			  "launcher", sw->node, sw->node_source,
			  nic_world_host_count(*world), sw->fabric, job);
		fs_arena_detach(sw->arena);
	}
	if (ret) {
		fabsimd_detach(sw->session);
		goto fail;
	}
	nic_world_lock(*world);
	nic_world_expect_processes(*world, job);
	/* The others now wait for this process when it runs. */
	nic_sched_enter(*world);
	nic_world_unlock(*world);
	introduce_earlier_members(sw, *world);
	watch_exit(sw);
	*out = sw;
	return 0;
fail:
	free(sw);
	return ret;
}

uint32_t shared_world_node(const struct shared_world *sw)
{
	return sw->node;
}

const char *shared_world_node_source(const struct shared_world *sw)
{
	return sw->node_source;
}

int shared_world_coordinator(const struct shared_world *sw)
{
	return (int)fabsimd_session_coordinator(sw->session);
}

static int leave(struct shared_world *sw, struct nic_world *world,
		 bool exiting, char *err, size_t errlen)
{
	/* Before our goodbye, which ends a coordinator that runs when we are
	 * its last member: after it, none answers either way. */
	bool orphaned = fabsimd_session_lost(sw->session);
	bool last;
	nm_error e;
	int ret = 0;

	nic_world_lock(world);
	last = !nic_world_others_present(world);
	if (!last)
		nic_world_record_leave(world);
	else if ((ret = nic_world_record_stop(world, &e)))
		say(err, errlen, ret, "%s", e.msg);
	nic_world_leave(world);
	if (exiting)
		nic_world_depart(world);
	nic_world_unlock(world);
	/* The world stays for the other members; the coordinator removes the
	 * segment when the last one leaves, or the last one itself when the
	 * coordinator was killed and none replaced it. */
	if (!exiting)
		fs_arena_detach(sw->arena);
	fabsimd_detach(sw->session);
	if (last && orphaned)
		fabsimd_last_one_out(sw->fabric);
	if (attached == sw)
		attached = NULL;
	free(sw);
	return ret;
}

int shared_world_detach(struct shared_world *sw, struct nic_world *world,
			char *err, size_t errlen)
{
	return sw ? leave(sw, world, false, err, errlen) : 0;
}

int shared_world_depart(struct shared_world *sw, struct nic_world *world,
			char *err, size_t errlen)
{
	return sw ? leave(sw, world, true, err, errlen) : 0;
}
