/* SPDX-License-Identifier: BSD-2-Clause
 * The fabsim atomic headers. RoCE's own atomics (COMPARE_SWAP, FETCH_ADD) carry one 64-bit
 * operand; every other libfabric atomic (any op, any datatype, up to a packet of elements) the
 * simulated NIC sends as an RC SEND_ONLY whose payload starts with the request header below,
 * followed by the operands (and, for compare ops, the compare values). The target answers with a
 * READ_RESPONSE_ONLY (AETH as for a READ) whose payload starts with the response header, followed
 * by the original values when the initiator asked for them.
 *
 * Request, 24 bytes, network byte order:
 *   0  u32 magic    0x46534154 ("FSAT")
 *   4  u8  version  1
 *   5  u8  flags    TR_ATOMIC_F_FETCH (original values wanted), TR_ATOMIC_F_COMPARE (compare
 *                   values follow the operands)
 *   6  u16 length   of this header, 24 in version 1 (a reader skips what it does not know)
 *   8  u64 va       target address (as a RETH's: virtual address or offset in the region)
 *  16  u32 rkey     target region's key
 *  20  u8  op       libfabric enum fi_op
 *  21  u8  datatype libfabric enum fi_datatype
 *  22  u16 count    elements
 * Response, 12 bytes:
 *   0  u32 magic    0x46534152 ("FSAR")
 *   4  u8  version  1
 *   5  u8  flags    TR_ATOMIC_F_FETCH: the original values follow
 *   6  u16 length   of this header, 12 in version 1
 *   8  u8  op, 9 u8 datatype, 10 u16 count: as in the request
 * Element values (operands, compare values, original values) follow as they are in memory on the
 * simulating host (little-endian here), count elements each.
 * The Lua dissector (traces/wireshark/fabsim.lua) decodes the same layouts. */
#ifndef TR_ATOMICHDR_H
#define TR_ATOMICHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/tr_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_ATOMIC_MAGIC 0x46534154u      /* "FSAT" */
#define TR_ATOMIC_RESP_MAGIC 0x46534152u /* "FSAR" */
#define TR_ATOMIC_VERSION 1u
#define TR_ATOMIC_LEN 24u
#define TR_ATOMIC_RESP_LEN 12u

enum tr_atomic_flag {
	TR_ATOMIC_F_FETCH = 1u << 0,   /* request: original values wanted; response: they follow */
	TR_ATOMIC_F_COMPARE = 1u << 1, /* request: compare values follow the operands */
};

typedef struct tr_atomichdr {
	bool response;    /* FSAR (response) rather than FSAT (request) */
	uint8_t version;
	uint8_t flags;    /* TR_ATOMIC_F_* */
	uint16_t len;     /* header length on the wire */
	uint8_t op;       /* enum fi_op */
	uint8_t datatype; /* enum fi_datatype */
	uint16_t count;
	uint64_t va;      /* request only */
	uint32_t rkey;    /* request only */
} tr_atomichdr;

/* Length of the version-1 header h->response says. */
static inline uint32_t tr_atomichdr_len(const tr_atomichdr *h)
{
	return h->response ? TR_ATOMIC_RESP_LEN : TR_ATOMIC_LEN;
}

/* Writes the version-1 request or response header for h into out (tr_atomichdr_len(h) bytes;
 * h->version and h->len are ignored). */
void tr_atomichdr_encode(uint8_t *out, const tr_atomichdr *h);

/* Reads a header at the start of buf. Returns its length on the wire (the elements start there),
 * 0 when buf starts with neither magic, or -EINVAL with a message when a magic is there but the
 * rest is not a header this reader can use. */
int tr_atomichdr_decode(const uint8_t *buf, size_t len, tr_atomichdr *out, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif
