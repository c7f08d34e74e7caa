/* Link parameters and the serialization rule.
 *
 * A link is full duplex: each direction has its own transmitter (an egress port with its queue)
 * and its own impairments, and both directions share these parameters. */
#ifndef NM_LINK_H
#define NM_LINK_H

#include <stdint.h>

#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bandwidth 0 means infinite: serialization takes no time. */
#define NM_BANDWIDTH_INFINITE UINT64_C(0)

typedef struct nm_link_params {
	uint64_t bandwidth_bps; /* data rate in bits per second; NM_BANDWIDTH_INFINITE = no limit */
	nm_time_ns latency_ns;  /* propagation + PHY latency, one way, last bit out to last bit in */
	uint32_t mtu_bytes;     /* largest payload per packet (the IB path MTU for RDMA) */
	uint32_t header_bytes;  /* framing each packet adds on the wire (headers, CRCs, preamble) */
} nm_link_params;

/* Time to clock `bytes` onto a link of `bandwidth_bps`: ceil(bytes * 8 * 1e9 / bandwidth_bps)
 * nanoseconds, rounded up per packet (a transmitter cannot start the next packet within the
 * nanosecond the last bit of this one still occupies). Exact for any 64-bit byte count. */
nm_time_ns nm_serialization_ns(uint64_t bytes, uint64_t bandwidth_bps);

/* Packets needed for a payload: ceil(payload / mtu), and at least 1 (a zero-byte message still
 * sends one header-only packet). mtu must be > 0. */
uint64_t nm_packet_count(uint64_t payload_bytes, uint32_t mtu_bytes);

#ifdef __cplusplus
}
#endif

#endif
