/* SPDX-License-Identifier: BSD-2-Clause
 * CQ entries and attributes as fi_cq(3) defines them. */
#include <string.h>

#include <rdma/providers/fi_log.h>

#include <fabsim/util.h>

size_t fabsim_cq_entry_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED: return sizeof(struct fi_cq_tagged_entry);
	default: return 0;
	}
}

void fabsim_cq_entry_write(enum fi_cq_format format,
			   const struct fi_cq_tagged_entry *e, void *out)
{
	memcpy(out, e, fabsim_cq_entry_size(format));
}

int fabsim_cq_check_attr(const struct fi_provider *prov,
			 struct fi_cq_attr *attr, uint64_t flags_allowed)
{
	if (attr->flags & ~flags_allowed) {
		FI_WARN(prov, FI_LOG_CQ, "fi_cq_open: flags %#llx not "
			"supported\n", (unsigned long long)attr->flags);
		return -FI_EBADFLAGS;
	}
	if (attr->format == FI_CQ_FORMAT_UNSPEC)
		attr->format = FI_CQ_FORMAT_CONTEXT;
	if (!fabsim_cq_entry_size(attr->format)) {
		FI_WARN(prov, FI_LOG_CQ, "fi_cq_open: format %d unknown\n",
			(int)attr->format);
		return -FI_EINVAL;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		FI_WARN(prov, FI_LOG_CQ, "fi_cq_open: wait object %d not "
			"supported (FI_WAIT_NONE, UNSPEC or FD)\n",
			(int)attr->wait_obj);
		return -FI_ENOSYS;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD) {
		FI_WARN(prov, FI_LOG_CQ, "fi_cq_open: wait condition %d "
			"unknown\n", (int)attr->wait_cond);
		return -FI_EINVAL;
	}
	return 0;
}
