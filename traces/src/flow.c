/* SPDX-License-Identifier: BSD-2-Clause */
#include "flow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/tr_crc.h"

/* The analyzer's flow starts with its key; the table needs nothing else. */
static const tr_flow_key *key_of(const tr_flow *f)
{
	return (const tr_flow_key *)f;
}

void tr_flow_key_of(const tr_packet *p, tr_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->dest_qp = p->dest_qp;
	if (p->flags & TR_PKT_NATIVE_IB) {
		k->family = TR_FAM_IB;
		k->src[0] = (uint8_t)(p->lrh.slid >> 8);
		k->src[1] = (uint8_t)p->lrh.slid;
		k->dst[0] = (uint8_t)(p->lrh.dlid >> 8);
		k->dst[1] = (uint8_t)p->lrh.dlid;
		return;
	}
	k->family = p->ip_version == 6 ? TR_FAM_IPV6 : TR_FAM_IPV4;
	memcpy(k->src, p->ip_src, 16);
	memcpy(k->dst, p->ip_dst, 16);
	k->sport = p->udp_sport;
}

bool tr_flow_key_reverse_hosts(const tr_flow_key *a, const tr_flow_key *b)
{
	return a->family == b->family && !memcmp(a->src, b->dst, 16) && !memcmp(a->dst, b->src, 16);
}

void tr_flow_addr_str(const tr_flow_key *k, bool src, char *buf, size_t size)
{
	const uint8_t *a = src ? k->src : k->dst;
	char ip[INET6_ADDRSTRLEN] = "?";

	if (k->family == TR_FAM_IB) {
		snprintf(buf, size, "LID %u", (unsigned)(a[0] << 8 | a[1]));
		return;
	}
	inet_ntop(k->family == TR_FAM_IPV6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	if (!src)
		snprintf(buf, size, "%s", ip);
	else if (k->family == TR_FAM_IPV6)
		snprintf(buf, size, "[%s]:%u", ip, k->sport);
	else
		snprintf(buf, size, "%s:%u", ip, k->sport);
}

static bool key_eq(const tr_flow_key *a, const tr_flow_key *b)
{
	return a->family == b->family && a->sport == b->sport && a->dest_qp == b->dest_qp &&
	       !memcmp(a->src, b->src, 16) && !memcmp(a->dst, b->dst, 16);
}

static size_t hash(const tr_flow_key *k)
{
	uint32_t h = tr_crc32(k->src, 16);

	h = tr_crc32_update(h, k->dst, 16);
	h ^= (uint32_t)k->sport * 0x9E3779B1u ^ k->dest_qp * 0x85EBCA77u ^ k->family;
	return h ^ (h >> 15);
}

tr_flow *tr_flow_find(const tr_flow_table *t, const tr_flow_key *k)
{
	if (!t->nslots)
		return NULL;
	for (size_t i = hash(k) & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
		uint32_t s = t->slots[i];

		if (!s)
			return NULL;
		if (key_eq(key_of(t->flows[s - 1]), k))
			return t->flows[s - 1];
	}
}

static void place(tr_flow_table *t, size_t index)
{
	size_t i = hash(key_of(t->flows[index])) & (t->nslots - 1);

	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = (uint32_t)index + 1;
}

int tr_flow_insert(tr_flow_table *t, tr_flow *f)
{
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		tr_flow **fl = realloc(t->flows, cap * sizeof(*fl));

		if (!fl)
			return -ENOMEM;
		t->flows = fl;
		t->cap = cap;
	}
	if ((t->count + 1) * 2 > t->nslots) {
		size_t n = t->nslots ? t->nslots * 2 : 32;
		uint32_t *s = calloc(n, sizeof(*s));

		if (!s)
			return -ENOMEM;
		free(t->slots);
		t->slots = s;
		t->nslots = n;
		for (size_t i = 0; i < t->count; i++)
			place(t, i);
	}
	t->flows[t->count] = f;
	place(t, t->count);
	t->count++;
	return 0;
}

void tr_flow_table_free(tr_flow_table *t)
{
	free(t->flows);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
