/* SPDX-License-Identifier: BSD-2-Clause
 * The NIC model's private structures, shared by its files:
 *   nic_world.c   world, clock, stats
 *   nic_lock.c    the world's lock; pollers spinning on a shared world
 *   nic_node.c    NICs on hosts, addresses, QP and MR tables
 *   nic_mr.c      registration and protection checks
 *   nic_wire.c    packets: pool, transmit (network or loopback), delivery
 *   nic_qp.c      queue pairs and per-peer flows
 *   nic_req.c     requester: packetization, window, retransmission, ACKs
 *   nic_resp.c    responder: PSN checks, placement, ACK/NAK, read responses
 *   nic_match.c   receive matching and the unexpected-message queue
 *   nic_atomic.c  atomic arithmetic
 *   nic_record.c  pcap traces of what goes on the wire
 */
#ifndef FABSIM_NIC_INTERNAL_H
#define FABSIM_NIC_INTERNAL_H

#include <arena/depot.h>
#include <netmodel/nm_cost.h>
#include <netmodel/nm_network.h>

#include <pthread.h>
#include <time.h>

#include "nic.h"
#include "nic_kernel.h"
#include "nic_opcode.h"

/* ---- Packets ---------------------------------------------------------------- */

enum nic_pkt_flags {
	NIC_PKT_ACKREQ = 1u << 0,     /* responder must acknowledge */
	NIC_PKT_RETRANSMIT = 1u << 1, /* sent again (statistics, traces) */
	NIC_PKT_OWNS_PAYLOAD = 1u << 2,
	NIC_PKT_FABSIM_HDR = 1u << 3, /* payload starts with struct nic_fabsim_hdr */
	NIC_PKT_SOLICITED = 1u << 4,  /* BTH SE: a message's last packet */
	/* The request of an RMA or atomic operation's last target segment
	 * (its last packet): one operation counts once at the target, however
	 * many segments it has (fi_endpoint(3), FI_REMOTE_READ/WRITE). What
	 * the initiator knows of its operations: not on the wire. */
	NIC_PKT_OP_END = 1u << 5,
};

/* Metadata the RoCE headers have no room for, carried at the start of the
 * payload: the tag of a tagged send (first packet) and the description of a
 * generic atomic and of its answer. What they occupy on the wire is exactly
 * what the trace encodes: the fabsim tag header (traces/tr_taghdr.h, 16
 * bytes) and the fabsim atomic request and response headers
 * (traces/tr_atomichdr.h, 24 and 12 bytes), documented in traces/README.md. */
enum nic_fabsim_kind {
	NIC_FABSIM_TAGGED_SEND = 1,
	NIC_FABSIM_ATOMIC = 2,      /* request, in a SEND_ONLY */
	NIC_FABSIM_ATOMIC_RESP = 3, /* answer, in a READ_RESP_ONLY */
};

struct nic_fabsim_hdr {
	uint8_t  kind;
	uint8_t  atomic_op;       /* enum fi_op */
	uint8_t  atomic_datatype; /* enum fi_datatype */
	uint8_t  atomic_fetch;    /* result wanted (response: it follows) */
	uint8_t  atomic_compare;  /* compare values follow the operands */
	uint8_t  tag_flags;       /* TR_TAG_F_* (remote CQ data in ImmDt) */
	uint32_t count;           /* atomic elements */
	uint64_t tag;
	uint64_t addr;            /* atomic target */
	uint64_t key;
};
#define NIC_TAG_HDR_WIRE         16 /* TR_TAG_LEN */
#define NIC_ATOMIC_HDR_WIRE      24 /* TR_ATOMIC_LEN */

#define NIC_ATOMIC_RESP_HDR_WIRE 12 /* TR_ATOMIC_RESP_LEN */

/* An event of the fabric (a process away, back, dead) into the trace, at
 * virtual time ts (nic_record.c). */
struct nic_recorder;
struct tr_event;
void nic_record_event(struct nic_recorder *rec, const struct tr_event *ev,
		      nm_time_ns ts);

/* A frame built for the trace files (nic_record.c), shared by the records
 * that write it. */
struct nic_rec_frame;

struct nic_pkt {
	uint32_t         refs;
	uint8_t          opcode;
	uint8_t          flags;
	uint32_t         psn;
	uint32_t         epoch;       /* flow incarnation (stale packets die) */
	struct nic_peer  src, dst;
	uint32_t         src_qp_gen;  /* payload valid only while the QP lives */
	/* Extended headers */
	uint64_t         reth_va;
	uint32_t         reth_key;
	uint32_t         reth_len;
	uint8_t          aeth_syndrome;
	uint32_t         aeth_msn;
	uint64_t         atomic_swap, atomic_cmp, atomic_orig;
	uint32_t         imm;
	uint32_t         qkey;        /* DETH, UD only */
	struct nic_fabsim_hdr fabsim;
	/* Payload (after the fabsim header when there is one) */
	const void      *payload;
	uint32_t         payload_len;
	uint32_t         wire_bytes;
	struct nic_rec_frame *rec_frame; /* recording: the frame as built */
	uint64_t         rec_sent;    /* recording: its record in the sender's file, + 1 */
	uint64_t         rec_pair;    /* recording per node: its place among the
				       * packets in flight to its host, + 1 */
	struct nic_pkt  *next_free;   /* pool, or a flow's reply queue */
	struct nic_pkt  *alloc_next;  /* every record, for teardown */
	uint8_t          owned[];     /* NIC_PKT_OWNS_PAYLOAD: mtu bytes */
};

/* pkt, its headers noted in the working set (arena/working_set.h). */
static inline struct nic_pkt *nic_pkt_touched(struct nic_pkt *pkt)
{
	fs_touch_span(pkt, offsetof(struct nic_pkt, owned));
	return pkt;
}

/* Records come from and go to the part of the partition running: the NIC's
 * whose event or post it is, or the network's where a packet is dropped. */
struct nic_part;
struct nic_pkt *nic_pkt_alloc(struct nic_part *part, bool owns_payload);
void nic_pkt_put(struct nic_part *part, struct nic_pkt *pkt);

/* Hands a packet to the wire now (it takes the caller's reference). Only
 * the transmit scheduler (nic_tx.c) calls it. */
void nic_pkt_transmit(struct nic *nic, struct nic_pkt *pkt);

/* Extended-header bytes a packet carries beyond the link framing. */
uint32_t nic_pkt_header_bytes(const struct nic_pkt *pkt);
/* Bytes of fabsim header at the start of its payload (0 when none). */
uint32_t nic_pkt_fabsim_bytes(const struct nic_pkt *pkt);

/* ---- Recording (nic_record.c) --------------------------------------------------- */

struct nic_recorder;
/* The packet goes to the network: builds its frame (payload pointers are
 * valid now). */
void nic_record_transmit(struct nic_recorder *rec, struct nic_pkt *pkt);
/* What the network did with a packet (TX_START, DROP, DUPLICATE, DELIVER). */
void nic_record_track(struct nic_recorder *rec, const nm_trace_record *tr);
/* A NIC opened on host: per-node mode opens its file. */
int nic_record_host(struct nic_recorder *rec, uint32_t host, nm_error *err);
void nic_rec_frame_put(struct nic_rec_frame *frame);
/* Writes what is still pending, closes the files, frees rec. */
int nic_record_close(struct nic_recorder *rec, nm_error *err);

/* ---- World ------------------------------------------------------------------- */

/* What a thread of the program is doing, as far as the fabric can tell. */
enum nic_thread_state {
	NIC_THREAD_RUNNING, /* in the program: may post work at any moment */
	NIC_THREAD_WAITING, /* blocked in a wait of the fabric */
	NIC_THREAD_POLLING, /* its last poll found nothing */
	NIC_THREAD_ABSENT,  /* away from the fabric too long: out of time */
};

/* A process using the world, and the calls into its glue that wait for it
 * (nic_proc.c). */
struct nic_call;
struct nic_timer;
#define NIC_OUTSIDERS 8

struct nic_proc {
	pid_t             pid;
	bool              gone;       /* left: calls for it are dropped */
	uint32_t          times_away; /* taken out of virtual time so far */
	/* Trips out of time the trace does not hold yet: the clock has not
	 * moved since (nic_sched.c, record_absences). */
	uint32_t          aways_unrecorded;
	/* Threads that ran without calling in for as long as a computing
	 * one holds the clock: none on its way into the fabric (nic_sched.c,
	 * unseen_thread_running; the last NIC_OUTSIDERS found). */
	pid_t             outsiders[NIC_OUTSIDERS];
	uint32_t          outsiders_found;
	/* The newest thread never seen in the fabric that has had its time
	 * to show up (nic_sched.c, unseen_need_time): only a newer one gets
	 * it again. */
	pid_t             unseen_graced_upto;
	/* Bumped when something its threads could see appears: a call on
	 * its list, a completion or work of its own. Spinning pollers read
	 * it: on a cache line that only such news writes. */
	struct {
		char     before[64];
		uint64_t value;
		char     after[64];
	} signals;
	struct nic_call  *calls, *calls_tail;
	struct nic_proc  *next;
};

/* A spinning thread's pause: lets the sibling hyperthread run. */
static inline void nic_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* This process (cached; forks are followed). */
extern pid_t nic_cached_pid;
pid_t nic_find_self_pid(void);
static inline pid_t nic_self_pid(void)
{
	return nic_cached_pid ? nic_cached_pid : nic_find_self_pid();
}
struct nic_proc *nic_proc_self(struct nic_world *world);
struct nic_proc *nic_proc_of(struct nic_world *world, pid_t pid);
static inline bool nic_proc_is_self(const struct nic_proc *proc)
{
	return proc->pid == nic_self_pid();
}
static inline bool nic_proc_has_calls(const struct nic_proc *proc)
{
	return proc->calls != NULL;
}
/* Runs the calls waiting for this process (lock held). */
void nic_proc_drain(struct nic_world *world);
/* Drops what waits for a QP or NIC that its owner is destroying. */
void nic_proc_forget_qp(struct nic_qp *qp);
void nic_proc_forget_nic(struct nic *nic);
void nic_procs_free(struct nic_world *world);
/* This process leaves the world (its NICs closed): it is no longer waited
 * for, and what would still be called back in it is dropped. */
void nic_proc_leave(struct nic_world *world);
/* Another process ended without leaving: its NICs go off the network. */
void nic_proc_died(struct nic_world *world, struct nic_proc *proc);
/* If `proc`'s process has ended without leaving, it is found dead now (its
 * threads, its NICs: nic_sched.c); true then. Lock held. */
bool nic_proc_bury_if_dead(struct nic_world *world, struct nic_proc *proc);
void nic_sched_leave(struct nic_world *world);
/* Something for `proc`'s threads appeared (lock held). */
void nic_sched_posted_to(struct nic_world *world, struct nic_proc *proc);
/* The NIC wrote into the memory of process `proc` (NULL: this one) on a
 * peer's behalf (RDMA write, atomic, read response): news for its threads,
 * which may be reading that memory in a loop rather than polling a CQ. */
void nic_sched_landed(struct nic_world *world, struct nic_proc *proc);
/* The lock has just been taken (nic_lock.c): on a shared world, pollers
 * may see that it is held, and on which CPU. */
void nic_world_held(struct nic_world *world);
/* Before the lock is let go (unlocked, or left for a condition variable's
 * wait): on a shared world, tells spinning pollers whether to look. */
void nic_world_letting_go(struct nic_world *world);
struct nic_thread;
/* A thread became idle without the lock since the calling thread's hold
 * began (nic_sched_idle_unlocked): what that hold found may be stale. */
bool nic_world_idled_since_hold(const struct nic_world *world);
/* The poll that makes thread `t`, one short of idle (world->short_of_idle
 * at its last hold), idle, without the lock: the calling thread is `t`.
 * The world's version.idled its bump made. */
uint64_t nic_sched_idle_unlocked(struct nic_world *world,
				 struct nic_thread *t);
/* In a forked child: forgets what the parent's thread last saw of any
 * world (nic_lock.c). */
void nic_world_forget_poller(void);

/* A thread's entry. It begins a cache line (fs_mem_calloc_line), and
 * that first line holds what its own calls and the others' looks write
 * at every turn of a ping-pong: the entries of two processes' threads
 * cross between their CPUs as one line each, not three. */
struct nic_thread {
	_Alignas(64) enum nic_thread_state state;
	/* Polls in a row, with no other call between them: one poll between
	 * other calls (a provider's look at its queues in the middle of a
	 * call) does not make a thread idle, a second one in a row does. */
	uint32_t               poll_streak;
	uint64_t               calls;      /* entries into the fabric */
	uint64_t               calls_seen; /* ... when last looked at */
	struct timespec        seen_at;    /* ... and when (real time) */
	uint64_t               acked;      /* POLLING: proc->signals it saw */
	uint64_t               driver_calls; /* the driver's, when last looked */
	uint32_t               silent_looks; /* looks since, finding none
					      * (ABSENT: looks at its futex) */
	bool                   was_polling; /* at its last entry */
	/* Entered as a poller that had seen everything for it: if it
	 * leaves as one, its hold let no one else go on. */
	bool                   entered_idle;
	/* WAITING, and what it waits for holds: another thread of its
	 * process took it in (nic_sched.c, drain_calls). */
	bool                   ready_now;
	bool                   exited;     /* its kernel task is gone */

	pid_t                  pid;        /* its process */
	pid_t                  tid;        /* the kernel's id of the thread */
	struct nic_proc       *proc;
	pthread_t              id;
	struct nic_thread     *next;
	struct timespec        woke_at;    /* ABSENT: first seen runnable */
	/* Asleep on a futex when last found blocked (whichever process
	 * looked): the word, in its own process, and what it held
	 * (nic_kernel.h); word 0 otherwise. Read when ABSENT. */
	struct nic_futex_wait  futex;
	/* While waiting: what for, and until when. */
	bool                 (*ready)(void *ctx);
	void                  *ctx;
	nm_time_ns             deadline;
	/* ABSENT: taken out while the kernel had it running (it computes, or
	 * reads in a loop memory the NIC or another thread writes) or while
	 * it napped in such a loop (NIC_NAP_US), and the
	 * real time of the first news for its process since (0: none yet;
	 * nic_sched.c, news_for_spinners). */
	bool                   out_running;
	struct timespec        news_at;
	struct timespec        news_last; /* ... and of the latest */
	/* Seen to wait that way: twice in a row it called in just after news
	 * for its process while it was out of time running (NIC_SPIN_US). */
	bool                   spins;
	uint8_t                spin_evidence;
	/* ABSENT as such a spinner, or stepped out (nic_sched_step_out):
	 * quietly, and blocked on no descriptor. */
	bool                   away_untold;
	/* ABSENT, and its AWAY was told: its return is told too (and only
	 * then: a thread its own process took out of time, told nothing). */
	bool                   away_told;
};
_Static_assert(offsetof(struct nic_thread, pid) <= 64,
	       "what every turn writes fits the entry's first line");

struct nic_world {
	fs_arena         *arena;      /* where the model's state lives (NULL: malloc) */
	pthread_mutex_t   lock;       /* a world of one process */
	/* A shared world's lock (nic_lock.c), in 16 bytes, which arena
	 * allocations keep on one cache line: a poller that looks at it, then
	 * takes it, then says where it runs, takes one line from the last
	 * holder's CPU, not two. */
	struct {
		/* Its holder as pid << 32 | tid, 0 when free. */
		_Alignas(16) uint64_t holder;
		int32_t           holder_cpu; /* a hint: the CPU it runs on */
		/* The holder before: whose turn it was (its tid). */
		uint32_t          last_holder;
	};
	uint32_t          lock_waiters; /* threads asleep on the lock */
	/* What a poller that found nothing reads while it spins, on a cache
	 * line of its own that holds change only when they may let a
	 * thread of another process go on (nic_lock.c): reading a line the
	 * holder writes would take it away from the holder each time. */
	struct {
		char     before[64];
		uint64_t value;    /* the version: bumped by such holds */
		uint64_t identity; /* tells this world from earlier ones */
		bool     shared;   /* processes share it (arena != NULL) */
		/* No event is scheduled (as of the last hold): a poller
		 * with nothing of its own to take in has nothing to run. */
		bool     nothing_scheduled;
		/* Bumped (atomically: no lock is held) by a thread that
		 * becomes idle without the lock (nic_sched_idle_unlocked). */
		uint64_t idled;
		/* A whole line: arena allocations are aligned to less than
		 * a line, so the fields above may straddle two. */
		char     after[64];
	} version;
	/* What the holds of a ping-pong's turn write, on a line of their own
	 * (the world begins a line: nic_world.c), so that a turn takes one
	 * line of them from the other process's CPU, not three. */
	struct {
		/* This hold may let a thread of another process go on: it
		 * queued work or completions for that process, or a thread of
		 * the holder's became idle, or one left. */
		_Alignas(64) bool stir;
		/* The holder need not look again until the version moves:
		 * its poll found nothing to do (found_nothing: it got
		 * nowhere), or left another process's poller busy
		 * (nic_sched.c, leave_poll). */
		bool              look_later;
		bool              found_nothing;
		bool              left_polling; /* it leaves as a poller with
						 * nothing to read */
		/* The holder's poll looks because real time moved
		 * (nic_lock.c): the rules of real time are worth a look at
		 * once. */
		bool              timed_look;
		bool              landing_stop; /* a run stops: the NIC wrote
						 * where such a thread may be
						 * looking */
		/* A futex word, bumped when a thread may now move time. Not
		 * a condition variable: a process that exits or dies while
		 * one of its threads waits on a process-shared one leaves it
		 * waiting for that thread for ever, and every later
		 * broadcast hangs. */
		uint32_t          activity;
		uint32_t          looks;     /* scheduler passes, to space checks */
		/* It leaves one poll short of idle, and that poll could find
		 * nothing: it may make itself idle without the lock
		 * (nic_sched.c, leave_poll). */
		struct nic_thread *short_of_idle;
		uint64_t          signals;   /* bumped when work or completions
					      * appear (for any process) */
		struct nic_thread *driver;   /* the poller that last moved time */
	};
	uint64_t          published_changes; /* sched_changes at the last */
	uint64_t          sched_changes; /* threads taken out of time, buried */
	/* The program's threads (nic_sched.c). */
	struct nic_thread *threads;
	bool              threads_exited; /* some found exited: forget them */
	uint32_t          out_running;   /* threads ABSENT with out_running */
	bool              unexpected_told; /* nic_match.c: once per world */
	struct nic_proc  *procs;       /* nic_proc.c */
	uint32_t          proc_count;
	uint32_t          aways_unrecorded; /* the processes' sum */
	/* The clock waits until this many processes have joined (a shared
	 * fabric's start), for at most NIC_JOIN_WAIT_MS of real time. */
	uint32_t          procs_expected;
	struct timespec   join_wait_since;
	struct timespec   peers_checked; /* when processes were last checked */
	/* Since when a thread not yet seen holds back the clock's jump from
	 * `unseen_at` (nic_sched.c, unseen_thread_running). */
	struct timespec   unseen_since;
	nm_time_ns        unseen_at;
	struct nic_timer *timers;      /* the glue's, not yet run */
	int               sleepers;    /* threads waiting on `activity` (one
					* that died stays counted: its only
					* cost is wake-ups nobody needs) */
	nm_config         cfg;
	struct nic_transport_params transport;
	nm_engine        *engine;
	nm_network       *net;
	nm_time_ns        send_overhead_ns;
	nm_time_ns        recv_overhead_ns;
	uint32_t          mtu;           /* payload bytes per packet */
	uint32_t          host_count;
	struct nic      **hosts;         /* by host id */
	uint32_t         *cm_comm_ids;   /* by host id: the last one given */
	/* Where NICs keep their free records and counters: one part, or one
	 * per host (enum nic_world_parts), with depots that balance them when
	 * there are several (NULL otherwise). */
	struct nic_part  *parts;
	void             *parts_memory;
	uint32_t          part_count;
	struct nic_depots *depots;
	uint64_t          threads_out_of_time; /* nic_stats' */
	struct nic_recorder *rec;        /* trace files, when recording */
	bool              broken;        /* a process died holding the lock */
	/* When (CLOCK_MONOTONIC) a poller last moved to another CPU, to stop
	 * sharing one with the thread it waited for (nic_lock.c), and how
	 * many did (nic_stats'). */
	uint64_t          reseated_ns;
	uint64_t          pollers_moved;
};

/* What one partition of the model keeps for the NICs whose events it runs
 * (MULTIPROCESS.md, the partitioned design; a world on one engine has one):
 * free records and its share of the counters, on lines of its own. What
 * one partition frees another often took (a packet is built by its sender
 * and freed where it arrives): records go into the cache of the partition
 * that frees them, and whole batches go back through the world's depot
 * (arena/depot.h). Partitions that run at once never write each other's. */
struct nic_part {
	_Alignas(64) struct nic_world *world;
	fs_cache          pkts;        /* by next_free */
	fs_cache          owned_pkts;  /* ... with an MTU of payload */
	struct nic_pkt   *all_pkts;    /* every record it made (teardown) */
	fs_cache          wqes;        /* requests without atomic values */
	fs_cache          pendings;    /* completions on their way */
	fs_cache          calls;       /* into the glue (nic_proc.c) */
	void             *free_aheads; /* read-ahead buffers (nic_dma.c) */
	uint32_t          spare_aheads; /* ... how many */
	struct nic_stats  stats;
};

/* Whole batches of free records of each kind, between parts. */
struct nic_depots {
	fs_depot pkts, owned_pkts, wqes, pendings, calls;
};
/* Frees a record drained from a cache or depot (fs_cache_drain). */
static inline void nic_free_record(void *arena, void *record)
{
	fs_mem_free(arena, record);
}

/* The depot of one kind (NULL: a single part keeps all it frees). */
#define NIC_DEPOT(world, kind) ((world)->depots ? &(world)->depots->kind : NULL)

/* The part whose partition runs host `host`'s events: the world's one, or
 * the host's own (NIC_PARTS_PER_HOST; each host's events will run in a
 * partition of their own, today they all run under the world's lock). */
static inline struct nic_part *nic_part_of_host(const struct nic_world *world,
						uint32_t host)
{
	return world->part_count == 1 ? world->parts : world->parts + host;
}

/* The part whose partition runs port `port` of the network: the host's
 * it sends towards (netmodel's rule); on one engine the network has one
 * partition, and its ports' records go to the first part. */
static inline struct nic_part *nic_part_of_port(const struct nic_world *world,
						uint32_t port)
{
	return world->part_count == 1 ?
		       world->parts :
		       world->parts + nm_network_port_partition(world->net, port);
}

/* Processes share the world: its memory is an arena every one maps, and
 * packets carry copies of their payload there rather than pointers into
 * the sender's (any process may read them). (The pollers read the same
 * fact from version.shared, on their own cache line.) */
static inline bool nic_world_shared(const struct nic_world *world)
{
	return world->arena != NULL;
}

/* Host memory of the process that opened `nic` (nic_dma.c). */
void nic_dma_read(const struct nic *nic, void *dst, const void *src,
		  size_t len);
/* A buffer of another process that the NIC reads in order (a send's,
 * packet after packet), brought into the world's memory a large piece at a
 * time: one system call for many packets. */
struct nic_read_ahead {
	uint8_t       *buf;  /* cap bytes of the world's, or NULL */
	const uint8_t *from; /* the owner's address of buf[0] */
	size_t         len;  /* bytes of buf that hold the owner's */
	size_t         cap;
};
/* nic_dma_read for bytes of a buffer read in order, `avail` of which (from
 * src on) may be read ahead. */
void nic_dma_read_ahead(const struct nic *nic, struct nic_read_ahead *ra,
			void *dst, const void *src, size_t len, size_t avail);
void nic_read_ahead_release(struct nic_part *part, struct nic_read_ahead *ra);
void nic_read_ahead_free_all(struct nic_part *part);
void nic_dma_write(const struct nic *nic, void *dst, const void *src,
		   size_t len);
/* Received bytes that a completion on `qp` will announce: when the QP's
 * owner is another process, they wait on its list and it writes them
 * itself just before it takes in that completion (nic_proc.c). */
void nic_dma_deliver(struct nic_qp *qp, void *dst, const void *src,
		     size_t len);
/* Queues len bytes for `qp`'s owner to write at dst (nic_proc.c). */
void nic_call_copy(struct nic_qp *qp, void *dst, const void *src, size_t len);

/* The lock was found abandoned by a thread that is gone. */
void nic_world_owner_died(struct nic_world *world);

/* The engine host `host`'s events run on. */
nm_engine *nic_world_engine_of(const struct nic_world *world, uint32_t host);
/* Tells the network which of its records the world wants (nic_world.c, track). */
void nic_world_trace_kinds(struct nic_world *world);
/* Schedules fn at now + delay, ordered by the host where it happens. */
int nic_schedule(struct nic *nic, nm_time_ns delay, nm_event_fn fn, void *ctx,
		 uint64_t arg, nm_event_id *id);

/* ---- NIC ------------------------------------------------------------------------ */

struct nic_qp_table {
	struct nic_qp **slots; /* by qpn - NIC_QPN_BASE */
	uint32_t        count;
	uint32_t        next;
};


struct nic {
	struct nic_world   *world;
	/* Where its events and timers run: its host's (nic_world_engine_of),
	 * and the part of the world that partition keeps. */
	nm_engine          *engine;
	struct nic_part    *part;
	/* Transmit arbitration (nic_tx.c): flows with something to send, in
	 * round-robin order, and the packets waiting at our egress port. */
	struct nic_flow    *txq_head, *txq_tail;
	struct nic_pkt     *raw_head, *raw_tail; /* datagrams, MADs */
	uint32_t            port_queued;
	int                 refs;
	struct nic_proc    *owner;        /* whose memory it reaches */
	bool                dead;         /* its process died: off the network */
	nic_mad_fn          mad_fn;       /* in mad_owner's process */
	void               *mad_ctx;
	struct nic_proc    *mad_owner;
	uint32_t            mad_psn;     /* QP1's next send PSN */
	uint32_t            host;
	struct in_addr      ipv4;
	struct nic_qp_table qps;
	uint32_t            qp_gen;      /* bumps with each QP created */
	struct nic_mr     **mrs;         /* open hash by key */
	size_t              mr_slots;
	size_t              mr_count;    /* live regions */
	size_t              mr_used;     /* live and deleted slots */
	uint64_t            next_key;
	nm_mr_ledger        ledger;
};

struct nic_qp *nic_find_qp(struct nic *nic, uint32_t qpn);
struct nic_mr *nic_find_mr(struct nic *nic, uint64_t key);
/* Frees every region still registered, and the table. */
void nic_mr_free_all(struct nic *nic);

/* ---- Memory regions -------------------------------------------------------------- */

struct nic_mr {
	struct nic *nic;
	uint8_t    *addr;
	size_t      len;
	uint32_t    access;
	uint64_t    key;
	bool        virt_addr;
	uint64_t    iova;     /* virt_addr: the address peers name addr by */
	uint32_t    busy;     /* operations in flight using it */
	uint32_t    pd;       /* protection domain tag (0: none) */
};

/* Target-side check of a remote access through qp: resolves [addr,
 * addr+len) of region `key` to local memory with the given access, or
 * fails. */
enum nic_status nic_mr_check_remote(const struct nic_qp *qp, uint64_t key,
				    uint64_t addr, size_t len,
				    uint32_t access, uint8_t **out);

/* ---- Queue pairs and flows ------------------------------------------------------- */

struct nic_pending;  /* a scheduled callback into the glue */

/* Send requests: a record whose own state is zeroed (its wr is the
 * caller's to fill), with `extra` bytes for atomic values, and
 * its return (lock held). */
struct nic_swqe *nic_wqe_get(struct nic_part *part, size_t extra);
void nic_wqe_put(struct nic_part *part, struct nic_swqe *w);
/* Frees the recycled records of the world's parts and depot (teardown). */
void nic_recycled_free(struct nic_world *world);
void nic_calls_free(struct nic_world *world);

/* nic_sched.c: the thread table's life with the world's. */
void nic_sched_init(struct nic_world *world);
void nic_sched_fini(struct nic_world *world);

/* A posted send as the requester tracks it. */
struct nic_swqe {
	struct nic_wr    wr;
	size_t           len;          /* total payload (sends/writes) */
	uint32_t         psn_first;    /* unwrapped 32-bit PSNs */
	uint32_t         psn_count;
	uint32_t         msg_count;    /* RDMA segments: one message each */
	bool             ready;        /* the NIC has fetched it */
	nm_event_id      ready_event;
	struct nic_flow *flow;
	struct nic_swqe *next;
	struct nic_read_ahead ahead;   /* its data, when another process's */
	bool             recycled;     /* no atomic values: back to the pool */
	uint32_t         atomics_sent; /* its packets counted in atomics_out */
	uint8_t          atomic_values[]; /* operand, then compare values */
};

/* w, noted in the working set (arena/working_set.h): the lines a request
 * of a few segments uses, its own state at the end of the record. */
static inline struct nic_swqe *nic_wqe_touched(struct nic_swqe *w)
{
	if (w) {
		fs_touch_span(w, offsetof(struct nic_wr, rma));
		fs_touch_span(&w->len, sizeof(*w) - offsetof(struct nic_swqe, len));
	}
	return w;
}

/* Receive-side progress of the message being assembled from one peer. */
struct nic_rx_msg {
	bool             active;
	uint8_t          kind;         /* send or write */
	struct nic_rmatch *match;      /* send: where the data goes */
	uint8_t         *write_dst;    /* write: resolved target memory */
	size_t           offset;       /* bytes of payload seen so far */
	size_t           total;        /* write: length the RETH announced */
	uint64_t         key;          /* write: the region's */
};

/* Per-peer reliable transport state (both directions). */
struct nic_flow {
	struct nic_peer  peer;
	uint32_t         epoch;
	struct nic_flow *hash_next;
	struct nic_qp   *qp;
	/* Requester */
	struct nic_swqe *sq_head, *sq_tail;
	uint32_t         next_psn;     /* first PSN of the next new request */
	uint32_t         send_psn;     /* next PSN to put on the wire */
	uint32_t         acked_psn;    /* every PSN below is done */
	uint32_t         high_psn;     /* one past the highest PSN ever sent */
	uint32_t         ackreq_psn;   /* one past the last packet sent that
					* asked for an acknowledgement (since
					* the last go-back) */
	uint32_t         retries;      /* timeouts without progress */
	int32_t          rnr_retries;
	nm_event_id      timer;        /* ACK timeout or RNR wait */
	nm_time_ns       timer_at;     /* when that event fires */
	nm_time_ns       timer_due;    /* when the timeout really is */
	struct nic_swqe *cursor;       /* last request found by PSN */
	bool             rnr_waiting;
	bool             gap_asked;    /* re-asked for responses from gap_psn */
	uint32_t         gap_psn;
	/* Transmit scheduling */
	bool             in_txq;
	struct nic_flow *txq_prev, *txq_next;
	struct nic_pkt  *replies, *replies_tail; /* ACKs, NAKs, atomic answers */
	struct nic_read_job *reads, *reads_tail; /* read responses to send */
	/* Responder */
	uint32_t         resp_epoch;   /* the peer's requester epoch */
	uint32_t         epsn;         /* next expected PSN */
	uint32_t         msn;
	bool             nak_sent;     /* one sequence NAK per gap */
	struct nic_rx_msg rx;
	/* The results of the last NIC_ATOMIC_DEPTH atomic packets run, to
	 * answer a retransmitted request alike: a requester keeps no more
	 * than that many atomic packets unanswered (as a verbs requester
	 * keeps to its responder's resources), so a duplicate's result is
	 * always among them. */
	struct nic_atomic_replay {
		uint32_t psn;
		bool     valid;
		uint32_t len;
		uint8_t *data;
	} atomic_replay[NIC_ATOMIC_DEPTH];
	uint32_t         replay_next;  /* the entry the next result takes */
	/* Requester: atomic packets sent whose request has not completed */
	uint32_t         atomics_out;
};

/* The receive side's matching state (nic_match.c). */
struct nic_rmatch;
struct nic_rmatch_list {
	struct nic_rmatch *head, *tail;
};

struct nic_matcher {
	struct nic_rmatch_list posted_msg;
	struct nic_rmatch_list posted_tag;
	struct nic_rmatch_list unexpected;
	struct nic_rmatch_list draining;  /* multi-recv buffers full, busy */
	struct nic_rmatch     *spare;     /* records kept for reuse */
	size_t                 unexpected_bytes;
	uint64_t               next_claim_id;
	fs_arena              *arena;  /* the world's */
};

struct nic_qp {
	struct nic           *nic;
	enum nic_qp_type      type;
	uint32_t              qpn;
	uint32_t              gen;
	const struct nic_qp_ops *ops;     /* ops and ctx: in owner's process */
	void                 *ctx;
	struct nic_proc      *owner;
	struct nic_peer       rc_peer;
	bool                  rc_connected;
	/* Its failure came from a request it refused (nic_resp.c), not from
	 * one of its own: an affiliated asynchronous error for the owner. */
	bool                  failed_as_responder;
	/* Connected QPs: the first PSN its requests carry and the first its
	 * responder expects (ibv_modify_qp's sq_psn, rq_psn; 0 unless set). */
	uint32_t              sq_psn, rq_psn;
	bool                  in_error;
	uint32_t              ud_psn;     /* UD: next send PSN (24 bits) */
	uint32_t              qkey;       /* UD: what it accepts and sends */
	uint32_t              remote_access; /* NIC_ACCESS_REMOTE_* answered */
	uint32_t              pd;         /* protection domain tag (0: none) */
	uint32_t              mtu;        /* payload bytes per packet (path MTU) */
	/* Its timers and retry counts: the world's, or a connection's own
	 * (nic_qp_set_timing). rnr_timeout_ns is what it asks of senders in
	 * its receiver-not-ready NAKs. */
	struct nic_transport_params tp;
	/* A send longer than its receive draws an invalid-request NAK, as on
	 * a verbs RC QP; otherwise only the receiver hears of it (libfabric's
	 * truncation). */
	bool                  nak_long_messages;
	/* An RDMA write with immediate data takes a posted receive (verbs);
	 * otherwise it only reports to remote_done (libfabric). */
	bool                  imm_takes_receive;
	struct nic_flow     **flows;      /* hash by peer */
	size_t                flow_slots;
	size_t                flow_count;
	struct nic_matcher    matcher;
	/* Where its receives wait: its own matcher, or its SRQ's. */
	struct nic_matcher   *rq;
	struct nic_srq       *srq;
	struct nic_pending   *pending;    /* callbacks not yet delivered */
	nm_time_ns            pending_until; /* the last one's instant */
	size_t                outstanding;
};

/* Sets f's PSNs to its QP's starting ones (qp->sq_psn, qp->rq_psn). */
void nic_flow_start_psns(struct nic_flow *f);
struct nic_flow *nic_flow_get(struct nic_qp *qp, struct nic_peer peer,
			      bool create);

/* Bound to one peer (rc_peer). */
static inline bool nic_qp_connected_type(const struct nic_qp *qp)
{
	return qp->type == NIC_QP_RC || qp->type == NIC_QP_UC;
}

/* ---- Transmit scheduling (nic_tx.c) --------------------------------------------------- */

/* The flow has something to send: queue it for the port. */
void nic_flow_wants_tx(struct nic_flow *flow);
/* Queues a reply packet (ACK, NAK, atomic answer) on the flow. */
void nic_flow_reply(struct nic_flow *flow, struct nic_pkt *pkt);
/* Takes the flow off the NIC's queue and frees what it still had to send. */
void nic_flow_tx_release(struct nic_flow *flow);
/* The port started sending one of our packets: room for another. */
void nic_tx_port_started(struct nic *nic);
/* Queues a packet outside any flow (datagrams, MADs), sent before flows. */
void nic_tx_raw(struct nic *nic, struct nic_pkt *pkt);

/* UD: the datagram path (nic_ud.c). */
int nic_ud_post(struct nic_qp *qp, struct nic_swqe *wqe);
void nic_ud_receive(struct nic_qp *qp, struct nic_pkt *pkt);

/* RC: the QP fails as a whole (nic_qp.c). */
void nic_qp_fail(struct nic_qp *qp, enum nic_status why);
/* Host `host` is gone (its process died): a message it was in the middle
 * of sending to qp will never be finished, and the receive it was landing
 * in is flushed rather than held for ever (cancelable by nobody). */
void nic_qp_abandon_partial(struct nic_qp *qp, uint32_t host);

/* A read being answered, one response packet at a time. */
struct nic_read_job {
	uint32_t             epoch;
	uint32_t             psn;      /* of the next response */
	uint32_t             msn;
	const uint8_t       *src;
	size_t               len;
	size_t               sent;
	struct nic_read_ahead ahead;   /* src, when another process's */
	struct nic_read_job *next;
};

/* ---- Requester (nic_req.c) -------------------------------------------------------- */

/* The next request packet the flow may send now, or NULL. */
struct nic_pkt *nic_req_next(struct nic_flow *flow);
void nic_req_post(struct nic_flow *flow, struct nic_swqe *wqe);
void nic_req_on_ack(struct nic_flow *flow, const struct nic_pkt *pkt);
void nic_req_on_response(struct nic_flow *flow, const struct nic_pkt *pkt);
void nic_req_flow_release(struct nic_flow *flow);
/* Completes everything queued on the flow with NIC_WR_FLUSH_ERR. */
void nic_req_flush(struct nic_flow *flow);

/* ---- Responder (nic_resp.c) ------------------------------------------------------- */

void nic_resp_receive(struct nic *nic, struct nic_pkt *pkt);
/* The next read response the flow owes, or NULL. */
struct nic_pkt *nic_resp_next_read(struct nic_flow *flow);

/* ---- Completion delivery ----------------------------------------------------------- */

enum nic_pending_kind { NIC_PENDING_SEND, NIC_PENDING_RECV, NIC_PENDING_REMOTE };

/* Calls into the glue, in the process that owns the object (nic_proc.c). */
void nic_call_done(struct nic_qp *qp, enum nic_pending_kind which,
		   const struct nic_completion *c);
void nic_call_fatal(struct nic_qp *qp, enum nic_status why);
void nic_call_mad(struct nic *nic, uint32_t src_host, const void *mad,
		  size_t len);

/* Delivers c to the glue after `delay` of virtual time (the NIC's CQE
 * latency), in the order scheduled. */
void nic_complete_later(struct nic_qp *qp, enum nic_pending_kind kind,
			const struct nic_completion *c, nm_time_ns delay);

/* ---- Matching (nic_match.c) --------------------------------------------------------- */

/* A posted receive, an unexpected message, or the staging of a message
 * bound for a multi-receive buffer. */
enum nic_rmatch_kind { NIC_RM_POSTED, NIC_RM_UNEXPECTED, NIC_RM_STAGING };

struct nic_rmatch {
	enum nic_rmatch_kind kind;
	struct nic_recv    recv;       /* posted: as given */
	size_t             capacity;   /* posted: sum of sge lengths */
	size_t             used;       /* multi-recv: bytes consumed */
	uint32_t           busy;       /* multi-recv: messages still landing */
	bool               released;   /* multi-recv: takes no more */
	/* The message (set when one arrives): */
	struct nic_peer    source;
	uint64_t           tag;
	bool               tagged;
	uint32_t           end_flags;  /* NIC_CQ_IMM, NIC_CQ_SOLICITED */
	uint32_t           imm;
	size_t             truncated;  /* posted: bytes that did not fit */
	/* unexpected and staging: the data so far */
	uint8_t           *data;
	size_t             len;
	size_t             data_cap;
	bool               complete;   /* unexpected: all of it arrived */
	uint64_t           claim_id;   /* unexpected: reserved by PEEK|CLAIM */
	struct nic_rmatch *bound;      /* unexpected: posted receive waiting for
					* the rest; staging: the multi-recv */
	struct nic_rmatch *next;
};

/* Receives posted on mr, which is going, fail when a message lands (or
 * lands further, for one taken by a message on its way). */
void nic_match_revoke_mr(struct nic_matcher *mt, const struct nic_mr *mr);
void nic_match_revoke_recv(struct nic_rmatch *m, const struct nic_mr *mr);
/* Where the payload of a new incoming send goes. NULL: no room (RNR). */
struct nic_rmatch *nic_match_incoming(struct nic_qp *qp, struct nic_peer src,
				      bool tagged, uint64_t tag);
/* Places payload bytes [offset, offset+len) of the message. */
void nic_match_place(struct nic_qp *qp, struct nic_rmatch *m, size_t offset,
		     const void *data, size_t len);
/* The whole message (msg_len bytes) has arrived; end_flags: what its last
 * packet said (nic_msg_end_flags). */
void nic_match_finish(struct nic_qp *qp, struct nic_rmatch *m, size_t msg_len,
		      uint32_t end_flags, uint32_t imm);
/* The completion flags a message's last packet gives: NIC_CQ_IMM,
 * NIC_CQ_SOLICITED. */
uint32_t nic_msg_end_flags(const struct nic_pkt *last);
/* The message will not complete (its sender restarted): undo. */
void nic_match_abandon(struct nic_qp *qp, struct nic_rmatch *m);
/* The QP goes away with the message half in: free what only it holds. */
void nic_match_drop(struct nic_qp *qp, struct nic_rmatch *m);
int nic_match_post(struct nic_qp *qp, const struct nic_recv *recv);
/* The first posted untagged receive that accepts src (datagrams: no
 * unexpected queue), removed from its list; NULL when none. */
struct nic_rmatch *nic_match_take_posted(struct nic_qp *qp,
					 struct nic_peer src);
/* Completes every posted receive with NIC_WR_FLUSH_ERR. */
void nic_match_flush(struct nic_qp *qp);
/* A receive taken by an RDMA write with immediate data completes: no data
 * in it, the write's length and immediate data (NIC_CQ_REMOTE_WRITE, with
 * the last packet's end_flags). */
void nic_match_complete_write(struct nic_qp *qp, struct nic_rmatch *m,
			      size_t len, uint32_t end_flags, uint32_t imm,
			      uint64_t key);
/* Completes one receive a message was landing in (taken from its list)
 * with NIC_WR_FLUSH_ERR, and frees it. */
void nic_match_flush_taken(struct nic_qp *qp, struct nic_rmatch *m);
/* The same with another status. */
void nic_match_fail_taken(struct nic_qp *qp, struct nic_rmatch *m,
			  enum nic_status status);
/* A posted receive whose buffers the device rejects (NIC_RECV_BAD_KEY). */
static inline bool nic_match_bad_key(const struct nic_rmatch *m)
{
	return m->kind == NIC_RM_POSTED && (m->recv.flags & NIC_RECV_BAD_KEY);
}
int nic_match_cancel(struct nic_qp *qp, uint64_t cookie);
/* Frees every record of mt (nothing is reported). */
void nic_match_release(struct nic_matcher *mt);
/* Posts an untagged receive at the end of mt's list, with no look at
 * unexpected messages (a shared receive queue has none). */
int nic_match_append(struct nic_matcher *mt, const struct nic_recv *r);

/* A shared receive queue: posted receives that its QPs take from. */
struct nic_srq {
	struct nic        *nic;
	struct nic_matcher matcher;
	uint32_t           users;  /* QPs that take from it */
};

/* ---- Atomics (nic_atomic.c) ----------------------------------------------------------- */

size_t nic_atomic_size(int datatype);
/* Applies op elementwise: dst = op(dst, operand[, compare]); old values to
 * result when non-NULL. false for an unsupported op/datatype pair. */
bool nic_atomic_apply(int datatype, int op, size_t count, void *dst,
		      const void *operand, const void *compare, void *result);

/* The Q_Key of general services (QP1). */
#define NIC_GSI_QKEY 0x80010000u

#define NIC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- PSN arithmetic ------------------------------------------------------------------- */

#define NIC_PSN_MASK 0xffffffu
static inline uint32_t nic_psn_wire(uint32_t psn)
{
	return psn & NIC_PSN_MASK;
}

#endif
