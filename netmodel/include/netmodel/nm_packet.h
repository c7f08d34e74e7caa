/* A packet as the network model sees it. The model never looks inside: the NIC model above
 * packetizes messages (at most one path MTU of payload per packet), fills this record and injects
 * it; the record comes back, flags updated, in the delivery callback at the destination. */
#ifndef NM_PACKET_H
#define NM_PACKET_H

#include <stdint.h>

#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nm_packet_flag {
	NM_PKT_ECN = 1u << 0,       /* congestion experienced: a queue passed its ECN threshold */
	NM_PKT_CORRUPTED = 1u << 1, /* damaged on a link; a receiver would fail the ICRC */
	NM_PKT_DUPLICATE = 1u << 2, /* a copy made by a link's duplication impairment */
	NM_PKT_DELAYED = 1u << 3,   /* held back by a link's reordering impairment */
};

/* Transport headers a packet may carry beyond the link's header_bytes (which cover the framing
 * every packet has): e.g. RDMA extended headers (RETH, AETH, AtomicETH, ImmDt, DETH). A packet
 * may be up to mtu + header_bytes + this many bytes. */
#define NM_PACKET_MAX_EXTRA_BYTES 64u

typedef struct nm_packet {
	uint64_t flow;          /* flow id: ECMP hashing and per-flow impairment streams */
	uint64_t user_id;       /* opaque to the model */
	void *user_ptr;         /* opaque to the model */
	uint32_t bytes;         /* bytes on the wire: payload + link header_bytes + extra headers */
	uint32_t src;           /* source host */
	uint32_t dst;           /* destination host */
	uint32_t flags;         /* nm_packet_flag bits; the injector normally passes 0 */
	nm_time_ns injected_at; /* set by nm_network_inject */
} nm_packet;

#ifdef __cplusplus
}
#endif

#endif
