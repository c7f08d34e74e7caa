/* SPDX-License-Identifier: BSD-2-Clause
 * fid_av: address vectors (fi_av(3)). An endpoint's address is an IPv4
 * socket address: the IP of its simulated NIC (10.0.0.<host+1>) and, as
 * the port, its queue pair number. fi_addr values are table indices for
 * both AV types; an index freed by fi_av_remove is reused lowest first. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

void sim_addr_of_peer(struct sim_world *world, struct nic_peer peer,
		      struct sockaddr_in *out)
{
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_addr.s_addr = htonl(0x0a000000u + peer.host + 1);
	out->sin_port = htons((uint16_t)peer.qpn);
}

/* ---- Reverse map (peer -> fi_addr) for FI_SOURCE ------------------------------- */

static size_t peer_hash(struct nic_peer p, size_t slots)
{
	return (size_t)((((uint64_t)p.host << 32) | p.qpn) *
			0x9e3779b97f4a7c15ull >> 17) & (slots - 1);
}

static void reverse_put(size_t *slots, size_t n, struct nic_peer peer,
			size_t index)
{
	size_t s = peer_hash(peer, n);

	while (slots[s] != SIZE_MAX)
		s = (s + 1) & (n - 1);
	slots[s] = index;
}

/* Entries removed or replaced stay in the map until it is rebuilt; a
 * lookup checks the entry it lands on. */
static int reverse_add(struct sim_av *av, size_t index)
{
	if ((av->by_peer_used + 1) * 2 > av->by_peer_slots) {
		size_t n = 64;

		while (n < (av->count + 1) * 4)
			n *= 2;
		size_t *fresh = malloc(n * sizeof(*fresh));

		if (!fresh)
			return -FI_ENOMEM;
		for (size_t i = 0; i < n; i++)
			fresh[i] = SIZE_MAX;
		av->by_peer_used = 0;
		for (size_t i = 0; i < av->count; i++) {
			if (av->entries[i].valid && i != index) {
				reverse_put(fresh, n, av->entries[i].peer, i);
				av->by_peer_used++;
			}
		}
		free(av->by_peer);
		av->by_peer = fresh;
		av->by_peer_slots = n;
	}
	reverse_put(av->by_peer, av->by_peer_slots, av->entries[index].peer,
		    index);
	av->by_peer_used++;
	return 0;
}

fi_addr_t sim_av_addr_of(struct sim_av *av, struct nic_peer peer)
{
	if (!av || !av->by_peer_slots)
		return FI_ADDR_NOTAVAIL;
	for (size_t s = peer_hash(peer, av->by_peer_slots);;
	     s = (s + 1) & (av->by_peer_slots - 1)) {
		size_t i = av->by_peer[s];

		if (i == SIZE_MAX)
			return FI_ADDR_NOTAVAIL;
		if (av->entries[i].valid && av->entries[i].peer.host == peer.host &&
		    av->entries[i].peer.qpn == peer.qpn)
			return i;
	}
}

int sim_av_peer(struct sim_av *av, fi_addr_t addr, struct nic_peer *peer)
{
	if (!av || addr >= av->count || !av->entries[addr].valid)
		return -FI_EINVAL;
	*peer = av->entries[addr].peer;
	return 0;
}

/* ---- Insertion -------------------------------------------------------------------- */

static int parse_addr(struct sim_av *av, const struct sockaddr_in *sin,
		      struct nic_peer *peer)
{
	uint32_t host;

	if (sin->sin_family != AF_INET)
		return -FI_EINVAL;
	host = nic_world_host_of_ipv4(av->domain->world->nic, sin->sin_addr);
	if (host == NIC_HOST_ANY || ntohs(sin->sin_port) == 0)
		return -FI_EADDRNOTAVAIL;
	peer->host = host;
	peer->qpn = ntohs(sin->sin_port);
	return 0;
}

static int slot_for_insert(struct sim_av *av, size_t *index)
{
	for (size_t i = av->free_hint; i < av->count; i++) {
		if (!av->entries[i].valid) {
			*index = i;
			av->free_hint = i + 1;
			return 0;
		}
	}
	av->free_hint = av->count + 1;
	if (av->count == av->cap) {
		size_t cap = av->cap ? av->cap * 2 : 64;
		struct sim_av_entry *e = realloc(av->entries, cap * sizeof(*e));

		if (!e)
			return -FI_ENOMEM;
		av->entries = e;
		av->cap = cap;
	}
	*index = av->count++;
	return 0;
}

static int insert_locked(struct sim_av *av, const struct sockaddr_in *addrs,
			 size_t count, fi_addr_t *fi_addr, uint64_t flags,
			 int *sync_err)
{
	int inserted = 0;

	for (size_t i = 0; i < count; i++) {
		struct nic_peer peer;
		size_t index;
		int ret = parse_addr(av, &addrs[i], &peer);

		if (!ret)
			ret = slot_for_insert(av, &index);
		if (!ret) {
			av->entries[index].addr = addrs[i];
			av->entries[index].peer = peer;
			av->entries[index].valid = true;
			ret = reverse_add(av, index);
			if (ret)
				av->entries[index].valid = false;
			else
				inserted++;
		}
		if (fi_addr)
			fi_addr[i] = ret ? FI_ADDR_NOTAVAIL : index;
		if (sync_err)
			sync_err[i] = -ret;
		if (ret) {
			char text[64];

			inet_ntop(AF_INET, &addrs[i].sin_addr, text, sizeof(text));
			FI_WARN(&sim_prov, FI_LOG_AV,
				"fi_av_insert: %s:%u is not an address on this "
				"fabric (%s)\n", text, ntohs(addrs[i].sin_port),
				fi_strerror(-ret));
		}
	}
	return inserted;
}

static int check_insert_flags(uint64_t flags, void *context)
{
	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if ((flags & FI_SYNC_ERR) && !context)
		return -FI_EINVAL;
	return 0;
}

/* FI_EVENT (fi_av(3)): one error event per address that failed, its index
 * in data (unless FI_SYNC_ERR already said), then FI_AV_COMPLETE with the
 * number inserted. Inserting is immediate here; only the report is
 * asynchronous. */
static int report_inserts(struct sim_av *av, const int *errs, size_t count,
			  int inserted, void *context)
{
	struct fi_eq_entry done = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = (uint64_t)inserted,
	};

	for (size_t i = 0; errs && i < count; i++)
		if (errs[i] &&
		    sim_eq_push_error(av->eq, &av->av_fid.fid, context,
				      errs[i], 0, i, NULL, 0))
			return -FI_ENOMEM;
	return sim_eq_push(av->eq, FI_AV_COMPLETE, &done, sizeof(done));
}

static int av_insert(struct fid_av *fid, const void *addr, size_t count,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct sim_av *av = container_of(fid, struct sim_av, av_fid);
	int ret = check_insert_flags(flags, context);
	int *errs = NULL;

	if (ret)
		return ret;
	if (count && !addr)
		return -FI_EINVAL;
	if (av->events && !av->eq) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_insert: an FI_EVENT AV "
			"needs an EQ bound first\n");
		return -FI_ENOEQ;
	}
	if (av->events && !(flags & FI_SYNC_ERR) && count) {
		errs = calloc(count, sizeof(*errs));
		if (!errs)
			return -FI_ENOMEM;
	}
	sim_lock(av->domain->world);
	ret = insert_locked(av, addr, count, fi_addr, flags,
			    (flags & FI_SYNC_ERR) ? context : errs);
	if (av->events)
		ret = report_inserts(av, errs, count, ret, context);
	sim_unlock(av->domain->world);
	free(errs);
	return ret;
}

static int av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sim_av *av = container_of(fid, struct sim_av, av_fid.fid);
	struct sim_eq *eq;

	if (flags)
		return -FI_EBADFLAGS;
	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	eq = container_of(bfid, struct sim_eq, eq_fid.fid);
	sim_lock(av->domain->world);
	if (av->eq) {
		sim_unlock(av->domain->world);
		return -FI_EINVAL;
	}
	av->eq = eq;
	eq->refs++;
	sim_unlock(av->domain->world);
	return 0;
}

static int av_insertsvc(struct fid_av *fid, const char *node,
			const char *service, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	struct sockaddr_in sin;
	int ret = check_insert_flags(flags, context);

	if (ret)
		return ret;
	if (!node || !service)
		return -FI_EINVAL;
	ret = getaddrinfo(node, service, &hints, &res);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_insertsvc %s:%s: %s\n",
			node, service, gai_strerror(ret));
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		if (flags & FI_SYNC_ERR)
			*(int *)context = FI_EADDRNOTAVAIL;
		return 0;
	}
	memcpy(&sin, res->ai_addr, sizeof(sin));
	freeaddrinfo(res);
	return av_insert(fid, &sin, 1, fi_addr, flags, context);
}

/* Node `i` of the range fi_av_insertsym starts at `node` (fi_av(3)): a
 * numeric IPv4 address plus i, or a name whose numeric suffix is raised by
 * i, at the suffix's width ("host09" + 1 is "host10"). -FI_EINVAL for a
 * name without a suffix when there is more than one node. */
static int nth_node(const char *node, size_t i, struct in_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	size_t len = strlen(node), digits = 0;
	char name[256];
	int ret;

	if (inet_pton(AF_INET, node, out) == 1) {
		out->s_addr = htonl(ntohl(out->s_addr) + (uint32_t)i);
		return 0;
	}
	while (digits < len && node[len - 1 - digits] >= '0' &&
	       node[len - 1 - digits] <= '9')
		digits++;
	if (i && !digits)
		return -FI_EINVAL;
	if (i)
		snprintf(name, sizeof(name), "%.*s%0*llu", (int)(len - digits),
			 node, (int)digits,
			 strtoull(node + len - digits, NULL, 10) +
				 (unsigned long long)i);
	else
		snprintf(name, sizeof(name), "%s", node);
	ret = getaddrinfo(name, NULL, &hints, &res);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_insertsym: %s: %s\n",
			name, gai_strerror(ret));
		return -FI_EADDRNOTAVAIL;
	}
	*out = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

/* nodecnt x svccnt addresses, every service of a node before the next
 * node; a node that does not resolve gives FI_ADDR_NOTAVAIL entries (its
 * family is left unset, which the insert refuses). */
static int av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct sockaddr_in *addrs;
	unsigned long port;
	char *end;
	int ret = check_insert_flags(flags, context);

	if (ret)
		return ret;
	if (!node || !service || !nodecnt || !svccnt ||
	    nodecnt > SIZE_MAX / svccnt / sizeof(*addrs))
		return -FI_EINVAL;
	port = strtoul(service, &end, 10);
	if (*end || end == service || port + svccnt - 1 > 65535) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_insertsym: service %s "
			"is not a port number with room for %zu ports\n",
			service, svccnt);
		return -FI_EINVAL;
	}
	addrs = calloc(nodecnt * svccnt, sizeof(*addrs));
	if (!addrs)
		return -FI_ENOMEM;
	for (size_t n = 0; n < nodecnt; n++) {
		struct in_addr ip;

		ret = nth_node(node, n, &ip);
		if (ret == -FI_EINVAL) {
			FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_insertsym: node "
				"%s has no numeric suffix to count %zu nodes "
				"from\n", node, nodecnt);
			free(addrs);
			return ret;
		}
		for (size_t k = 0; !ret && k < svccnt; k++) {
			struct sockaddr_in *a = &addrs[n * svccnt + k];

			a->sin_family = AF_INET;
			a->sin_addr = ip;
			a->sin_port = htons((uint16_t)(port + k));
		}
	}
	ret = av_insert(fid, addrs, nodecnt * svccnt, fi_addr, flags, context);
	free(addrs);
	return ret;
}

static int av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count,
		     uint64_t flags)
{
	struct sim_av *av = container_of(fid, struct sim_av, av_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	sim_lock(av->domain->world);
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= av->count || !av->entries[fi_addr[i]].valid) {
			ret = -FI_EINVAL;
			continue;
		}
		av->entries[fi_addr[i]].valid = false;
		if (fi_addr[i] < av->free_hint)
			av->free_hint = fi_addr[i];
	}
	sim_unlock(av->domain->world);
	return ret;
}

static int av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr,
		     size_t *addrlen)
{
	struct sim_av *av = container_of(fid, struct sim_av, av_fid);
	int ret = 0;

	if (!addrlen)
		return -FI_EINVAL;
	sim_lock(av->domain->world);
	if (fi_addr >= av->count || !av->entries[fi_addr].valid) {
		ret = -FI_ENOENT;
	} else {
		size_t n = *addrlen < sizeof(struct sockaddr_in) ?
				   *addrlen : sizeof(struct sockaddr_in);

		if (addr)
			memcpy(addr, &av->entries[fi_addr].addr, n);
		*addrlen = sizeof(struct sockaddr_in);
	}
	sim_unlock(av->domain->world);
	return ret;
}

static const char *av_straddr(struct fid_av *fid, const void *addr, char *buf,
			      size_t *len)
{
	const struct sockaddr_in *sin = addr;
	char ip[INET_ADDRSTRLEN] = "?";
	char text[64];
	int n;

	if (!buf || !len)
		return NULL;
	if (sin && sin->sin_family == AF_INET)
		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	n = snprintf(text, sizeof(text), "fi_sockaddr_in://%s:%u", ip,
		     sin ? ntohs(sin->sin_port) : 0);
	if (*len)
		snprintf(buf, *len, "%s", text);
	*len = (size_t)n + 1;
	return buf;
}

static int av_close(struct fid *fid)
{
	struct sim_av *av = container_of(fid, struct sim_av, av_fid.fid);
	struct sim_domain *dom = av->domain;

	sim_lock(dom->world);
	if (av->refs) {
		sim_unlock(dom->world);
		FI_WARN(&sim_prov, FI_LOG_AV,
			"fi_close(av): %d endpoint(s) still bound\n", av->refs);
		return -FI_EBUSY;
	}
	dom->refs--;
	if (av->eq)
		av->eq->refs--;
	sim_unlock(dom->world);
	free(av->entries);
	free(av->by_peer);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = av_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = fabsim_no_av_set,
};

int sim_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **out, void *context)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain, domain_fid);
	struct sim_av *av;

	if (!attr || !out)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->flags & ~(FI_SYMMETRIC | FI_EVENT)) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_open: flags %#llx not "
			"supported (shared AVs, FI_READ)\n",
			(unsigned long long)attr->flags);
		return -FI_EBADFLAGS;
	}
	if (attr->rx_ctx_bits || attr->name) {
		FI_WARN(&sim_prov, FI_LOG_AV, "fi_av_open: named or scalable "
			"AVs are not supported\n");
		return -FI_ENOSYS;
	}
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = dom;
	av->events = attr->flags & FI_EVENT;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	if (attr->count) {
		av->entries = calloc(attr->count, sizeof(*av->entries));
		if (!av->entries) {
			free(av);
			return -FI_ENOMEM;
		}
		av->cap = attr->count;
	}
	attr->type = av->type;
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &av_fi_ops;
	av->av_fid.ops = &av_ops;
	sim_lock(dom->world);
	dom->refs++;
	sim_unlock(dom->world);
	*out = &av->av_fid;
	return 0;
}
