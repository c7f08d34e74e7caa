/* SPDX-License-Identifier: BSD-2-Clause
 * From the BTH on, RoCEv2 and native InfiniBand are the same: the opcode table says which
 * extended headers follow, the rest up to the ICRC is payload then PadCnt bytes of pad. An opcode
 * outside the table still parses (its bytes count as payload) so that `trace check` can name it
 * and verify its ICRC. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "parse_internal.h"
#include "traces/tr_crc.h"

/* Reads the extended headers the capture holds: `captured` bytes from the BTH on. Those a snap
 * length cut off are left out of p->hdrs_captured, and their fields stay zero. */
static void read_ext_headers(tr_packet *p, const uint8_t *bth, uint32_t captured)
{
	const tr_opcode_info *op = p->op;
	const uint8_t *h;

	for (unsigned k = 0; k < TR_HDR_KINDS; k++)
		if ((op->hdrs & TR_HDR_BIT(k)) && op->off[k] + tr_hdr_len((tr_hdr)k) <= captured)
			p->hdrs_captured |= (uint16_t)TR_HDR_BIT(k);
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_DETH)) {
		h = bth + op->off[TR_HDR_DETH];
		p->deth.qkey = rd32(h);
		p->deth.src_qp = rd24(h + 5);
	}
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_RETH)) {
		h = bth + op->off[TR_HDR_RETH];
		p->reth.va = rd64(h);
		p->reth.rkey = rd32(h + 8);
		p->reth.dma_len = rd32(h + 12);
	}
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_ATOMICETH)) {
		h = bth + op->off[TR_HDR_ATOMICETH];
		p->atomic.va = rd64(h);
		p->atomic.rkey = rd32(h + 8);
		p->atomic.swap_add = rd64(h + 12);
		p->atomic.compare = rd64(h + 20);
	}
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_AETH)) {
		h = bth + op->off[TR_HDR_AETH];
		p->aeth.syndrome = h[0];
		p->aeth.msn = rd24(h + 1);
	}
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_ATOMICACKETH))
		p->atomic_ack_orig = rd64(bth + op->off[TR_HDR_ATOMICACKETH]);
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_IMMDT))
		p->immdt = rd32(bth + op->off[TR_HDR_IMMDT]);
	if (p->hdrs_captured & TR_HDR_BIT(TR_HDR_IETH))
		p->ieth_rkey = rd32(bth + op->off[TR_HDR_IETH]);
}

/* A tagged SEND starts its first packet with the fabsim tag header. A payload that merely looks
 * like one but does not decode stays untagged data: real traffic owes us nothing. */
static void read_tag(tr_packet *p)
{
	int n;

	if (!p->op || p->op->op != TR_OP_SEND ||
	    (p->op->pos != TR_POS_FIRST && p->op->pos != TR_POS_ONLY))
		return;
	n = tr_taghdr_decode(p->payload, p->payload_caplen, &p->tag, NULL);
	if (n <= 0 || (uint32_t)n > p->payload_len)
		return;
	p->flags |= TR_PKT_TAGHDR;
	p->payload += n;
	p->payload_len -= (uint32_t)n;
	p->payload_caplen -= (uint32_t)n;
}

/* A fabsim atomic travels as a SEND_ONLY starting with the request header and is answered by a
 * READ response ONLY starting with the response header (tr_atomichdr.h). */
static void read_atomic(tr_packet *p)
{
	int n;

	if (!p->op || p->op->pos != TR_POS_ONLY || (p->flags & TR_PKT_TAGHDR) ||
	    (p->op->op != TR_OP_SEND && p->op->op != TR_OP_READ_RESPONSE))
		return;
	n = tr_atomichdr_decode(p->payload, p->payload_caplen, &p->atomic_hdr, NULL);
	if (n <= 0 || (uint32_t)n > p->payload_len ||
	    p->atomic_hdr.response != (p->op->op == TR_OP_READ_RESPONSE))
		return;
	p->flags |= TR_PKT_ATOMICHDR;
	p->payload += n;
	p->payload_len -= (uint32_t)n;
	p->payload_caplen -= (uint32_t)n;
}

int tr_parse_transport(tr_packet *p, const tr_frame *f, uint32_t bth_off, uint32_t end)
{
	const uint8_t *bth = f->buf + bth_off;
	uint32_t hdr_len, avail, present;
	int ret;

	if (end < bth_off + TR_BTH_LEN + TR_ICRC_LEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: %d bytes left for the transport, fewer than a BTH and "
				    "an ICRC (16)", bth_off, (int)end - (int)bth_off);
	ret = tr_parse_need(f, bth_off + TR_BTH_LEN, bth_off, "the BTH");
	if (ret)
		return ret;
	p->bth_off = bth_off;
	p->opcode = bth[0];
	p->op = tr_opcode(bth[0]);
	p->se = bth[1] & 0x80;
	p->migreq = bth[1] & 0x40;
	p->padcnt = (bth[1] >> 4) & 0x3;
	p->tver = bth[1] & 0x0f;
	p->pkey = rd16(bth + 2);
	p->bth_resv8a = bth[4];
	p->dest_qp = rd24(bth + 5);
	p->ack_req = bth[8] & 0x80;
	p->psn = rd24(bth + 9);

	hdr_len = p->op ? p->op->hdr_len : TR_BTH_LEN;
	if (end < bth_off + hdr_len + TR_ICRC_LEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: opcode 0x%02x (%s) needs %u bytes of headers and ICRC, "
				    "the packet has %u", bth_off, p->opcode, tr_opcode_name(p->opcode),
				    hdr_len + TR_ICRC_LEN, end - bth_off);
	/* The wire holds every header (checked above); a snap length may have cut some (editcap -s
	 * 64 keeps an IPv4 frame's BTH, not its RETH). That is still a packet — opcode, QP and PSN
	 * are there — whose missing fields the tools leave alone, as tshark does. */
	if (p->op)
		read_ext_headers(p, bth, f->caplen - bth_off);

	p->payload_off = bth_off + hdr_len;
	p->icrc_off = end - TR_ICRC_LEN;
	avail = p->icrc_off - p->payload_off;
	if (p->padcnt > avail)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: PadCnt %u exceeds the %u bytes between the headers and "
				    "the ICRC", bth_off + 1, p->padcnt, avail);
	p->payload = f->buf + p->payload_off;
	p->payload_len = avail - p->padcnt;
	present = f->caplen > p->payload_off ? f->caplen - p->payload_off : 0;
	p->payload_caplen = present < p->payload_len ? present : p->payload_len;
	read_tag(p);
	read_atomic(p);

	if (f->caplen >= end) {
		const uint8_t *l3 = f->buf + p->l3_off;
		size_t covered = p->icrc_off - p->l3_off;

		p->icrc_captured = true;
		p->icrc_stored = rd32le(f->buf + p->icrc_off);
		p->icrc_computed = (p->flags & TR_PKT_NATIVE_IB)
					   ? tr_icrc_ib(l3, covered)
					   : tr_icrc_roce_at(l3, p->udp_off - p->l3_off, covered);
	} else {
		p->flags |= TR_PKT_TRUNCATED;
	}
	return TR_PARSE_OK;
}
