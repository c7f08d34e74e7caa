/* Messages over the packet network, for the planner, benchmarks and tests.
 *
 * The NIC model packetizes by itself; this layer does the same simple job without a transport:
 * a message posted at t is cut into MTU-sized packets that enter the source host's queue at
 * t + nic send overhead, and completes at the destination nic receive overhead after its last
 * packet arrived. A message that loses a packet never completes (it is counted as incomplete).
 * The layer takes over the network's delivery callback.
 */
#ifndef NM_MESSAGE_H
#define NM_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "netmodel/nm_network.h"
#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_msglayer nm_msglayer;

typedef struct nm_message_info {
	uint32_t src;
	uint32_t dst;
	uint64_t flow;
	uint64_t bytes;
	uint64_t user_id;
	nm_time_ns posted_at;
	nm_time_ns completed_at;
} nm_message_info;

typedef void (*nm_message_done_fn)(void *ctx, const nm_message_info *info);

/* On a network on one engine: -EINVAL for a partitioned one (nm_network_create_parallel). */
int nm_msglayer_create(nm_network *net, nm_message_done_fn done, void *ctx, nm_msglayer **out);
void nm_msglayer_destroy(nm_msglayer *layer);

/* Posts a message now. -EINVAL for bad hosts, -ENOMEM. */
int nm_message_send(nm_msglayer *layer, uint32_t src, uint32_t dst, uint64_t flow, uint64_t bytes,
		    uint64_t user_id);

/* Messages posted and not yet completed. */
uint64_t nm_msglayer_outstanding(const nm_msglayer *layer);
uint64_t nm_msglayer_completed(const nm_msglayer *layer);

#ifdef __cplusplus
}
#endif

#endif
