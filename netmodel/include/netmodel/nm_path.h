/* Closed-form timing of an uncontended path.
 *
 * A path is the list of links a packet crosses from its source host to its destination host. For
 * hop h: serialization s_h(b) = nm_serialization_ns(b, bandwidth_h), propagation L_h, and F_h the
 * forwarding latency of the switch at its far end (0 at the destination host).
 *
 * A train of k packets handed to the first transmitter at time 0 (every packet `full_bytes` on
 * the wire except the last, `last_bytes`) moves through store-and-forward hops with FIFO ports:
 *   D[i][h] = max(D[i-1][h], D[i][h-1] + L_{h-1} + F_{h-1}) + s_h(size_i),   D[i][0] = 0
 * and the last packet reaches the destination at D[k][H] + L_H. Unrolled, that is
 *   sum_h (L_h + F_h) + max over b in 1..H of
 *       [ sum_{h<=b} s_h(full) + (k - 2) * max_{h<=b} s_h(full) + sum_{h>=b} s_h(last) ]   (k >= 2)
 *   sum_h (L_h + F_h) + sum_h s_h(last)                                                    (k = 1)
 * With equal rates on every hop this is the familiar
 *   sum_h (L_h + F_h) + (k - 1) * s(full) + (H - 1) * s(full) + s(last).
 */
#ifndef NM_PATH_H
#define NM_PATH_H

#include <stdint.h>

#include "netmodel/nm_time.h"
#include "netmodel/nm_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_path_hop {
	uint32_t port;             /* global id of the transmitting port */
	uint64_t bandwidth_bps;    /* 0 = infinite */
	nm_time_ns latency_ns;     /* propagation */
	nm_time_ns forward_ns;     /* switch latency at the far end; 0 when it is the destination */
} nm_path_hop;

typedef struct nm_path {
	uint32_t hop_count;
	uint32_t mtu_bytes;    /* smallest MTU along the path */
	uint32_t header_bytes; /* largest per-packet framing along the path */
	nm_path_hop hops[NM_TOPOLOGY_MAX_HOPS];
} nm_path;

/* Time from handing a train of `packets` packets to the first transmitter until the last one has
 * fully arrived at the destination host (formula above). packets == 0 gives 0. */
nm_time_ns nm_path_train_ns(const nm_path *path, uint64_t packets, uint32_t full_bytes,
			    uint32_t last_bytes);

/* The same for a message of `payload_bytes` cut into MTU-sized packets plus header_bytes each. */
nm_time_ns nm_path_message_wire_ns(const nm_path *path, uint64_t payload_bytes);

#ifdef __cplusplus
}
#endif

#endif
