/* SPDX-License-Identifier: BSD-2-Clause
 * Event frames (tr_event.h). */
#include "traces/tr_event.h"

#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "traces/tr_mark.h"

#define ETH_HLEN 14u
#define FIXED_LEN 16u
#define ETH_MIN 60u

uint32_t tr_event_frame_build(uint8_t *out, const tr_event *ev)
{
	size_t text = strnlen(ev->text, TR_EVENT_TEXT_MAX);
	uint32_t len = ETH_HLEN + FIXED_LEN + (uint32_t)text;
	uint32_t ip = 0x0a000001u + ev->node;

	if (len < ETH_MIN)
		len = ETH_MIN;
	memset(out, 0, len);
	memset(out, 0xff, 6);
	out[6] = 0x02; /* locally administered, the node's address */
	out[7] = 0x00;
	wr32(out + 8, ev->node == TR_WHERE_UNKNOWN ? 0 : ip);
	wr16(out + 12, TR_MARK_ETHERTYPE);
	wr32(out + ETH_HLEN, TR_EVENT_MAGIC);
	out[ETH_HLEN + 4] = TR_EVENT_VERSION;
	out[ETH_HLEN + 5] = ev->kind;
	wr16(out + ETH_HLEN + 6, (uint16_t)text);
	wr32(out + ETH_HLEN + 8, ev->node);
	wr32(out + ETH_HLEN + 12, ev->pid);
	memcpy(out + ETH_HLEN + FIXED_LEN, ev->text, text);
	return len;
}

int tr_event_frame_parse(const uint8_t *frame, uint32_t caplen, uint32_t wirelen, tr_event *ev,
			 tr_error *err)
{
	const uint8_t *b = frame + ETH_HLEN;
	uint32_t text, kept;

	if (caplen < ETH_HLEN + 4 || rd16(frame + 12) != TR_MARK_ETHERTYPE ||
	    rd32(b) != TR_EVENT_MAGIC)
		return 0;
	if (caplen < ETH_HLEN + FIXED_LEN)
		return tr_error_set(err, -EINVAL, "event frame cut at %u bytes (%u needed)", caplen,
				    ETH_HLEN + FIXED_LEN);
	if (b[4] != TR_EVENT_VERSION)
		return tr_error_set(err, -EINVAL, "event frame version %u (known: %u)", b[4],
				    TR_EVENT_VERSION);
	if (wirelen < caplen)
		wirelen = caplen; /* a record that lies about its length: the bytes are there */
	text = rd16(b + 6);
	if (text > TR_EVENT_TEXT_MAX || ETH_HLEN + FIXED_LEN + text > wirelen)
		return tr_error_set(err, -EINVAL, "event frame text of %u bytes (at most %u, %u "
				    "in the frame)", text, TR_EVENT_TEXT_MAX,
				    wirelen - ETH_HLEN - FIXED_LEN);
	/* A snap length may cut the text: the event is whole, its words are not. */
	kept = caplen - ETH_HLEN - FIXED_LEN;
	if (kept > text)
		kept = text;
	memset(ev, 0, sizeof(*ev));
	ev->kind = b[5];
	ev->node = rd32(b + 8);
	ev->pid = rd32(b + 12);
	memcpy(ev->text, b + FIXED_LEN, kept);
	return 1;
}

const char *tr_event_kind_name(uint8_t kind)
{
	switch (kind) {
	case TR_EVENT_AWAY:
		return "away";
	case TR_EVENT_BACK:
		return "back";
	case TR_EVENT_DIED:
		return "died";
	default:
		return "unknown";
	}
}
