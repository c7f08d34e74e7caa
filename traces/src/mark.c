/* SPDX-License-Identifier: BSD-2-Clause
 * Marker frames. The hash of the described frame lets a reader prove that a marker and the frame
 * after it belong together, so a trace that was cut or spliced never attaches a drop to the wrong
 * packet. */
#include "traces/tr_mark.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"

#define ETH_HLEN 14u
#define BODY_LEN 28u

/* FNV-1a, not a CRC: the frames end with their ICRC, and a CRC over data followed by its own CRC
 * is the same for every packet, so a CRC-32 here could not tell two packets of one length apart. */
static uint32_t covered_hash(const uint8_t *frame, uint32_t caplen, uint32_t len)
{
	uint32_t n = len < TR_MARK_HASHED ? len : TR_MARK_HASHED, h = 2166136261u;

	if (n > caplen)
		n = caplen;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ frame[i]) * 16777619u;
	return h;
}

void tr_mark_frame_build(uint8_t out[TR_MARK_FRAME_LEN], uint16_t flags, const tr_where *where,
			 const uint8_t *frame, uint32_t caplen, uint32_t len)
{
	static const tr_where unknown = { TR_REASON_NONE, TR_WHERE_UNKNOWN, TR_WHERE_UNKNOWN,
					  TR_WHERE_UNKNOWN };
	uint8_t *b = out + ETH_HLEN;

	if (!where)
		where = &unknown;
	memset(out, 0, TR_MARK_FRAME_LEN);
	if (caplen >= 12)
		memcpy(out, frame, 12);
	wr16(out + 12, TR_MARK_ETHERTYPE);
	wr32(b, TR_MARK_MAGIC);
	b[4] = TR_MARK_VERSION;
	b[5] = where->reason;
	wr16(b + 6, flags);
	wr32(b + 8, where->node);
	wr32(b + 12, where->port);
	wr32(b + 16, where->link);
	wr32(b + 20, len);
	wr32(b + 24, covered_hash(frame, caplen, len));
}

int tr_mark_frame_parse(const uint8_t *frame, uint32_t caplen, tr_mark *m, tr_error *err)
{
	const uint8_t *b = frame + ETH_HLEN;

	if (caplen < ETH_HLEN + 4 || rd16(frame + 12) != TR_MARK_ETHERTYPE ||
	    rd32(b) != TR_MARK_MAGIC)
		return 0;
	if (caplen < ETH_HLEN + BODY_LEN)
		return tr_error_set(err, -EINVAL, "marker of %u bytes, shorter than its %u",
				    caplen, ETH_HLEN + BODY_LEN);
	if (b[4] != TR_MARK_VERSION)
		return tr_error_set(err, -EINVAL, "byte %u: marker version %u, this reader knows %u",
				    ETH_HLEN + 4, b[4], TR_MARK_VERSION);
	memset(m, 0, sizeof(*m));
	m->where.reason = b[5];
	m->flags = rd16(b + 6);
	m->where.node = rd32(b + 8);
	m->where.port = rd32(b + 12);
	m->where.link = rd32(b + 16);
	m->covered_len = rd32(b + 20);
	m->covered_hash = rd32(b + 24);
	if (m->flags == 0 || (m->flags & ~TR_MARK_ALL))
		return tr_error_set(err, -EINVAL, "byte %u: marker flags 0x%x (known: 0x%x)",
				    ETH_HLEN + 6, m->flags, TR_MARK_ALL);
	if (m->where.reason >= TR_REASON_KINDS)
		return tr_error_set(err, -EINVAL, "byte %u: marker reason %u is not known",
				    ETH_HLEN + 5, m->where.reason);
	return 1;
}

int tr_mark_matches(const tr_mark *m, const uint8_t *frame, uint32_t caplen, uint32_t len,
		    tr_error *err)
{
	uint32_t n = len < TR_MARK_HASHED ? len : TR_MARK_HASHED;

	if (m->covered_len != len)
		return tr_error_set(err, -EINVAL,
				    "the marker before it describes a frame of %u bytes, this one "
				    "has %u", m->covered_len, len);
	if (n <= caplen && covered_hash(frame, caplen, len) != m->covered_hash)
		return tr_error_set(err, -EINVAL,
				    "the marker before it describes another frame (hash 0x%08x, "
				    "this frame's is 0x%08x)", m->covered_hash,
				    covered_hash(frame, caplen, len));
	return 0;
}

const char *tr_mark_reason_name(uint8_t reason)
{
	static const char *const name[TR_REASON_KINDS] = {
		[TR_REASON_NONE] = "none",         [TR_REASON_LOSS] = "loss",
		[TR_REASON_BURST] = "burst loss",  [TR_REASON_SCRIPTED] = "scripted drop",
		[TR_REASON_LINK_DOWN] = "link down", [TR_REASON_BUFFER] = "queue full",
		[TR_REASON_TIMEOUT] = "timeout",   [TR_REASON_NAK] = "NAK",
	};
	return reason < TR_REASON_KINDS ? name[reason] : "unknown";
}

const char *tr_mark_flags_str(uint16_t flags, char *buf, unsigned size)
{
	static const char *const name[] = { "dropped", "corrupted", "retransmit", "duplicate",
					     "reordered" };
	unsigned used = 0;

	if (size)
		buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(name) / sizeof(name[0]); i++) {
		if (!(flags & (1u << i)) || used >= size)
			continue;
		int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", name[i]);
		if (n > 0)
			used += (unsigned)n;
	}
	return buf;
}
