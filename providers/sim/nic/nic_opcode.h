/* SPDX-License-Identifier: BSD-2-Clause
 * RoCE RC/UC/UD opcodes the NIC puts in its packets' BTH (IBA vol 1, 9.2;
 * ../../traces has the table of which headers each carries). A UC opcode
 * is its RC one in the UC transport (+ NIC_OP_UC): the predicates below
 * answer for both. */
#ifndef FABSIM_NIC_OPCODE_H
#define FABSIM_NIC_OPCODE_H

enum nic_opcode {
	NIC_OP_SEND_FIRST = 0x00,
	NIC_OP_SEND_MIDDLE = 0x01,
	NIC_OP_SEND_LAST = 0x02,
	NIC_OP_SEND_LAST_IMM = 0x03,
	NIC_OP_SEND_ONLY = 0x04,
	NIC_OP_SEND_ONLY_IMM = 0x05,
	NIC_OP_WRITE_FIRST = 0x06,
	NIC_OP_WRITE_MIDDLE = 0x07,
	NIC_OP_WRITE_LAST = 0x08,
	NIC_OP_WRITE_LAST_IMM = 0x09,
	NIC_OP_WRITE_ONLY = 0x0a,
	NIC_OP_WRITE_ONLY_IMM = 0x0b,
	NIC_OP_READ_REQUEST = 0x0c,
	NIC_OP_READ_RESP_FIRST = 0x0d,
	NIC_OP_READ_RESP_MIDDLE = 0x0e,
	NIC_OP_READ_RESP_LAST = 0x0f,
	NIC_OP_READ_RESP_ONLY = 0x10,
	NIC_OP_ACK = 0x11,
	NIC_OP_ATOMIC_ACK = 0x12,
	NIC_OP_COMPARE_SWAP = 0x13,
	NIC_OP_FETCH_ADD = 0x14,
	NIC_OP_UD_SEND_ONLY = 0x64,
	NIC_OP_UD_SEND_ONLY_IMM = 0x65,
};

/* The UC transport's opcodes: sends and writes only, RC's plus this. */
#define NIC_OP_UC 0x20

/* The RC opcode a UC one stands for; any other unchanged. */
static inline int nic_op_rc(int op)
{
	return (op & 0xe0) == NIC_OP_UC ? op & 0x1f : op;
}

/* AETH syndromes */
enum {
	NIC_AETH_ACK = 0x1f,          /* ACK, no credit limit */
	NIC_AETH_RNR_NAK = 0x20,      /* | timer code */
	NIC_AETH_NAK_SEQ = 0x60,
	NIC_AETH_NAK_INV_REQ = 0x61,
	NIC_AETH_NAK_REM_ACCESS = 0x62,
	NIC_AETH_NAK_REM_OP = 0x63,
};

/* Position of a packet in its message. */
enum nic_pos { NIC_POS_FIRST, NIC_POS_MIDDLE, NIC_POS_LAST, NIC_POS_ONLY };

static inline int nic_op_is_send(int op)
{
	op = nic_op_rc(op);
	return op <= NIC_OP_SEND_ONLY_IMM;
}

static inline int nic_op_is_write(int op)
{
	op = nic_op_rc(op);
	return op >= NIC_OP_WRITE_FIRST && op <= NIC_OP_WRITE_ONLY_IMM;
}

static inline int nic_op_is_read_resp(int op)
{
	op = nic_op_rc(op);
	return op >= NIC_OP_READ_RESP_FIRST && op <= NIC_OP_READ_RESP_ONLY;
}

static inline int nic_op_is_first(int op)
{
	op = nic_op_rc(op);
	return op == NIC_OP_SEND_FIRST || op == NIC_OP_SEND_ONLY ||
	       op == NIC_OP_SEND_ONLY_IMM || op == NIC_OP_WRITE_FIRST ||
	       op == NIC_OP_WRITE_ONLY || op == NIC_OP_WRITE_ONLY_IMM;
}

static inline int nic_op_is_last(int op)
{
	op = nic_op_rc(op);
	return op == NIC_OP_SEND_LAST || op == NIC_OP_SEND_LAST_IMM ||
	       op == NIC_OP_SEND_ONLY || op == NIC_OP_SEND_ONLY_IMM ||
	       op == NIC_OP_WRITE_LAST || op == NIC_OP_WRITE_LAST_IMM ||
	       op == NIC_OP_WRITE_ONLY || op == NIC_OP_WRITE_ONLY_IMM;
}

static inline int nic_op_has_imm(int op)
{
	op = nic_op_rc(op);
	return op == NIC_OP_SEND_LAST_IMM || op == NIC_OP_SEND_ONLY_IMM ||
	       op == NIC_OP_WRITE_LAST_IMM || op == NIC_OP_WRITE_ONLY_IMM ||
	       op == NIC_OP_UD_SEND_ONLY_IMM;
}

/* The opcode of a send or write packet at `pos`, with immediate data on the
 * last one when asked. */
int nic_op_for(int write, enum nic_pos pos, int imm);

#endif
