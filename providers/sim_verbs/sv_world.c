/* SPDX-License-Identifier: BSD-2-Clause
 * The simulated fabric behind the verbs face, one per process, built on
 * first use from the same configuration the sim provider reads (a preset,
 * FI_SIM_CONFIG, FI_SIM_* variables: netmodel's one loader) and the NIC
 * model's transport defaults.
 *
 * Devices: FABSIM_VERBS_DEVICES (default 1) simulated RoCE NICs, device i
 * on host i of the topology (10.0.0.<i+1>). With FI_SIM_FABRIC=NAME the
 * process joins the fabric shared by the processes that name it instead
 * (providers/sim/shared): one device, on the host its node identity names
 * (FI_SIM_NODE or the launcher's rank), and FI_SIM_PCAP records the wire
 * of the whole fabric (the first process decides). Without a fabric name,
 * FI_SIM_PCAP records this process's devices' wire.
 *
 * Virtual time moves when the application waits: an empty ibv_poll_cq
 * runs the events of the next instant, and a wait for an event (a
 * completion channel, the async fd, an rdma_cm channel) runs the
 * simulation until some event is there. The file descriptors behind those
 * waits are readable whenever an event is queued or the simulation has
 * work left, so a program blocked in poll() comes back into the library,
 * where time can move.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "providers/sim/shared/shared_vclock.h"
#include "providers/sim/shared/shared_waker.h"
#include "providers/sim/shared/shared_world.h"
#include "sv.h"

struct sv_world sv_world;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- Building --------------------------------------------------------------- */

static int fail(int err, const char *fmt, const char *detail)
{
	snprintf(sv_world.init_why, sizeof(sv_world.init_why), fmt, detail);
	fprintf(stderr, "fabsim verbs: %s\n", sv_world.init_why);
	sv_world.init_err = err;
	return err;
}

static int device_count(unsigned *out)
{
	const char *s = getenv("FABSIM_VERBS_DEVICES");
	char *end;
	unsigned long n;

	*out = 1;
	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n > 1024)
		return fail(-EINVAL, "FABSIM_VERBS_DEVICES=%s: expected a number "
			    "of devices from 0 to the topology's hosts", s);
	*out = (unsigned)n;
	return 0;
}

/* A locally administered MAC 02:00:<IPv4> and its EUI-64 (the GUID and
 * the interface part of the link-local GID), as a RoCE NIC derives them. */
static __be64 guid_of(struct in_addr ip)
{
	const uint8_t *a = (const uint8_t *)&ip.s_addr;
	uint8_t eui[8] = { 0x02 ^ 0x02, 0x00, a[0], 0xff, 0xfe, a[1], a[2], a[3] };
	__be64 guid;

	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

static void device_fill(struct sv_device *d, unsigned index)
{
	struct ibv_device *dev = &d->dev;

	d->index = index;
	d->host = nic_host(d->nic);
	d->ip = nic_ipv4(d->nic);
	d->guid = guid_of(d->ip);
	dev->node_type = IBV_NODE_CA;
	dev->transport_type = IBV_TRANSPORT_IB;
	snprintf(dev->name, sizeof(dev->name), SV_DEVICE_PREFIX "%u", index);
	snprintf(dev->dev_name, sizeof(dev->dev_name), "uverbs%u", index);
	snprintf(dev->dev_path, sizeof(dev->dev_path),
		 "/sys/class/infiniband_verbs/uverbs%u", index);
	snprintf(dev->ibdev_path, sizeof(dev->ibdev_path), SV_SYSFS_PREFIX "%s",
		 dev->name);
}

static int waker_start(void);
static void waker_stop(void);

/* A private world's trace is complete when the process ends. */
static void end_private(void)
{
	nm_error err;

	if (!sv_world.nic || !nic_world_recording(sv_world.nic))
		return;
	nic_world_lock(sv_world.nic);
	if (nic_world_record_stop(sv_world.nic, &err))
		fprintf(stderr, "fabsim verbs: FI_SIM_PCAP: %s\n", err.msg);
	nic_world_unlock(sv_world.nic);
}

/* The process leaves a shared fabric as it exits, the last one out
 * completing the trace: when the library is unloaded, after every exit
 * handler and static destructor of the program (which may still tear
 * down its verbs objects), not in an exit handler of our own, which runs
 * before those registered earlier. */
__attribute__((destructor)) static void leave_world(void)
{
	char why[256];

	if (!sv_world.shared) {
		end_private();
		return;
	}
	shared_vclock_detach(&sv_world);
	waker_stop();
	for (unsigned i = 0; i < sv_world.ndev; i++) {
		nic_world_lock(sv_world.nic);
		nic_close(sv_world.devs[i].nic);
		nic_world_unlock(sv_world.nic);
	}
	sv_world.ndev = 0;
	if (shared_world_depart(sv_world.shared, sv_world.nic, why,
				sizeof(why)))
		fprintf(stderr, "fabsim verbs: %s\n", why);
	sv_world.shared = NULL;
}

/* What FI_SIM_PCAP and FI_SIM_PCAP_LOG ask to record (path NULL: no
 * recording). */
static struct nic_record_params record_params(void)
{
	struct nic_record_params rp = {
		.path = getenv("FI_SIM_PCAP"),
		.log_path = getenv("FI_SIM_PCAP_LOG"),
	};

	if (rp.path && !*rp.path)
		rp.path = NULL;
	return rp;
}

static void join_shared(const struct nic_transport_params *tp)
{
	const char *fabric = shared_world_fabric();
	struct nic_record_params rp = record_params();
	/* A note may name two files (this process's and the fabric's). */
	char why[1024], note[2 * PATH_MAX + 512];
	nm_error err;
	int ret;

	ret = shared_world_attach(fabric, &sv_world.cfg, tp, &rp,
				  &sv_world.shared, &sv_world.nic, why,
				  sizeof(why), note, sizeof(note));
	if (ret) {
		fail(ret, "shared fabric: %s", why);
		return;
	}
	if (note[0])
		fprintf(stderr, "fabsim verbs: shared fabric %s: %s\n", fabric,
			note);
	sv_world.devs = calloc(1, sizeof(*sv_world.devs));
	if (!sv_world.devs) {
		fail(-ENOMEM, "%s", "out of memory");
		return;
	}
	nic_world_lock(sv_world.nic);
	ret = nic_open(sv_world.nic, shared_world_node(sv_world.shared),
		       &sv_world.devs[0].nic, &err);
	nic_world_unlock(sv_world.nic);
	if (ret) {
		fail(ret, "cannot attach a NIC: %s", err.msg);
		return;
	}
	device_fill(&sv_world.devs[0], 0);
	sv_world.ndev = 1;
}

static void build(void)
{
	struct nic_record_params rp;
	struct nic_transport_params tp;
	nm_error err;
	unsigned n;
	int ret;

	ret = nm_config_load(&sv_world.cfg, getenv("FI_SIM_CONFIG"),
			     nm_env_getenv, NULL, &err);
	if (ret) {
		fail(-EINVAL, "configuration rejected: %s", err.msg);
		return;
	}
	if (device_count(&n))
		return;
	nic_transport_defaults(&tp);
	/* A verbs RC queue pair has no buffer for messages nobody posted a
	 * receive for: the sender is told receiver-not-ready and retries. */
	tp.unexpected_bytes = 0;
	if (shared_world_fabric()) {
		join_shared(&tp);
		/* `fabsim run --virtual-clock`: the program's clocks. */
		if (!sv_world.init_err)
			shared_vclock_attach(sv_world.nic, &sv_world);
		return;
	}
	ret = nic_world_create(&sv_world.cfg, &tp, &sv_world.nic, &err);
	if (ret) {
		fail(ret, "cannot build the network: %s", err.msg);
		return;
	}
	rp = record_params();
	if (rp.path && (ret = nic_world_record(sv_world.nic, &rp, &err))) {
		fail(ret, "FI_SIM_PCAP: %s", err.msg);
		return;
	}
	if (n > sv_world.cfg.topology.hosts) {
		char hosts[64];

		snprintf(hosts, sizeof(hosts), "%u devices, %u hosts", n,
			 sv_world.cfg.topology.hosts);
		fail(-EINVAL, "FABSIM_VERBS_DEVICES: %s in the topology (raise "
		     "FI_SIM_TOPOLOGY_HOSTS)", hosts);
		return;
	}
	sv_world.devs = calloc(n ? n : 1, sizeof(*sv_world.devs));
	if (!sv_world.devs) {
		fail(-ENOMEM, "%s", "out of memory");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		struct sv_device *d = &sv_world.devs[i];

		ret = nic_open(sv_world.nic, i, &d->nic, &err);
		if (ret) {
			fail(ret, "cannot attach a NIC: %s", err.msg);
			return;
		}
		device_fill(d, i);
	}
	sv_world.ndev = n;
	shared_vclock_attach(sv_world.nic, &sv_world);
}

int sv_world_init(void)
{
	pthread_once(&init_once, build);
	return sv_world.init_err;
}

struct sv_device *sv_device_of(struct ibv_device *dev)
{
	return SV_CONTAINER_OF(dev, struct sv_device, dev);
}

/* ---- Locking and waking ---------------------------------------------------------- */

static void sv_lock(void)
{
	nic_world_lock(sv_world.nic);
	nic_sched_enter(sv_world.nic);
}

bool sv_poll_lock(void)
{
	if (!nic_world_poll_lock(sv_world.nic))
		return false;
	nic_sched_enter(sv_world.nic);
	return true;
}

static void sv_unlock(void)
{
	nic_world_unlock(sv_world.nic);
}

/* A descriptor is also readable while the world has work to run and
 * nobody else runs it: a program blocked in poll() on it must come back
 * in (ibv_get_cq_event, rdma_get_cm_event) for time to move. A shared
 * world's waker runs it for the process (waker_start below), so there
 * a descriptor is readable only when an event is there: a program whose
 * descriptor is O_NONBLOCK would otherwise spin on EAGAIN. */
static bool world_busy(void)
{
	nm_time_ns when;

	return !sv_world.waker && nic_world_next_event(sv_world.nic, &when);
}

/* Makes the descriptor readable, or readable again: a new edge. */
static bool write_edge(struct sv_waitable *w)
{
	uint64_t v = 1;

	if (write(w->fd, &v, sizeof(v)) != sizeof(v))
		return false;
	w->signalled = true;
	return true;
}

/* `ready`: an event is queued; `busy`: the world has work (world_busy). An
 * event that comes while the descriptor is already readable for the
 * world's work is written again: a program waiting with edge-triggered
 * epoll took the first wake-up, found no event and waits for the next
 * edge, which on a real device is the event's. */
static void waitable_set(struct sv_waitable *w, bool ready, bool busy)
{
	uint64_t v;
	bool edge = ready && !w->event_told;

	if ((ready || busy) && (!w->signalled || edge)) {
		if (write_edge(w))
			w->event_told = ready;
		/* A thread of ours blocked in poll() on it wakes now: until
		 * it calls in, time must not run on without it. */
		nic_sched_rouse(sv_world.nic);
	} else if (!ready && !busy && w->signalled) {
		if (read(w->fd, &v, sizeof(v)) == sizeof(v))
			w->signalled = false;
	}
	if (!ready)
		w->event_told = false;
}

static void waitable_update(struct sv_waitable *w)
{
	waitable_set(w, w->ready(w), world_busy());
}

static void update_all(void)
{
	bool busy = world_busy();

	for (struct sv_waitable *w = sv_world.waitables; w; w = w->next)
		waitable_set(w, w->ready(w), busy);
}

static int waitable_init(struct sv_waitable *w,
			 bool (*ready)(struct sv_waitable *w))
{
	w->fd = eventfd(0, EFD_CLOEXEC); /* blocking unless the application says */
	if (w->fd < 0)
		return -errno;
	w->ready = ready;
	w->signalled = false;
	w->event_told = false;
	sv_lock();
	if (w->watched && sv_world.shared && !sv_world.waker) {
		int ret = waker_start();

		if (ret) {
			sv_unlock();
			close(w->fd);
			return ret;
		}
	}
	w->prev = NULL;
	w->next = sv_world.waitables;
	if (w->next)
		w->next->prev = w;
	sv_world.waitables = w;
	waitable_update(w);
	sv_unlock();
	return 0;
}

static bool waitable_fini(struct sv_waitable *w)
{
	bool in_use;

	sv_lock();
	if (w->prev)
		w->prev->next = w->next;
	else
		sv_world.waitables = w->next;
	if (w->next)
		w->next->prev = w->prev;
	in_use = w->waiters > 0;
	w->closed = true;
	sv_unlock();
	close(w->fd);
	w->fd = -1;
	return !in_use;
}

static void posted(void)
{
	nic_sched_posted(sv_world.nic);
	update_all();
}

/* ---- Waking a process that waits on a descriptor (shared fabric) -------------------
 * A program that waits for verbs events in poll()/epoll() on our descriptors
 * is outside the fabric; in one process, whatever makes them readable runs
 * in the process itself. On a shared fabric another process may run the
 * event that brings this one a completion or a connection request: it can
 * only leave it on this process's list (nic_proc.c). The process's waker
 * (providers/sim/shared/shared_waker.h) waits inside the fabric for exactly
 * that and takes it in: what it takes in calls posted(), which brings the
 * descriptors up to date. Its wait itself never ends: a wait that ended at
 * every post (the process's own included) looked, to the process's own
 * threads, like a thread about to run, and the clock waited for the waker
 * to get a CPU from the threads that poll — ~1.4 ms per iteration of
 * `ib_send_lat -R` across two processes, as for any program that opens an
 * rdma_cm event channel and polls its CQ. It starts with the process's
 * first channel (a completion channel or an rdma_cm event channel): a
 * program without one cannot be blocked in poll() on our descriptors. */

static const struct shared_waker_ops waker_ops = { 0 };

static int waker_start(void)
{
	return shared_waker_start(sv_world.nic, &waker_ops, NULL,
				  &sv_world.waker);
}

static void waker_stop(void)
{
	shared_waker_stop(sv_world.waker);
	sv_world.waker = NULL;
}

/* ---- Virtual time -------------------------------------------------------------------- */

void sv_poll_instant(void)
{
	nic_sched_poll(sv_world.nic);
	update_all();
}

void sv_unlock_refused(void)
{
	bool moved = nic_sched_poll(sv_world.nic);

	update_all();
	nic_world_unlock(sv_world.nic);
	nic_world_give_way(sv_world.nic);
	if (!moved)
		sched_yield();
}

static bool wait_pred(void *arg)
{
	struct sv_waitable *w = arg;

	return !w->closed && w->ready(w);
}

/* A non-blocking wait is a read that finds nothing: like an empty poll,
 * it runs the events of the next instant. A blocking one waits until the
 * event is there; the program's threads share the clock (nic_sched.c).
 * When nothing is left to simulate and no other thread posts work, it
 * says so once and goes on waiting, as a verbs call would. */
static int wait_event(struct sv_waitable *w, bool blocking)
{
	bool told = false;

	if (w->ready(w))
		return 0;
	if (!blocking) {
		sv_poll_instant();
		if (w->ready(w))
			return 0;
		/* The world still has work, and only this program runs it: a
		 * new edge brings back one that waits with EPOLLET (the
		 * descriptor is readable already, and stays so). */
		if (world_busy())
			write_edge(w);
		return -EAGAIN;
	}
	for (;;) {
		enum nic_wait_end end;

		w->waiters++;
		end = nic_sched_wait(sv_world.nic, wait_pred, w, NM_TIME_NEVER,
				     false);
		w->waiters--;
		update_all();
		if (end == NIC_WAIT_READY)
			return 0;
		if (end == NIC_WAIT_STUCK && !told) {
			fprintf(stderr, "fabsim verbs: a blocking wait found "
				"nothing left to simulate and no other thread "
				"posted work; still waiting\n");
			told = true;
		}
	}
}

/* ---- The private interface ------------------------------------------------------------------ */

static struct ibv_device *device_by_ip(struct in_addr ip)
{
	for (unsigned i = 0; i < sv_world.ndev; i++)
		if (sv_world.devs[i].ip.s_addr == ip.s_addr)
			return &sv_world.devs[i].dev;
	return NULL;
}

static bool device_addr(struct ibv_device *dev, struct nic **nic,
			uint32_t *host, struct in_addr *ip)
{
	for (unsigned i = 0; i < sv_world.ndev; i++) {
		struct sv_device *d = &sv_world.devs[i];

		if (&d->dev != dev)
			continue;
		if (nic)
			*nic = d->nic;
		if (host)
			*host = d->host;
		if (ip)
			*ip = d->ip;
		return true;
	}
	return false;
}

static uint32_t host_of_ip(struct in_addr ip)
{
	return nic_world_host_of_ipv4(sv_world.nic, ip);
}

static int schedule(uint32_t host, nm_time_ns delay, nm_event_fn fn,
		    void *ctx, nm_event_id *id)
{
	return nic_world_schedule(sv_world.nic, host, delay, fn, ctx, id);
}

static void cancel(nm_event_id id)
{
	nic_world_cancel(sv_world.nic, id);
}

static const struct sv_private_ops private_ops = {
	.version = SV_PRIVATE_VERSION,
	.lock = sv_lock,
	.unlock = sv_unlock,
	.init = sv_world_init,
	.waitable_init = waitable_init,
	.waitable_fini = waitable_fini,
	.waitable_update = waitable_update,
	.wait_event = wait_event,
	.posted = posted,
	.device_by_ip = device_by_ip,
	.device_addr = device_addr,
	.host_of_ip = host_of_ip,
	.send_mad = nic_send_mad,
	.set_mad_handler = nic_set_mad_handler,
	.schedule = schedule,
	.cancel = cancel,
	.qp_connect = sv_qp_connect_locked,
	.qp_error = sv_qp_error_locked,
};

const struct sv_private_ops *fabsim_sv_private(void)
{
	return &private_ops;
}

/* The same, for the files of this library. */
const struct sv_private_ops *const sv = &private_ops;
