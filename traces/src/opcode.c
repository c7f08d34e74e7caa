/* SPDX-License-Identifier: BSD-2-Clause
 * The opcode table. Each entry lists its extended headers as a mask; the offsets and the header
 * length are derived from the mask by constant expressions, so an entry cannot disagree with the
 * wire order of tr_hdr. */
#include "traces/tr_opcode.h"

#include <errno.h>
#include <stddef.h>

#define D TR_HDR_BIT(TR_HDR_DETH)
#define R TR_HDR_BIT(TR_HDR_RETH)
#define AT TR_HDR_BIT(TR_HDR_ATOMICETH)
#define A TR_HDR_BIT(TR_HDR_AETH)
#define AA TR_HDR_BIT(TR_HDR_ATOMICACKETH)
#define I TR_HDR_BIT(TR_HDR_IMMDT)
#define IE TR_HDR_BIT(TR_HDR_IETH)
#define CN TR_HDR_BIT(TR_HDR_CNP)

#define HAS(m, h) (((m) >> (h)) & 1u)
#define LEN_IF(m, h, len) (HAS(m, h) ? (len) : 0u)
/* End of each header (where the next one would start), in wire order. */
#define END_DETH(m) (TR_BTH_LEN + LEN_IF(m, TR_HDR_DETH, TR_DETH_LEN))
#define END_RETH(m) (END_DETH(m) + LEN_IF(m, TR_HDR_RETH, TR_RETH_LEN))
#define END_ATOMICETH(m) (END_RETH(m) + LEN_IF(m, TR_HDR_ATOMICETH, TR_ATOMICETH_LEN))
#define END_AETH(m) (END_ATOMICETH(m) + LEN_IF(m, TR_HDR_AETH, TR_AETH_LEN))
#define END_ATOMICACKETH(m) (END_AETH(m) + LEN_IF(m, TR_HDR_ATOMICACKETH, TR_ATOMICACKETH_LEN))
#define END_IMMDT(m) (END_ATOMICACKETH(m) + LEN_IF(m, TR_HDR_IMMDT, TR_IMMDT_LEN))
#define END_IETH(m) (END_IMMDT(m) + LEN_IF(m, TR_HDR_IETH, TR_IETH_LEN))
#define END_CNP(m) (END_IETH(m) + LEN_IF(m, TR_HDR_CNP, TR_CNP_LEN))
#define OFF(m, h, start) (HAS(m, h) ? (start) : 0u)

#define OPC(code, nm, tp, o, p, m, pay)                                                      \
	[code] = {                                                                           \
		.name = nm,                                                                  \
		.opcode = code,                                                              \
		.transport = TR_TRANSPORT_##tp,                                              \
		.op = TR_OP_##o,                                                             \
		.pos = TR_POS_##p,                                                           \
		.hdrs = (m),                                                                 \
		.hdr_len = END_CNP(m),                                                       \
		.has_payload = pay,                                                          \
		.off = {                                                                     \
			[TR_HDR_DETH] = OFF(m, TR_HDR_DETH, TR_BTH_LEN),                     \
			[TR_HDR_RETH] = OFF(m, TR_HDR_RETH, END_DETH(m)),                    \
			[TR_HDR_ATOMICETH] = OFF(m, TR_HDR_ATOMICETH, END_RETH(m)),          \
			[TR_HDR_AETH] = OFF(m, TR_HDR_AETH, END_ATOMICETH(m)),               \
			[TR_HDR_ATOMICACKETH] = OFF(m, TR_HDR_ATOMICACKETH, END_AETH(m)),    \
			[TR_HDR_IMMDT] = OFF(m, TR_HDR_IMMDT, END_ATOMICACKETH(m)),          \
			[TR_HDR_IETH] = OFF(m, TR_HDR_IETH, END_IMMDT(m)),                   \
			[TR_HDR_CNP] = OFF(m, TR_HDR_CNP, END_IETH(m)),                      \
		},                                                                           \
	}

/* UC repeats RC's SEND and WRITE opcodes 0x20 higher, without READ, ACK or atomics. */
#define UC 0x20

static const tr_opcode_info table[256] = {
	OPC(0x00, "RC SEND_FIRST", RC, SEND, FIRST, 0, true),
	OPC(0x01, "RC SEND_MIDDLE", RC, SEND, MIDDLE, 0, true),
	OPC(0x02, "RC SEND_LAST", RC, SEND, LAST, 0, true),
	OPC(0x03, "RC SEND_LAST_WITH_IMMEDIATE", RC, SEND, LAST, I, true),
	OPC(0x04, "RC SEND_ONLY", RC, SEND, ONLY, 0, true),
	OPC(0x05, "RC SEND_ONLY_WITH_IMMEDIATE", RC, SEND, ONLY, I, true),
	OPC(0x06, "RC RDMA_WRITE_FIRST", RC, WRITE, FIRST, R, true),
	OPC(0x07, "RC RDMA_WRITE_MIDDLE", RC, WRITE, MIDDLE, 0, true),
	OPC(0x08, "RC RDMA_WRITE_LAST", RC, WRITE, LAST, 0, true),
	OPC(0x09, "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", RC, WRITE, LAST, I, true),
	OPC(0x0A, "RC RDMA_WRITE_ONLY", RC, WRITE, ONLY, R, true),
	OPC(0x0B, "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", RC, WRITE, ONLY, R | I, true),
	OPC(0x0C, "RC RDMA_READ_REQUEST", RC, READ_REQUEST, ONLY, R, false),
	OPC(0x0D, "RC RDMA_READ_RESPONSE_FIRST", RC, READ_RESPONSE, FIRST, A, true),
	OPC(0x0E, "RC RDMA_READ_RESPONSE_MIDDLE", RC, READ_RESPONSE, MIDDLE, 0, true),
	OPC(0x0F, "RC RDMA_READ_RESPONSE_LAST", RC, READ_RESPONSE, LAST, A, true),
	OPC(0x10, "RC RDMA_READ_RESPONSE_ONLY", RC, READ_RESPONSE, ONLY, A, true),
	OPC(0x11, "RC ACKNOWLEDGE", RC, ACK, ONLY, A, false),
	OPC(0x12, "RC ATOMIC_ACKNOWLEDGE", RC, ATOMIC_ACK, ONLY, A | AA, false),
	OPC(0x13, "RC COMPARE_SWAP", RC, COMPARE_SWAP, ONLY, AT, false),
	OPC(0x14, "RC FETCH_ADD", RC, FETCH_ADD, ONLY, AT, false),
	OPC(0x16, "RC SEND_LAST_WITH_INVALIDATE", RC, SEND, LAST, IE, true),
	OPC(0x17, "RC SEND_ONLY_WITH_INVALIDATE", RC, SEND, ONLY, IE, true),

	OPC(UC + 0x00, "UC SEND_FIRST", UC, SEND, FIRST, 0, true),
	OPC(UC + 0x01, "UC SEND_MIDDLE", UC, SEND, MIDDLE, 0, true),
	OPC(UC + 0x02, "UC SEND_LAST", UC, SEND, LAST, 0, true),
	OPC(UC + 0x03, "UC SEND_LAST_WITH_IMMEDIATE", UC, SEND, LAST, I, true),
	OPC(UC + 0x04, "UC SEND_ONLY", UC, SEND, ONLY, 0, true),
	OPC(UC + 0x05, "UC SEND_ONLY_WITH_IMMEDIATE", UC, SEND, ONLY, I, true),
	OPC(UC + 0x06, "UC RDMA_WRITE_FIRST", UC, WRITE, FIRST, R, true),
	OPC(UC + 0x07, "UC RDMA_WRITE_MIDDLE", UC, WRITE, MIDDLE, 0, true),
	OPC(UC + 0x08, "UC RDMA_WRITE_LAST", UC, WRITE, LAST, 0, true),
	OPC(UC + 0x09, "UC RDMA_WRITE_LAST_WITH_IMMEDIATE", UC, WRITE, LAST, I, true),
	OPC(UC + 0x0A, "UC RDMA_WRITE_ONLY", UC, WRITE, ONLY, R, true),
	OPC(UC + 0x0B, "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE", UC, WRITE, ONLY, R | I, true),

	OPC(0x64, "UD SEND_ONLY", UD, SEND, ONLY, D, true),
	OPC(0x65, "UD SEND_ONLY_WITH_IMMEDIATE", UD, SEND, ONLY, D | I, true),

	/* Real RoCEv2 captures carry congestion notifications; knowing them keeps a reader from
	 * calling them malformed. The simulator does not emit them. */
	OPC(0x81, "CNP", CNP, CNP, ONLY, CN, false),
};

const tr_opcode_info *tr_opcode(uint8_t op)
{
	return table[op].name ? &table[op] : NULL;
}

const char *tr_opcode_name(uint8_t op)
{
	return table[op].name ? table[op].name : "unknown";
}

unsigned tr_opcode_hdr_len(uint8_t op)
{
	return table[op].name ? table[op].hdr_len : 0;
}

unsigned tr_hdr_len(tr_hdr h)
{
	static const uint8_t len[TR_HDR_KINDS] = {
		[TR_HDR_DETH] = TR_DETH_LEN,
		[TR_HDR_RETH] = TR_RETH_LEN,
		[TR_HDR_ATOMICETH] = TR_ATOMICETH_LEN,
		[TR_HDR_AETH] = TR_AETH_LEN,
		[TR_HDR_ATOMICACKETH] = TR_ATOMICACKETH_LEN,
		[TR_HDR_IMMDT] = TR_IMMDT_LEN,
		[TR_HDR_IETH] = TR_IETH_LEN,
		[TR_HDR_CNP] = TR_CNP_LEN,
	};
	return (unsigned)h < TR_HDR_KINDS ? len[h] : 0;
}

const char *tr_hdr_name(tr_hdr h)
{
	static const char *const name[TR_HDR_KINDS] = {
		[TR_HDR_DETH] = "DETH",
		[TR_HDR_RETH] = "RETH",
		[TR_HDR_ATOMICETH] = "AtomicETH",
		[TR_HDR_AETH] = "AETH",
		[TR_HDR_ATOMICACKETH] = "AtomicAckETH",
		[TR_HDR_IMMDT] = "ImmDt",
		[TR_HDR_IETH] = "IETH",
		[TR_HDR_CNP] = "CNP",
	};
	return (unsigned)h < TR_HDR_KINDS ? name[h] : "unknown";
}

int tr_opcode_for(tr_transport transport, tr_op op, tr_pos pos, bool imm)
{
	/* Each transport's opcodes sit in one 32-wide block of the table, so the search is short
	 * and the table stays the only statement of which combination has which number. */
	static const uint8_t block[TR_TRANSPORT_KINDS] = {
		[TR_TRANSPORT_RC] = 0x00,
		[TR_TRANSPORT_UC] = 0x20,
		[TR_TRANSPORT_UD] = 0x60,
		[TR_TRANSPORT_CNP] = 0x80,
	};

	if ((unsigned)transport >= TR_TRANSPORT_KINDS)
		return -EINVAL;
	for (unsigned i = block[transport]; i < block[transport] + 32u; i++) {
		const tr_opcode_info *e = &table[i];

		if (e->name && e->transport == transport && e->op == op && e->pos == pos &&
		    HAS(e->hdrs, TR_HDR_IMMDT) == imm && !HAS(e->hdrs, TR_HDR_IETH))
			return (int)i;
	}
	return -EINVAL;
}

const char *tr_transport_name(tr_transport t)
{
	static const char *const name[TR_TRANSPORT_KINDS] = { "RC", "UC", "UD", "CNP" };
	return (unsigned)t < TR_TRANSPORT_KINDS ? name[t] : "unknown";
}

const char *tr_op_name(tr_op op)
{
	static const char *const name[TR_OP_KINDS] = {
		[TR_OP_SEND] = "SEND",
		[TR_OP_WRITE] = "WRITE",
		[TR_OP_READ_REQUEST] = "READ_REQUEST",
		[TR_OP_READ_RESPONSE] = "READ_RESPONSE",
		[TR_OP_ACK] = "ACK",
		[TR_OP_ATOMIC_ACK] = "ATOMIC_ACK",
		[TR_OP_COMPARE_SWAP] = "COMPARE_SWAP",
		[TR_OP_FETCH_ADD] = "FETCH_ADD",
		[TR_OP_CNP] = "CNP",
	};
	return (unsigned)op < TR_OP_KINDS ? name[op] : "unknown";
}

const char *tr_pos_name(tr_pos pos)
{
	static const char *const name[TR_POS_KINDS] = { "FIRST", "MIDDLE", "LAST", "ONLY" };
	return (unsigned)pos < TR_POS_KINDS ? name[pos] : "unknown";
}
