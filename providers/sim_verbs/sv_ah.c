/* SPDX-License-Identifier: BSD-2-Clause
 * Address handles: where a UD send goes. A RoCE address vector names its
 * destination by GID (LIDs are 0); the face turns the GID into a host of
 * the fabric when the handle is made, as a device resolves the GID's
 * Ethernet address then.
 *
 * A datagram lands after 40 bytes of GRH in its receive buffer. On RoCEv2
 * over IPv4 the GRH holds 20 bytes of zeros and then the packet's IPv4
 * header (what rdma-core's ibv_init_ah_from_wc reads back): the face
 * writes that header as the simulated wire carried it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <traces/tr_inet.h>

#include "sv.h"

uint32_t sv_host_of_ah(const struct ibv_ah_attr *ah)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };
	const union ibv_gid *gid = &ah->grh.dgid;

	if (!ah->is_global)
		return NIC_HOST_ANY; /* RoCE needs a GRH: LIDs are 0 */
	if (!memcmp(gid->raw, mapped, sizeof(mapped))) {
		struct in_addr ip;

		memcpy(&ip.s_addr, gid->raw + 12, 4);
		return sv->host_of_ip(ip);
	}
	for (unsigned i = 0; i < sv_world.ndev; i++) {
		union ibv_gid local;

		sv_fill_gid(&sv_world.devs[i], 0, &local);
		if (!memcmp(&local, gid, sizeof(local)))
			return sv_world.devs[i].host;
	}
	/* A link-local GID of a host no device here stands for: the EUI-64
	 * carries its IPv4 address (sv_world.c). */
	if (gid->raw[0] == 0xfe && gid->raw[1] == 0x80 && gid->raw[11] == 0xff &&
	    gid->raw[12] == 0xfe) {
		struct in_addr ip;
		uint8_t *b = (uint8_t *)&ip.s_addr;

		b[0] = gid->raw[10];
		b[1] = gid->raw[13];
		b[2] = gid->raw[14];
		b[3] = gid->raw[15];
		return sv->host_of_ip(ip);
	}
	return NIC_HOST_ANY;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct sv_pd *pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);
	struct sv_ah *ah;
	uint32_t host;

	if (!attr || attr->port_num != 1 || !attr->is_global ||
	    attr->grh.sgid_index >= SV_GID_TABLE) {
		errno = EINVAL;
		return NULL;
	}
	sv->lock();
	host = sv_host_of_ah(attr);
	sv->unlock();
	if (host == NIC_HOST_ANY) {
		/* No simulated NIC has that GID: nothing to resolve it to. */
		errno = EHOSTUNREACH;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->ah.context = ibpd->context;
	ah->ah.pd = ibpd;
	ah->pd = pd;
	ah->host = host;
	sv->lock();
	pd->refs++;
	sv->unlock();
	return &ah->ah;
}

int ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct sv_ah *ah = SV_CONTAINER_OF(ibah, struct sv_ah, ah);

	sv->lock();
	ah->pd->refs--;
	sv->unlock();
	free(ah);
	return 0;
}

/* ---- The GRH of a received datagram --------------------------------------------------- */

/* RoCEv2 headers between the IPv4 header and the payload of a UD send. */
enum { UDP_BYTES = 8, BTH_BYTES = 12, DETH_BYTES = 8, IMMDT_BYTES = 4,
       ICRC_BYTES = 4, IPV4_BYTES = 20 };

void sv_grh_write(const struct sv_grh_room *room, struct in_addr src,
		  struct in_addr dst, size_t payload, bool imm)
{
	uint8_t grh[SV_GRH_BYTES] = { 0 };
	uint8_t *ip = grh + SV_GRH_BYTES - IPV4_BYTES;
	size_t total = IPV4_BYTES + UDP_BYTES + BTH_BYTES + DETH_BYTES +
		       (imm ? IMMDT_BYTES : 0) + payload + ICRC_BYTES;
	uint16_t csum;
	size_t done = 0;

	ip[0] = 0x45;
	ip[2] = (uint8_t)(total >> 8);
	ip[3] = (uint8_t)total;
	ip[6] = 0x40; /* don't fragment */
	ip[8] = 64;   /* the simulated wire's TTL */
	ip[9] = 17;   /* UDP */
	memcpy(ip + 12, &src.s_addr, 4);
	memcpy(ip + 16, &dst.s_addr, 4);
	csum = tr_ipv4_checksum(ip, IPV4_BYTES);
	ip[10] = (uint8_t)(csum >> 8);
	ip[11] = (uint8_t)csum;
	for (int i = 0; i < room->count && done < SV_GRH_BYTES; i++) {
		size_t n = room->sge[i].len < SV_GRH_BYTES - done ?
				   room->sge[i].len : SV_GRH_BYTES - done;

		memcpy(room->sge[i].addr, grh + done, n);
		done += n;
	}
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	const uint8_t *ip = (const uint8_t *)grh + SV_GRH_BYTES - IPV4_BYTES;

	/* Every datagram of a RoCE device carries a GRH. */
	if (port_num != 1 || !wc || !grh || !ah_attr ||
	    !(wc->wc_flags & IBV_WC_GRH) || ip[0] != 0x45)
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	ah_attr->is_global = 1;
	/* The reply goes from the GID the datagram came to (the device's
	 * IPv4-mapped one) back to the sender's. */
	ah_attr->grh.dgid.raw[10] = 0xff;
	ah_attr->grh.dgid.raw[11] = 0xff;
	memcpy(ah_attr->grh.dgid.raw + 12, ip + 12, 4);
	ah_attr->grh.sgid_index = 1;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->grh.traffic_class = ip[1];
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int ret = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);

	if (ret) {
		errno = ret;
		return NULL;
	}
	return ibv_create_ah(pd, &attr);
}
