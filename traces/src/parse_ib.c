/* SPDX-License-Identifier: BSD-2-Clause
 * Native InfiniBand: LRH, optional GRH, then the transport; the VCRC closes the frame. The LRH's
 * packet length (in 4-byte words, LRH to ICRC) is what says where the packet ends. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "parse_internal.h"
#include "traces/tr_crc.h"

#define LRH_LEN 8u
#define GRH_LEN 40u
#define VCRC_LEN 2u
#define LNH_RAW 0u
#define LNH_IP 1u
#define LNH_LOCAL 2u
#define LNH_GLOBAL 3u
#define GRH_NEXT_IBA 0x1Bu

int tr_parse_lrh(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t wire_end)
{
	int ret = tr_parse_need(f, off + LRH_LEN, off, "the LRH");
	const uint8_t *h = f->buf + off;
	uint32_t bth_off = off + LRH_LEN, end;

	if (ret)
		return ret;
	p->l3_off = off;
	p->lrh.vl = h[0] >> 4;
	p->lrh.lver = h[0] & 0x0f;
	p->lrh.sl = h[1] >> 4;
	p->lrh.lnh = h[1] & 0x03;
	p->lrh.dlid = rd16(h + 2);
	p->lrh.pktlen = rd16(h + 4) & 0x7ff;
	p->lrh.slid = rd16(h + 6);
	if (p->lrh.lnh == LNH_RAW)
		return tr_parse_not_ib(f, "raw InfiniBand packet");
	if (p->lrh.lnh == LNH_IP)
		return tr_parse_not_ib(f, "raw IPv6 over InfiniBand");
	end = off + p->lrh.pktlen * 4u;
	if (end + VCRC_LEN != wire_end)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: LRH packet length %u words (%u bytes + 2 of VCRC) does "
				    "not match the frame's %u bytes on the wire", off + 4,
				    p->lrh.pktlen, p->lrh.pktlen * 4u, wire_end - off);
	if (p->lrh.lnh == LNH_GLOBAL) {
		const uint8_t *g = h + LRH_LEN;

		ret = tr_parse_need(f, off + LRH_LEN + GRH_LEN, off + LRH_LEN, "the GRH");
		if (ret)
			return ret;
		p->grh.ipver = g[0] >> 4;
		p->grh.tclass = (uint8_t)(rd16(g) >> 4);
		p->grh.flow_label = rd32(g) & 0xfffffu;
		p->grh.paylen = rd16(g + 4);
		p->grh.nxthdr = g[6];
		p->grh.hoplmt = g[7];
		memcpy(p->grh.sgid, g + 8, 16);
		memcpy(p->grh.dgid, g + 24, 16);
		p->flags |= TR_PKT_GRH;
		if (p->grh.nxthdr != GRH_NEXT_IBA)
			return tr_parse_not_ib(f, "GRH not followed by an IB transport header");
		bth_off += GRH_LEN;
	}
	p->flags |= TR_PKT_NATIVE_IB;
	ret = tr_parse_transport(p, f, bth_off, end);
	if (ret == TR_PARSE_OK && f->caplen >= end + VCRC_LEN) {
		p->vcrc_captured = true;
		p->vcrc_stored = (uint16_t)(f->buf[end] | f->buf[end + 1] << 8);
		p->vcrc_computed = tr_vcrc(h, end - off);
	}
	if (ret == TR_PARSE_OK && f->caplen < end + VCRC_LEN)
		p->flags |= TR_PKT_TRUNCATED;
	return ret;
}
