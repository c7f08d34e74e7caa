/* SPDX-License-Identifier: BSD-2-Clause
 * A world shared with other processes (MULTIPROCESS.md).
 *
 * With FI_SIM_FABRIC=NAME, every process of the user that names the same
 * fabric runs on one simulated network: the process attaches to the
 * fabric's coordinator (tools/fabsimd, started on demand) as the node its
 * environment names, then maps the fabric's shared-memory arena — creating
 * it and the world inside it if it is the first — at the address every
 * member uses. The world's state lives there; each process keeps its own
 * libfabric objects and is called back through the NIC's owner calls
 * (nic_proc.c).
 *
 * Order matters: a member attaches to the coordinator before it maps the
 * segment, so that the coordinator's clean-up of a stale segment (at its
 * start, under its lock) can never remove a live one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arena/arena.h>
#include <fabsimd/fabsimd.h>
#include <netmodel/nm_code.h>

#include "sim.h"

#define SHARED_MAGIC 0x66736d77726c6431ull /* "fsmwrld1" */
/* Address space the segment reserves; tmpfs pages are only used when
 * touched. FI_SIM_SHARED_MEMORY_MB overrides it. */
#define SHARED_DEFAULT_MB 1024
/* How long an attaching process waits for the creator to build the
 * world. */
#define SHARED_BUILD_WAIT_MS 5000

/* The root of the segment. */
struct shared_root {
	uint64_t          magic;
	struct nic_world *world;
	char              preset[NM_CONFIG_NAME_MAX];
	uint64_t          seed;
	uint32_t          hosts;
	nm_code           anchor_check; /* the same library in every member */
};

struct sim_shared {
	struct fabsimd_session *session;
	fs_arena               *arena;
	uint32_t                node;
	char                    fabric[FABSIMD_FABRIC_MAX + 1];
};

const char *sim_shared_fabric_name(void)
{
	const char *name = getenv("FI_SIM_FABRIC");

	return name && *name ? name : NULL;
}

static size_t shared_capacity(void)
{
	const char *mb = getenv("FI_SIM_SHARED_MEMORY_MB");
	long v = mb && *mb ? strtol(mb, NULL, 10) : SHARED_DEFAULT_MB;

	if (v < 16)
		v = 16;
	return (size_t)v << 20;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* A number that differs when two members run different builds of this
 * library (their code numbers would not agree). */
static nm_code library_check(void)
{
	return NM_CODE(sim_shared_attach);
}

static int build_world(struct sim_shared *sh, const nm_config *cfg,
		       const struct nic_transport_params *transport,
		       const struct sim_record_config *record,
		       struct nic_world **world)
{
	struct shared_root *root;
	nm_error err;
	int ret;

	root = fs_arena_calloc(sh->arena, 1, sizeof(*root));
	if (!root)
		return -FI_ENOMEM;
	ret = nic_world_create_in(sh->arena, cfg, transport, world, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: cannot build the network: %s\n",
			sh->fabric, err.msg);
		fs_arena_free(sh->arena, root);
		return sim_errno(ret);
	}
	if (record->path) {
		/* The creator starts the recording; every member writes the
		 * packets it simulates into the same files. */
		struct nic_record_params rp = {
			.path = record->path,
			.per_node = record->per_node,
			.snaplen = record->snaplen,
			.log_path = record->log_path,
		};

		ret = nic_world_record(*world, &rp, &err);
		if (ret) {
			FI_WARN(&sim_prov, FI_LOG_FABRIC, "FI_SIM_PCAP=%s: %s\n",
				record->path, err.msg);
			nic_world_destroy(*world);
			fs_arena_free(sh->arena, root);
			return sim_errno(ret);
		}
	}
	root->world = *world;
	snprintf(root->preset, sizeof(root->preset), "%s", cfg->preset);
	root->seed = cfg->seed;
	root->hosts = cfg->topology.hosts;
	root->anchor_check = library_check();
	root->magic = SHARED_MAGIC;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	fs_arena_set_root(sh->arena, root);
	return 0;
}

static int find_world(struct sim_shared *sh, const nm_config *cfg,
		      struct nic_world **world)
{
	struct shared_root *root = NULL;

	for (long waited = 0; waited < SHARED_BUILD_WAIT_MS; waited += 10) {
		root = fs_arena_root(sh->arena);
		if (root)
			break;
		sleep_ms(10);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!root || root->magic != SHARED_MAGIC) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: its creator never finished building "
			"it (a crashed run? `fabsim fabric stop %s` clears it)\n",
			sh->fabric, sh->fabric);
		return -FI_EIO;
	}
	if (root->anchor_check != library_check()) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: its members run different builds of "
			"libfabric.so.1; use the same one everywhere\n",
			sh->fabric);
		return -FI_EINVAL;
	}
	if (strcmp(root->preset, cfg->preset) || root->seed != cfg->seed)
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s runs preset %s, seed %llu (set by the "
			"process that created it); this process asked for %s, "
			"seed %llu\n",
			sh->fabric, root->preset, (unsigned long long)root->seed,
			cfg->preset, (unsigned long long)cfg->seed);
	*world = root->world;
	return 0;
}

static int map_segment(struct sim_shared *sh, const nm_config *cfg,
		       const struct nic_transport_params *transport,
		       const struct sim_record_config *record,
		       struct nic_world **world)
{
	char name[128], err[256];
	int ret;

	ret = fabsimd_segment_name(sh->fabric, name, sizeof(name));
	if (ret < 0)
		return -FI_EINVAL;
	for (int tries = 0; tries < 3; tries++) {
		ret = fs_arena_attach(name, &sh->arena, err, sizeof(err));
		if (ret == 0) {
			ret = find_world(sh, cfg, world);
			if (!ret && record->path &&
			    !nic_world_record_error(*world, NULL) &&
			    !nic_world_recording(*world))
				FI_WARN(&sim_prov, FI_LOG_FABRIC,
					"FI_SIM_PCAP=%s: shared fabric %s was "
					"started without recording (the first "
					"process decides); nothing is recorded\n",
					record->path, sh->fabric);
			return ret;
		}
		if (ret != -ENOENT)
			break;
		ret = fs_arena_create(name, shared_capacity(), &sh->arena, err,
				      sizeof(err));
		if (ret == 0) {
			ret = build_world(sh, cfg, transport, record, world);
			if (ret)
				fs_arena_detach(sh->arena);
			return ret;
		}
		if (ret != -EEXIST)
			break;
		/* Another member created it meanwhile: attach to theirs. */
	}
	FI_WARN(&sim_prov, FI_LOG_FABRIC, "shared fabric %s: %s\n", sh->fabric,
		err);
	return sim_errno(ret);
}

/* How many processes the fabric should wait for before its clock starts:
 * FI_SIM_NODES, else the launcher's job size; 0 when nothing says. */
static uint32_t expected_processes(void)
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
			FI_WARN(&sim_prov, FI_LOG_FABRIC,
				"%s=%s is not a process count (1 to %d); "
				"ignored\n", vars[i], v, FABSIMD_MEMBERS_MAX);
			continue;
		}
		return (uint32_t)n;
	}
	return 0;
}

int sim_shared_attach(const char *fabric, const nm_config *cfg,
		      const struct nic_transport_params *transport,
		      const struct sim_record_config *record,
		      struct sim_shared **out, struct nic_world **world)
{
	struct fabsimd_member_info me = { 0 };
	struct sim_shared *sh;
	const char *source = NULL;
	char err[256];
	int ret;

	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -FI_ENOMEM;
	snprintf(sh->fabric, sizeof(sh->fabric), "%s", fabric);
	ret = fabsimd_node_identity(&sh->node, &source, err, sizeof(err));
	if (ret == -ENOENT) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: this process has no node identity: "
			"set FI_SIM_NODE (`fabsim run --node N`), or start it "
			"with a launcher that sets a rank\n",
			fabric);
		ret = -FI_EINVAL;
		goto fail;
	} else if (ret) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "shared fabric %s: %s\n",
			fabric, err);
		ret = -FI_EINVAL;
		goto fail;
	}
	if (sh->node >= cfg->topology.hosts) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: node %u (from %s) is outside the "
			"topology's %u hosts (FI_SIM_TOPOLOGY_HOSTS)\n",
			fabric, sh->node, source, cfg->topology.hosts);
		ret = -FI_EINVAL;
		goto fail;
	}
	me.node = sh->node;
	ret = fabsimd_attach(fabric, &me, &sh->session, err, sizeof(err));
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "shared fabric %s: %s\n",
			fabric, err);
		ret = ret == -EADDRINUSE ? -FI_EADDRINUSE : sim_errno(ret);
		goto fail;
	}
	ret = map_segment(sh, cfg, transport, record, world);
	if (ret) {
		fabsimd_detach(sh->session);
		goto fail;
	}
	nic_world_lock(*world);
	nic_world_expect_processes(*world, expected_processes());
	nic_world_unlock(*world);
	FI_INFO(&sim_prov, FI_LOG_FABRIC,
		"shared fabric %s: node %u (from %s), coordinator pid %d\n",
		fabric, sh->node, source,
		(int)fabsimd_session_coordinator(sh->session));
	*out = sh;
	return 0;
fail:
	free(sh);
	return ret;
}

uint32_t sim_shared_node(const struct sim_shared *sh)
{
	return sh->node;
}

void sim_shared_detach(struct sim_shared *sh)
{
	if (!sh)
		return;
	/* The world stays for the other members; the coordinator removes the
	 * segment when the last one leaves. */
	fs_arena_detach(sh->arena);
	fabsimd_detach(sh->session);
	free(sh);
}
