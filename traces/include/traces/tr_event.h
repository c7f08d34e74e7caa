/* SPDX-License-Identifier: BSD-2-Clause
 * Events of the simulated fabric recorded in a trace among the packets: a process of a shared
 * fabric taken out of virtual time (blocked outside the fabric), coming back, dying. An event
 * travels as a frame of its own at the virtual time it happened, so the file stays a plain pcap;
 * the tools count it as another protocol and skip it, Wireshark shows it (fabsim.lua).
 *
 * Event frame: Ethernet (destination ff:ff:ff:ff:ff:ff, source the node's MAC 02:00:<IPv4>),
 * EtherType 0x88B5 (as the marker frames), then in network byte order:
 *   0  u32 magic   0x46534556 ("FSEV")
 *   4  u8  version 1
 *   5  u8  kind    tr_event_kind
 *   6  u16 text length (bytes that follow the fixed part, at most TR_EVENT_TEXT_MAX)
 *   8  u32 node    the node (host) of the process (0xFFFFFFFF: none)
 *  12  u32 pid     the process (0: not recorded — fabsim leaves it out, it differs between
 *                  runs)
 *  16  text        UTF-8, what happened in words, zero-padded to the Ethernet minimum. */
#ifndef TR_EVENT_H
#define TR_EVENT_H

#include <stdint.h>

#include "traces/tr_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_EVENT_MAGIC 0x46534556u
#define TR_EVENT_VERSION 1u
#define TR_EVENT_TEXT_MAX 96u
#define TR_EVENT_FRAME_MAX (14u + 16u + TR_EVENT_TEXT_MAX)

typedef enum tr_event_kind {
	TR_EVENT_AWAY = 1, /* a process is blocked outside the fabric: out of virtual time */
	TR_EVENT_BACK = 2, /* it called in again and rejoined at the global time */
	TR_EVENT_DIED = 3, /* it ended without leaving: its hosts went off the network */
	TR_EVENT_KINDS
} tr_event_kind;

typedef struct tr_event {
	uint8_t kind;
	uint32_t node;
	uint32_t pid;
	char text[TR_EVENT_TEXT_MAX + 1];
} tr_event;

/* Builds the frame into out (TR_EVENT_FRAME_MAX bytes); returns its length (60 at least). */
uint32_t tr_event_frame_build(uint8_t *out, const tr_event *ev);

/* 1 (and *ev filled) when the Ethernet frame (caplen bytes captured of wirelen) is an event
 * frame, 0 when it is not, -EINVAL with a message when it claims to be one but is damaged. A text
 * cut by the capture's snap length comes back as far as it was captured. */
int tr_event_frame_parse(const uint8_t *frame, uint32_t caplen, uint32_t wirelen, tr_event *ev,
			 tr_error *err);

const char *tr_event_kind_name(uint8_t kind);

#ifdef __cplusplus
}
#endif

#endif
