/* SPDX-License-Identifier: BSD-2-Clause
 * Link layers in front of the IP header or the LRH: Ethernet with VLAN tags, Linux cooked
 * captures (tcpdump -i any), and ERF records (Endace), whose type 21 carries native InfiniBand. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "parse_internal.h"

#define ETH_HLEN 14u
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86DDu
#define ETHERTYPE_ARP 0x0806u
#define ETHERTYPE_VLAN 0x8100u
#define ETHERTYPE_QINQ 0x88A8u
#define ETHERTYPE_QINQ_OLD 0x9100u
#define ETHERTYPE_ROCEV1 0x8915u
#define ETHERTYPE_FABSIM_MARK 0x88B5u
#define ERF_HLEN 16u
#define ERF_TYPE_ETH 2u
#define ERF_TYPE_INFINIBAND 21u

static int by_ethertype(tr_packet *p, const tr_frame *f, uint32_t off, uint16_t type)
{
	p->ethertype = type;
	switch (type) {
	case ETHERTYPE_IPV4:
	case ETHERTYPE_IPV6:
		return tr_parse_ip(p, f, off, type);
	case ETHERTYPE_ARP:
		return tr_parse_not_ib(f, "ARP");
	case ETHERTYPE_ROCEV1:
		return tr_parse_not_ib(f, "RoCEv1 (ethertype 0x8915)");
	case ETHERTYPE_FABSIM_MARK:
		return tr_parse_not_ib(f, "fabsim marker");
	default:
		return tr_parse_not_ib(f, type < 0x600 ? "802.3 LLC" : "other ethertype");
	}
}

/* VLAN tags from `type` on, however many are stacked (switches add a provider tag to a customer
 * one, and mirror sessions a third): the first TR_MAX_VLANS are kept, the rest only skipped. */
static int by_vlan_tags(tr_packet *p, const tr_frame *f, uint32_t off, uint16_t type)
{
	while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ_OLD) {
		int ret = tr_parse_need(f, off + 4, off, "a VLAN tag");

		if (ret)
			return ret;
		if (p->vlan_count < TR_MAX_VLANS) {
			p->vlan_tpid[p->vlan_count] = type;
			p->vlan_tci[p->vlan_count] = rd16(f->buf + off);
			p->vlan_count++;
		}
		type = rd16(f->buf + off + 2);
		off += 4;
	}
	return by_ethertype(p, f, off, type);
}

int tr_parse_ethernet(tr_packet *p, const tr_frame *f, uint32_t off)
{
	int ret = tr_parse_need(f, off + ETH_HLEN, off, "the Ethernet header");

	if (ret)
		return ret;
	memcpy(p->eth_dst, f->buf + off, 6);
	memcpy(p->eth_src, f->buf + off + 6, 6);
	/* a decapsulated frame's tags are its own, not the tunnel's */
	p->vlan_count = 0;
	return by_vlan_tags(p, f, off + ETH_HLEN, rd16(f->buf + off + 12));
}

int tr_parse_sll(tr_packet *p, const tr_frame *f, uint32_t off, bool v2)
{
	uint32_t hlen = v2 ? 20u : 16u;
	int ret = tr_parse_need(f, off + hlen, off, v2 ? "the SLL2 header" : "the SLL header");
	const uint8_t *h = f->buf + off;
	uint16_t addr_len;

	if (ret)
		return ret;
	addr_len = v2 ? h[11] : rd16(h + 4);
	if (addr_len == 6)
		memcpy(p->eth_src, h + (v2 ? 12 : 6), 6);
	return by_vlan_tags(p, f, off + hlen, rd16(h + (v2 ? 0 : 14)));
}

int tr_parse_erf(tr_packet *p, const tr_frame *f)
{
	int ret = tr_parse_need(f, ERF_HLEN, 0, "the ERF header");
	uint32_t off = ERF_HLEN, wlen;
	uint8_t type;

	if (ret)
		return ret;
	p->flags |= TR_PKT_ERF;
	type = f->buf[8];
	wlen = rd16(f->buf + 14);
	/* Extension headers are chained by the top bit of the type, then of each header. */
	if (type & 0x80) {
		bool more = true;

		while (more) {
			ret = tr_parse_need(f, off + 8, off, "an ERF extension header");
			if (ret)
				return ret;
			more = f->buf[off] & 0x80;
			off += 8;
		}
	}
	type &= 0x7f;
	p->erf_type = type;
	/* The ERF wire length is that of the frame inside: it is what tshark counts. Bytes past it
	 * are the record's padding to its rlen, not part of the frame. */
	p->wirelen = wlen;
	tr_frame inner = *f;
	if (type == ERF_TYPE_ETH)
		off += 2; /* offset and pad bytes before the Ethernet header */
	inner.wirelen = off + wlen;
	if (inner.caplen > inner.wirelen)
		inner.caplen = inner.wirelen;
	if (type == ERF_TYPE_INFINIBAND)
		return tr_parse_lrh(p, &inner, off, inner.wirelen);
	if (type == ERF_TYPE_ETH)
		return tr_parse_ethernet(p, &inner, off);
	return tr_parse_not_ib(f, "other ERF record type");
}
