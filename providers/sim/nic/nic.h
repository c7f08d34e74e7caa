/* SPDX-License-Identifier: BSD-2-Clause
 * The simulated RDMA NIC: what the libfabric glue (and, later, a verbs face)
 * builds on. It knows queue pairs, memory regions, work requests and
 * packets; it does not know fid objects or ops tables.
 *
 * World. One nic_world is one simulated fabric in this process: an event
 * engine (the virtual clock), the packet network of netmodel, and the NICs
 * attached to its hosts. Every call below expects the world lock held (the
 * glue takes it at each API entry); callbacks into the glue run with it held.
 *
 * Transport. Queue pairs are reliable (NIC_QP_RD: reliable datagram, one QP
 * talks to any peer QP with per-peer sequence state, as RDM endpoints need;
 * NIC_QP_RC: the same bound to one peer) or unreliable (NIC_QP_UD; NIC_QP_UC,
 * connected: RC's packets in the UC transport, sends and writes only, no
 * acknowledgement — a request completes once its last packet is out, and a
 * message that loses a packet or finds no receive is dropped). Reliable
 * traffic uses RoCE RC packets: PSNs, ACK/NAK, go-back-N retransmission on a
 * sequence NAK or a timeout, receiver-not-ready NAKs with a retry timer, and
 * error completions on remote access errors and retry exhaustion
 * (nic_transport.h has the state machines).
 *
 * Time. Posting takes no virtual time; the first packet leaves after the NIC
 * send overhead; a completion appears the NIC receive overhead after its last
 * packet (or ACK) arrived. Nothing moves unless the glue runs the world
 * (nic_world_run_*), which it does when the application waits.
 */
#ifndef FABSIM_NIC_H
#define FABSIM_NIC_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <arena/arena.h>
#include <netmodel/nm_config.h>
#include <netmodel/nm_engine.h>
#include <netmodel/nm_error.h>

struct nic_world;
struct nic;
struct nic_mr;
struct nic_qp;

/* ---- Transport parameters (FI_SIM_* provider parameters) ---------------- */

struct nic_transport_params {
	nm_time_ns ack_timeout_ns;   /* no ACK progress for this long: retransmit */
	uint32_t   retry_count;      /* timeouts in a row before giving up */
	nm_time_ns rnr_timeout_ns;   /* wait after a receiver-not-ready NAK */
	int32_t    rnr_retry;        /* RNR NAKs in a row before giving up; <0: never */
	uint32_t   window_packets;   /* unacknowledged packets per peer */
	uint32_t   ack_every;        /* AckReq on every Nth packet of a message */
	size_t     unexpected_bytes; /* buffer for messages with no posted receive */
};

void nic_transport_defaults(struct nic_transport_params *params);

/* ---- World ---------------------------------------------------------------- */

int nic_world_create(const nm_config *cfg,
		     const struct nic_transport_params *transport,
		     struct nic_world **out, nm_error *err);
/* The same with all the model's state in `arena`, so that every process
 * mapping it can run the model (MULTIPROCESS.md); NULL: process memory. */
int nic_world_create_in(fs_arena *arena, const nm_config *cfg,
			const struct nic_transport_params *transport,
			struct nic_world **out, nm_error *err);
/* Where a world's NICs keep their free records (packets, requests,
 * completions on their way, calls into the glue) and their counters. */
enum nic_world_parts {
	/* One set: every host's events run under the world's lock. */
	NIC_PARTS_ONE,
	/* A set per host, balanced through shared depots: what each host's
	 * partition will keep once processes run their own hosts' events
	 * (MULTIPROCESS.md, the partitioned design). Until then it only costs:
	 * ~0.3 us per transfer across two processes, as every transfer's
	 * records then span the lines of two sets. */
	NIC_PARTS_PER_HOST,
};
int nic_world_create_parts(fs_arena *arena, const nm_config *cfg,
			   const struct nic_transport_params *transport,
			   enum nic_world_parts parts, struct nic_world **out,
			   nm_error *err);
void nic_world_destroy(struct nic_world *world);

void nic_world_lock(struct nic_world *world);
void nic_world_unlock(struct nic_world *world);
/* For one turn of a program's busy loop: takes the lock when a poll may find
 * something. On a shared world, false (without waiting) while another
 * thread holds it, or while nothing a poll would find can have changed since
 * this thread's last poll found nothing (nic_lock.c). */
bool nic_world_poll_lock(struct nic_world *world);
/* Takes the lock if nobody holds it, this thread included: false at once
 * otherwise. */
bool nic_world_trylock(struct nic_world *world);
/* Lock not held: the caller's last hold found nothing to do (an empty
 * poll, a post refused for want of room) and it will try again at once.
 * A thread asleep on the lock gets it first: it holds the clock meanwhile
 * (it is entering the fabric), and a mutex lets the one that just let go
 * take it again before a sleeper wakes, for as long as it keeps trying. */
void nic_world_give_way(struct nic_world *world);
/* A shared world's clock stays at its start until `count` processes have
 * joined it (or a while has passed: a member that never comes must not
 * hang the others), so that what they compute does not depend on who
 * started first. Lock held. */
void nic_world_expect_processes(struct nic_world *world, uint32_t count);
/* This process stops using a world others go on with (lock held). */
void nic_world_leave(struct nic_world *world);
/* Lock held, after nic_world_leave, as the process exits: from now on a
 * thread of this process that takes the world's lock (one that was waiting
 * inside, say) lets it go at once and waits for the process's end. */
void nic_world_depart(struct nic_world *world);
/* True once a process died holding the lock of a shared world: its state
 * cannot be trusted, every call should fail (-FI_EIO). */
bool nic_world_broken(const struct nic_world *world);

nm_time_ns nic_world_now(const struct nic_world *world);
/* The hosts of the world's topology. */
uint32_t nic_world_host_count(const struct nic_world *world);
/* The links' MTU: the largest datagram a UD QP sends. */
uint32_t nic_world_mtu(const struct nic_world *world);
const nm_config *nic_world_config(const struct nic_world *world);

/* Runs the events of the next instant; false when nothing was pending. */
bool nic_world_run_instant(struct nic_world *world);

/* Runs until pred(ctx) holds or virtual time reaches `deadline`
 * (NM_TIME_NEVER: no deadline). NM_RUN_IDLE when nothing is left to run. */
nm_run_result nic_world_run_until(struct nic_world *world,
				  bool (*pred)(void *ctx), void *ctx,
				  nm_time_ns deadline);

/* Fault injection: a link's state now; Bernoulli loss on every link. */
int nic_world_set_link(struct nic_world *world, uint32_t link, bool up);
int nic_world_set_loss(struct nic_world *world, double rate);

/* When the next event is due; false when none is pending. */
bool nic_world_next_event(struct nic_world *world, nm_time_ns *when);

/* Lets `ns` of virtual time pass (a blocking cost, e.g. registration). */
void nic_world_advance(struct nic_world *world, nm_time_ns ns);

struct nic_stats {
	uint64_t packets_sent;     /* data, ACK and response packets handed to the wire */
	uint64_t bytes_sent;       /* their wire bytes */
	uint64_t packets_received; /* reached a NIC intact */
	uint64_t packets_dropped;  /* lost by the network (any reason) */
	uint64_t packets_corrupted;/* arrived damaged and discarded (ICRC) */
	uint64_t retransmits;      /* packets sent again */
	uint64_t timeouts;         /* retransmission timer expiries */
	uint64_t seq_naks;         /* PSN sequence error NAKs sent */
	uint64_t rnr_naks;         /* receiver-not-ready NAKs sent */
	uint64_t duplicates;       /* packets received twice */
	uint64_t retry_exhausted;  /* peers given up on */
	uint64_t ud_no_buffer;     /* datagrams dropped: no receive posted */
	uint64_t ud_bad_qkey;      /* datagrams dropped: the Q_Key differs */
	uint64_t uc_dropped;       /* UC messages a receiver dropped: broken
				    * by a lost packet, no receive, a write
				    * refused (wholly lost ones: unseen) */
	uint64_t threads_out_of_time; /* program threads that stayed away */
	uint64_t pollers_moved;    /* pollers that left the CPU of the thread
				    * they waited for, for another */
	uint64_t dma_failures;     /* host memory another process could not reach */
};

/* ---- Threads and virtual time (nic_sched.c) --------------------------------
 * A program's threads share the world's clock as SimGrid's maestro shares
 * it: it moves only while no thread runs the program. All with the world
 * lock held. */

/* The calling thread entered the world (call it on every lock). */
void nic_sched_enter(struct nic_world *world);
/* A poll found nothing: runs the next instant if no thread is running
 * (true when it ran). */
bool nic_sched_poll(struct nic_world *world);
/* The same, for a thread about to block outside the fabric until something
 * arrives for its process (poll() after fi_trywait): it is idle at once,
 * not only from its second poll in a row. */
void nic_sched_poll_blocking(struct nic_world *world);
/* Something for a waiter may have appeared (work posted, a completion). */
void nic_sched_posted(struct nic_world *world);

enum nic_wait_end {
	NIC_WAIT_READY,   /* ready(ctx) holds */
	NIC_WAIT_TIMEOUT, /* the deadline passed in virtual time */
	NIC_WAIT_IDLE,    /* settle: nothing is left to simulate */
	NIC_WAIT_STUCK,   /* nothing to simulate, nobody posted for a second */
};

/* Blocks the calling thread until ready(ctx) (NULL: never), `deadline`, or
 * — with `settle` — nothing left to simulate. */
enum nic_wait_end nic_sched_wait(struct nic_world *world,
				 bool (*ready)(void *ctx), void *ctx,
				 nm_time_ns deadline, bool settle);
/* A descriptor of this process that a thread may be blocked on has just
 * become readable: its threads that were out of time are back in it (they
 * are about to call in), and are taken out again only if they stay away.
 * Lock held. */
void nic_sched_rouse(struct nic_world *world);
/* The calling thread (lock held) leaves time until it calls in again: it
 * is about to wait outside the fabric for something no event of the world
 * brings (a helper thread with nothing to do). Not told as an absence. */
void nic_sched_step_out(struct nic_world *world);
/* Blocks the calling thread for `ns` of virtual time (a cost it pays). */
void nic_sched_sleep(struct nic_world *world, nm_time_ns ns);
/* The same for a thread that computes while it waits for time to pass (it
 * reads the clock in a loop): processes away from the fabric are not
 * waited for, since the thread itself is the one that needs the clock to
 * move. Lock held, entered. */
void nic_sched_spend(struct nic_world *world, nm_time_ns ns);

void nic_world_stats(const struct nic_world *world, struct nic_stats *out);

/* ---- Recording ------------------------------------------------------------ */

/* Everything the NICs put on the network, as RoCEv2 frames in nanosecond
 * pcap files that Wireshark reads (nic_record.c says what goes in them). */
struct nic_record_params {
	const char *path;     /* the whole fabric into this file */
	bool        per_node; /* instead one file per host: path less a final
			       * ".pcap", then ".<host>.pcap" */
	uint32_t    snaplen;  /* bytes kept of each frame: 0 (all) or 128
			       * (every header) to 262144 */
	const char *log_path; /* NULL, or a text file with one line per frame
			       * written: the NIC's own view of the packet */
};

/* Starts recording (files are created now; per node, as NICs open). */
int nic_world_record(struct nic_world *world,
		     const struct nic_record_params *params, nm_error *err);
/* Writes what is pending and closes the files (nic_world_destroy does it
 * too). 0, or the first error recording met, with its message. */
int nic_world_record_stop(struct nic_world *world, nm_error *err);
/* Whether the world records its wire. */
bool nic_world_recording(const struct nic_world *world);
/* The world records where `params` say (path and per-node choice). */
bool nic_world_records_as(const struct nic_world *world,
			  const struct nic_record_params *params);
/* Its trace file or files, in words. */
void nic_world_record_where(const struct nic_world *world, char *buf,
			    size_t len);
/* Another process attached to a shared world, and the host it runs. */
struct nic_member {
	pid_t    pid;
	uint32_t host;
};
/* The other processes that run a host of the world and have not left
 * (lock held): up to `max` of them in out[]; how many there are. */
size_t nic_world_members(struct nic_world *world, struct nic_member *out,
			 size_t max);

/* Whether processes other than this one still use the world (lock held). */
bool nic_world_others_present(struct nic_world *world);
/* This process stops writing the files of a world others go on recording
 * (its handles close; the recording goes on). */
void nic_world_record_leave(struct nic_world *world);
/* The first error recording met so far (0: none). */
int nic_world_record_error(const struct nic_world *world, nm_error *err);
/* Pushes what this process buffered for any world's trace to its files:
 * 0, or the first error recording met (a full disk), with its message.
 * No lock needed: for a process on its way out. */
int nic_record_flush_process(nm_error *err);

/* ---- NICs ------------------------------------------------------------------ */

/* Attaches a NIC to the next free host of the topology (host ==
 * NIC_HOST_ANY), or takes another reference on the NIC of `host` (opening
 * it if needed). -ENOSPC when the topology has no free host; err says how
 * to grow it. */
#define NIC_HOST_ANY UINT32_MAX
int nic_open(struct nic_world *world, uint32_t host, struct nic **out,
	     nm_error *err);
/* Drops a reference; the last one detaches the NIC. */
void nic_close(struct nic *nic);

/* Management datagrams: what a connection manager sends and receives on
 * queue pair 1 (unreliable: the manager retries). An empty one (len 0)
 * says that host src_host has gone — its process ended without closing
 * its connections — and that they are over, as the kernel of a killed
 * process tears its connections down (DREQ). */
#define NIC_MAD_MAX 256
typedef void (*nic_mad_fn)(void *ctx, struct nic *nic, uint32_t src_host,
			   const void *mad, size_t len);
void nic_set_mad_handler(struct nic *nic, nic_mad_fn fn, void *ctx);
int nic_send_mad(struct nic *nic, uint32_t dst_host, const void *mad,
		 size_t len);

/* A communication id for a connection of the host's connection manager:
 * unique on the host whichever of its processes asks, as IB CM's ids are
 * the host's kernel's, so that a new process's request is never taken for
 * a stale one of an earlier process on the host. */
uint32_t nic_cm_comm_id(struct nic *nic);

uint32_t nic_host(const struct nic *nic);
struct in_addr nic_ipv4(const struct nic *nic);
struct nic_world *nic_world_of(const struct nic *nic);

/* Queue pair numbers double as the port of an endpoint's address. */
#define NIC_QPN_BASE 0x100
#define NIC_QPN_MAX  0xffff

/* The IPv4 address of a host. */
struct in_addr nic_ipv4_of_host(const struct nic_world *world, uint32_t host);

/* Timers for the layers above (e.g. a connection manager), ordered like
 * the NIC's own events of `host`. */
int nic_world_schedule(struct nic_world *world, uint32_t host,
		       nm_time_ns delay, nm_event_fn fn, void *ctx,
		       nm_event_id *id);
void nic_world_cancel(struct nic_world *world, nm_event_id id);

/* The host with this IPv4 address, or NIC_HOST_ANY. */
uint32_t nic_world_host_of_ipv4(const struct nic_world *world,
				struct in_addr addr);

/* ---- Memory regions -------------------------------------------------------- */

enum nic_access {
	NIC_ACCESS_LOCAL = 1u << 0,   /* source or sink of local operations */
	NIC_ACCESS_REMOTE_READ = 1u << 1,
	NIC_ACCESS_REMOTE_WRITE = 1u << 2,
	NIC_ACCESS_REMOTE_ATOMIC = 1u << 3,
	/* the NIC writes into it for local operations (receives, read and
	 * atomic results): its pages must be writable */
	NIC_ACCESS_LOCAL_WRITE = 1u << 4,
};

/* Registers [addr, addr+len). key: NIC_KEY_ANY lets the NIC choose, else
 * the requested key (-EEXIST when taken). virt_addr: remote addresses are
 * virtual addresses; otherwise offsets from addr. Charges the registration
 * cost in virtual time (*cost_ns says how much) and enforces the preset's
 * MR limits (-ENOSPC: count, -ENOMEM: bytes). */
#define NIC_KEY_ANY UINT64_MAX
int nic_mr_reg(struct nic *nic, void *addr, size_t len, uint32_t access,
	       uint64_t key, bool virt_addr, struct nic_mr **out,
	       nm_time_ns *cost_ns, nm_error *err);
/* -EBUSY while operations in flight use it. */
int nic_mr_dereg(struct nic_mr *mr);
uint64_t nic_mr_key(const struct nic_mr *mr);
/* True when [addr, addr+len) lies inside the region (local addresses). */
bool nic_mr_covers(const struct nic_mr *mr, const void *addr, size_t len);

/* ---- Queue pairs ------------------------------------------------------------ */

enum nic_qp_type {
	NIC_QP_RD, /* reliable, any peer */
	NIC_QP_RC, /* reliable, one peer */
	NIC_QP_UD, /* unreliable datagrams, one packet each */
	NIC_QP_UC, /* unreliable, one peer: sends and writes, no ACKs */
};

/* A peer queue pair. */
struct nic_peer {
	uint32_t host;
	uint32_t qpn;
};

/* Status of a completion: 0 or a negative FI_E* code, with the NIC's own
 * reason for fi_cq_strerror. */
enum nic_status {
	NIC_OK = 0,
	NIC_LOC_PROT_ERR,     /* local buffer not registered / no access */
	NIC_REM_ACCESS_ERR,   /* bad key, bounds or rights at the target */
	NIC_REM_INV_REQ_ERR,  /* target could not parse the request */
	NIC_REM_OP_ERR,       /* target failed the operation */
	NIC_RETRY_EXC_ERR,    /* no ACK after retry_count timeouts */
	NIC_RNR_RETRY_EXC_ERR,/* receiver not ready after rnr_retry NAKs */
	NIC_WR_FLUSH_ERR,     /* cancelled or flushed */
	NIC_TRUNCATED,        /* receive buffer too small */
	NIC_STATUS_COUNT
};

const char *nic_status_str(enum nic_status status);
int nic_status_errno(enum nic_status status); /* positive FI_E* value */

enum nic_wr_opcode {
	NIC_WR_SEND,
	NIC_WR_WRITE,
	NIC_WR_READ,
	NIC_WR_ATOMIC,       /* op on target memory, no result */
	NIC_WR_FETCH_ATOMIC, /* op, original value returned */
	NIC_WR_COMPARE_ATOMIC,
};

enum nic_wr_flags {
	NIC_WR_IMM = 1u << 0,      /* carries 4 bytes of immediate data */
	NIC_WR_TAGGED = 1u << 1,   /* send carries a tag */
	NIC_WR_INLINE = 1u << 2,   /* payload copied at post time */
	NIC_WR_FENCE = 1u << 3,    /* wait for earlier ops to this peer */
	NIC_WR_SIGNALED = 1u << 4, /* the glue wants to hear of success */
	NIC_WR_QKEY = 1u << 5,     /* UD: wr.qkey, not the QP's own Q_Key */
	NIC_WR_SOLICITED = 1u << 6,/* send, write with immediate: the BTH's SE
				    * bit, for the receiver's solicited-only
				    * completion notification */
};

#define NIC_MAX_SGE 4
/* Atomic packets a requester keeps unanswered per peer, and the results a
 * responder remembers to answer their retransmissions with; the verbs
 * face's max_qp_rd_atom. An atomic request (one packet per target
 * segment) must fit, or it would wait for room it holds itself. */
#define NIC_ATOMIC_DEPTH 16
#define NIC_INLINE_MAX 64
/* Largest operand of one atomic operation (all elements together). */
#define NIC_ATOMIC_MAX_BYTES 512

/* Bytes of one element of `datatype` (0: unknown type). */
size_t nic_atomic_size(int datatype);
/* Elements of `datatype` one atomic may carry (0: unsupported type). */
size_t nic_atomic_max_count(const struct nic_world *world, int datatype,
			    bool compare);
/* Whether the NIC implements op on datatype. */
bool nic_atomic_supported(int datatype, int op);

struct nic_sge {
	void          *addr;
	size_t         len;
	struct nic_mr *mr;  /* NULL: unregistered (allowed unless checked) */
};

struct nic_rma_seg {
	uint64_t addr;
	size_t   len;
	uint64_t key;
};

/* Atomic operation on the target; datatype and op are libfabric's
 * enum fi_datatype / enum fi_op values. The NIC reads the operand and compare
 * values when the request is posted (as verbs carries them in the work
 * request): the caller may reuse them at once. */
struct nic_atomic {
	int            datatype;
	int            op;
	size_t         count;
	const void    *operand; /* count elements; NULL for a read */
	const void    *compare; /* count elements, for compare ops */
	/* Fetch and compare ops: where the original values land, in order. */
	struct nic_sge result[NIC_MAX_SGE];
	size_t         result_count;
};

struct nic_wr {
	uint64_t           wr_id;    /* the glue's cookie */
	enum nic_wr_opcode opcode;
	uint32_t           flags;
	struct nic_peer    peer;     /* RD/UD: destination; RC: ignored */
	uint32_t           imm;
	uint32_t           qkey;     /* UD, with NIC_WR_QKEY */
	uint64_t           tag;
	size_t             sge_count;
	struct nic_sge     sge[NIC_MAX_SGE];
	size_t             rma_count;
	struct nic_rma_seg rma[NIC_MAX_SGE];
	struct nic_atomic  atomic;
	/* Owned by the NIC while posted. */
	uint8_t            inline_data[NIC_INLINE_MAX];
	uint8_t            inline_compare[NIC_INLINE_MAX];
};

/* ---- Receives ----------------------------------------------------------------- */

enum nic_recv_flags {
	NIC_RECV_TAGGED = 1u << 0,
	NIC_RECV_MULTI = 1u << 1,   /* keeps receiving until min_free is left */
	NIC_RECV_PEEK = 1u << 2,    /* only look in the unexpected queue */
	NIC_RECV_CLAIM = 1u << 3,   /* take a message found by a PEEK */
	NIC_RECV_DISCARD = 1u << 4, /* drop the found message */
	/* Its buffers' local key is one the device rejects, which it finds
	 * when a message lands in it: the receive completes with
	 * NIC_LOC_PROT_ERR, the QP fails, and a reliable sender hears a
	 * remote operational error. */
	NIC_RECV_BAD_KEY = 1u << 5,
};

#define NIC_ANY_SOURCE ((struct nic_peer){ UINT32_MAX, UINT32_MAX })

struct nic_recv {
	uint64_t        cookie;  /* the glue's */
	uint32_t        flags;
	struct nic_peer source;  /* NIC_ANY_SOURCE or one peer */
	uint64_t        tag;
	uint64_t        ignore;
	size_t          sge_count;
	struct nic_sge  sge[NIC_MAX_SGE];
	size_t          min_free;  /* NIC_RECV_MULTI */
	uint64_t        claim_id;  /* NIC_RECV_CLAIM: from the PEEK completion */
};

/* What the NIC reports to the glue. */
struct nic_completion {
	uint64_t         cookie;   /* wr_id or recv cookie */
	enum nic_status  status;
	enum nic_wr_opcode opcode; /* for sends: what was posted */
	uint32_t         flags;    /* NIC_CQ_* below */
	size_t           len;      /* bytes placed (receive) */
	size_t           olen;     /* bytes that did not fit (truncation) */
	void            *buf;      /* receive: where the data starts */
	uint64_t         tag;
	uint32_t         imm;
	struct nic_peer  source;
	uint64_t         claim_id; /* PEEK: names the message for CLAIM */
	uint64_t         key;      /* remote operations: the region's key */
	nm_time_ns       time;
};

enum nic_cq_flags {
	NIC_CQ_IMM = 1u << 0,
	NIC_CQ_TAGGED = 1u << 1,
	NIC_CQ_MULTI_RECV_DONE = 1u << 2, /* buffer released */
	NIC_CQ_REMOTE_WRITE = 1u << 3,
	NIC_CQ_REMOTE_READ = 1u << 4,
	NIC_CQ_REMOTE_ATOMIC = 1u << 5,
	NIC_CQ_PEEK = 1u << 6,
	NIC_CQ_SOLICITED = 1u << 7, /* the message's last packet had SE */
};

/* How the NIC calls the glue back. All run with the world lock held. */
struct nic_qp_ops {
	void (*send_done)(void *ctx, const struct nic_completion *c);
	void (*recv_done)(void *ctx, const struct nic_completion *c);
	/* A peer's RMA or atomic touched our memory (for FI_RMA_EVENT and
	 * remote CQ data); len bytes, imm valid with NIC_CQ_IMM. */
	void (*remote_done)(void *ctx, const struct nic_completion *c);
	/* An RC queue pair went into the error state (retry exhaustion,
	 * fatal NAK, nic_qp_set_error): everything posted is flushed. May be
	 * NULL. */
	void (*qp_fatal)(void *ctx, enum nic_status why);
};

int nic_qp_create(struct nic *nic, enum nic_qp_type type,
		  const struct nic_qp_ops *ops, void *ctx,
		  struct nic_qp **out);
/* Flushes what is still posted (NIC_WR_FLUSH_ERR completions are not
 * reported: the glue is going away) and frees the QP. */
void nic_qp_destroy(struct nic_qp *qp);
uint32_t nic_qp_num(const struct nic_qp *qp);
/* Gives the QP another number (an address a program chose): -EADDRINUSE
 * when taken, -EINVAL outside NIC_QPN_BASE..NIC_QPN_MAX or once the QP
 * has talked to anyone. */
int nic_qp_renumber(struct nic_qp *qp, uint32_t qpn);
struct nic *nic_qp_nic(const struct nic_qp *qp);

/* RC and UC only: the one peer. */
int nic_qp_connect(struct nic_qp *qp, struct nic_peer peer);

/* A connection's own timers and retry counts (verbs QP attributes): the
 * fields `which` names (NIC_TIMING_*) replace the world's for the timers
 * and counts that start from now on; -EINVAL for a QP that is not
 * connected. rnr_retry < 0: retry for ever. rnr_timer_ns: the wait this
 * QP's receiver-not-ready NAKs ask of senders (rounded up to IBA's codes,
 * nic_rnr_timer_code). */
struct nic_qp_timing {
	nm_time_ns ack_timeout_ns;
	uint32_t   retry_count;
	int32_t    rnr_retry;
	nm_time_ns rnr_timer_ns;
};
enum {
	NIC_TIMING_ACK_TIMEOUT = 1u << 0,
	NIC_TIMING_RETRY = 1u << 1,
	NIC_TIMING_RNR_RETRY = 1u << 2,
	NIC_TIMING_RNR_TIMER = 1u << 3,
};
/* A connected QP's starting PSNs: the requester's first (sq_psn) and what
 * the responder expects first (rq_psn), as a verbs program sets them in
 * RTS and RTR; before any traffic. A pair whose PSNs do not match drops or
 * refuses each other's packets, as real NICs do. */
enum nic_psn_which { NIC_PSN_SQ = 1u << 0, NIC_PSN_RQ = 1u << 1 };
int nic_qp_set_psn(struct nic_qp *qp, unsigned which, uint32_t psn);
int nic_qp_set_timing(struct nic_qp *qp, const struct nic_qp_timing *t,
		      unsigned which);
/* The wait a receiver-not-ready NAK's 5-bit timer code asks for (IBA
 * table 45), and the smallest code asking for at least ns. */
nm_time_ns nic_rnr_timer_ns(uint32_t code);
uint32_t nic_rnr_timer_code(nm_time_ns ns);

/* RC: a send that does not fit the receive it lands in fails at the
 * sender too (NIC_REM_INV_REQ_ERR, the QP in error), as IBA's RC does;
 * by default only the receiver sees it (NIC_TRUNCATED). */
void nic_qp_nak_long_messages(struct nic_qp *qp);

/* RC and UC: an RDMA write with immediate data takes a posted receive, as
 * in verbs: it completes there (recv_done, NIC_CQ_REMOTE_WRITE with the
 * write's length and immediate data); with none posted the responder is
 * not ready (RC: RNR NAKs; UC: the message is dropped). By default it is
 * reported to remote_done only. */
void nic_qp_imm_takes_receive(struct nic_qp *qp);

/* The path MTU of a connection (a power of two from 256 bytes; more than
 * the link's is the link's), before the QP has talked to anyone: -EINVAL
 * otherwise. Both ends must use the same. A new QP has the link's. */
int nic_qp_set_mtu(struct nic_qp *qp, uint32_t bytes);

/* UD only: the Q_Key the QP accepts datagrams with, and sends with unless
 * a request names another (NIC_WR_QKEY). A new UD QP has NIC_DGRAM_QKEY. */
int nic_qp_set_qkey(struct nic_qp *qp, uint32_t qkey);
#define NIC_DGRAM_QKEY 0x11111111u

/* RC, UC: the remote operations (NIC_ACCESS_REMOTE_*) the QP answers, as
 * verbs' qp_access_flags; a new QP answers all three. One it does not is
 * refused as an access error. */
void nic_qp_set_remote_access(struct nic_qp *qp, uint32_t access);
/* A protection domain tag (0: none): a remote access through a region
 * tagged with another domain than the QP's is refused, as a device refuses
 * an R_Key of another PD. */
void nic_qp_set_pd(struct nic_qp *qp, uint32_t pd);
void nic_mr_set_pd(struct nic_mr *mr, uint32_t pd);
/* A region addressed by virtual address: the address peers use for its
 * first byte (verbs' IOVA; by default its own address). */
void nic_mr_set_iova(struct nic_mr *mr, uint64_t iova);

/* RC: moves the QP to the error state, as verbs does on a fatal error or
 * a disconnect: posted work completes with NIC_WR_FLUSH_ERR, and so does
 * anything posted later. */
void nic_qp_set_error(struct nic_qp *qp);
bool nic_qp_in_error(const struct nic_qp *qp);
/* It went to the error state because it refused a peer's request (a bad
 * key or bounds, an invalid request), not because of one of its own. */
bool nic_qp_failed_as_responder(const struct nic_qp *qp);

/* Posts a work request (copied). Inline payloads are copied now. -EAGAIN
 * never: queue depth is the glue's business. -EINVAL for a malformed WR;
 * -EMSGSIZE for a UD send larger than one packet. */
int nic_post_send(struct nic_qp *qp, const struct nic_wr *wr);

/* Posts a receive (copied). With PEEK/CLAIM/DISCARD the answer comes as a
 * recv_done completion (status NIC_OK, or NIC_WR_FLUSH_ERR when no such
 * message: the glue reports FI_ENOMSG). */
int nic_post_recv(struct nic_qp *qp, const struct nic_recv *recv);

/* Cancels a posted receive; a NIC_WR_FLUSH_ERR completion follows. 0, or
 * -ENOENT when it is not posted (already matched). */
int nic_cancel_recv(struct nic_qp *qp, uint64_t cookie);

/* Posted sends not yet completed (for close-time checks). */
size_t nic_qp_outstanding(const struct nic_qp *qp);

/* ---- Shared receive queues ----------------------------------------------------- */

/* Receives that several RC (or UC) QPs of a NIC take from, in the order
 * posted.
 * A send that finds none draws a receiver-not-ready NAK (no unexpected
 * queue). A QP's error leaves them for the others. Completions come from
 * the QP that took the receive (its recv_done). */
struct nic_srq;
int nic_srq_create(struct nic *nic, struct nic_srq **out);
/* -EBUSY while a QP uses it; else frees it and what is still posted
 * (nothing is reported: the glue is going away). */
int nic_srq_destroy(struct nic_srq *srq);
/* An untagged receive from any source (flags 0), copied. */
int nic_srq_post_recv(struct nic_srq *srq, const struct nic_recv *recv);
/* The QP's receives come from srq from now on: an RC or UC QP with
 * nothing posted yet, of srq's NIC; -EINVAL otherwise. */
int nic_qp_use_srq(struct nic_qp *qp, struct nic_srq *srq);

#endif
