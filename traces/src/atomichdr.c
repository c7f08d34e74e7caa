/* SPDX-License-Identifier: BSD-2-Clause */
#include "traces/tr_atomichdr.h"

#include <errno.h>
#include <string.h>

#include "bytes.h"

void tr_atomichdr_encode(uint8_t *out, const tr_atomichdr *h)
{
	if (h->response) {
		wr32(out, TR_ATOMIC_RESP_MAGIC);
		out[4] = TR_ATOMIC_VERSION;
		out[5] = h->flags;
		wr16(out + 6, TR_ATOMIC_RESP_LEN);
		out[8] = h->op;
		out[9] = h->datatype;
		wr16(out + 10, h->count);
		return;
	}
	wr32(out, TR_ATOMIC_MAGIC);
	out[4] = TR_ATOMIC_VERSION;
	out[5] = h->flags;
	wr16(out + 6, TR_ATOMIC_LEN);
	wr64(out + 8, h->va);
	wr32(out + 16, h->rkey);
	out[20] = h->op;
	out[21] = h->datatype;
	wr16(out + 22, h->count);
}

int tr_atomichdr_decode(const uint8_t *buf, size_t len, tr_atomichdr *out, tr_error *err)
{
	uint32_t magic;
	uint32_t min;

	if (len < 4)
		return 0;
	magic = rd32(buf);
	if (magic != TR_ATOMIC_MAGIC && magic != TR_ATOMIC_RESP_MAGIC)
		return 0;
	memset(out, 0, sizeof(*out));
	out->response = magic == TR_ATOMIC_RESP_MAGIC;
	min = out->response ? TR_ATOMIC_RESP_LEN : TR_ATOMIC_LEN;
	if (len < min)
		return tr_error_set(err, -EINVAL, "atomic %s header cut short: %zu of %u bytes present",
				    out->response ? "response" : "request", len, min);
	out->version = buf[4];
	out->flags = buf[5];
	out->len = rd16(buf + 6);
	if (out->version == 0)
		return tr_error_set(err, -EINVAL, "atomic header version 0 is not valid");
	if (out->len < min || out->len > len)
		return tr_error_set(err, -EINVAL,
				    "atomic %s header length %u is outside %u..%zu (the payload)",
				    out->response ? "response" : "request", out->len, min, len);
	if (out->response) {
		out->op = buf[8];
		out->datatype = buf[9];
		out->count = rd16(buf + 10);
	} else {
		out->va = rd64(buf + 8);
		out->rkey = rd32(buf + 16);
		out->op = buf[20];
		out->datatype = buf[21];
		out->count = rd16(buf + 22);
	}
	return out->len;
}
