/* Builds the node/port/link arrays of each topology kind and routes over them (see nm_topology.h
 * for the numbering every function here relies on). */
#include "netmodel/nm_topology.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "netmodel/nm_prng.h"

/* Node ids are engine priorities: hosts + leaves + spines must stay within
 * NM_ENGINE_PRIORITY_MAX (2^24 - 1); a fat-tree has at most 3x as many nodes as hosts. */
#define MAX_HOSTS (UINT32_C(1) << 22)
/* Each link has two ports, counted in 32 bits. */
#define MAX_LINKS (UINT32_C(1) << 30)

int nm_topology_params_check(const nm_topology_params *p, nm_error *err)
{
	switch (p->kind) {
	case NM_TOPO_PAIR:
		if (p->hosts != 2)
			return nm_error_set(err, -EINVAL,
					    "topology.hosts: %" PRIu32 " is not allowed for topology.kind "
					    "\"pair\" (allowed: 2)",
					    p->hosts);
		return 0;
	case NM_TOPO_STAR:
		if (p->hosts < 2 || p->hosts > MAX_HOSTS)
			return nm_error_set(err, -EINVAL,
					    "topology.hosts: %" PRIu32 " is out of range for topology.kind "
					    "\"star\" (allowed: 2 to %" PRIu32 ")",
					    p->hosts, MAX_HOSTS);
		return 0;
	case NM_TOPO_FATTREE:
		if (p->hosts_per_leaf < 1 || p->hosts_per_leaf > 4096)
			return nm_error_set(err, -EINVAL,
					    "topology.hosts_per_leaf: %" PRIu32
					    " is out of range (allowed: 1 to 4096)",
					    p->hosts_per_leaf);
		if (p->uplinks_per_leaf < 1 || p->uplinks_per_leaf > 4096)
			return nm_error_set(err, -EINVAL,
					    "topology.uplinks_per_leaf: %" PRIu32
					    " is out of range (allowed: 1 to 4096)",
					    p->uplinks_per_leaf);
		if (p->hosts < 2 || p->hosts > MAX_HOSTS || p->hosts % p->hosts_per_leaf != 0)
			return nm_error_set(err, -EINVAL,
					    "topology.hosts: %" PRIu32 " is not allowed for a fat-tree with "
					    "topology.hosts_per_leaf %" PRIu32
					    " (allowed: a multiple of hosts_per_leaf, 2 to %" PRIu32 ")",
					    p->hosts, p->hosts_per_leaf, MAX_HOSTS);
		uint64_t links = p->hosts + (uint64_t)(p->hosts / p->hosts_per_leaf) *
						    p->uplinks_per_leaf;
		if (links > MAX_LINKS)
			return nm_error_set(err, -EINVAL,
					    "topology: a fat-tree of %" PRIu32 " hosts, %" PRIu32
					    " per leaf, with %" PRIu32 " uplinks per leaf has %" PRIu64
					    " links (allowed: up to %" PRIu32 ")",
					    p->hosts, p->hosts_per_leaf, p->uplinks_per_leaf, links,
					    MAX_LINKS);
		return 0;
	}
	return nm_error_set(err, -EINVAL, "topology.kind: %d is unknown (allowed: pair, star, fattree)",
			    (int)p->kind);
}

/* Lays out nodes with the given port counts, ports unconnected. */
static int alloc_layout(nm_topology *t, uint32_t nodes, uint32_t links)
{
	t->node_count = nodes;
	t->link_count = links;
	t->port_count = 2 * links;
	t->nodes = fs_mem_calloc(t->arena, nodes, sizeof(*t->nodes));
	t->ports = fs_mem_calloc(t->arena, t->port_count, sizeof(*t->ports));
	t->link_ports = fs_mem_calloc(t->arena, t->port_count, sizeof(*t->link_ports));
	return (t->nodes && t->ports && t->link_ports) ? 0 : -ENOMEM;
}

static void set_node(nm_topology *t, uint32_t node, nm_node_kind kind, uint32_t first_port,
		     uint32_t port_count)
{
	t->nodes[node] = (nm_topology_node){
		.kind = kind, .first_port = first_port, .port_count = port_count};
}

static void connect(nm_topology *t, uint32_t link, uint32_t node_a, uint32_t local_a,
		    uint32_t node_b, uint32_t local_b)
{
	uint32_t a = t->nodes[node_a].first_port + local_a;
	uint32_t b = t->nodes[node_b].first_port + local_b;
	t->ports[a] = (nm_topology_port){.node = node_a, .link = link, .peer_port = b};
	t->ports[b] = (nm_topology_port){.node = node_b, .link = link, .peer_port = a};
	t->link_ports[2 * link] = a;
	t->link_ports[2 * link + 1] = b;
}

static int build_pair(nm_topology *t)
{
	if (alloc_layout(t, 2, 1))
		return -ENOMEM;
	set_node(t, 0, NM_NODE_HOST, 0, 1);
	set_node(t, 1, NM_NODE_HOST, 1, 1);
	connect(t, 0, 0, 0, 1, 0);
	return 0;
}

static int build_star(nm_topology *t)
{
	uint32_t hosts = t->params.hosts;
	uint32_t sw = hosts;
	if (alloc_layout(t, hosts + 1, hosts))
		return -ENOMEM;
	for (uint32_t h = 0; h < hosts; h++)
		set_node(t, h, NM_NODE_HOST, h, 1);
	set_node(t, sw, NM_NODE_SWITCH, hosts, hosts);
	for (uint32_t h = 0; h < hosts; h++)
		connect(t, h, h, 0, sw, h);
	return 0;
}

static int build_fattree(nm_topology *t)
{
	uint32_t hosts = t->params.hosts;
	uint32_t per_leaf = t->params.hosts_per_leaf;
	uint32_t uplinks = t->params.uplinks_per_leaf;
	uint32_t leaves = hosts / per_leaf;
	uint32_t spines = uplinks;
	uint32_t first_leaf = hosts;
	uint32_t first_spine = hosts + leaves;
	if (alloc_layout(t, hosts + leaves + spines, hosts + leaves * uplinks))
		return -ENOMEM;

	uint32_t port = 0;
	for (uint32_t h = 0; h < hosts; h++)
		set_node(t, h, NM_NODE_HOST, port++, 1);
	for (uint32_t l = 0; l < leaves; l++, port += per_leaf + uplinks)
		set_node(t, first_leaf + l, NM_NODE_SWITCH, port, per_leaf + uplinks);
	for (uint32_t s = 0; s < spines; s++, port += leaves)
		set_node(t, first_spine + s, NM_NODE_SWITCH, port, leaves);

	for (uint32_t h = 0; h < hosts; h++)
		connect(t, h, h, 0, first_leaf + h / per_leaf, h % per_leaf);
	for (uint32_t l = 0; l < leaves; l++)
		for (uint32_t s = 0; s < spines; s++)
			connect(t, hosts + l * uplinks + s, first_leaf + l, per_leaf + s,
				first_spine + s, l);
	return 0;
}

int nm_topology_init(nm_topology *topo, const nm_topology_params *params, nm_error *err)
{
	return nm_topology_init_in(topo, NULL, params, err);
}

int nm_topology_init_in(nm_topology *topo, fs_arena *arena, const nm_topology_params *params,
			nm_error *err)
{
	memset(topo, 0, sizeof(*topo));
	topo->arena = arena;
	int rc = nm_topology_params_check(params, err);
	if (rc)
		return rc;
	topo->params = *params;
	switch (params->kind) {
	case NM_TOPO_PAIR:
		rc = build_pair(topo);
		break;
	case NM_TOPO_STAR:
		rc = build_star(topo);
		break;
	case NM_TOPO_FATTREE:
		rc = build_fattree(topo);
		break;
	}
	if (rc) {
		nm_topology_release(topo);
		return nm_error_set(err, rc, "topology: out of memory");
	}
	return 0;
}

void nm_topology_release(nm_topology *topo)
{
	fs_mem_free(topo->arena, topo->nodes);
	fs_mem_free(topo->arena, topo->ports);
	fs_mem_free(topo->arena, topo->link_ports);
	memset(topo, 0, sizeof(*topo));
}

uint32_t nm_topology_port_id(const nm_topology *topo, uint32_t node, uint32_t local_port)
{
	if (node >= topo->node_count || local_port >= topo->nodes[node].port_count)
		return UINT32_MAX;
	return topo->nodes[node].first_port + local_port;
}

uint64_t nm_flow_hash(uint64_t flow, uint32_t src, uint32_t dst)
{
	return nm_mix64(nm_mix64(flow) ^ (((uint64_t)src << 32) | dst));
}

uint32_t nm_topology_route(const nm_topology *topo, uint32_t node, uint64_t flow, uint32_t src,
			   uint32_t dst)
{
	const nm_topology_params *p = &topo->params;
	if (topo->nodes[node].kind == NM_NODE_HOST)
		return 0;
	if (p->kind == NM_TOPO_STAR)
		return dst;
	/* Fat-tree: a leaf or a spine. */
	uint32_t leaves = p->hosts / p->hosts_per_leaf;
	uint32_t dst_leaf = dst / p->hosts_per_leaf;
	if (node >= p->hosts + leaves) /* spine */
		return dst_leaf;
	if (node - p->hosts == dst_leaf)
		return dst % p->hosts_per_leaf;
	return p->hosts_per_leaf + (uint32_t)(nm_flow_hash(flow, src, dst) % p->uplinks_per_leaf);
}
