/* SPDX-License-Identifier: BSD-2-Clause
 * fi_tostr(3) and fi_tostr_r: human-readable text for every FI_TYPE_*.
 *
 * Structures print in the indented "name: value" layout fi_info -v shows,
 * flag sets as "[ A, B ]" inside structures and as "A, B" on their own.
 * Bits without a name print in hex rather than vanish.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#include <fabsim/names.h>

/* ---- A bounded string builder: never overflows, always terminated ------- */

struct sbuf {
	char  *buf;
	size_t cap;
	size_t len;
};

static void put(struct sbuf *s, const char *fmt, ...) FI_FORMAT_PRINTF(2, 3);

static void put(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len + 1 >= s->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	s->len += (size_t)n;
	if (s->len >= s->cap)
		s->len = s->cap - 1;
}

static void indent(struct sbuf *s, int level)
{
	put(s, "%*s", level * 4, "");
}

/* ---- Values -------------------------------------------------------------- */

static void put_flags(struct sbuf *s, const struct fabsim_name_table *t,
		      uint64_t flags)
{
	const char *sep = "";

	for (size_t i = 0; i < t->count; i++) {
		uint64_t bit = t->entries[i].value;

		if (bit && (flags & bit) == bit) {
			put(s, "%s%s", sep, t->entries[i].name);
			sep = ", ";
			flags &= ~bit;
		}
	}
	if (flags)
		put(s, "%s0x%" PRIx64, sep, flags);
}

static void put_flag_list(struct sbuf *s, const struct fabsim_name_table *t,
			  uint64_t flags)
{
	put(s, "[ ");
	put_flags(s, t, flags);
	put(s, " ]");
}

static void put_enum(struct sbuf *s, const struct fabsim_name_table *t,
		     uint64_t value)
{
	const char *name = fabsim_name_of(t, value);

	if (name)
		put(s, "%s", name);
	/* fabric.h: address formats with FI_PROV_SPECIFIC are a provider's
	 * own, named as libfabric names them. */
	else if (t == &fabsim_addr_format_names && (value & FI_PROV_SPECIFIC))
		put(s, "Provider specific");
	else
		put(s, "Unknown(%" PRId64 ")", (int64_t)value);
}

static void put_version(struct sbuf *s, uint32_t version)
{
	put(s, "%u.%u", FI_MAJOR(version), FI_MINOR(version));
}

static void put_hex_bytes(struct sbuf *s, const uint8_t *bytes, size_t len)
{
	put(s, "0x");
	for (size_t i = 0; i < len; i++)
		put(s, "%02x", bytes[i]);
}

static void put_sockaddr(struct sbuf *s, const struct sockaddr *sa,
			 size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		put(s, "fi_sockaddr_in://%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		put(s, "fi_sockaddr_in6://[%s]:%u", host,
		    ntohs(in6->sin6_port));
	} else {
		put(s, "fi_sockaddr://");
		put_hex_bytes(s, (const uint8_t *)sa, len);
	}
}

static void put_addr(struct sbuf *s, uint32_t format, const void *addr,
		     size_t len)
{
	if (!addr) {
		put(s, "(null)");
		return;
	}
	switch (format) {
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR_IN6:
		put_sockaddr(s, addr, len);
		break;
	case FI_ADDR_STR:
		put(s, "%.*s", (int)strnlen(addr, len), (const char *)addr);
		break;
	case FI_SOCKADDR_IB:
		put(s, "fi_sockaddr_ib://");
		put_hex_bytes(s, addr, len);
		break;
	default:
		put(s, "fi_addr_format_%u://", format);
		put_hex_bytes(s, addr, len);
		break;
	}
}

static const char *str_or_null(const char *str)
{
	return str ? str : "(null)";
}

/* ---- Structures ---------------------------------------------------------- */

#define FIELD(s, lvl, name, fmt, ...) \
	do { indent(s, lvl); put(s, name ": " fmt "\n", __VA_ARGS__); } while (0)
#define FIELD_FLAGS(s, lvl, name, table, v)        \
	do {                                        \
		indent(s, lvl);                     \
		put(s, name ": ");                  \
		put_flag_list(s, &(table), v);      \
		put(s, "\n");                       \
	} while (0)
#define FIELD_ENUM(s, lvl, name, table, v)         \
	do {                                        \
		indent(s, lvl);                     \
		put(s, name ": ");                  \
		put_enum(s, &(table), (uint64_t)(v)); \
		put(s, "\n");                       \
	} while (0)

/* comp_order 0 means "no ordering", which fi_info spells out. */
static void put_comp_order(struct sbuf *s, int lvl, uint64_t order)
{
	indent(s, lvl);
	put(s, "comp_order: ");
	if (order)
		put_flag_list(s, &fabsim_order_names, order);
	else
		put(s, "[ FI_ORDER_NONE ]");
	put(s, "\n");
}

static void put_tx_attr(struct sbuf *s, int lvl, const struct fi_tx_attr *a)
{
	indent(s, lvl - 1);
	put(s, "fi_tx_attr:\n");
	FIELD_FLAGS(s, lvl, "caps", fabsim_caps_names, a->caps);
	FIELD_FLAGS(s, lvl, "mode", fabsim_mode_names, a->mode);
	FIELD_FLAGS(s, lvl, "op_flags", fabsim_op_flag_names, a->op_flags);
	FIELD_FLAGS(s, lvl, "msg_order", fabsim_order_names, a->msg_order);
	put_comp_order(s, lvl, a->comp_order);
	FIELD(s, lvl, "inject_size", "%zu", a->inject_size);
	FIELD(s, lvl, "size", "%zu", a->size);
	FIELD(s, lvl, "iov_limit", "%zu", a->iov_limit);
	FIELD(s, lvl, "rma_iov_limit", "%zu", a->rma_iov_limit);
	FIELD(s, lvl, "tclass", "0x%x", a->tclass);
}

static void put_rx_attr(struct sbuf *s, int lvl, const struct fi_rx_attr *a)
{
	indent(s, lvl - 1);
	put(s, "fi_rx_attr:\n");
	FIELD_FLAGS(s, lvl, "caps", fabsim_caps_names, a->caps);
	FIELD_FLAGS(s, lvl, "mode", fabsim_mode_names, a->mode);
	FIELD_FLAGS(s, lvl, "op_flags", fabsim_op_flag_names, a->op_flags);
	FIELD_FLAGS(s, lvl, "msg_order", fabsim_order_names, a->msg_order);
	put_comp_order(s, lvl, a->comp_order);
	FIELD(s, lvl, "total_buffered_recv", "%zu", a->total_buffered_recv);
	FIELD(s, lvl, "size", "%zu", a->size);
	FIELD(s, lvl, "iov_limit", "%zu", a->iov_limit);
}

static void put_ep_attr(struct sbuf *s, int lvl, const struct fi_ep_attr *a)
{
	indent(s, lvl - 1);
	put(s, "fi_ep_attr:\n");
	FIELD_ENUM(s, lvl, "type", fabsim_ep_type_names, a->type);
	FIELD_ENUM(s, lvl, "protocol", fabsim_protocol_names, a->protocol);
	FIELD(s, lvl, "protocol_version", "%u", a->protocol_version);
	FIELD(s, lvl, "max_msg_size", "%zu", a->max_msg_size);
	FIELD(s, lvl, "msg_prefix_size", "%zu", a->msg_prefix_size);
	FIELD(s, lvl, "max_order_raw_size", "%zu", a->max_order_raw_size);
	FIELD(s, lvl, "max_order_war_size", "%zu", a->max_order_war_size);
	FIELD(s, lvl, "max_order_waw_size", "%zu", a->max_order_waw_size);
	FIELD(s, lvl, "mem_tag_format", "0x%016" PRIx64, a->mem_tag_format);
	FIELD(s, lvl, "tx_ctx_cnt", "%zu", a->tx_ctx_cnt);
	FIELD(s, lvl, "rx_ctx_cnt", "%zu", a->rx_ctx_cnt);
	FIELD(s, lvl, "auth_key_size", "%zu", a->auth_key_size);
}

static void put_domain_attr(struct sbuf *s, int lvl,
			    const struct fi_domain_attr *a)
{
	indent(s, lvl - 1);
	put(s, "fi_domain_attr:\n");
	FIELD(s, lvl, "domain", "0x%" PRIxPTR, (uintptr_t)a->domain);
	FIELD(s, lvl, "name", "%s", str_or_null(a->name));
	FIELD_ENUM(s, lvl, "threading", fabsim_threading_names, a->threading);
	FIELD_ENUM(s, lvl, "control_progress", fabsim_progress_names,
		   a->control_progress);
	FIELD_ENUM(s, lvl, "data_progress", fabsim_progress_names,
		   a->data_progress);
	FIELD_ENUM(s, lvl, "resource_mgmt", fabsim_rm_names, a->resource_mgmt);
	FIELD_ENUM(s, lvl, "av_type", fabsim_av_type_names, a->av_type);
	FIELD_FLAGS(s, lvl, "mr_mode", fabsim_mr_mode_names,
		    (uint64_t)(unsigned)a->mr_mode);
	FIELD(s, lvl, "mr_key_size", "%zu", a->mr_key_size);
	FIELD(s, lvl, "cq_data_size", "%zu", a->cq_data_size);
	FIELD(s, lvl, "cq_cnt", "%zu", a->cq_cnt);
	FIELD(s, lvl, "ep_cnt", "%zu", a->ep_cnt);
	FIELD(s, lvl, "tx_ctx_cnt", "%zu", a->tx_ctx_cnt);
	FIELD(s, lvl, "rx_ctx_cnt", "%zu", a->rx_ctx_cnt);
	FIELD(s, lvl, "max_ep_tx_ctx", "%zu", a->max_ep_tx_ctx);
	FIELD(s, lvl, "max_ep_rx_ctx", "%zu", a->max_ep_rx_ctx);
	FIELD(s, lvl, "max_ep_stx_ctx", "%zu", a->max_ep_stx_ctx);
	FIELD(s, lvl, "max_ep_srx_ctx", "%zu", a->max_ep_srx_ctx);
	FIELD(s, lvl, "cntr_cnt", "%zu", a->cntr_cnt);
	FIELD(s, lvl, "mr_iov_limit", "%zu", a->mr_iov_limit);
	FIELD_FLAGS(s, lvl, "caps", fabsim_caps_names, a->caps);
	FIELD_FLAGS(s, lvl, "mode", fabsim_mode_names, a->mode);
	FIELD(s, lvl, "auth_key_size", "%zu", a->auth_key_size);
	FIELD(s, lvl, "max_err_data", "%zu", a->max_err_data);
	FIELD(s, lvl, "mr_cnt", "%zu", a->mr_cnt);
	FIELD(s, lvl, "tclass", "0x%x", a->tclass);
}

static void put_fabric_attr(struct sbuf *s, int lvl,
			    const struct fi_fabric_attr *a)
{
	indent(s, lvl - 1);
	put(s, "fi_fabric_attr:\n");
	FIELD(s, lvl, "name", "%s", str_or_null(a->name));
	FIELD(s, lvl, "prov_name", "%s", str_or_null(a->prov_name));
	indent(s, lvl);
	put(s, "prov_version: ");
	put_version(s, a->prov_version);
	put(s, "\n");
	indent(s, lvl);
	put(s, "api_version: ");
	put_version(s, a->api_version);
	put(s, "\n");
}

static void put_nic(struct sbuf *s, int lvl, const struct fid_nic *nic)
{
	const struct fi_device_attr *dev = nic->device_attr;
	const struct fi_bus_attr *bus = nic->bus_attr;
	const struct fi_link_attr *link = nic->link_attr;

	indent(s, lvl - 1);
	put(s, "nic:\n");
	if (dev) {
		indent(s, lvl);
		put(s, "fi_device_attr:\n");
		FIELD(s, lvl + 1, "name", "%s", str_or_null(dev->name));
		FIELD(s, lvl + 1, "device_id", "%s",
		      str_or_null(dev->device_id));
		FIELD(s, lvl + 1, "device_version", "%s",
		      str_or_null(dev->device_version));
		FIELD(s, lvl + 1, "vendor_id", "%s",
		      str_or_null(dev->vendor_id));
		FIELD(s, lvl + 1, "driver", "%s", str_or_null(dev->driver));
		FIELD(s, lvl + 1, "firmware", "%s", str_or_null(dev->firmware));
	}
	if (bus) {
		indent(s, lvl);
		put(s, "fi_bus_attr:\n");
		FIELD(s, lvl + 1, "bus_type", "%s",
		      bus->bus_type == FI_BUS_PCI ? "FI_BUS_PCI"
						  : "FI_BUS_UNKNOWN");
		if (bus->bus_type == FI_BUS_PCI)
			FIELD(s, lvl + 1, "pci", "%04x:%02x:%02x.%u",
			      bus->attr.pci.domain_id, bus->attr.pci.bus_id,
			      bus->attr.pci.device_id,
			      bus->attr.pci.function_id);
	}
	if (link) {
		static const char *const states[] = { "FI_LINK_UNKNOWN",
						      "FI_LINK_DOWN",
						      "FI_LINK_UP" };

		indent(s, lvl);
		put(s, "fi_link_attr:\n");
		FIELD(s, lvl + 1, "address", "%s", str_or_null(link->address));
		FIELD(s, lvl + 1, "mtu", "%zu", link->mtu);
		FIELD(s, lvl + 1, "speed", "%zu", link->speed);
		FIELD(s, lvl + 1, "state", "%s",
		      (unsigned)link->state < count_of(states) ?
			      states[link->state] : "FI_LINK_UNKNOWN");
		FIELD(s, lvl + 1, "network_type", "%s",
		      str_or_null(link->network_type));
	}
}

static void put_info(struct sbuf *s, const struct fi_info *info)
{
	put(s, "fi_info:\n");
	FIELD_FLAGS(s, 1, "caps", fabsim_caps_names, info->caps);
	FIELD_FLAGS(s, 1, "mode", fabsim_mode_names, info->mode);
	FIELD_ENUM(s, 1, "addr_format", fabsim_addr_format_names,
		   info->addr_format);
	FIELD(s, 1, "src_addrlen", "%zu", info->src_addrlen);
	FIELD(s, 1, "dest_addrlen", "%zu", info->dest_addrlen);
	indent(s, 1);
	put(s, "src_addr: ");
	put_addr(s, info->addr_format, info->src_addr, info->src_addrlen);
	put(s, "\n");
	indent(s, 1);
	put(s, "dest_addr: ");
	put_addr(s, info->addr_format, info->dest_addr, info->dest_addrlen);
	put(s, "\n");
	FIELD(s, 1, "handle", "%p", (void *)info->handle);
	if (info->tx_attr)
		put_tx_attr(s, 2, info->tx_attr);
	if (info->rx_attr)
		put_rx_attr(s, 2, info->rx_attr);
	if (info->ep_attr)
		put_ep_attr(s, 2, info->ep_attr);
	if (info->domain_attr)
		put_domain_attr(s, 2, info->domain_attr);
	if (info->fabric_attr)
		put_fabric_attr(s, 2, info->fabric_attr);
	if (info->nic)
		put_nic(s, 2, info->nic);
	else
		FIELD(s, 1, "nic", "%s", "(nil)");
}

static void put_fid(struct sbuf *s, const struct fid *fid)
{
	put(s, "fid: %p ", (const void *)fid);
	put_enum(s, &fabsim_fclass_names, fid->fclass);
	put(s, "\n");
}

/* ---- Dispatch ------------------------------------------------------------ */

static uint64_t u64(const void *p) { return *(const uint64_t *)p; }
static uint64_t u32(const void *p) { return *(const uint32_t *)p; }
static uint64_t sint(const void *p) { return (uint64_t)(int64_t)*(const int *)p; }

struct scalar_type {
	const struct fabsim_name_table *table;
	uint64_t (*read)(const void *data);
	int is_flags;
};

static int scalar_of(enum fi_type type, struct scalar_type *out)
{
	static const struct {
		enum fi_type type;
		struct scalar_type scalar;
	} scalars[] = {
		{ FI_TYPE_EP_TYPE, { &fabsim_ep_type_names, sint, 0 } },
		{ FI_TYPE_CAPS, { &fabsim_caps_names, u64, 1 } },
		{ FI_TYPE_OP_FLAGS, { &fabsim_op_flag_names, u64, 1 } },
		{ FI_TYPE_ADDR_FORMAT, { &fabsim_addr_format_names, u32, 0 } },
		{ FI_TYPE_THREADING, { &fabsim_threading_names, sint, 0 } },
		{ FI_TYPE_PROGRESS, { &fabsim_progress_names, sint, 0 } },
		{ FI_TYPE_PROTOCOL, { &fabsim_protocol_names, u32, 0 } },
		{ FI_TYPE_MSG_ORDER, { &fabsim_order_names, u64, 1 } },
		{ FI_TYPE_MODE, { &fabsim_mode_names, u64, 1 } },
		{ FI_TYPE_AV_TYPE, { &fabsim_av_type_names, sint, 0 } },
		{ FI_TYPE_ATOMIC_TYPE, { &fabsim_datatype_names, sint, 0 } },
		{ FI_TYPE_ATOMIC_OP, { &fabsim_atomic_op_names, sint, 0 } },
		{ FI_TYPE_EQ_EVENT, { &fabsim_eq_event_names, u32, 0 } },
		{ FI_TYPE_CQ_EVENT_FLAGS, { &fabsim_cq_flag_names, u64, 1 } },
		{ FI_TYPE_MR_MODE, { &fabsim_mr_mode_names, u32, 1 } },
		{ FI_TYPE_OP_TYPE, { &fabsim_op_type_names, sint, 0 } },
		{ FI_TYPE_COLLECTIVE_OP,
		  { &fabsim_collective_op_names, sint, 0 } },
		{ FI_TYPE_HMEM_IFACE, { &fabsim_hmem_iface_names, sint, 0 } },
		{ FI_TYPE_CQ_FORMAT, { &fabsim_cq_format_names, sint, 0 } },
		{ FI_TYPE_LOG_LEVEL, { &fabsim_log_level_names, sint, 0 } },
		{ FI_TYPE_LOG_SUBSYS, { &fabsim_log_subsys_names, sint, 0 } },
	};

	for (size_t i = 0; i < count_of(scalars); i++) {
		if (scalars[i].type == type) {
			*out = scalars[i].scalar;
			return 1;
		}
	}
	return 0;
}

static void put_any(struct sbuf *s, const void *data, enum fi_type type)
{
	struct scalar_type scalar;

	/* fi_fabric(3): the library's own version; data is ignored. */
	if (type == FI_TYPE_VERSION) {
		put(s, "%d.%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION,
		    FI_REVISION_VERSION);
		return;
	}
	if (scalar_of(type, &scalar)) {
		if (scalar.is_flags)
			put_flags(s, scalar.table, scalar.read(data));
		else
			put_enum(s, scalar.table, scalar.read(data));
		return;
	}
	switch (type) {
	case FI_TYPE_INFO: put_info(s, data); break;
	case FI_TYPE_TX_ATTR: put_tx_attr(s, 1, data); break;
	case FI_TYPE_RX_ATTR: put_rx_attr(s, 1, data); break;
	case FI_TYPE_EP_ATTR: put_ep_attr(s, 1, data); break;
	case FI_TYPE_DOMAIN_ATTR: put_domain_attr(s, 1, data); break;
	case FI_TYPE_FABRIC_ATTR: put_fabric_attr(s, 1, data); break;
	case FI_TYPE_FID: put_fid(s, data); break;
	default:
		put(s, "Unknown type");
		break;
	}
}

char *fi_tostr_r(char *buf, size_t len, const void *data,
		 enum fi_type datatype)
{
	struct sbuf s = { .buf = buf, .cap = len, .len = 0 };

	/* Nothing to show is no string, as libfabric 1.17 answers (even for
	 * the library's version, which needs no data). */
	if (!buf || !len || !data)
		return NULL;
	buf[0] = '\0';
	put_any(&s, data, datatype);
	/* Cut short in a list of names: no separator dangles at the end, as
	 * libfabric's lists end ("FI_MSG", not "FI_MSG,"). */
	if (s.len + 1 >= s.cap)
		while (s.len && (buf[s.len - 1] == ',' || buf[s.len - 1] == ' '))
			buf[--s.len] = '\0';
	return buf;
}

char *fi_tostr(const void *data, enum fi_type datatype)
{
	/* Per thread, so that concurrent callers do not clobber each other. */
	static __thread char buf[16384];

	return fi_tostr_r(buf, sizeof(buf), data, datatype);
}
