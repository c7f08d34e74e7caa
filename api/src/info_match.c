/* SPDX-License-Identifier: BSD-2-Clause
 * The matching rules of fi_getinfo(3), in one place for every provider.
 *
 * General rule: a non-zero hint is a requirement the offer must meet, a zero
 * hint is a wildcard — except mode bits, where zero means "the application
 * supports no modes". A match is returned narrowed: primary capabilities to
 * those requested, op_flags and AV type to the application's choice.
 */
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <fabsim/core.h>

#include "info_alloc.h"
#include "info_match.h"

#define GETINFO_FLAGS (FI_NUMERICHOST | FI_PROV_ATTR_ONLY | FI_SOURCE)

static int fail(int err, char *why, size_t why_len, const char *fmt, ...)
	FI_FORMAT_PRINTF(4, 5);

static int fail(int err, char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- Argument validation -------------------------------------------------- */

static int check_caps(const char *where, uint64_t caps, char *why,
		      size_t why_len)
{
	if (caps & ~FABSIM_ALL_CAPS)
		return fail(-FI_EBADFLAGS, why, why_len,
			    "%s has undefined capability bits 0x%llx", where,
			    (unsigned long long)(caps & ~FABSIM_ALL_CAPS));
	if ((caps & FI_SOURCE_ERR) && !(caps & FI_SOURCE))
		return fail(-FI_EBADFLAGS, why, why_len,
			    "%s: FI_SOURCE_ERR must be paired with FI_SOURCE",
			    where);
	return 0;
}

static int check_enums(const struct fi_info *hints, char *why, size_t why_len)
{
	const struct fi_ep_attr *ep = hints->ep_attr;
	const struct fi_domain_attr *dom = hints->domain_attr;

	if (ep && (ep->type < FI_EP_UNSPEC || ep->type > FI_EP_SOCK_DGRAM))
		return fail(-FI_EINVAL, why, why_len,
			    "hints->ep_attr->type %d is not an fi_ep_type",
			    (int)ep->type);
	if (hints->addr_format > FI_ADDR_CXI)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->addr_format %u is not an address format",
			    hints->addr_format);
	if (!dom)
		return 0;
	if (dom->threading < FI_THREAD_UNSPEC ||
	    dom->threading > FI_THREAD_ENDPOINT)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->domain_attr->threading %d is not an "
			    "fi_threading", (int)dom->threading);
	if (dom->control_progress < FI_PROGRESS_UNSPEC ||
	    dom->control_progress > FI_PROGRESS_MANUAL ||
	    dom->data_progress < FI_PROGRESS_UNSPEC ||
	    dom->data_progress > FI_PROGRESS_MANUAL)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->domain_attr progress (%d, %d) is not an "
			    "fi_progress", (int)dom->control_progress,
			    (int)dom->data_progress);
	if (dom->resource_mgmt < FI_RM_UNSPEC ||
	    dom->resource_mgmt > FI_RM_ENABLED)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->domain_attr->resource_mgmt %d is not an "
			    "fi_resource_mgmt", (int)dom->resource_mgmt);
	if (dom->av_type < FI_AV_UNSPEC || dom->av_type > FI_AV_TABLE)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->domain_attr->av_type %d is not an "
			    "fi_av_type", (int)dom->av_type);
	return 0;
}

int fabsim_hints_check(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       char *why, size_t why_len)
{
	int ret;

	if (FI_MAJOR(version) != FI_MAJOR_VERSION ||
	    version > FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION))
		return fail(-FI_ENOSYS, why, why_len,
			    "requested API version %u.%u; this library "
			    "implements 1.0 to %d.%d", FI_MAJOR(version),
			    FI_MINOR(version), FI_MAJOR_VERSION,
			    FI_MINOR_VERSION);
	if (flags & ~GETINFO_FLAGS)
		return fail(-FI_EBADFLAGS, why, why_len,
			    "flags 0x%llx: fi_getinfo accepts only "
			    "FI_NUMERICHOST, FI_PROV_ATTR_ONLY and FI_SOURCE",
			    (unsigned long long)flags);
	if ((flags & FI_SOURCE) && !node && !service)
		return fail(-FI_EINVAL, why, why_len,
			    "FI_SOURCE needs a node or a service");
	if (!hints)
		return 0;
	if (hints->src_addr && !hints->src_addrlen)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->src_addr is set but src_addrlen is 0");
	if (hints->dest_addr && !hints->dest_addrlen)
		return fail(-FI_EINVAL, why, why_len,
			    "hints->dest_addr is set but dest_addrlen is 0");
	ret = check_caps("hints->caps", hints->caps, why, why_len);
	if (!ret && hints->tx_attr)
		ret = check_caps("hints->tx_attr->caps", hints->tx_attr->caps,
				 why, why_len);
	if (!ret && hints->rx_attr)
		ret = check_caps("hints->rx_attr->caps", hints->rx_attr->caps,
				 why, why_len);
	if (!ret && hints->domain_attr)
		ret = check_caps("hints->domain_attr->caps",
				 hints->domain_attr->caps, why, why_len);
	if (!ret)
		ret = check_enums(hints, why, why_len);
	return ret;
}

int fabsim_info_check_values(const struct fi_info *info, char *why,
			     size_t why_len)
{
	return fabsim_hints_check(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
				  NULL, NULL, 0, info, why, why_len);
}

/* ---- Matching helpers ------------------------------------------------------ */

struct match {
	uint32_t              version;
	const struct fi_info *offer;
	const struct fi_info *hints;
	struct fi_info       *out;
	char                 *why;
	size_t                why_len;
};

#define NO_MATCH(m, ...) fail(-FI_ENODATA, (m)->why, (m)->why_len, __VA_ARGS__)

/* A requested limit must not exceed what the offer can do. */
#define REQUIRE_LE(m, name, asked, offered)                               \
	do {                                                              \
		if ((asked) > (offered))                                  \
			return NO_MATCH(m, "%s: asked %llu, offered %llu",    \
					name, (unsigned long long)(asked),    \
					(unsigned long long)(offered));       \
	} while (0)

/* Every requested bit must be in the offered set. */
#define REQUIRE_BITS(m, name, asked, offered)                             \
	do {                                                              \
		if ((asked) & ~(offered))                                 \
			return NO_MATCH(m, "%s: 0x%llx not offered (offered " \
					"0x%llx)", name,                      \
					(unsigned long long)(asked),          \
					(unsigned long long)(offered));       \
	} while (0)

/* Requested primary capabilities and their modifiers narrow the result;
 * secondary ones are kept only when asked for (and the offer has them), plus
 * the local/remote reach that describes the offer itself, and FI_RMA_EVENT
 * with RMA or atomics at the target where it is offered: fi_getinfo(3)
 * lets a provider report secondary capabilities not asked for when they
 * cost neither performance nor security, and a program that binds a
 * counter for remote writes may not have asked (fabtests' fi_rma_bw -t
 * counter; the sockets provider reports it too). */
static uint64_t narrow_caps(uint64_t asked, uint64_t offered)
{
	uint64_t primary, mods, secondary;

	if (!asked)
		return offered;
	primary = asked & offered & FABSIM_PRIMARY_CAPS;
	mods = asked & FABSIM_CAP_MODIFIERS;
	mods = mods ? mods & offered : offered & FABSIM_CAP_MODIFIERS;
	secondary = (asked & offered & FABSIM_SECONDARY_CAPS) |
		    (offered & (FI_LOCAL_COMM | FI_REMOTE_COMM));
	if ((primary & (FI_RMA | FI_ATOMIC)) &&
	    (mods & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		secondary |= offered & FI_RMA_EVENT;
	return primary | mods | secondary;
}

static int match_caps(struct match *m)
{
	const struct fi_info *h = m->hints, *o = m->offer;

	REQUIRE_BITS(m, "caps", h->caps, o->caps);
	m->out->caps = narrow_caps(h->caps, o->caps);
	return 0;
}

/* The application's mode bits for a context: its own, or the info's. */
static uint64_t app_mode(uint64_t attr_mode, uint64_t info_mode)
{
	return attr_mode ? attr_mode : info_mode;
}

static int match_mode(struct match *m)
{
	uint64_t required = m->offer->mode;
	uint64_t supported = m->hints->mode;

	/* Since API 1.5, FI_LOCAL_MR is expressed as FI_MR_LOCAL instead. */
	if (m->version >= FI_VERSION(1, 5))
		required &= ~FI_LOCAL_MR;
	if (required & ~supported)
		return NO_MATCH(m, "mode: provider requires 0x%llx, "
				"application supports 0x%llx",
				(unsigned long long)required,
				(unsigned long long)supported);
	m->out->mode = required;
	return 0;
}

/* fi_endpoint(3): a transmit or receive context's capabilities "must be a
 * subset of those requested of the associated endpoint": a primary
 * capability asked of a context must be one asked of the endpoint (when
 * the hints ask for any). */
#define REQUIRE_SUBSET(m, name, asked)                                         \
	do {                                                                   \
		uint64_t extra_ = (asked) & FABSIM_PRIMARY_CAPS &              \
				  ~(m)->hints->caps;                           \
		if ((m)->hints->caps && extra_)                                \
			return NO_MATCH(m, "%s 0x%llx: not asked of the "      \
					"endpoint (hints->caps)", name,        \
					(unsigned long long)extra_);           \
	} while (0)

static int match_tx(struct match *m)
{
	const struct fi_tx_attr *h = m->hints->tx_attr, *o = m->offer->tx_attr;
	struct fi_tx_attr *out = m->out->tx_attr;

	if (!o)
		return 0;
	out->caps = o->caps & (m->out->caps | ~FABSIM_ALL_CAPS);
	out->op_flags = 0;
	if (!h)
		return 0;
	REQUIRE_BITS(m, "tx_attr->caps", h->caps, o->caps);
	REQUIRE_SUBSET(m, "tx_attr->caps", h->caps);
	if (h->caps)
		out->caps = narrow_caps(h->caps, o->caps);
	if (o->mode & ~app_mode(h->mode, m->hints->mode))
		return NO_MATCH(m, "tx_attr->mode: provider requires 0x%llx",
				(unsigned long long)o->mode);
	REQUIRE_BITS(m, "tx_attr->op_flags", h->op_flags, o->op_flags);
	out->op_flags = h->op_flags;
	REQUIRE_BITS(m, "tx_attr->msg_order", h->msg_order, o->msg_order);
	REQUIRE_BITS(m, "tx_attr->comp_order", h->comp_order, o->comp_order);
	REQUIRE_LE(m, "tx_attr->inject_size", h->inject_size, o->inject_size);
	REQUIRE_LE(m, "tx_attr->size", h->size, o->size);
	REQUIRE_LE(m, "tx_attr->iov_limit", h->iov_limit, o->iov_limit);
	REQUIRE_LE(m, "tx_attr->rma_iov_limit", h->rma_iov_limit,
		   o->rma_iov_limit);
	if (h->tclass)
		out->tclass = h->tclass;
	return 0;
}

static int match_rx(struct match *m)
{
	const struct fi_rx_attr *h = m->hints->rx_attr, *o = m->offer->rx_attr;
	struct fi_rx_attr *out = m->out->rx_attr;

	if (!o)
		return 0;
	out->caps = o->caps & (m->out->caps | ~FABSIM_ALL_CAPS);
	out->op_flags = 0;
	if (!h)
		return 0;
	REQUIRE_BITS(m, "rx_attr->caps", h->caps, o->caps);
	REQUIRE_SUBSET(m, "rx_attr->caps", h->caps);
	if (h->caps)
		out->caps = narrow_caps(h->caps, o->caps);
	if (o->mode & ~app_mode(h->mode, m->hints->mode))
		return NO_MATCH(m, "rx_attr->mode: provider requires 0x%llx",
				(unsigned long long)o->mode);
	REQUIRE_BITS(m, "rx_attr->op_flags", h->op_flags, o->op_flags);
	out->op_flags = h->op_flags;
	REQUIRE_BITS(m, "rx_attr->msg_order", h->msg_order, o->msg_order);
	REQUIRE_BITS(m, "rx_attr->comp_order", h->comp_order, o->comp_order);
	REQUIRE_LE(m, "rx_attr->total_buffered_recv", h->total_buffered_recv,
		   o->total_buffered_recv);
	REQUIRE_LE(m, "rx_attr->size", h->size, o->size);
	REQUIRE_LE(m, "rx_attr->iov_limit", h->iov_limit, o->iov_limit);
	return 0;
}

/* FI_SHARED_CONTEXT asks for a shared context rather than a count. */
static int match_ctx_cnt(struct match *m, const char *name, size_t asked,
			 size_t offered, size_t shared_max)
{
	if (asked == FI_SHARED_CONTEXT) {
		if (!shared_max)
			return NO_MATCH(m, "%s: shared contexts not offered",
					name);
		return 0;
	}
	REQUIRE_LE(m, name, asked, offered);
	return 0;
}

static int match_ep(struct match *m)
{
	const struct fi_ep_attr *h = m->hints->ep_attr, *o = m->offer->ep_attr;
	const struct fi_domain_attr *od = m->offer->domain_attr;
	struct fi_ep_attr *out = m->out->ep_attr;
	int ret;

	if (!h || !o)
		return 0;
	if (h->type != FI_EP_UNSPEC && h->type != o->type)
		return NO_MATCH(m, "ep_attr->type: asked %d, offered %d",
				(int)h->type, (int)o->type);
	if (h->protocol != FI_PROTO_UNSPEC && h->protocol != o->protocol)
		return NO_MATCH(m, "ep_attr->protocol: asked %u, offered %u",
				h->protocol, o->protocol);
	REQUIRE_LE(m, "ep_attr->protocol_version", h->protocol_version,
		   o->protocol_version);
	REQUIRE_LE(m, "ep_attr->max_msg_size", h->max_msg_size,
		   o->max_msg_size);
	REQUIRE_LE(m, "ep_attr->max_order_raw_size", h->max_order_raw_size,
		   o->max_order_raw_size);
	REQUIRE_LE(m, "ep_attr->max_order_war_size", h->max_order_war_size,
		   o->max_order_war_size);
	REQUIRE_LE(m, "ep_attr->max_order_waw_size", h->max_order_waw_size,
		   o->max_order_waw_size);
	ret = match_ctx_cnt(m, "ep_attr->tx_ctx_cnt", h->tx_ctx_cnt,
			    o->tx_ctx_cnt, od ? od->max_ep_stx_ctx : 0);
	if (!ret)
		ret = match_ctx_cnt(m, "ep_attr->rx_ctx_cnt", h->rx_ctx_cnt,
				    o->rx_ctx_cnt, od ? od->max_ep_srx_ctx : 0);
	if (ret)
		return ret;
	if (h->tx_ctx_cnt)
		out->tx_ctx_cnt = h->tx_ctx_cnt;
	if (h->rx_ctx_cnt)
		out->rx_ctx_cnt = h->rx_ctx_cnt;
	/* The application chooses how tag bits are used. */
	if (h->mem_tag_format)
		out->mem_tag_format = h->mem_tag_format;
	if (h->auth_key_size && !o->auth_key_size)
		return NO_MATCH(m, "ep_attr->auth_key: not supported");
	return 0;
}

/* Threading levels from the most capable to the most restrictive: an offer
 * serves any request at or below its own level. */
static int thread_rank(enum fi_threading t)
{
	switch (t) {
	case FI_THREAD_SAFE: return 5;
	case FI_THREAD_FID: return 4;
	case FI_THREAD_ENDPOINT: return 3;
	case FI_THREAD_COMPLETION: return 2;
	case FI_THREAD_DOMAIN: return 1;
	default: return 0;
	}
}

/* Automatic progress also satisfies an application ready to drive it. */
static int progress_ok(enum fi_progress asked, enum fi_progress offered)
{
	return asked == FI_PROGRESS_UNSPEC || asked == offered ||
	       offered == FI_PROGRESS_AUTO;
}

/* From 1.5 on, the FI_LOCAL_MR mode bit is ignored (fi_getinfo(3)): only
 * FI_MR_LOCAL in mr_mode says the application registers local buffers. An
 * offer needs nothing the application did not offer; what it returns is
 * then a subset of what was asked (fi_mr(3)). */
static int match_mr_mode_bits(struct match *m, int asked, int required)
{
	if (required & ~asked)
		return NO_MATCH(m, "domain_attr->mr_mode: provider requires "
				"0x%x, application supports 0x%x", required,
				asked);
	m->out->domain_attr->mr_mode = required;
	return 0;
}

/* Before API 1.5, mr_mode is FI_MR_UNSPEC, FI_MR_BASIC or FI_MR_SCALABLE, and
 * local registration is the FI_LOCAL_MR mode bit. */
static int match_mr_mode_legacy(struct match *m, int asked, int required)
{
	int basic_ok = !(required & ~(FABSIM_MR_BASIC_BITS | FI_MR_LOCAL));
	int scalable_ok = !(required & ~FI_MR_LOCAL);
	int chosen;

	if (asked == FI_MR_BASIC && !basic_ok)
		return NO_MATCH(m, "domain_attr->mr_mode: FI_MR_BASIC asked, "
				"provider requires 0x%x", required);
	if (asked == FI_MR_SCALABLE && !scalable_ok)
		return NO_MATCH(m, "domain_attr->mr_mode: FI_MR_SCALABLE "
				"asked, provider requires 0x%x", required);
	if (asked == FI_MR_UNSPEC && !basic_ok)
		return NO_MATCH(m, "domain_attr->mr_mode: provider requires "
				"0x%x, beyond FI_MR_BASIC", required);
	if ((required & FI_MR_LOCAL) && !(m->hints->mode & FI_LOCAL_MR))
		return NO_MATCH(m, "mode: provider needs FI_LOCAL_MR");

	if (asked == FI_MR_BASIC || asked == FI_MR_SCALABLE)
		chosen = asked;
	else
		chosen = scalable_ok ? FI_MR_SCALABLE : FI_MR_BASIC;
	m->out->domain_attr->mr_mode = chosen;
	if (required & FI_MR_LOCAL)
		m->out->mode |= FI_LOCAL_MR;
	return 0;
}

static int match_mr_mode(struct match *m)
{
	int asked = m->hints->domain_attr->mr_mode;
	int required = m->offer->domain_attr->mr_mode;
	int legacy_enum = asked & (FI_MR_BASIC | FI_MR_SCALABLE);

	if (legacy_enum && (asked & ~legacy_enum))
		return NO_MATCH(m, "domain_attr->mr_mode 0x%x: FI_MR_BASIC and "
				"FI_MR_SCALABLE cannot be combined with other "
				"bits", asked);
	if (m->version < FI_VERSION(1, 5) || legacy_enum)
		return match_mr_mode_legacy(m, asked, required);
	return match_mr_mode_bits(m, asked, required);
}

static int match_domain_limits(struct match *m)
{
	const struct fi_domain_attr *h = m->hints->domain_attr;
	const struct fi_domain_attr *o = m->offer->domain_attr;

	REQUIRE_LE(m, "domain_attr->mr_key_size", h->mr_key_size,
		   o->mr_key_size);
	REQUIRE_LE(m, "domain_attr->cq_data_size", h->cq_data_size,
		   o->cq_data_size);
	REQUIRE_LE(m, "domain_attr->cq_cnt", h->cq_cnt, o->cq_cnt);
	REQUIRE_LE(m, "domain_attr->ep_cnt", h->ep_cnt, o->ep_cnt);
	REQUIRE_LE(m, "domain_attr->tx_ctx_cnt", h->tx_ctx_cnt, o->tx_ctx_cnt);
	REQUIRE_LE(m, "domain_attr->rx_ctx_cnt", h->rx_ctx_cnt, o->rx_ctx_cnt);
	REQUIRE_LE(m, "domain_attr->max_ep_tx_ctx", h->max_ep_tx_ctx,
		   o->max_ep_tx_ctx);
	REQUIRE_LE(m, "domain_attr->max_ep_rx_ctx", h->max_ep_rx_ctx,
		   o->max_ep_rx_ctx);
	REQUIRE_LE(m, "domain_attr->max_ep_stx_ctx", h->max_ep_stx_ctx,
		   o->max_ep_stx_ctx);
	REQUIRE_LE(m, "domain_attr->max_ep_srx_ctx", h->max_ep_srx_ctx,
		   o->max_ep_srx_ctx);
	REQUIRE_LE(m, "domain_attr->cntr_cnt", h->cntr_cnt, o->cntr_cnt);
	REQUIRE_LE(m, "domain_attr->mr_iov_limit", h->mr_iov_limit,
		   o->mr_iov_limit);
	REQUIRE_LE(m, "domain_attr->max_err_data", h->max_err_data,
		   o->max_err_data);
	REQUIRE_LE(m, "domain_attr->mr_cnt", h->mr_cnt, o->mr_cnt);
	if (h->auth_key_size && !o->auth_key_size)
		return NO_MATCH(m, "domain_attr->auth_key: not supported");
	return 0;
}

static int match_domain(struct match *m)
{
	const struct fi_domain_attr *h = m->hints->domain_attr;
	const struct fi_domain_attr *o = m->offer->domain_attr;
	struct fi_domain_attr *out = m->out->domain_attr;
	int ret;

	if (!o)
		return 0;
	out->caps = o->caps & (m->out->caps | ~FABSIM_ALL_CAPS);
	if (!h) {
		if (m->version < FI_VERSION(1, 5))
			return match_mr_mode_legacy(m, FI_MR_UNSPEC,
						    o->mr_mode);
		return 0;
	}
	if (h->name && (!o->name || strcmp(h->name, o->name)))
		return NO_MATCH(m, "domain_attr->name: asked \"%s\"", h->name);
	if (h->domain && h->domain != o->domain && o->domain)
		return NO_MATCH(m, "domain_attr->domain: another domain");
	if (thread_rank(h->threading) > thread_rank(o->threading))
		return NO_MATCH(m, "domain_attr->threading: asked %d, offered "
				"%d", (int)h->threading, (int)o->threading);
	if (h->threading != FI_THREAD_UNSPEC)
		out->threading = h->threading;
	if (!progress_ok(h->control_progress, o->control_progress) ||
	    !progress_ok(h->data_progress, o->data_progress))
		return NO_MATCH(m, "domain_attr progress: asked (%d, %d), "
				"offered (%d, %d)", (int)h->control_progress,
				(int)h->data_progress,
				(int)o->control_progress,
				(int)o->data_progress);
	if (h->resource_mgmt != FI_RM_UNSPEC &&
	    h->resource_mgmt != o->resource_mgmt)
		return NO_MATCH(m, "domain_attr->resource_mgmt: asked %d, "
				"offered %d", (int)h->resource_mgmt,
				(int)o->resource_mgmt);
	if (h->av_type != FI_AV_UNSPEC) {
		if (o->av_type != FI_AV_UNSPEC && o->av_type != h->av_type)
			return NO_MATCH(m, "domain_attr->av_type: asked %d, "
					"offered %d", (int)h->av_type,
					(int)o->av_type);
		out->av_type = h->av_type;
	}
	REQUIRE_BITS(m, "domain_attr->caps", h->caps, o->caps);
	if (h->caps)
		out->caps = narrow_caps(h->caps, o->caps);
	if (o->mode & ~app_mode(h->mode, m->hints->mode))
		return NO_MATCH(m, "domain_attr->mode: provider requires "
				"0x%llx", (unsigned long long)o->mode);
	ret = match_domain_limits(m);
	if (!ret)
		ret = match_mr_mode(m);
	return ret;
}

static int match_fabric(struct match *m)
{
	const struct fi_fabric_attr *h = m->hints->fabric_attr;
	const struct fi_fabric_attr *o = m->offer->fabric_attr;

	if (!h || !o)
		return 0;
	if (h->name && (!o->name || strcmp(h->name, o->name)))
		return NO_MATCH(m, "fabric_attr->name: asked \"%s\"", h->name);
	if (h->fabric && o->fabric && h->fabric != o->fabric)
		return NO_MATCH(m, "fabric_attr->fabric: another fabric");
	if (h->prov_version && h->prov_version != o->prov_version)
		return NO_MATCH(m, "fabric_attr->prov_version: asked 0x%x",
				h->prov_version);
	return 0;
}

/* fi_getinfo(3): FI_SOCKADDR is an address "of type sockaddr", its format
 * found at run time from sa_family: any socket address fits it. */
static bool addr_format_fits(uint32_t asked, uint32_t offered)
{
	if (asked == FI_FORMAT_UNSPEC || asked == offered)
		return true;
	return asked == FI_SOCKADDR &&
	       (offered == FI_SOCKADDR_IN || offered == FI_SOCKADDR_IN6 ||
		offered == FI_SOCKADDR_IB);
}

/* Whether a hinted address is one of `format` (fi_getinfo(3): a provider
 * "must support the requested value or fail"); formats other than socket
 * addresses are the provider's to judge. */
static bool addr_of_format(uint32_t format, const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;

	switch (format) {
	case FI_SOCKADDR_IN:
		return len == sizeof(struct sockaddr_in) &&
		       sa->sa_family == AF_INET;
	case FI_SOCKADDR_IN6:
		return len == sizeof(struct sockaddr_in6) &&
		       sa->sa_family == AF_INET6;
	case FI_SOCKADDR:
		return len >= sizeof(sa_family_t) &&
		       ((sa->sa_family == AF_INET &&
			 len == sizeof(struct sockaddr_in)) ||
			(sa->sa_family == AF_INET6 &&
			 len == sizeof(struct sockaddr_in6)) ||
			sa->sa_family == AF_IB);
	default:
		return true;
	}
}

static int match_addressing(struct match *m)
{
	const struct fi_info *h = m->hints, *o = m->offer;

	if (!addr_format_fits(h->addr_format, o->addr_format))
		return NO_MATCH(m, "addr_format: asked %u, offered %u",
				h->addr_format, o->addr_format);
	if (h->src_addr && !addr_of_format(o->addr_format, h->src_addr,
					   h->src_addrlen))
		return NO_MATCH(m, "src_addr: %zu bytes, not an address of "
				"format %u", h->src_addrlen, o->addr_format);
	if (h->dest_addr && !addr_of_format(o->addr_format, h->dest_addr,
					    h->dest_addrlen))
		return NO_MATCH(m, "dest_addr: %zu bytes, not an address of "
				"format %u", h->dest_addrlen, o->addr_format);
	/* A passive endpoint in the hints is handed back (fi_getinfo(3)). */
	if (h->handle && h->handle->fclass == FI_CLASS_PEP)
		m->out->handle = h->handle;
	return 0;
}

int fabsim_info_match(uint32_t version, const struct fi_info *offer,
		      const struct fi_info *hints, struct fi_info **out,
		      char *why, size_t why_len)
{
	static int (*const steps[])(struct match *) = {
		match_addressing, match_fabric, match_caps, match_mode,
		match_ep,         match_tx,     match_rx,   match_domain,
	};
	struct match m = {
		.version = version,
		.offer = offer,
		.hints = hints,
		.why = why,
		.why_len = why_len,
	};
	int ret = 0;

	m.out = fabsim_dupinfo(offer);
	if (!m.out)
		return -FI_ENOMEM;
	if (!hints) {
		/* No hints: everything offered, with the modes (and, before
		 * API 1.5, FI_LOCAL_MR) the provider needs. */
		struct fi_info empty = { .mode = ~0ULL };

		m.hints = &empty;
		m.out->tx_attr->op_flags = 0;
		m.out->rx_attr->op_flags = 0;
		ret = match_domain(&m);
	} else {
		for (size_t i = 0; i < count_of(steps) && !ret; i++)
			ret = steps[i](&m);
	}
	if (ret) {
		fabsim_freeinfo(m.out);
		return ret;
	}
	m.out->fabric_attr->api_version = version;
	*out = m.out;
	return 0;
}
