/* SPDX-License-Identifier: BSD-2-Clause
 * Communication Management MADs (IBA vol 1, 12.6) as the simulated NIC puts
 * them on the wire: a 24-byte MAD header and the CM message, big endian, at
 * the offsets the specification gives, so that Wireshark decodes them. The
 * private data of a REQ starts with rdma_cm's IP header (its "cma header":
 * version, IP version, port, source and destination IP), as on RoCE. */
#ifndef FABSIM_SIM_CM_MAD_H
#define FABSIM_SIM_CM_MAD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define CM_MAD_SIZE 256

enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011, /* message receipt acknowledgement (IBA 12.6.6) */
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017, /* service ID resolution: UD (IBA 12.11) */
	CM_ATTR_SIDR_REP = 0x0018,
};

/* SIDR_REP status (IBA table 122) we use. */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1, /* no such service */
	CM_SIDR_REJECT = 2,      /* the service turned it down */
};

/* REJ reasons (IBA table 112) we use. */
enum cm_rej_reason {
	CM_REJ_TIMEOUT = 1,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_CONSUMER = 28,
};

/* The message an MRA acknowledges (IBA table 103). */
enum cm_mraed {
	CM_MRAED_REQ = 0,
	CM_MRAED_REP = 1,
};

/* rdma_cm acknowledges a connection request with an MRA as it hands the
 * request to the application (Linux cma.c, CMA_CM_MRA_SETTING): a service
 * timeout of 24, 4.096 us x 2^24 = 68.7 s, which the requester then waits
 * for the answer instead of its own response timeout. */
#define CM_MRA_SERVICE_TIMEOUT 24

/* An IBA time value (4.096 us x 2^t) in nanoseconds. */
static inline uint64_t cm_iba_time_ns(uint8_t t)
{
	return (uint64_t)4096 << (t > 31 ? 31 : t);
}

/* What any CM message we send or receive carries, decoded. */
struct cm_msg {
	uint16_t attr;
	uint64_t tid;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t service_id;      /* REQ, SIDR_REQ, SIDR_REP */
	uint32_t qpn;             /* REQ, REP, SIDR_REP: the sender's; DREQ:
				   * the receiver's */
	uint32_t start_psn;       /* REQ, REP */
	uint16_t reason;          /* REJ; SIDR_REP: its status */
	uint32_t qkey;            /* SIDR_REP */
	uint8_t  mraed;           /* MRA: enum cm_mraed */
	uint8_t  service_timeout; /* MRA: an IBA time value */
	struct in_addr src_ip;    /* REQ, SIDR_REQ: rdma_cm header */
	struct in_addr dst_ip;
	uint16_t src_port;        /* REQ, SIDR_REQ: the requester's port */
	/* REQ: the connection's transport retries (both sides), and the RNR
	 * retries of the responder's sends; REP: the RNR retries of the
	 * requester's sends. 3 bits each; 7 RNR retries are unlimited. */
	uint8_t  retry_count;
	uint8_t  rnr_retry_count;
	/* REQ, REP: the sender's RDMA read and atomic depths (rdma_cm's
	 * responder_resources and initiator_depth). */
	uint8_t  responder_resources;
	uint8_t  initiator_depth;
	uint8_t  data[224];       /* the application's private data */
	size_t   data_len;
};

/* Largest private data of each message, after rdma_cm's header in REQ. */
size_t cm_max_data(uint16_t attr);

/* Builds the 256-byte MAD; 0, or -1 when the data does not fit. */
int cm_encode(const struct cm_msg *msg, uint8_t mad[CM_MAD_SIZE]);
/* Parses one; 0, or -1 when it is not a CM MAD we understand. */
int cm_decode(const uint8_t *mad, size_t len, struct cm_msg *msg);

/* rdma_cm's service IDs: 0x0000000001060000 | port for RDMA_PS_TCP,
 * 0x0000000001110000 | port for RDMA_PS_UDP (the port space above the
 * port). */
static inline uint64_t cm_service_id(uint16_t port)
{
	return 0x0000000001060000ull | port;
}

static inline uint64_t cm_service_id_ps(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/* The port of an rdma_cm service ID (0 for another kind), and its port
 * space: RDMA_PS_TCP 0x0106, RDMA_PS_UDP 0x0111, RDMA_PS_IB 0x013f. */
static inline uint16_t cm_service_ps(uint64_t sid)
{
	uint64_t ps = sid >> 16;

	return ps == 0x0106 || ps == 0x0111 || ps == 0x013f ? (uint16_t)ps : 0;
}

static inline uint16_t cm_service_port(uint64_t sid)
{
	return cm_service_ps(sid) ? (uint16_t)sid : 0;
}

#endif
