/* Topologies and routing.
 *
 * Numbering. Hosts are nodes 0 .. hosts-1; switches follow. Every node's ports are numbered from 0
 * locally and also have a global id (nm_topology_port) that names one direction of one link: the
 * transmitter at that port. Links are numbered as listed below.
 *
 *   NM_TOPO_PAIR     two hosts back to back. Link 0: host 0 port 0 <-> host 1 port 0.
 *   NM_TOPO_STAR     `hosts` hosts on one switch (node `hosts`). Link i: host i port 0 <-> switch
 *                    port i.
 *   NM_TOPO_FATTREE  two-level leaf/spine. hosts_per_leaf hosts per leaf, `hosts / hosts_per_leaf`
 *                    leaves (nodes hosts ..), uplinks_per_leaf spines (after the leaves), each leaf
 *                    with one link to each spine; oversubscription = hosts_per_leaf : uplinks.
 *                    Leaf l port j < hosts_per_leaf goes down to host l*hosts_per_leaf + j (link
 *                    = that host id); leaf port hosts_per_leaf + s goes up to spine s, whose port
 *                    l comes back (link hosts + l*uplinks_per_leaf + s).
 *
 * Routing is fixed and deterministic: a host sends on port 0; a leaf sends down when the
 * destination is under it, otherwise up through uplink nm_flow_hash(flow, src, dst) % uplinks
 * (ECMP: one flow always takes one path, so it is never reordered by routing); a spine sends down
 * to the destination's leaf. Paths are at most 4 links long.
 */
#ifndef NM_TOPOLOGY_H
#define NM_TOPOLOGY_H

#include <stdint.h>

#include "arena/arena.h"
#include "netmodel/nm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nm_topology_kind {
	NM_TOPO_PAIR = 0,
	NM_TOPO_STAR = 1,
	NM_TOPO_FATTREE = 2,
} nm_topology_kind;

typedef struct nm_topology_params {
	nm_topology_kind kind;
	uint32_t hosts;            /* PAIR: must be 2; STAR: >= 2; FATTREE: a multiple of hosts_per_leaf */
	uint32_t hosts_per_leaf;   /* FATTREE only */
	uint32_t uplinks_per_leaf; /* FATTREE only: also the number of spines */
} nm_topology_params;

typedef enum nm_node_kind {
	NM_NODE_HOST = 0,
	NM_NODE_SWITCH = 1,
} nm_node_kind;

typedef struct nm_topology_node {
	nm_node_kind kind;
	uint32_t first_port; /* global id of local port 0 */
	uint32_t port_count;
} nm_topology_node;

typedef struct nm_topology_port {
	uint32_t node;      /* owner */
	uint32_t link;      /* the link this port transmits on */
	uint32_t peer_port; /* global id of the port at the other end */
} nm_topology_port;

typedef struct nm_topology {
	nm_topology_params params;
	uint32_t node_count;
	uint32_t port_count; /* == 2 * link count */
	uint32_t link_count;
	nm_topology_node *nodes;
	nm_topology_port *ports;
	uint32_t *link_ports; /* 2 per link: the two directions */
	fs_arena *arena;      /* where the arrays live (NULL: process memory) */
} nm_topology;

/* Largest number of links on any route. */
#define NM_TOPOLOGY_MAX_HOPS 4

int nm_topology_init(nm_topology *topo, const nm_topology_params *params, nm_error *err);
/* The same with the arrays in `arena` (NULL: process memory). */
int nm_topology_init_in(nm_topology *topo, fs_arena *arena, const nm_topology_params *params,
			nm_error *err);
void nm_topology_release(nm_topology *topo);

/* Checks the parameters alone (used by the config loader before anything is built). */
int nm_topology_params_check(const nm_topology_params *params, nm_error *err);

/* Global id of `node`'s local port `local_port` (no bounds check beyond the node's count:
 * returns UINT32_MAX when out of range). */
uint32_t nm_topology_port_id(const nm_topology *topo, uint32_t node, uint32_t local_port);

/* Local egress port at `node` for a packet of `flow` from host src to host dst. */
uint32_t nm_topology_route(const nm_topology *topo, uint32_t node, uint64_t flow, uint32_t src,
			   uint32_t dst);

/* The deterministic ECMP hash. */
uint64_t nm_flow_hash(uint64_t flow, uint32_t src, uint32_t dst);

#ifdef __cplusplus
}
#endif

#endif
