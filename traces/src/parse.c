/* SPDX-License-Identifier: BSD-2-Clause
 * tr_packet_parse: picks the first stage from the link type. */
#include <errno.h>
#include <string.h>

#include "parse_internal.h"

int tr_parse_need(const tr_frame *f, uint32_t end, uint32_t at, const char *what)
{
	if (end <= f->caplen)
		return 0;
	if (f->caplen < f->wirelen && end <= f->wirelen)
		return tr_error_set(f->err, -EINVAL,
				    "byte %u: %s not captured (capture ends at byte %u)", at, what,
				    f->caplen);
	return tr_error_set(f->err, -EINVAL, "byte %u: frame of %u bytes too short for %s", at,
			    f->wirelen, what);
}

int tr_parse_not_ib(const tr_frame *f, const char *what)
{
	if (f->what)
		*f->what = what;
	return TR_PARSE_NOT_IB;
}

int tr_packet_parse(tr_packet *p, const uint8_t *buf, uint32_t caplen, uint32_t wirelen,
		    uint32_t linktype, const char **what, tr_error *err)
{
	tr_frame f = { .buf = buf, .caplen = caplen, .wirelen = wirelen, .what = what, .err = err };

	memset(p, 0, sizeof(*p));
	p->linktype = linktype;
	p->caplen = caplen;
	p->wirelen = wirelen;
	if (what)
		*what = NULL;
	if (wirelen < caplen)
		return tr_error_set(err, -EINVAL,
				    "wire length %u is less than the %u bytes captured", wirelen,
				    caplen);

	switch (linktype) {
	case TR_LINKTYPE_ETHERNET:
		return tr_parse_ethernet(p, &f, 0);
	case TR_LINKTYPE_NULL_BYTES:
	case TR_LINKTYPE_RAW:
		return tr_parse_ip(p, &f, 0, 0);
	case TR_LINKTYPE_LINUX_SLL:
		return tr_parse_sll(p, &f, 0, false);
	case TR_LINKTYPE_LINUX_SLL2:
		return tr_parse_sll(p, &f, 0, true);
	case TR_LINKTYPE_ERF:
		return tr_parse_erf(p, &f);
	case TR_LINKTYPE_INFINIBAND:
		return tr_parse_lrh(p, &f, 0, wirelen);
	default:
		return tr_error_set(err, -EINVAL, "link type %u is not one this reader knows",
				    linktype);
	}
}
