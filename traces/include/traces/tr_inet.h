/* SPDX-License-Identifier: BSD-2-Clause
 * The IPv4 header checksum: the trace builder writes it, the parser verifies it, and the verbs
 * face writes it into the GRH of a received datagram. */
#ifndef TR_INET_H
#define TR_INET_H

#include <stdint.h>

/* One's complement of the one's complement sum of the header's 16-bit words, the checksum field
 * itself (bytes 10-11) counted as zero. */
static inline uint16_t tr_ipv4_checksum(const uint8_t *h, uint32_t len)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += i == 10 ? 0 : (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif
