/* SPDX-License-Identifier: BSD-2-Clause
 * ICRC: the CRC-32 over a packet's invariant fields. Variant fields (those a switch or router may
 * change in flight) are fed as all ones; the headers holding them are copied to a small buffer
 * and masked there so the frame itself is never written. */
#include <string.h>

#include "traces/tr_crc.h"
#include "traces/tr_opcode.h"

#define IPV4_MIN_LEN 20u
#define IPV6_LEN 40u
#define UDP_LEN 8u
#define LRH_LEN 8u
#define GRH_LEN 40u

static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* BTH byte 4 holds FECN, BECN and reserved bits, which the fabric may set. */
static uint32_t feed_bth(uint32_t c, const uint8_t *bth)
{
	uint8_t b[TR_BTH_LEN];

	memcpy(b, bth, sizeof(b));
	b[4] = 0xff;
	return tr_crc32_update(c, b, sizeof(b));
}

/* IPv6 (and the GRH, which has IPv6's layout): traffic class, flow label and hop limit. */
static uint32_t feed_ipv6_like(uint32_t c, const uint8_t *h)
{
	uint8_t b[IPV6_LEN];

	memcpy(b, h, sizeof(b));
	b[0] |= 0x0f;
	b[1] = b[2] = b[3] = 0xff;
	b[7] = 0xff;
	return tr_crc32_update(c, b, sizeof(b));
}

uint32_t tr_icrc_roce(const uint8_t *ip, size_t len)
{
	uint32_t c = tr_crc32_update(~0u, ones, sizeof(ones));
	size_t iplen;

	if (len < IPV4_MIN_LEN)
		return 0;
	if ((ip[0] >> 4) == 4) {
		uint8_t b[60];

		iplen = (size_t)(ip[0] & 0x0f) * 4;
		if (iplen < IPV4_MIN_LEN || len < iplen + UDP_LEN + TR_BTH_LEN)
			return 0;
		memcpy(b, ip, iplen);
		b[1] = 0xff;              /* TOS */
		b[8] = 0xff;              /* TTL */
		b[10] = b[11] = 0xff;     /* header checksum */
		c = tr_crc32_update(c, b, iplen);
	} else {
		iplen = IPV6_LEN;
		if (len < iplen + UDP_LEN + TR_BTH_LEN)
			return 0;
		c = feed_ipv6_like(c, ip);
	}
	{
		uint8_t udp[UDP_LEN];

		memcpy(udp, ip + iplen, sizeof(udp));
		udp[6] = udp[7] = 0xff;   /* UDP checksum */
		c = tr_crc32_update(c, udp, sizeof(udp));
	}
	c = feed_bth(c, ip + iplen + UDP_LEN);
	size_t done = iplen + UDP_LEN + TR_BTH_LEN;
	return ~tr_crc32_update(c, ip + done, len - done);
}

uint32_t tr_icrc_ib(const uint8_t *lrh, size_t len)
{
	bool grh = (lrh[1] & 0x3) == 0x3;
	size_t done = LRH_LEN + (grh ? GRH_LEN : 0) + TR_BTH_LEN;
	uint32_t c;

	if (len < done)
		return 0;
	if (grh) {
		c = tr_crc32_update(~0u, ones, sizeof(ones));
		c = feed_ipv6_like(c, lrh + LRH_LEN);
	} else {
		uint8_t b[LRH_LEN];

		memcpy(b, lrh, sizeof(b));
		b[0] |= 0xf0;             /* VL */
		c = tr_crc32_update(~0u, b, sizeof(b));
	}
	c = feed_bth(c, lrh + done - TR_BTH_LEN);
	return ~tr_crc32_update(c, lrh + done, len - done);
}
