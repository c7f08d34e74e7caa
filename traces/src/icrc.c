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

uint32_t tr_icrc_roce_at(const uint8_t *ip, size_t udp_off, size_t len)
{
	uint32_t c = tr_crc32_update(~0u, ones, sizeof(ones));
	size_t fixed, done = udp_off + UDP_LEN + TR_BTH_LEN;

	if (len < done || len < IPV4_MIN_LEN)
		return 0;
	if ((ip[0] >> 4) == 4) {
		uint8_t b[IPV4_MIN_LEN];

		fixed = IPV4_MIN_LEN;
		if (udp_off < fixed)
			return 0;
		memcpy(b, ip, fixed);
		b[1] = 0xff;              /* TOS */
		b[8] = 0xff;              /* TTL */
		b[10] = b[11] = 0xff;     /* header checksum */
		c = tr_crc32_update(c, b, fixed);
	} else {
		fixed = IPV6_LEN;
		if (udp_off < fixed)
			return 0;
		c = feed_ipv6_like(c, ip);
	}
	/* IPv4 options and IPv6 extension headers are part of the IP header the ICRC covers; none
	 * of their bytes is masked. */
	c = tr_crc32_update(c, ip + fixed, udp_off - fixed);
	{
		uint8_t udp[UDP_LEN];

		memcpy(udp, ip + udp_off, sizeof(udp));
		udp[6] = udp[7] = 0xff;   /* UDP checksum */
		c = tr_crc32_update(c, udp, sizeof(udp));
	}
	c = feed_bth(c, ip + udp_off + UDP_LEN);
	return ~tr_crc32_update(c, ip + done, len - done);
}

uint32_t tr_icrc_roce(const uint8_t *ip, size_t len)
{
	if (len < IPV4_MIN_LEN)
		return 0;
	return tr_icrc_roce_at(ip, (ip[0] >> 4) == 4 ? (size_t)(ip[0] & 0x0f) * 4 : IPV6_LEN, len);
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
