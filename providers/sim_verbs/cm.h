/* SPDX-License-Identifier: BSD-2-Clause
 * The librdmacm face: rdma_cm's API (rdma/rdma_cma.h, as installed by
 * rdma-core) over the same simulated fabric as the libibverbs face, which
 * it uses through the verbs API (contexts, QPs, modify_qp) and its private
 * interface (sv_private.h: lock, time, MADs).
 *
 *   cm_channel.c  event channels, events, rdma_get_cm_event
 *   cm_id.c       ids, address binding and resolution, listening, QPs,
 *                 devices, names and options
 *   cm_sync.c     synchronous ids (a NULL channel): calls that wait for
 *                 their event, rdma_create_ep, rdma_get_request, the
 *                 default PD and the CQs rdma_create_qp makes
 *   cm_rsocket.c  the rsocket API, whose sockets cannot be made here
 *   cm_conn.c     connections: IB CM MADs (REQ/REP/RTU/REJ/DREQ/DREP)
 *                 on the simulated wire, with retries
 *
 * Addressing is IPv4, as rdma_cm on RoCE: an id binds to a device's IPv4
 * address (or the wildcard) and a port; a service ID is the port space
 * above the port (0x0000000001060000 | port for RDMA_PS_TCP). RDMA_PS_UDP
 * ids have UD QPs, and "connect" with service ID resolution (SIDR_REQ,
 * SIDR_REP): the answer names the remote QP and its Q_Key.
 */
#ifndef FABSIM_SV_CM_H
#define FABSIM_SV_CM_H

#include <rdma/rdma_cma.h>

#include "providers/sim/sim_cm_mad.h"
#include "sv_private.h"

extern const struct sv_private_ops *cm_sv;

/* Event channels -------------------------------------------------------- */

struct cm_event {
	struct rdma_cm_event ev;
	struct cm_event     *next;
	uint8_t              data[CM_MAD_SIZE]; /* private data */
};

struct cm_channel {
	struct rdma_event_channel ch;
	struct sv_waitable        w;
	struct cm_event          *head, *tail;
};

/* Ids -------------------------------------------------------------------------- */

enum cm_state {
	CM_IDLE,
	CM_ADDR_QUERY,    /* asked for a neighbour nobody answers for */
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,  /* the program's own QP: waits for rdma_establish */
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DISCONNECTED,
};

struct cm_id {
	struct rdma_cm_id   id;
	struct cm_channel  *channel;
	struct cm_channel  *own_channel;  /* created with a NULL channel */
	enum cm_state       state;
	bool                bound;
	int                 dev;          /* device index, -1: wildcard */
	/* Connection (IB CM) state */
	uint32_t            local_comm_id, remote_comm_id;
	uint32_t            remote_host, remote_qpn;
	uint8_t             last_mad[CM_MAD_SIZE];   /* resent on timeout */
	unsigned            retries;
	nm_event_id         timer;
	bool                timer_armed;
	bool                disconnect_reported;
	bool                rejected;     /* we sent REJ (last_mad) */
	bool                passive;      /* made by a REQ */
	/* What its RC QP gets from the CM's exchange: transport retries (the
	 * requester's choice, for both sides) and RNR retries (each side's
	 * from the other's conn_param; 7: unlimited). */
	uint8_t             retry_count, rnr_retry_count;
	/* RDMA reads and atomics: this side's depths (rdma_conn_param's
	 * responder_resources and initiator_depth), and the peer's, from its
	 * REQ or REP. */
	uint8_t             responder_resources, initiator_depth;
	uint8_t             peer_responder_resources, peer_initiator_depth;
	struct in_addr      peer_ip;      /* where the peer is: the
					   * destination, or for a loopback
					   * address (127/8) the local NIC */
	struct cm_id       *listener;     /* REQ_RCVD: who got the request */
	/* Synchronous use (cm_sync.c): made with a NULL channel. */
	bool                sync;
	/* rdma_create_ep on a passive id: the QP each request gets. */
	bool                has_ep_attr;
	struct ibv_qp_init_attr ep_attr;
	struct ibv_pd      *ep_pd;
	bool                own_cqs;      /* rdma_create_qp made id's CQs */
	struct cm_id       *next;         /* every id */
};

/* The world's ids (lock held). */
extern struct cm_id *cm_ids;

/* Setup shared by the rdma_* entry points: the fabric, devices and MAD
 * handlers exist. 0 or -errno. */
int cm_init(void);
/* The verbs context rdma_cm uses for device i. */
struct ibv_context *cm_context(int dev);
int cm_device_count(void);
struct in_addr cm_device_ip(int dev);
/* An id for a connection request, on the listener's channel with its
 * context (lock held). 0 or -ENOMEM. */
int cm_id_new_locked(struct cm_id *listener, struct rdma_cm_id **out);

/* Queues an event for an id on its channel (lock held); data is copied
 * (len bytes, at most CM_MAD_SIZE). */
void cm_event_push(struct cm_id *id, enum rdma_cm_event_type type,
		   int status, struct cm_id *listener,
		   const void *data, size_t len, uint8_t responder_resources,
		   uint8_t initiator_depth);
/* The same for a UD port space: the event's param.ud (the private data,
 * and for ESTABLISHED the remote QP, its Q_Key and how to reach it). */
void cm_event_push_ud(struct cm_id *id, enum rdma_cm_event_type type,
		      int status, struct cm_id *listener, const void *data,
		      size_t len, const struct ibv_ah_attr *ah, uint32_t qpn,
		      uint32_t qkey);
/* Drops the events still queued for id (it is going away). */
void cm_events_drop(struct cm_id *id);
/* Moves id's queued events to its new channel. */
void cm_events_move(struct cm_id *id, struct cm_channel *from);

/* Synchronous ids (cm_sync.c), lock not held. A call that succeeded on
 * id waits, when id is synchronous, for the event it leads to and keeps
 * it in id->event (acknowledged by the next such call or at the end):
 * 0, or -1 with errno from the event. Otherwise 0. */
int cm_sync_complete(struct cm_id *id);
/* Acknowledges the event a synchronous id keeps. */
void cm_sync_forget(struct cm_id *id);
/* The PD rdma_create_qp uses when given none: one per device. */
struct ibv_pd *cm_default_pd(struct ibv_context *ctx);
/* rdma_create_qp: the CQs init lacks, made for id with completion
 * channels (id->send_cq, id->recv_cq and their channels), as rdma_cm does;
 * 0 or -1 with errno. cm_qp_cqs_free undoes it. */
int cm_qp_cqs(struct cm_id *id, struct ibv_qp_init_attr *init);
void cm_qp_cqs_free(struct cm_id *id);

/* Connections (cm_conn.c), lock held. */
void cm_on_mad(void *ctx, struct nic *nic, uint32_t src_host,
	       const void *mad, size_t len);
/* The id goes away: tell the peer if it was connected, and remember the
 * connection so that its late or resent MADs are answered, not taken for
 * new ones. */
void cm_conn_teardown(struct cm_id *id);
/* An address on the fabric's network that no host has: as the kernel's
 * neighbour resolution, it is asked for until timeout_ms ends, then
 * RDMA_CM_EVENT_ADDR_ERROR with -ETIMEDOUT (lock held). */
void cm_addr_query(struct cm_id *id, int timeout_ms);
/* A listener goes away: its requests nobody has taken yet are rejected. */
void cm_conn_drop_requests(struct cm_id *listener);
/* Whether an event for id is still queued on its channel. */
bool cm_event_queued(const struct cm_id *id);

/* The RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d). */
void cm_gid_of(struct in_addr ip, union ibv_gid *gid);

#endif
