/* Switch parameters. Switches are store-and-forward: a packet is forwarded only once its last bit
 * has arrived, then after latency_ns it joins the FIFO queue of its egress port. */
#ifndef NM_SWITCH_H
#define NM_SWITCH_H

#include <stdint.h>

#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nm_flow_control {
	/* Tail drop: a packet that does not fit in the egress buffer is lost. */
	NM_FLOW_CONTROL_DROP = 0,
	/* Lossless, in the manner of PFC / InfiniBand credits: a transmitter (host or switch) starts
	 * a packet only when the egress queue it will enter at the next switch has room for it
	 * (space is reserved at transmission start). Otherwise it pauses, holding its whole queue
	 * (head-of-line blocking, as PFC does), until that queue drains enough. */
	NM_FLOW_CONTROL_PAUSE = 1,
	/* Lossless, in the manner of InfiniBand's link-level credits: buffer_bytes is the switch's
	 * buffer for each link into it, and the transmitter at the other end holds credits for it.
	 * It starts a packet only with credits for the packet's bytes (else it pauses, holding its
	 * whole queue) and spends them; they come back one link latency after the packet's last bit
	 * has left the switch. What upstream learns of the switch takes the link's latency, so a
	 * network that controls its flow so can be partitioned (nm_network_create_parallel). */
	NM_FLOW_CONTROL_CREDIT = 2,
} nm_flow_control;

typedef struct nm_switch_params {
	nm_time_ns latency_ns;        /* forwarding latency, last bit in to enqueue at egress */
	uint64_t buffer_bytes;        /* per egress port, counting the packet being sent (credit: per
				       * link into the switch); 0 = unlimited */
	nm_flow_control flow_control; /* what happens when buffer_bytes is reached */
	uint64_t ecn_threshold_bytes; /* mark NM_PKT_ECN when the queue holds at least this; 0 = off */
} nm_switch_params;

#ifdef __cplusplus
}
#endif

#endif
