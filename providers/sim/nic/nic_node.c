/* SPDX-License-Identifier: BSD-2-Clause
 * NICs: one per host of the topology, with an IPv4 address, a queue-pair
 * table and a memory-region table. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nic_internal.h"

/* Host h is 10.0.0.0 + h + 1: 10.0.0.1, 10.0.0.2, ... */
static struct in_addr host_ipv4(uint32_t host)
{
	struct in_addr a = { .s_addr = htonl(0x0a000000u + host + 1) };

	return a;
}

struct in_addr nic_ipv4_of_host(const struct nic_world *world, uint32_t host)
{
	return host_ipv4(host);
}

uint32_t nic_world_host_of_ipv4(const struct nic_world *world,
				struct in_addr addr)
{
	uint32_t ip = ntohl(addr.s_addr);

	if (ip <= 0x0a000000u || ip - 0x0a000000u > world->host_count)
		return NIC_HOST_ANY;
	return ip - 0x0a000000u - 1;
}

int nic_open(struct nic_world *world, uint32_t host, struct nic **out,
	     nm_error *err)
{
	uint32_t qpn_next = 0;
	struct nic *nic;

	if (host == NIC_HOST_ANY) {
		for (host = 0; host < world->host_count; host++)
			if (!world->hosts[host])
				break;
		if (host == world->host_count)
			return nm_error_set(err, -ENOSPC,
					    "all %u hosts of the %s topology "
					    "have a NIC open; raise "
					    "topology.hosts (FI_SIM_TOPOLOGY_"
					    "HOSTS, with FI_SIM_TOPOLOGY_KIND="
					    "star or fattree)",
					    world->host_count,
					    world->cfg.topology.kind ==
							    NM_TOPO_PAIR ?
						    "pair" : "configured");
	} else if (host >= world->host_count) {
		return nm_error_set(err, -EINVAL,
				    "host %u is outside the topology (%u hosts)",
				    host, world->host_count);
	} else if (world->hosts[host]) {
		struct nic *old = world->hosts[host];

		if (nic_proc_is_self(old->owner)) {
			old->refs++;
			*out = old;
			return 0;
		}
		/* A NIC reaches the memory of the process that opened it. */
		if (!old->dead && !nic_proc_bury_if_dead(world, old->owner))
			return nm_error_set(err, -EADDRINUSE,
					    "host %u is taken by process %d",
					    host, (int)old->owner->pid);
		/* Its process died: a new one takes the host, as a rebooted
		 * node comes back with its address. What the old NIC still
		 * has in flight stays with it, off the network; its queue
		 * pair numbers are not handed out again at once, so that
		 * peers' packets for them find nothing. */
		qpn_next = old->qps.next;
		world->hosts[host] = NULL;
	}
	nic = fs_mem_calloc(world->arena, 1, sizeof(*nic));
	if (!nic)
		return -ENOMEM;
	nic->world = world;
	nic->engine = nic_world_engine_of(world, host);
	nic->part = nic_part_of_host(world, host);
	nic->owner = nic_proc_self(world);
	nic->host = host;
	nic->ipv4 = host_ipv4(host);
	nic->next_key = 1;
	nic->refs = 1;
	nic->qps.next = qpn_next;
	nm_mr_ledger_init(&nic->ledger, &world->cfg.mr);
	if (world->rec) {
		int ret = nic_record_host(world->rec, host, err);

		if (ret) {
			fs_mem_free(world->arena, nic);
			return ret;
		}
	}
	world->hosts[host] = nic;
	*out = nic;
	return 0;
}

void nic_close(struct nic *nic)
{
	if (!nic || --nic->refs > 0)
		return;
	nic->world->hosts[nic->host] = NULL;
	/* A program may exit with queue pairs and regions it never tore
	 * down: the device's close ends them, as the kernel's does, so that
	 * nothing the model still has for them reaches a freed NIC. */
	for (uint32_t i = 0; i < nic->qps.count; i++)
		if (nic->qps.slots[i])
			nic_qp_destroy(nic->qps.slots[i]);
	nic_proc_forget_nic(nic);
	while (nic->raw_head) {
		struct nic_pkt *pkt = nic->raw_head;

		nic->raw_head = pkt->next_free;
		nic_pkt_put(nic->part, pkt);
	}
	fs_mem_free(nic->world->arena, nic->qps.slots);
	nic_mr_free_all(nic);
	fs_mem_free(nic->world->arena, nic);
}

uint32_t nic_cm_comm_id(struct nic *nic)
{
	return ++nic->world->cm_comm_ids[nic->host];
}

uint32_t nic_host(const struct nic *nic)
{
	return nic->host;
}

struct in_addr nic_ipv4(const struct nic *nic)
{
	return nic->ipv4;
}

struct nic_world *nic_world_of(const struct nic *nic)
{
	return nic->world;
}

struct nic_qp *nic_find_qp(struct nic *nic, uint32_t qpn)
{
	uint32_t i = qpn - NIC_QPN_BASE;

	if (qpn < NIC_QPN_BASE || i >= nic->qps.count)
		return NULL;
	struct nic_qp *qp = nic->qps.slots[i];

	fs_touch(&nic->qps.slots[i]);
	if (qp)
		fs_touch_span(qp, sizeof(*qp));
	return qp;
}

void nic_set_mad_handler(struct nic *nic, nic_mad_fn fn, void *ctx)
{
	nic->mad_fn = fn;
	nic->mad_ctx = ctx;
	nic->mad_owner = fn ? nic_proc_self(nic->world) : NULL;
}

/* MADs travel as UD sends to queue pair 1, with the GSI Q_Key. */
int nic_send_mad(struct nic *nic, uint32_t dst_host, const void *mad,
		 size_t len)
{
	struct nic_pkt *pkt;

	if (len > NIC_MAD_MAX || dst_host >= nic->world->host_count)
		return -EINVAL;
	pkt = nic_pkt_alloc(nic->part, true);
	pkt->opcode = NIC_OP_UD_SEND_ONLY;
	pkt->src.host = nic->host;
	pkt->src.qpn = 1;
	pkt->dst.host = dst_host;
	pkt->dst.qpn = 1;
	pkt->qkey = NIC_GSI_QKEY;
	pkt->psn = nic->mad_psn;
	nic->mad_psn = (nic->mad_psn + 1) & 0xffffff;
	memcpy(pkt->owned, mad, len);
	pkt->payload_len = (uint32_t)len;
	nic_tx_raw(nic, pkt);
	return 0;
}
