/* SPDX-License-Identifier: BSD-2-Clause
 * The response side: ACKs and NAKs, atomic ACKs and READ responses. A response names only the QP
 * it goes to, so the request flow it answers is found by addresses and PSN: among the flows going
 * the other way between the same hosts, the one that sent this PSN — preferring the one whose UDP
 * source port is the QP's number (the simulator's rule, and the Huawei NIC's) because simulated
 * QPs may all start at the same PSN, and taking none while several could be it. Once found, the
 * pair is kept (find_peer). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_internal.h"
#include "traces/tr_crc.h"

static tr_sent *sent_at(tr_flow *g, uint32_t psn)
{
	tr_sent *e;

	if (!g || !g->sent)
		return NULL;
	e = &g->sent[psn & (g->sent_cap - 1)];
	return e->kind && e->psn == psn ? e : NULL;
}

static bool port_names_qp(const tr_flow *g, uint32_t qpn)
{
	return g->key.sport == qpn || g->key.sport == tr_udp_sport_for_qp(qpn);
}

/* Where ports name QPs (the simulator, the Huawei NIC), both ends do: request flow g's port names
 * the QP the responses go to, and response flow f's the QP the requests go to. One direction
 * alone may be chance — a NIC whose ports say nothing of QPs can pick port 4097 for one QP while
 * another QP is number 4097. */
static bool ports_name_qps(const tr_flow *g, const tr_flow *f)
{
	return port_names_qp(g, f->key.dest_qp) && port_names_qp(f, g->key.dest_qp);
}

static size_t hosts_hash(const tr_flow_key *k)
{
	uint32_t h = tr_crc32_update(tr_crc32(k->src, 16), k->dst, 16) ^ k->family;

	return h ^ (h >> 15);
}

static bool same_hosts(const tr_flow_key *a, const tr_flow_key *b)
{
	return a->family == b->family && !memcmp(a->src, b->src, 16) && !memcmp(a->dst, b->dst, 16);
}

/* The slot of the host pair (family, src, dst) of k: its own, or the free one it would take. */
static tr_hostpair *pair_slot(const tr_analyzer *a, const tr_flow_key *k)
{
	for (size_t i = hosts_hash(k) & (a->npairs - 1);; i = (i + 1) & (a->npairs - 1))
		if (!a->pairs[i].hosts.family || same_hosts(&a->pairs[i].hosts, k))
			return &a->pairs[i];
}

static int pairs_grow(tr_analyzer *a)
{
	size_t n = a->npairs ? a->npairs * 2 : 16;
	tr_hostpair *old = a->pairs, *slots = calloc(n, sizeof(*slots));
	size_t old_n = a->npairs;

	if (!slots)
		return -ENOMEM;
	a->pairs = slots;
	a->npairs = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].hosts.family)
			*pair_slot(a, &old[i].hosts) = old[i];
	free(old);
	return 0;
}

void tr_an_unpaired_add(tr_analyzer *a, tr_flow *f)
{
	tr_hostpair *hp;

	if (f->unpaired_listed || f->answered_by)
		return;
	if ((a->pairs_used + 1) * 2 > a->npairs && pairs_grow(a)) {
		a->oom = -ENOMEM;
		return;
	}
	hp = pair_slot(a, &f->key);
	if (!hp->hosts.family) {
		hp->hosts.family = f->key.family;
		memcpy(hp->hosts.src, f->key.src, 16);
		memcpy(hp->hosts.dst, f->key.dst, 16);
		a->pairs_used++;
	}
	f->unpaired_listed = true;
	f->unpaired_prev = hp->tail;
	f->unpaired_next = NULL;
	if (hp->tail)
		hp->tail->unpaired_next = f;
	else
		hp->head = f;
	hp->tail = f;
}

static void unpaired_remove(tr_analyzer *a, tr_flow *g)
{
	tr_hostpair *hp = pair_slot(a, &g->key);

	if (g->unpaired_prev)
		g->unpaired_prev->unpaired_next = g->unpaired_next;
	else
		hp->head = g->unpaired_next;
	if (g->unpaired_next)
		g->unpaired_next->unpaired_prev = g->unpaired_prev;
	else
		hp->tail = g->unpaired_prev;
	g->unpaired_listed = false;
	g->unpaired_prev = g->unpaired_next = NULL;
}

/* The request flow f's responses answer, found once and kept: switching later would credit
 * the ACKs of one QP to another. Candidates are the RC flows going the other way between the same
 * hosts that sent this PSN and answer to no other response flow (one QP answers one QP). The one
 * whose UDP source port names f's QP, f's port naming its, is certain; otherwise a candidate is taken only when it is
 * the only one — QPs that start at the same PSN, on ports that say nothing of the QP, stay apart
 * until a response tells them apart, or for good, rather than be paired by chance. The
 * candidates are those listed for the reverse host pair, so that a response costs the unpaired
 * flows between its two hosts, not every flow of the capture. */
static tr_flow *find_peer(tr_analyzer *a, tr_flow *f, uint32_t psn)
{
	tr_flow *only = NULL;
	tr_flow_key rev = { .family = f->key.family };
	tr_hostpair *hp;
	unsigned n = 0;

	if (f->peer)
		return f->peer;
	if (!a->npairs)
		return NULL;
	memcpy(rev.src, f->key.dst, 16);
	memcpy(rev.dst, f->key.src, 16);
	hp = pair_slot(a, &rev);
	for (tr_flow *g = hp->head; g; g = g->unpaired_next) {
		if (!sent_at(g, psn))
			continue;
		if (ports_name_qps(g, f)) {
			only = g;
			n = 1;
			break;
		}
		only = g;
		n++;
	}
	if (n != 1)
		return NULL;
	f->peer = only;
	only->answered_by = f;
	unpaired_remove(a, only);
	return only;
}

static void ack_through(tr_flow *g, uint32_t psn)
{
	psn &= TR_PSN_MASK;
	if (g && (!g->acked || tr_psn_diff(g->acked_psn, psn) > 0)) {
		g->acked = true;
		g->acked_psn = psn;
	}
}

/* The first response to a request gives one latency sample. */
static void measure(tr_analyzer *a, tr_flow *peer, const tr_record *rec, uint8_t kind,
		    tr_lat_kind lat)
{
	tr_sent *e = sent_at(peer, rec->pkt.psn);

	if (!e || e->kind != kind || e->answered || e->dropped || rec->ts_ns < e->ts_ns)
		return;
	e->answered = true;
	tr_an_sample(a, lat, rec->ts_ns - e->ts_ns);
}

static tr_nak_kind nak_kind(uint8_t syndrome)
{
	if (tr_aeth_kind_of(syndrome) == TR_AETH_RNR_NAK)
		return TR_NAKK_RNR;
	switch (syndrome & 0x1f) {
	case TR_NAK_PSN_SEQ_ERROR:
		return TR_NAKK_PSN_SEQUENCE;
	case TR_NAK_INVALID_REQUEST:
		return TR_NAKK_INVALID_REQUEST;
	case TR_NAK_REMOTE_ACCESS:
		return TR_NAKK_REMOTE_ACCESS;
	case TR_NAK_REMOTE_OPERATIONAL:
		return TR_NAKK_REMOTE_OPERATIONAL;
	default:
		return TR_NAKK_OTHER;
	}
}

static void ack(tr_analyzer *a, tr_flow *f, tr_flow *peer, const tr_record *rec, bool delivered)
{
	const tr_packet *p = &rec->pkt;
	tr_aeth_kind kind = tr_aeth_kind_of(p->aeth.syndrome);
	tr_nak_kind nk;

	if (!(p->hdrs_captured & TR_HDR_BIT(TR_HDR_AETH)))
		return; /* cut off by the snap length: ACK or NAK, nobody can tell */
	if (kind == TR_AETH_ACK) {
		if (delivered) {
			measure(a, peer, rec, TR_SENT_DATA, TR_LAT_ACK);
			ack_through(peer, p->psn);
		}
		return;
	}
	if (kind != TR_AETH_NAK && kind != TR_AETH_RNR_NAK)
		return;
	nk = nak_kind(p->aeth.syndrome);
	f->sum.naks[nk]++;
	a->s->naks[nk]++;
	if (delivered && peer) {
		/* A PSN sequence error or RNR NAK acknowledges everything before its PSN. */
		peer->nak_seen = true;
		if (nk == TR_NAKK_PSN_SEQUENCE || nk == TR_NAKK_RNR)
			ack_through(peer, p->psn - 1);
	}
}

static void read_response(tr_analyzer *a, tr_flow *f, tr_flow *peer, const tr_record *rec,
			  bool delivered)
{
	const tr_packet *p = &rec->pkt;
	tr_msg_progress *m = &f->resp;
	uint8_t pos = p->op->pos;

	/* The start of a READ response already answered in full: the
	 * responder sent it again (its ACK was lost, or the request came
	 * again). */
	if ((pos == TR_POS_FIRST || pos == TR_POS_ONLY) && m->has_done &&
	    tr_psn_diff(m->done_psn, p->psn) <= 0 &&
	    tr_psn_diff(m->done_psn, p->psn) > -(int32_t)TR_SENT_RING) {
		if (m->state == TR_MSTATE_OPEN)
			f->sum.incomplete_messages++;
		m->state = pos == TR_POS_FIRST ? TR_MSTATE_REPLAY : TR_MSTATE_NONE;
		f->sum.retransmissions++;
		a->s->retransmissions++;
		return;
	}
	if (m->state == TR_MSTATE_REPLAY) { /* the rest of one sent again */
		f->sum.retransmissions++;
		a->s->retransmissions++;
		if (pos == TR_POS_LAST)
			m->state = TR_MSTATE_NONE;
		return;
	}
	if (delivered && (pos == TR_POS_FIRST || pos == TR_POS_ONLY))
		measure(a, peer, rec, TR_SENT_READ, TR_LAT_READ);
	if (pos == TR_POS_FIRST || pos == TR_POS_ONLY) {
		if (m->state == TR_MSTATE_OPEN)
			f->sum.incomplete_messages++; /* a READ retried from where it broke */
		m->state = TR_MSTATE_OPEN;
		m->bytes = p->payload_len;
		m->next_psn = (p->psn + 1) & TR_PSN_MASK;
		f->sum.unique_payload_bytes += p->payload_len;
	} else if (m->state == TR_MSTATE_NONE) {
		tr_an_problem(a, rec, p->bth_off, "%s without a READ response FIRST before it",
			      p->op->name);
		m->state = TR_MSTATE_UNKNOWN;
	} else if (m->state == TR_MSTATE_OPEN) {
		int32_t d = tr_psn_diff(m->next_psn, p->psn);

		if (d < 0) {
			f->sum.retransmissions++;
			a->s->retransmissions++;
			return;
		}
		if (d > 0) {
			f->sum.psn_gaps++;
			a->s->psn_gaps++;
			tr_an_problem(a, rec, p->bth_off + 9,
				      "%s has PSN %u, the response before it had %u", p->op->name,
				      p->psn, (m->next_psn - 1) & TR_PSN_MASK);
			m->state = TR_MSTATE_UNKNOWN;
			return;
		}
		m->bytes += p->payload_len;
		m->next_psn = (p->psn + 1) & TR_PSN_MASK;
		f->sum.unique_payload_bytes += p->payload_len;
	}
	if ((pos == TR_POS_LAST || pos == TR_POS_ONLY) && m->state == TR_MSTATE_OPEN) {
		tr_an_message_done(a, f, TR_MSG_READ, m->bytes, false);
		m->state = TR_MSTATE_NONE;
		m->has_done = true;
		m->done_psn = p->psn;
	}
	if ((pos == TR_POS_LAST || pos == TR_POS_ONLY) && delivered && peer) {
		ack_through(peer, p->psn);
		/* The READ consumed the requester's PSNs up to this one. */
		if (peer->req_seen && tr_psn_diff(peer->req_next, p->psn + 1) > 0) {
			peer->req_next = (p->psn + 1) & TR_PSN_MASK;
			peer->req_slack = 0;
		}
	}
}

void tr_an_response(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	bool delivered = !(rec->mark.flags & TR_DROPPED);
	tr_flow *peer = p->op->transport == TR_TRANSPORT_RC ? find_peer(a, f, p->psn) : NULL;

	switch (p->op->op) {
	case TR_OP_ACK:
		ack(a, f, peer, rec, delivered);
		break;
	case TR_OP_ATOMIC_ACK:
		if (delivered) {
			measure(a, peer, rec, TR_SENT_ATOMIC, TR_LAT_ATOMIC);
			ack_through(peer, p->psn);
		}
		break;
	case TR_OP_READ_RESPONSE:
		if (p->flags & TR_PKT_ATOMICHDR) {
			/* a fabsim atomic's answer (tr_atomichdr.h), not READ data */
			if (delivered) {
				measure(a, peer, rec, TR_SENT_ATOMIC, TR_LAT_ATOMIC);
				ack_through(peer, p->psn);
			}
			break;
		}
		read_response(a, f, peer, rec, delivered);
		break;
	}
}
