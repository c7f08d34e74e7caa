/* SPDX-License-Identifier: BSD-2-Clause
 * IPv4 / IPv6 and UDP in front of a RoCEv2 BTH. The IP length is what says where the packet
 * ends: an Ethernet trailer (minimum-size padding) may follow it. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include <traces/tr_inet.h>
#include "parse_internal.h"

#define IPPROTO_UDP_ 17u
#define UDP_HLEN 8u

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

/* UDP header at off; the IP layer says the datagram ends at end. */
static int parse_udp(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end)
{
	int ret = tr_parse_need(f, off + UDP_HLEN, off, "the UDP header");
	const uint8_t *u = f->buf + off;

	if (ret)
		return ret;
	p->udp_sport = rd16(u);
	p->udp_dport = rd16(u + 2);
	p->udp_len = rd16(u + 4);
	p->udp_csum = rd16(u + 6);
	if (p->udp_dport != TR_ROCE_PORT)
		return tr_parse_not_ib(f, "UDP (not port 4791)");
	if (end > f->wirelen)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: the IP length puts the end of the packet at byte %u, "
				    "past the end of the %u-byte frame", p->l3_off + 2, end,
				    f->wirelen);
	if (p->udp_len != end - off)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: UDP length %u does not match the %u bytes the IP header "
				    "leaves for UDP", off + 4, p->udp_len, end - off);
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
	p->ip_tos = h[1];
	p->ip_len = rd16(h + 2);
	p->ip_id = rd16(h + 4);
	frag = rd16(h + 6);
	p->ip_df = frag & 0x4000;
	p->ip_ttl = h[8];
	p->ip_csum = rd16(h + 10);
	memcpy(p->ip_src, h + 12, 4);
	memcpy(p->ip_dst, h + 16, 4);
	if (h[9] != IPPROTO_UDP_)
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
	if (p->ip_len < ihl + UDP_HLEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IPv4 total length %u leaves no room for the UDP header",
				    off + 2, p->ip_len);
	return parse_udp(p, f, off + ihl, off + p->ip_len);
}

static int parse_ipv6(tr_packet *p, const tr_frame *f, uint32_t off)
{
	int ret = tr_parse_need(f, off + 40, off, "the IPv6 header");
	const uint8_t *h = f->buf + off;

	if (ret)
		return ret;
	p->ip_version = 6;
	p->ip_tos = (uint8_t)(rd16(h) >> 4);
	p->ip_flow_label = rd32(h) & 0xfffffu;
	p->ip_len = rd16(h + 4);
	p->ip_ttl = h[7];
	p->ip_csum_ok = true;
	memcpy(p->ip_src, h + 8, 16);
	memcpy(p->ip_dst, h + 24, 16);
	if (h[6] != IPPROTO_UDP_)
		return tr_parse_not_ib(f, h[6] == 58 || h[6] == 6 ? ip_proto_name(h[6])
							       : "IPv6 (not UDP)");
	if (p->ip_len < UDP_HLEN)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: IPv6 payload length %u leaves no room for the UDP "
				    "header", off + 4, p->ip_len);
	return parse_udp(p, f, off + 40, off + 40 + p->ip_len);
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
