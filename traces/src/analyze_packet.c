/* SPDX-License-Identifier: BSD-2-Clause
 * Rules one packet must follow on its own: integrity (ICRC, VCRC, IPv4 checksum), a known opcode,
 * lengths that add up, padding only where the IBA allows it, and no data for QP0/QP1. A frame the
 * trace marks as corrupted is expected to fail its CRCs: it is counted, not reported. */
#include "analyze_internal.h"

/* The IBA's path MTUs: 256, 512, 1024, 2048 and 4096 bytes. */
#define TR_MTU_MAX 4096u

static bool is_pow2_mtu(uint32_t n)
{
	return n >= 256 && n <= TR_MTU_MAX && (n & (n - 1)) == 0;
}

static void integrity(tr_analyzer *a, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	bool corrupted = rec->mark.flags & TR_CORRUPTED;

	/* The CRCs are sent least significant byte first; shown, as Wireshark
	 * shows the field, in the order of the bytes on the wire, so that a
	 * value can be pasted into a display filter. */
	if (p->icrc_captured && p->icrc_stored != p->icrc_computed && !corrupted) {
		a->s->icrc_bad++;
		tr_an_problem(a, rec, p->icrc_off, "ICRC 0x%08x stored, 0x%08x computed",
			      __builtin_bswap32(p->icrc_stored),
			      __builtin_bswap32(p->icrc_computed));
	}
	if (p->vcrc_captured && p->vcrc_stored != p->vcrc_computed && !corrupted) {
		a->s->vcrc_bad++;
		tr_an_problem(a, rec, p->icrc_off + TR_ICRC_LEN,
			      "VCRC 0x%04x stored, 0x%04x computed",
			      __builtin_bswap16(p->vcrc_stored),
			      __builtin_bswap16(p->vcrc_computed));
	}
	if ((p->flags & TR_PKT_ROCE) && p->ip_version == 4 && !p->ip_csum_ok && !corrupted)
		tr_an_problem(a, rec, p->l3_off + 10, "IPv4 header checksum 0x%04x is wrong",
			      p->ip_csum);
}

/* Payload sizes: FIRST and MIDDLE carry exactly one path MTU and no pad; LAST carries 1..MTU,
 * ONLY 0..MTU; no packet more than the largest path MTU. */
static void sizes(tr_analyzer *a, tr_flow *f, const tr_record *rec, uint32_t payload)
{
	const tr_packet *p = &rec->pkt;
	const tr_opcode_info *op = p->op;

	if (!op->has_payload) {
		if (payload || p->padcnt)
			tr_an_problem(a, rec, p->payload_off,
				      "%s carries %u bytes after its headers (it has no payload)",
				      op->name, payload + p->padcnt);
		return;
	}
	if (op->pos == TR_POS_FIRST || op->pos == TR_POS_MIDDLE) {
		if (p->padcnt)
			tr_an_problem(a, rec, p->bth_off + 1,
				      "PadCnt %u on %s: only a message's last packet is padded",
				      p->padcnt, op->name);
		else if (!is_pow2_mtu(payload))
			tr_an_problem(a, rec, p->payload_off,
				      "%s carries %u bytes, not a path MTU (256..4096, a power of 2)",
				      op->name, payload);
		else if (f->pmtu && payload != f->pmtu)
			tr_an_problem(a, rec, p->payload_off,
				      "%s carries %u bytes, earlier FIRST/MIDDLE packets of this flow "
				      "%u", op->name, payload, f->pmtu);
		else
			f->pmtu = payload;
	} else {
		if (op->pos == TR_POS_LAST && !payload)
			tr_an_problem(a, rec, p->payload_off, "%s carries no payload", op->name);
		else if (f->pmtu && payload > f->pmtu)
			tr_an_problem(a, rec, p->payload_off,
				      "%s carries %u bytes, more than the flow's MTU of %u",
				      op->name, payload, f->pmtu);
		else if (payload > TR_MTU_MAX)
			tr_an_problem(a, rec, p->payload_off,
				      "%s carries %u bytes, more than the largest path MTU (%u)",
				      op->name, payload, TR_MTU_MAX);
	}
}

void tr_an_check_packet(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	uint32_t payload = tr_packet_data_len(p);
	uint32_t tlen = p->icrc_off + TR_ICRC_LEN - p->bth_off;

	integrity(a, rec);
	if (!p->op) {
		tr_an_problem(a, rec, p->bth_off, "opcode 0x%02x is not a known opcode", p->opcode);
		return;
	}
	if (p->tver)
		tr_an_problem(a, rec, p->bth_off + 1, "BTH TVer %u (must be 0)", p->tver);
	if (tlen % 4)
		tr_an_problem(a, rec, p->bth_off,
			      "transport length %u (BTH to ICRC) is not a multiple of 4", tlen);
	if (p->dest_qp <= 1 && (p->op->transport == TR_TRANSPORT_RC ||
				p->op->transport == TR_TRANSPORT_UC))
		tr_an_problem(a, rec, p->bth_off + 5,
			      "%s to QP %u: QP0 and QP1 are for management datagrams", p->op->name,
			      p->dest_qp);
	if ((p->hdrs_captured & TR_HDR_BIT(TR_HDR_AETH)) &&
	    tr_aeth_kind_of(p->aeth.syndrome) == TR_AETH_RESERVED)
		tr_an_problem(a, rec, p->bth_off + p->op->off[TR_HDR_AETH],
			      "AETH syndrome 0x%02x uses the reserved kind", p->aeth.syndrome);
	/* Lengths come from the IP (or LRH) and BTH, so a frame cut by the snap length is checked
	 * too, even with its extended headers cut off. */
	sizes(a, f, rec, payload);
}
