/* SPDX-License-Identifier: BSD-2-Clause */
#include "traces/tr_taghdr.h"

#include <errno.h>

#include "bytes.h"

void tr_taghdr_encode(uint8_t out[TR_TAG_LEN], uint64_t tag, uint8_t flags)
{
	wr32(out, TR_TAG_MAGIC);
	out[4] = TR_TAG_VERSION;
	out[5] = flags;
	wr16(out + 6, TR_TAG_LEN);
	wr64(out + 8, tag);
}

int tr_taghdr_decode(const uint8_t *buf, size_t len, tr_taghdr *out, tr_error *err)
{
	if (len < 4 || rd32(buf) != TR_TAG_MAGIC)
		return 0;
	if (len < TR_TAG_LEN)
		return tr_error_set(err, -EINVAL,
				    "tag header cut short: %zu of %u bytes present", len, TR_TAG_LEN);
	out->version = buf[4];
	out->flags = buf[5];
	out->len = rd16(buf + 6);
	out->tag = rd64(buf + 8);
	if (out->version == 0)
		return tr_error_set(err, -EINVAL, "tag header version 0 is not valid");
	if (out->len < TR_TAG_LEN || out->len > len)
		return tr_error_set(err, -EINVAL,
				    "tag header length %u is outside %u..%zu (the payload)",
				    out->len, TR_TAG_LEN, len);
	return out->len;
}
