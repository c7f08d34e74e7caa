/* SPDX-License-Identifier: BSD-2-Clause
 * tr_packet_build: writes a RoCEv2 frame. The opcode table says which extended headers to write;
 * every value is checked first so that nothing the simulator emits can confuse a reader (tshark
 * decodes destination QP 0/1 as management datagrams, a source port below 0xC000 as another
 * protocol). */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include <traces/tr_inet.h>
#include "traces/tr_crc.h"
#include "traces/tr_packet.h"

#define ETH_HLEN 14u
#define VLAN_LEN 4u
#define IPV4_HLEN 20u
#define IPV6_HLEN 40u
#define UDP_HLEN 8u

void tr_packet_init(tr_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = TR_PKT_ROCE;
	p->linktype = TR_LINKTYPE_ETHERNET;
	p->ethertype = 0x0800;
	p->ip_version = 4;
	p->ip_ttl = 64;
	p->ip_df = true;
	p->udp_sport = TR_ROCE_SPORT_MIN;
	p->udp_dport = TR_ROCE_PORT;
	p->pkey = 0xFFFF;
	p->opcode = 0x04;
	p->op = tr_opcode(p->opcode);
}

/* Bytes of fabsim headers (tag, atomic) before the payload. */
static uint32_t tag_len(const tr_packet *p)
{
	return ((p->flags & TR_PKT_TAGHDR) ? TR_TAG_LEN : 0) +
	       ((p->flags & TR_PKT_ATOMICHDR) ? tr_atomichdr_len(&p->atomic_hdr) : 0);
}

/* Bytes from the BTH to the end of the ICRC. */
static uint32_t transport_len(const tr_packet *p, const tr_opcode_info *op)
{
	uint32_t data = tag_len(p) + p->payload_len;

	return op->hdr_len + data + ((4u - (data & 3u)) & 3u) + TR_ICRC_LEN;
}

size_t tr_packet_frame_len(const tr_packet *p)
{
	const tr_opcode_info *op = tr_opcode(p->opcode);

	if (!op)
		return 0;
	return ETH_HLEN + VLAN_LEN * (size_t)p->vlan_count +
	       (p->ip_version == 6 ? IPV6_HLEN : IPV4_HLEN) + UDP_HLEN + transport_len(p, op);
}

static int validate(const tr_packet *p, const tr_opcode_info *op, tr_error *err)
{
	if (!op)
		return tr_error_set(err, -EINVAL, "opcode 0x%02x is not in the opcode table",
				    p->opcode);
	if (p->dest_qp > TR_QPN_MAX)
		return tr_error_set(err, -EINVAL, "destination QP 0x%x is wider than 24 bits",
				    p->dest_qp);
	/* QP1 (the GSI) takes management datagrams, which travel as UD SENDs (CM MADs). */
	if (p->dest_qp == 0 || (p->dest_qp == 1 && op->transport != TR_TRANSPORT_UD))
		return tr_error_set(err, -EINVAL,
				    "destination QP %u is reserved for management datagrams "
				    "(QP0/QP1); data QPs start at 2", p->dest_qp);
	if (p->psn > TR_PSN_MASK)
		return tr_error_set(err, -EINVAL, "PSN 0x%x is wider than 24 bits", p->psn);
	if (p->udp_sport < TR_ROCE_SPORT_MIN)
		return tr_error_set(err, -EINVAL,
				    "UDP source port %u is below 0xC000 (tshark would try another "
				    "protocol first); use tr_udp_sport_for_qp()", p->udp_sport);
	if (p->ip_version != 4 && p->ip_version != 6)
		return tr_error_set(err, -EINVAL, "IP version %u is neither 4 nor 6",
				    p->ip_version);
	if (p->vlan_count > TR_MAX_VLANS)
		return tr_error_set(err, -EINVAL, "%u VLAN tags, at most %d", p->vlan_count,
				    TR_MAX_VLANS);
	if (p->tver > 0xf)
		return tr_error_set(err, -EINVAL, "BTH TVer %u is wider than 4 bits", p->tver);
	if (!op->has_payload && (p->payload_len || (p->flags & TR_PKT_TAGHDR)))
		return tr_error_set(err, -EINVAL, "%s carries no payload, %u bytes given",
				    op->name, p->payload_len + tag_len(p));
	if (p->payload_len && !p->payload)
		return tr_error_set(err, -EINVAL, "payload of %u bytes with no buffer",
				    p->payload_len);
	if ((p->flags & TR_PKT_TAGHDR) &&
	    (op->op != TR_OP_SEND || (op->pos != TR_POS_FIRST && op->pos != TR_POS_ONLY)))
		return tr_error_set(err, -EINVAL,
				    "a tag header goes in the first packet of a SEND, not in %s",
				    op->name);
	if ((p->flags & TR_PKT_ATOMICHDR) && (p->flags & TR_PKT_TAGHDR))
		return tr_error_set(err, -EINVAL, "a packet carries a tag header or an atomic header, "
				    "not both");
	if ((p->flags & TR_PKT_ATOMICHDR) &&
	    (p->atomic_hdr.response ? op->op != TR_OP_READ_RESPONSE || op->pos != TR_POS_ONLY
				    : op->op != TR_OP_SEND || op->pos != TR_POS_ONLY))
		return tr_error_set(err, -EINVAL,
				    "an atomic %s header goes in a %s, not in %s",
				    p->atomic_hdr.response ? "response" : "request",
				    p->atomic_hdr.response ? "READ response ONLY" : "SEND ONLY",
				    op->name);
	if ((op->hdrs & TR_HDR_BIT(TR_HDR_AETH)) && p->aeth.msn > 0xFFFFFFu)
		return tr_error_set(err, -EINVAL, "AETH MSN 0x%x is wider than 24 bits",
				    p->aeth.msn);
	if ((op->hdrs & TR_HDR_BIT(TR_HDR_DETH)) && p->deth.src_qp > TR_QPN_MAX)
		return tr_error_set(err, -EINVAL, "DETH source QP 0x%x is wider than 24 bits",
				    p->deth.src_qp);
	if (p->ip_version == 6 && p->ip_flow_label > 0xFFFFFu)
		return tr_error_set(err, -EINVAL, "IPv6 flow label 0x%x is wider than 20 bits",
				    p->ip_flow_label);
	/* IPv4 total length or IPv6 payload length must fit 16 bits. */
	uint64_t ip_len = (uint64_t)UDP_HLEN + op->hdr_len + tag_len(p) + p->payload_len + 3 +
			  TR_ICRC_LEN + (p->ip_version == 4 ? IPV4_HLEN : 0);
	if (ip_len > 0xFFFF)
		return tr_error_set(err, -EINVAL, "payload of %u bytes does not fit an IP packet",
				    p->payload_len);
	return 0;
}

static void write_ext_headers(const tr_packet *p, const tr_opcode_info *op, uint8_t *bth)
{
	uint8_t *h;

	if (op->hdrs & TR_HDR_BIT(TR_HDR_DETH)) {
		h = bth + op->off[TR_HDR_DETH];
		wr32(h, p->deth.qkey);
		h[4] = 0;
		wr24(h + 5, p->deth.src_qp);
	}
	if (op->hdrs & TR_HDR_BIT(TR_HDR_RETH)) {
		h = bth + op->off[TR_HDR_RETH];
		wr64(h, p->reth.va);
		wr32(h + 8, p->reth.rkey);
		wr32(h + 12, p->reth.dma_len);
	}
	if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICETH)) {
		h = bth + op->off[TR_HDR_ATOMICETH];
		wr64(h, p->atomic.va);
		wr32(h + 8, p->atomic.rkey);
		wr64(h + 12, p->atomic.swap_add);
		wr64(h + 20, p->atomic.compare);
	}
	if (op->hdrs & TR_HDR_BIT(TR_HDR_AETH)) {
		h = bth + op->off[TR_HDR_AETH];
		h[0] = p->aeth.syndrome;
		wr24(h + 1, p->aeth.msn);
	}
	if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICACKETH))
		wr64(bth + op->off[TR_HDR_ATOMICACKETH], p->atomic_ack_orig);
	if (op->hdrs & TR_HDR_BIT(TR_HDR_IMMDT))
		wr32(bth + op->off[TR_HDR_IMMDT], p->immdt);
	if (op->hdrs & TR_HDR_BIT(TR_HDR_IETH))
		wr32(bth + op->off[TR_HDR_IETH], p->ieth_rkey);
	if (op->hdrs & TR_HDR_BIT(TR_HDR_CNP))
		memset(bth + op->off[TR_HDR_CNP], 0, TR_CNP_LEN);
}

/* Ethernet and VLAN tags; returns the offset of the IP header. */
static uint32_t write_link(const tr_packet *p, uint8_t *buf)
{
	uint32_t off = 12;

	memcpy(buf, p->eth_dst, 6);
	memcpy(buf + 6, p->eth_src, 6);
	for (unsigned i = 0; i < p->vlan_count; i++) {
		wr16(buf + off, p->vlan_tpid[i] ? p->vlan_tpid[i] : 0x8100);
		wr16(buf + off + 2, p->vlan_tci[i]);
		off += VLAN_LEN;
	}
	wr16(buf + off, p->ip_version == 6 ? 0x86DD : 0x0800);
	return off + 2;
}

/* UDP checksum over IPv6: a zero checksum is not allowed there (RFC 8200) and tshark flags it;
 * the ICRC masks the field, so computing it changes nothing for RoCE. Runs on the finished frame. */
static void udp6_checksum(uint8_t *ip6)
{
	uint8_t *udp = ip6 + IPV6_HLEN;
	uint32_t len = rd16(udp + 4), sum = 17 + len;
	uint16_t c;

	for (unsigned i = 8; i < IPV6_HLEN; i += 2)
		sum += rd16(ip6 + i);
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += rd16(udp + i);
	if (len & 1)
		sum += (uint32_t)udp[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	c = (uint16_t)~sum;
	wr16(udp + 6, c ? c : 0xffff);
}

/* IP and UDP headers for a transport of tlen bytes; returns the offset of the BTH. */
static uint32_t write_ip_udp(const tr_packet *p, uint8_t *buf, uint32_t off, uint32_t tlen)
{
	uint8_t *h = buf + off;
	uint32_t udp_len = UDP_HLEN + tlen;

	if (p->ip_version == 4) {
		h[0] = 0x45;
		h[1] = p->ip_tos;
		wr16(h + 2, (uint16_t)(IPV4_HLEN + udp_len));
		wr16(h + 4, p->ip_id);
		wr16(h + 6, p->ip_df ? 0x4000 : 0);
		h[8] = p->ip_ttl;
		h[9] = 17;
		memcpy(h + 12, p->ip_src, 4);
		memcpy(h + 16, p->ip_dst, 4);
		wr16(h + 10, tr_ipv4_checksum(h, IPV4_HLEN));
		h += IPV4_HLEN;
	} else {
		wr32(h, 6u << 28 | (uint32_t)p->ip_tos << 20 | p->ip_flow_label);
		wr16(h + 4, (uint16_t)udp_len);
		h[6] = 17;
		h[7] = p->ip_ttl;
		memcpy(h + 8, p->ip_src, 16);
		memcpy(h + 24, p->ip_dst, 16);
		h += IPV6_HLEN;
	}
	wr16(h, p->udp_sport);
	wr16(h + 2, TR_ROCE_PORT);
	wr16(h + 4, (uint16_t)udp_len);
	wr16(h + 6, 0);
	return (uint32_t)(h + UDP_HLEN - buf);
}

int tr_packet_build(const tr_packet *p, uint8_t *buf, size_t cap, tr_error *err)
{
	const tr_opcode_info *op = tr_opcode(p->opcode);
	int ret = validate(p, op, err);
	uint32_t l3, bth_off, tlen, data_len, pad, off;
	size_t need;
	uint8_t *bth;

	if (ret)
		return ret;
	need = tr_packet_frame_len(p);
	if (need > cap)
		return tr_error_set(err, -ENOSPC, "%s frame needs %zu bytes, buffer holds %zu",
				    op->name, need, cap);
	data_len = tag_len(p) + p->payload_len;
	pad = (4u - (data_len & 3u)) & 3u;
	tlen = transport_len(p, op);
	l3 = write_link(p, buf);
	bth_off = write_ip_udp(p, buf, l3, tlen);

	bth = buf + bth_off;
	bth[0] = p->opcode;
	bth[1] = (uint8_t)((p->se ? 0x80 : 0) | (p->migreq ? 0x40 : 0) | pad << 4 | p->tver);
	wr16(bth + 2, p->pkey);
	bth[4] = p->bth_resv8a;
	wr24(bth + 5, p->dest_qp);
	bth[8] = p->ack_req ? 0x80 : 0;
	wr24(bth + 9, p->psn);
	write_ext_headers(p, op, bth);

	off = bth_off + op->hdr_len;
	if (p->flags & TR_PKT_TAGHDR) {
		tr_taghdr_encode(buf + off, p->tag.tag, p->tag.flags);
		off += TR_TAG_LEN;
	}
	if (p->flags & TR_PKT_ATOMICHDR) {
		tr_atomichdr_encode(buf + off, &p->atomic_hdr);
		off += tr_atomichdr_len(&p->atomic_hdr);
	}
	if (p->payload_len)
		memcpy(buf + off, p->payload, p->payload_len);
	off += p->payload_len;
	memset(buf + off, 0, pad);
	off += pad;
	wr32le(buf + off, tr_icrc_roce(buf + l3, off - l3));
	if (p->ip_version == 6)
		udp6_checksum(buf + l3);
	return (int)(off + TR_ICRC_LEN);
}

/* The headers of any frame fit here: Ethernet, 2 VLAN tags, IPv6, UDP, the longest transport
 * headers and the fabsim headers. */
#define HEAD_MAX 256u

int tr_packet_build_prefix(const tr_packet *p, uint8_t *buf, size_t cap, uint32_t limit,
			   tr_error *err)
{
	const tr_opcode_info *op = tr_opcode(p->opcode);
	uint8_t head[HEAD_MAX];
	uint32_t need, l3, bth_off, tlen, off, n;
	uint8_t *bth;
	int ret;

	need = (uint32_t)tr_packet_frame_len(p);
	/* Whole frames, frames cut inside their ICRC and IPv6 (whose UDP checksum covers
	 * everything) are built whole. */
	if (!op || p->ip_version != 4 || limit + TR_ICRC_LEN >= need)
		return tr_packet_build(p, buf, cap, err);
	ret = validate(p, op, err);
	if (ret)
		return ret;
	if (limit > cap)
		return tr_error_set(err, -ENOSPC, "frame prefix of %u bytes, buffer holds %zu", limit,
				    cap);
	tlen = transport_len(p, op);
	l3 = write_link(p, head);
	bth_off = write_ip_udp(p, head, l3, tlen);
	bth = head + bth_off;
	bth[0] = p->opcode;
	bth[1] = (uint8_t)((p->se ? 0x80 : 0) | (p->migreq ? 0x40 : 0) |
			   ((4u - ((tag_len(p) + p->payload_len) & 3u)) & 3u) << 4 | p->tver);
	wr16(bth + 2, p->pkey);
	bth[4] = p->bth_resv8a;
	wr24(bth + 5, p->dest_qp);
	bth[8] = p->ack_req ? 0x80 : 0;
	wr24(bth + 9, p->psn);
	write_ext_headers(p, op, bth);
	off = bth_off + op->hdr_len;
	if (p->flags & TR_PKT_TAGHDR) {
		tr_taghdr_encode(head + off, p->tag.tag, p->tag.flags);
		off += TR_TAG_LEN;
	}
	if (p->flags & TR_PKT_ATOMICHDR) {
		tr_atomichdr_encode(head + off, &p->atomic_hdr);
		off += tr_atomichdr_len(&p->atomic_hdr);
	}
	n = off < limit ? off : limit;
	memcpy(buf, head, n);
	if (limit > off) {
		/* payload, then the pad: the ICRC lies beyond the limit */
		uint32_t data = limit - off < p->payload_len ? limit - off : p->payload_len;

		if (data)
			memcpy(buf + off, p->payload, data);
		if (off + data < limit)
			memset(buf + off + data, 0, limit - off - data);
	}
	return (int)need;
}
