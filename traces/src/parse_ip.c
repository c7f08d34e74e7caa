/* SPDX-License-Identifier: BSD-2-Clause
 * IPv4 / IPv6 and UDP in front of a RoCEv2 BTH. The IP length is what says where the packet
 * ends: an Ethernet trailer (minimum-size padding) may follow it. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include <traces/tr_inet.h>
#include "parse_internal.h"

#define IPPROTO_UDP_ 17u
#define IPPROTO_GRE_ 47u
#define VXLAN_PORT 4789u
#define UDP_HLEN 8u
#define IPV6_HLEN 40u
#define IPV6_HOPOPTS 0u
#define IPV6_ROUTING 43u
#define IPV6_FRAGMENT 44u
#define IPV6_DSTOPTS 60u

static const char *ip_proto_name(uint8_t proto)
{
	switch (proto) {
	case 1:
		return "ICMP";
	case 6:
		return "TCP";
	case 58:
		return "ICMPv6";
	default:
		return "other IP protocol";
	}
}

/* The IP length puts the end of the packet at `end`; it may not lie past the frame. */
static int ip_end_ok(const tr_packet *p, const tr_frame *f, uint32_t end)
{
	if (end <= f->wirelen)
		return 0;
	return tr_error_set(f->err, -EINVAL,
			    "byte %u: the IP length puts the end of the packet at byte %u, past the "
			    "end of the %u-byte frame", p->l3_off + (p->ip_version == 4 ? 2 : 4), end,
			    f->wirelen);
}

/* UDP header at off; the IP layer says the datagram ends at end. */
static int parse_udp(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end)
{
	int ret = tr_parse_need(f, off + UDP_HLEN, off, "the UDP header");
	const uint8_t *u = f->buf + off;

	if (ret)
		return ret;
	p->udp_off = off;
	p->udp_sport = rd16(u);
	p->udp_dport = rd16(u + 2);
	p->udp_len = rd16(u + 4);
	p->udp_csum = rd16(u + 6);
	if (p->udp_dport != TR_ROCE_PORT && p->udp_dport != VXLAN_PORT)
		return tr_parse_not_ib(f, "UDP (not port 4791)");
	ret = ip_end_ok(p, f, end);
	if (ret)
		return ret;
	if (p->udp_len != end - off)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: UDP length %u does not match the %u bytes the IP header "
				    "leaves for UDP", off + 4, p->udp_len, end - off);
	if (p->udp_dport == VXLAN_PORT)
		return tr_parse_vxlan(p, f, off + UDP_HLEN, end);
	p->flags |= TR_PKT_ROCE;
	return tr_parse_transport(p, f, off + UDP_HLEN, end);
}

static int parse_ipv4(tr_packet *p, const tr_frame *f, uint32_t off)
{
	int ret = tr_parse_need(f, off + 20, off, "the IPv4 header");
	const uint8_t *h = f->buf + off;
	uint32_t ihl;
	uint16_t frag;

	if (ret)
		return ret;
	ihl = (h[0] & 0x0fu) * 4;
	p->ip_version = 4;
	p->ip_flow_label = 0;
	p->ip_tos = h[1];
	p->ip_len = rd16(h + 2);
	p->ip_id = rd16(h + 4);
	frag = rd16(h + 6);
	p->ip_df = frag & 0x4000;
	p->ip_ttl = h[8];
	p->ip_csum = rd16(h + 10);
	memcpy(p->ip_src, h + 12, 4);
	memcpy(p->ip_dst, h + 16, 4);
	if (h[9] != IPPROTO_UDP_ && h[9] != IPPROTO_GRE_)
		return tr_parse_not_ib(f, ip_proto_name(h[9]));
	if (ihl < 20)
		return tr_error_set(f->err, -EINVAL, "byte %u: IPv4 header length %u below 20",
				    off, ihl);
	ret = tr_parse_need(f, off + ihl, off, "the IPv4 options");
	if (ret)
		return ret;
	p->ip_csum_ok = tr_ipv4_checksum(h, ihl) == p->ip_csum;
	if (frag & 0x3fff)
		return tr_parse_not_ib(f, "IPv4 fragment");
	if (h[9] == IPPROTO_GRE_) {
		if (p->ip_len < ihl)
			return tr_error_set(f->err, -EINVAL,
					    "byte %u: IPv4 total length %u is less than its header",
					    off + 2, p->ip_len);
		ret = ip_end_ok(p, f, off + p->ip_len);
		return ret ? ret : tr_parse_gre(p, f, off + ihl, off + p->ip_len);
	}
	if (p->ip_len < ihl + UDP_HLEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IPv4 total length %u leaves no room for the UDP header",
				    off + 2, p->ip_len);
	return parse_udp(p, f, off + ihl, off + p->ip_len);
}

/* A snap length that cuts the extension headers hides what the packet carries: most are not
 * RoCE, and one that is cannot be told from them. A frame short on the wire is malformed. */
static int ext_header_captured(const tr_frame *f, uint32_t at, uint32_t n)
{
	if (at + n <= f->caplen)
		return 0;
	if (f->caplen < f->wirelen && at + n <= f->wirelen)
		return tr_parse_not_ib(f, "IPv6 (extension headers not captured)");
	return tr_parse_need(f, at + n, at, "an IPv6 extension header");
}

/* Walks the IPv6 extension headers from the fixed header at off to the transport: a router
 * alert (MLD, RSVP) or a host's options may come before UDP. Returns the transport's offset in
 * *at and its protocol in *next, or a parse result. */
static int ipv6_ext_headers(const tr_frame *f, uint32_t off, uint32_t end, uint32_t *at,
			    uint8_t *next)
{
	uint32_t len;
	int ret;

	*next = f->buf[off + 6];
	*at = off + IPV6_HLEN;
	for (;;) {
		const uint8_t *x = f->buf + *at;

		switch (*next) {
		case IPV6_HOPOPTS:
		case IPV6_ROUTING:
		case IPV6_DSTOPTS:
			ret = ext_header_captured(f, *at, 2);
			if (ret)
				return ret;
			len = (x[1] + 1u) * 8;
			break;
		case IPV6_FRAGMENT: {
			uint16_t frag;

			ret = ext_header_captured(f, *at, 8);
			if (ret)
				return ret;
			frag = rd16(x + 2);
			if (frag & 0xfff8u)
				return tr_parse_not_ib(f, "IPv6 fragment");
			/* A first fragment is readable only when it holds the whole datagram. */
			if ((frag & 1) &&
			    (x[0] != IPPROTO_UDP_ || *at + 8 + UDP_HLEN > f->caplen ||
			     rd16(x + 8 + 4) != end - (*at + 8)))
				return tr_parse_not_ib(f, "IPv6 fragment");
			len = 8;
			break;
		}
		default:
			return 0;
		}
		if (*at + len > end)
			return tr_error_set(f->err, -EINVAL,
					    "byte %u: IPv6 extension header of %u bytes runs past the "
					    "%u bytes of the payload length", *at, len, end - off - IPV6_HLEN);
		*next = x[0];
		*at += len;
	}
}

static int parse_ipv6(tr_packet *p, const tr_frame *f, uint32_t off)
{
	int ret = tr_parse_need(f, off + IPV6_HLEN, off, "the IPv6 header");
	const uint8_t *h = f->buf + off;
	uint32_t end, at;
	uint8_t next;

	if (ret)
		return ret;
	p->ip_version = 6;
	p->ip_tos = (uint8_t)(rd16(h) >> 4);
	p->ip_flow_label = rd32(h) & 0xfffffu;
	p->ip_len = rd16(h + 4);
	p->ip_ttl = h[7];
	p->ip_id = 0;
	p->ip_df = false;
	p->ip_csum = 0;
	p->ip_csum_ok = true;
	memcpy(p->ip_src, h + 8, 16);
	memcpy(p->ip_dst, h + 24, 16);
	end = off + IPV6_HLEN + p->ip_len;
	ret = ipv6_ext_headers(f, off, end, &at, &next);
	if (ret)
		return ret;
	if (next == IPPROTO_GRE_) {
		ret = ip_end_ok(p, f, end);
		return ret ? ret : tr_parse_gre(p, f, at, end);
	}
	if (next != IPPROTO_UDP_)
		return tr_parse_not_ib(f, next == 58 || next == 6 ? ip_proto_name(next)
								: "IPv6 (not UDP)");
	if (end < at + UDP_HLEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IPv6 payload length %u leaves no room for the UDP "
				    "header", off + 4, p->ip_len);
	return parse_udp(p, f, at, end);
}

int tr_parse_ip(tr_packet *p, const tr_frame *f, uint32_t off, uint16_t ethertype)
{
	int ret = tr_parse_need(f, off + 1, off, "the IP version");
	unsigned version;

	if (ret)
		return ret;
	p->l3_off = off;
	version = f->buf[off] >> 4;
	if (ethertype == 0x0800 && version != 4)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IP version %u under ethertype 0x0800 (IPv4)", off,
				    version);
	if (ethertype == 0x86DD && version != 6)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IP version %u under ethertype 0x86DD (IPv6)", off,
				    version);
	if (version == 4)
		return parse_ipv4(p, f, off);
	if (version == 6)
		return parse_ipv6(p, f, off);
	return tr_parse_not_ib(f, "not IP");
}
