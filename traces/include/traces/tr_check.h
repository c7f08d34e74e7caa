/* SPDX-License-Identifier: BSD-2-Clause
 * `trace check`: every rule a trace can break, one line per problem — ICRC (and VCRC on native
 * InfiniBand) of every packet, the PSN sequence of each QP (in order modulo 2^24, resends only
 * after a NAK, a timeout or a retransmit mark), FIRST/MIDDLE/LAST order, pad and length
 * consistency, known opcodes, no data to QP0/QP1, markers that match their frames, and whatever
 * makes a frame unreadable. Frames marked corrupted are expected to fail their CRCs. */
#ifndef TR_CHECK_H
#define TR_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "traces/tr_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_check_result {
	uint64_t frames;
	uint64_t packets;
	uint64_t problems;
} tr_check_result;

/* Checks path, printing one line per problem ("frame N (byte offset X): what") to out (may be
 * NULL). Returns 0 when the trace is clean, 1 when it has problems (a file that cannot be opened
 * or read to the end is one). res may be NULL. */
int tr_check_file(const char *path, FILE *out, tr_check_result *res);

#ifdef __cplusplus
}
#endif

#endif
