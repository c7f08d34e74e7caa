/* Closed-form latency of an uncontended path; derivation in nm_path.h. */
#include "netmodel/nm_path.h"

#include "netmodel/nm_link.h"

nm_time_ns nm_path_train_ns(const nm_path *path, uint64_t packets, uint32_t full_bytes,
			    uint32_t last_bytes)
{
	if (packets == 0)
		return 0;
	uint32_t hops = path->hop_count;
	nm_time_ns fixed = 0;
	nm_time_ns full[NM_TOPOLOGY_MAX_HOPS];
	nm_time_ns last[NM_TOPOLOGY_MAX_HOPS];
	for (uint32_t h = 0; h < hops; h++) {
		fixed += path->hops[h].latency_ns + path->hops[h].forward_ns;
		full[h] = nm_serialization_ns(full_bytes, path->hops[h].bandwidth_bps);
		last[h] = nm_serialization_ns(last_bytes, path->hops[h].bandwidth_bps);
	}
	if (packets == 1) {
		nm_time_ns total = fixed;
		for (uint32_t h = 0; h < hops; h++)
			total += last[h];
		return total;
	}
	/* Max over the hop b where the last packet's critical path joins it; see nm_path.h. */
	nm_time_ns best = 0;
	nm_time_ns full_prefix = 0;
	nm_time_ns full_max = 0;
	for (uint32_t b = 0; b < hops; b++) {
		full_prefix += full[b];
		if (full[b] > full_max)
			full_max = full[b];
		nm_time_ns last_suffix = 0;
		for (uint32_t h = b; h < hops; h++)
			last_suffix += last[h];
		nm_time_ns candidate = full_prefix + (packets - 2) * full_max + last_suffix;
		if (candidate > best)
			best = candidate;
	}
	return fixed + best;
}

nm_time_ns nm_path_message_wire_ns(const nm_path *path, uint64_t payload_bytes)
{
	uint64_t packets = nm_packet_count(payload_bytes, path->mtu_bytes);
	uint64_t last_payload = payload_bytes - (packets - 1) * path->mtu_bytes;
	uint32_t full_bytes = path->mtu_bytes + path->header_bytes;
	uint32_t last_bytes = (uint32_t)last_payload + path->header_bytes;
	return nm_path_train_ns(path, packets, full_bytes, last_bytes);
}
