/* SPDX-License-Identifier: BSD-2-Clause
 * Tunnels that carry a whole frame, as data-centre switches mirror or overlay RoCE: GRE with
 * ERSPAN (types I, II, III) or transparent Ethernet bridging, and VXLAN. The inner frame is
 * parsed in place, so every offset stays one from the start of the captured frame, and the
 * packet's Ethernet, IP and UDP fields (the ICRC, the flow) are the inner frame's. */
#include <errno.h>

#include "bytes.h"
#include "parse_internal.h"

#define GRE_HLEN 4u
#define GRE_C 0x8000u       /* checksum and reserved: 4 bytes */
#define GRE_R 0x4000u       /* source routing (RFC 1701), never met in mirroring */
#define GRE_K 0x2000u       /* key: 4 bytes */
#define GRE_S 0x1000u       /* sequence number: 4 bytes */
#define GRE_VERSION 0x0007u /* 1 is PPTP's enhanced GRE */
#define GRE_TEB 0x6558u
#define GRE_ERSPAN_II 0x88BEu
#define GRE_ERSPAN_III 0x22EBu
#define ERSPAN_II_HLEN 8u
#define ERSPAN_III_HLEN 12u
#define ERSPAN_III_SUBHLEN 8u
#define ERSPAN_T 0x04u      /* byte 2: the switch cut the mirrored frame */
#define ERSPAN_FT_ETHERNET 0u
#define ERSPAN_FT_IP 2u
#define VXLAN_HLEN 8u
/* Each level costs a few dozen bytes of frame, so a crafted frame could nest thousands of them;
 * real ones nest one, rarely two. */
#define MAX_TUNNELS 4u

/* Bytes [at, n_end) must lie inside the outer packet (ending at end) and be captured. */
static int need_inside(const tr_frame *f, uint32_t n_end, uint32_t end, uint32_t at,
		       const char *what)
{
	if (n_end > end)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: %s runs past the end of the tunnel's packet at byte %u",
				    at, what, end);
	return tr_parse_need(f, n_end, at, what);
}

/* The frame inside [off, end). `cut`: the tunnel says the inner frame was shortened (ERSPAN's
 * T bit), so its own lengths may point past `end`: it is a truncated frame, not a malformed one. */
static int inner(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end, bool cut,
		 bool ethernet)
{
	tr_frame in = *f;

	if (f->depth >= MAX_TUNNELS)
		return tr_parse_not_ib(f, "tunnels nested too deep");
	in.depth++;
	in.wirelen = cut ? UINT32_MAX : end;
	if (in.caplen > end)
		in.caplen = end;
	p->flags |= TR_PKT_TUNNEL;
	return ethernet ? tr_parse_ethernet(p, &in, off) : tr_parse_ip(p, &in, off, 0);
}

static int erspan_iii(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end)
{
	int ret = need_inside(f, off + ERSPAN_III_HLEN, end, off, "the ERSPAN type III header");
	const uint8_t *h = f->buf + off;
	uint32_t hlen = ERSPAN_III_HLEN;
	uint16_t w;
	unsigned ft;

	if (ret)
		return ret;
	if (h[0] >> 4 != 2)
		return tr_parse_not_ib(f, "ERSPAN of another version");
	w = rd16(h + 10);
	ft = (w >> 10) & 0x1f;
	if (w & 1) { /* O: a platform-specific subheader follows */
		hlen += ERSPAN_III_SUBHLEN;
		ret = need_inside(f, off + hlen, end, off + ERSPAN_III_HLEN,
				  "the ERSPAN platform subheader");
		if (ret)
			return ret;
	}
	if (ft != ERSPAN_FT_ETHERNET && ft != ERSPAN_FT_IP)
		return tr_parse_not_ib(f, "ERSPAN frame of another type");
	return inner(p, f, off + hlen, end, h[2] & ERSPAN_T, ft == ERSPAN_FT_ETHERNET);
}

int tr_parse_gre(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end)
{
	int ret = need_inside(f, off + GRE_HLEN, end, off, "the GRE header");
	const uint8_t *h = f->buf + off;
	uint32_t hlen = GRE_HLEN;
	uint16_t flags, proto;

	if (ret)
		return ret;
	flags = rd16(h);
	proto = rd16(h + 2);
	if (flags & (GRE_VERSION | GRE_R))
		return tr_parse_not_ib(f, "GRE (other)");
	hlen += (flags & GRE_C ? 4u : 0) + (flags & GRE_K ? 4u : 0) + (flags & GRE_S ? 4u : 0);
	ret = need_inside(f, off + hlen, end, off, "the GRE header");
	if (ret)
		return ret;
	off += hlen;
	switch (proto) {
	case GRE_TEB:
		return inner(p, f, off, end, false, true);
	case GRE_ERSPAN_II:
		/* Type I has no header of its own and no sequence number; type II has both. */
		if (!(flags & GRE_S))
			return inner(p, f, off, end, false, true);
		ret = need_inside(f, off + ERSPAN_II_HLEN, end, off, "the ERSPAN type II header");
		if (ret)
			return ret;
		if (f->buf[off] >> 4 != 1)
			return tr_parse_not_ib(f, "ERSPAN of another version");
		return inner(p, f, off + ERSPAN_II_HLEN, end, f->buf[off + 2] & ERSPAN_T, true);
	case GRE_ERSPAN_III:
		return erspan_iii(p, f, off, end);
	default:
		return tr_parse_not_ib(f, "GRE (other protocol)");
	}
}

int tr_parse_vxlan(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end)
{
	int ret = need_inside(f, off + VXLAN_HLEN, end, off, "the VXLAN header");

	if (ret)
		return ret;
	return inner(p, f, off + VXLAN_HLEN, end, false, true);
}
