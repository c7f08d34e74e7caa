/* SPDX-License-Identifier: BSD-2-Clause
 * Flows: one per (source address and UDP port, destination address, destination QP), in the
 * order they first appear so that every report lists them the same way on every run. */
#ifndef TR_FLOW_H
#define TR_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/tr_packet.h"

enum tr_flow_family { TR_FAM_IPV4 = 4, TR_FAM_IPV6 = 6, TR_FAM_IB = 27 };

typedef struct tr_flow_key {
	uint8_t family;
	uint8_t src[16]; /* IP address, or LID in the first two bytes */
	uint8_t dst[16];
	uint16_t sport;
	uint32_t dest_qp;
} tr_flow_key;

typedef struct tr_flow tr_flow; /* defined by the analyzer */

typedef struct tr_flow_table {
	tr_flow **flows;  /* by first appearance */
	size_t count, cap;
	uint32_t *slots;  /* open addressing: index + 1 into flows, 0 = empty */
	size_t nslots;
} tr_flow_table;

void tr_flow_key_of(const tr_packet *p, tr_flow_key *k);

/* The key of the flow going the other way between the same two addresses, without the QP and
 * port (the reverse flow's destination QP is not in this packet). */
bool tr_flow_key_reverse_hosts(const tr_flow_key *a, const tr_flow_key *b);

/* "192.168.70.6:72", "[fe80::1]:49152", "LID 4"; the destination side has no port. */
void tr_flow_addr_str(const tr_flow_key *k, bool src, char *buf, size_t size);

/* The key's flow, or NULL. */
tr_flow *tr_flow_find(const tr_flow_table *t, const tr_flow_key *k);

/* Adds f (whose key must be the first member of tr_flow) at the end; -ENOMEM. */
int tr_flow_insert(tr_flow_table *t, tr_flow *f);

/* Frees the table's arrays; the flows belong to the caller. */
void tr_flow_table_free(tr_flow_table *t);

#endif
