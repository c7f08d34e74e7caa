/* SPDX-License-Identifier: BSD-2-Clause
 * CRC-32 and CRC-16 engines. The CRC-32 runs slicing-by-8 because the simulated NIC computes an
 * ICRC over every payload byte it sends. */
#include "traces/tr_crc.h"

#include "crc_tables.h"

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t tr_crc32_update(uint32_t c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint32_t lo = load_le32(p) ^ c, hi = load_le32(p + 4);

		c = tr_crc32_table[7][lo & 0xff] ^ tr_crc32_table[6][(lo >> 8) & 0xff] ^
		    tr_crc32_table[5][(lo >> 16) & 0xff] ^ tr_crc32_table[4][lo >> 24] ^
		    tr_crc32_table[3][hi & 0xff] ^ tr_crc32_table[2][(hi >> 8) & 0xff] ^
		    tr_crc32_table[1][(hi >> 16) & 0xff] ^ tr_crc32_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = tr_crc32_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

uint32_t tr_crc32(const void *buf, size_t len)
{
	return ~tr_crc32_update(~0u, buf, len);
}

uint16_t tr_vcrc(const uint8_t *lrh, size_t len)
{
	uint16_t c = 0xffff;

	while (len--)
		c = (uint16_t)(tr_crc16_table[(c ^ *lrh++) & 0xff] ^ (c >> 8));
	return (uint16_t)~c;
}
