/* SPDX-License-Identifier: BSD-2-Clause
 * The InfiniBand transport opcodes as one table: for each opcode, which extended headers follow
 * the BTH, at which offsets, whether a payload follows and what the opcode is called. The trace
 * codec and the simulated NIC both read this table, so a packet is built and parsed from the same
 * facts (WIRE.md lists them; IBA vol. 1, chapter 9 is the source). */
#ifndef TR_OPCODE_H
#define TR_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TR_BTH_LEN 12u

/* Extended transport headers, in the order they follow the BTH on the wire: a packet carrying
 * several has them in this order, so iterating the enum walks a packet front to back. */
typedef enum tr_hdr {
	TR_HDR_DETH = 0,     /* Q_Key 4, source QP 4 (UD) */
	TR_HDR_RETH,         /* VA 8, R_Key 4, DMA length 4 */
	TR_HDR_ATOMICETH,    /* VA 8, R_Key 4, swap/add 8, compare 8 */
	TR_HDR_AETH,         /* syndrome 1, MSN 3 */
	TR_HDR_ATOMICACKETH, /* original remote data 8 */
	TR_HDR_IMMDT,        /* immediate data 4 */
	TR_HDR_IETH,         /* R_Key to invalidate 4 */
	TR_HDR_CNP,          /* 16 reserved bytes of a RoCEv2 congestion notification */
	TR_HDR_KINDS
} tr_hdr;

#define TR_HDR_BIT(h) (1u << (h))

#define TR_DETH_LEN 8u
#define TR_RETH_LEN 16u
#define TR_ATOMICETH_LEN 28u
#define TR_AETH_LEN 4u
#define TR_ATOMICACKETH_LEN 8u
#define TR_IMMDT_LEN 4u
#define TR_IETH_LEN 4u
#define TR_CNP_LEN 16u
#define TR_ICRC_LEN 4u

typedef enum tr_transport {
	TR_TRANSPORT_RC = 0,
	TR_TRANSPORT_UC,
	TR_TRANSPORT_UD,
	TR_TRANSPORT_CNP,
	TR_TRANSPORT_KINDS
} tr_transport;

typedef enum tr_op {
	TR_OP_SEND = 0,
	TR_OP_WRITE,
	TR_OP_READ_REQUEST,
	TR_OP_READ_RESPONSE,
	TR_OP_ACK,
	TR_OP_ATOMIC_ACK,
	TR_OP_COMPARE_SWAP,
	TR_OP_FETCH_ADD,
	TR_OP_CNP,
	TR_OP_KINDS
} tr_op;

/* Where a packet sits in its message. Operations that are always one packet (READ request, ACK,
 * atomics) say TR_POS_ONLY. */
typedef enum tr_pos {
	TR_POS_FIRST = 0,
	TR_POS_MIDDLE,
	TR_POS_LAST,
	TR_POS_ONLY,
	TR_POS_KINDS
} tr_pos;

typedef struct tr_opcode_info {
	const char *name;   /* "RC SEND_FIRST"; NULL in the slots of unknown opcodes */
	uint8_t opcode;
	uint8_t transport;  /* tr_transport */
	uint8_t op;         /* tr_op */
	uint8_t pos;        /* tr_pos */
	uint16_t hdrs;      /* TR_HDR_BIT() of each extended header present */
	uint8_t hdr_len;    /* BTH + extended headers, bytes */
	bool has_payload;
	/* Offset of each present extended header from the start of the BTH; 0 when absent. */
	uint8_t off[TR_HDR_KINDS];
} tr_opcode_info;

/* The entry for opcode op, or NULL when the opcode is not one this project knows. */
const tr_opcode_info *tr_opcode(uint8_t op);

/* "RC SEND_FIRST", or "unknown" for an opcode outside the table. */
const char *tr_opcode_name(uint8_t op);

/* BTH plus extended headers for op, or 0 when op is unknown. */
unsigned tr_opcode_hdr_len(uint8_t op);

/* Length of one extended header kind (0 for TR_HDR_KINDS or beyond). */
unsigned tr_hdr_len(tr_hdr h);
const char *tr_hdr_name(tr_hdr h);

/* The opcode for (transport, op, position, with immediate), e.g. (RC, SEND, LAST, true) -> 0x03.
 * Returns the opcode (0..255) or -EINVAL when no such opcode exists (e.g. WRITE FIRST with
 * immediate, or anything with immediate on a READ). */
int tr_opcode_for(tr_transport transport, tr_op op, tr_pos pos, bool imm);

const char *tr_transport_name(tr_transport t);
const char *tr_op_name(tr_op op);
const char *tr_pos_name(tr_pos pos);

/* Requests travel requester -> responder and carry the requester's PSN sequence; responses
 * (READ responses, ACKs, atomic ACKs) carry the PSNs of the requests they answer. */
static inline bool tr_op_is_response(uint8_t op)
{
	return op == TR_OP_READ_RESPONSE || op == TR_OP_ACK || op == TR_OP_ATOMIC_ACK;
}

#ifdef __cplusplus
}
#endif

#endif
