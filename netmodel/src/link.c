#include "netmodel/nm_link.h"

nm_time_ns nm_serialization_ns(uint64_t bytes, uint64_t bandwidth_bps)
{
	if (bandwidth_bps == NM_BANDWIDTH_INFINITE || bytes == 0)
		return 0;
	/* bits * 1e9 overflows 64 bits above ~2.3 GB; packets never get there, so the common case
	 * stays on a 64-bit division. */
	if (bytes <= UINT64_C(0x7fffffff)) {
		uint64_t scaled = bytes * UINT64_C(8000000000);
		return scaled / bandwidth_bps + (scaled % bandwidth_bps != 0);
	}
	unsigned __int128 scaled = (unsigned __int128)bytes * UINT64_C(8000000000);
	unsigned __int128 ns = scaled / bandwidth_bps + (scaled % bandwidth_bps != 0);
	return ns > NM_TIME_NEVER ? NM_TIME_NEVER : (nm_time_ns)ns;
}

uint64_t nm_packet_count(uint64_t payload_bytes, uint32_t mtu_bytes)
{
	if (payload_bytes == 0)
		return 1;
	return payload_bytes / mtu_bytes + (payload_bytes % mtu_bytes != 0);
}
