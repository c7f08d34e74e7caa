/* SPDX-License-Identifier: BSD-2-Clause
 * The fabsim tag header: RoCE has no field for a libfabric tag, so the simulated NIC puts one at
 * the start of the payload of the first packet of a tagged SEND (SEND_FIRST or SEND_ONLY, with or
 * without immediate). Remote CQ data travels in ImmDt, where a real NIC puts it.
 *
 * Byte layout (network byte order), 16 bytes:
 *   0  u32 magic   0x46535447 ("FSTG")
 *   4  u8  version 1
 *   5  u8  flags   TR_TAG_F_*
 *   6  u16 length  of this header in bytes (16 in version 1; readers skip what they do not know)
 *   8  u64 tag     the libfabric tag
 * The Lua dissector (traces/wireshark/fabsim.lua) decodes the same layout. */
#ifndef TR_TAGHDR_H
#define TR_TAGHDR_H

#include <stddef.h>
#include <stdint.h>

#include "traces/tr_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_TAG_MAGIC 0x46535447u
#define TR_TAG_VERSION 1u
#define TR_TAG_LEN 16u

enum tr_tag_flag {
	TR_TAG_F_CQ_DATA = 1u << 0, /* the message carries remote CQ data (in ImmDt) */
};

typedef struct tr_taghdr {
	uint8_t version;
	uint8_t flags;
	uint16_t len; /* header length on the wire, >= TR_TAG_LEN */
	uint64_t tag;
} tr_taghdr;

/* Writes the version-1 header for tag/flags into out (TR_TAG_LEN bytes). */
void tr_taghdr_encode(uint8_t out[TR_TAG_LEN], uint64_t tag, uint8_t flags);

/* Reads a header at the start of buf. Returns its length on the wire (so the user data starts
 * there), 0 when buf does not start with the magic (an untagged payload), or -EINVAL with a
 * message when the magic is there but the rest is not a header this reader can use. */
int tr_taghdr_decode(const uint8_t *buf, size_t len, tr_taghdr *out, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif
