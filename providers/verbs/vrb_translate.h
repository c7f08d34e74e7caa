/* SPDX-License-Identifier: BSD-2-Clause
 * What the verbs provider translates between rdma-core and libfabric, as
 * pure functions: no device, no library call, no global state. Each is
 * unit-tested without hardware (tests/translate_test.cc).
 *
 *   vrb_status.c  completion status -> FI_E* code and fi_cq_strerror text;
 *                 rdma_cm event -> EQ event or error
 *   vrb_wc.c      struct ibv_wc -> CQ entry of every format, with flags
 *   vrb_attr.c    device and port attributes -> fi_info attributes
 *   vrb_access.c  FI_* access -> IBV_ACCESS_*, the registration modes
 */
#ifndef FABSIM_VRB_TRANSLATE_H
#define FABSIM_VRB_TRANSLATE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Completion status (vrb_status.c) ----------------------------------- */

/* The FI_E* code (positive) of a work completion status. A local length
 * error is a truncated receive (FI_ETRUNC) on the receive side and a
 * message too long for the device (FI_EMSGSIZE) on the send side. */
int vrb_status_errno(enum ibv_wc_status status, bool recv);

/* The provider's error number of an error completion is the verbs status;
 * this is its text for fi_cq_strerror: the status name and what it means,
 * e.g. "IBV_WC_REM_ACCESS_ERR: remote access error (...)". Never NULL. */
const char *vrb_status_str(int prov_errno);

/* ---- Connection events (vrb_status.c) ----------------------------------- */

enum vrb_cm_action {
	VRB_CM_IGNORE,    /* nothing for the application (resolution steps) */
	VRB_CM_EVENT,     /* a normal EQ event: *event is set */
	VRB_CM_ERROR,     /* an error entry: *err is set (positive FI_E*) */
};

/* What an rdma_cm event becomes on the EQ. `status` is the event's status
 * field (a negative errno, or for REJECTED the IB reject reason). */
enum vrb_cm_action vrb_cm_translate(int rdma_cm_event, int status,
				    uint32_t *event, int *err);
/* Text of an EQ error's provider number (the rdma_cm event type and
 * status, packed by vrb_cm_prov_errno). */
int vrb_cm_prov_errno(int rdma_cm_event, int status);
const char *vrb_cm_strerror(int prov_errno, char *buf, size_t len);

/* Connection private data starts with a header saying how much the
 * application sent: rdma_cm hands the receiver the protocol's maximum. */
struct vrb_cm_hdr {
	uint8_t size;
	uint8_t reserved[3];
};
/* rdma_cm's private data limits on InfiniBand and RoCE (REQ, REP, REJ)
 * and what is left of a REQ's for the application (FI_OPT_CM_DATA_SIZE). */
enum {
	VRB_CM_REQ_DATA = 56,
	VRB_CM_REP_DATA = 196,
	VRB_CM_REJ_DATA = 148,
	VRB_CM_DATA_SIZE = VRB_CM_REQ_DATA - sizeof(struct vrb_cm_hdr),
};

/* Header and application data into buf, at most `max` bytes in all.
 * -FI_EINVAL when len does not fit; else 0 and *total set. */
int vrb_cm_pack(const void *data, size_t len, size_t max, uint8_t *buf,
		uint8_t *total);
/* The application's part of received private data (0 bytes when the
 * header is missing or claims more than arrived). */
size_t vrb_cm_unpack(const void *data, size_t len, const uint8_t **out);

/* ---- Work completions (vrb_wc.c) ------------------------------------------ */

/* What kind of operation a work request was, as the provider records it
 * when posting (a failed completion carries no valid opcode). */
enum vrb_op_kind {
	VRB_OP_SEND = 1,
	VRB_OP_WRITE,
	VRB_OP_READ,
	VRB_OP_ATOMIC_WRITE,  /* fi_atomic: nothing comes back */
	VRB_OP_ATOMIC_FETCH,  /* fi_fetch_atomic, fi_compare_atomic */
	VRB_OP_RECV,
	VRB_OP_INTERNAL,      /* the provider's own (never reported) */
	VRB_OP_KIND_MAX
};

/* The completion flags an operation of `kind` reports. */
uint64_t vrb_op_flags(enum vrb_op_kind kind);

/* wr_id of a work request: either a pointer to the provider's record of
 * the operation (signaled requests and receives), or, for unsignaled
 * requests whose success is never reported, an odd number carrying the
 * kind and the request's position in its send queue (1, 2, ...), so that
 * an error completion can still say what failed. */
static inline uint64_t vrb_wr_id_unsignaled(enum vrb_op_kind kind,
					    uint64_t sq_pos)
{
	return sq_pos << 8 | ((uint64_t)kind << 1) | 1;
}

static inline enum vrb_op_kind vrb_wr_id_kind(uint64_t wr_id)
{
	return (enum vrb_op_kind)((wr_id >> 1) & 0x7f);
}

static inline uint64_t vrb_wr_id_sq_pos(uint64_t wr_id)
{
	return wr_id >> 8;
}

static inline bool vrb_wr_id_is_record(uint64_t wr_id)
{
	return wr_id && !(wr_id & 1);
}

/* The part of an operation record a completion reads. */
struct vrb_op_info {
	void    *context;
	uint8_t  kind;   /* enum vrb_op_kind */
	void    *buf;    /* receives: the first buffer */
	size_t   len;    /* receives: the room posted */
};

/* A completion in no particular format (every format is a prefix). */
struct vrb_cqe {
	void     *op_context;
	uint64_t  flags;
	size_t    len;
	void     *buf;
	uint64_t  data;
	uint64_t  tag;
};

/* A successful completion. op is the record named by wr_id (NULL for an
 * unsignaled request). */
void vrb_wc_to_cqe(const struct ibv_wc *wc, const struct vrb_op_info *op,
		   struct vrb_cqe *out);

/* A failed one: err, prov_errno (the verbs status), flags and context.
 * A receive too small for its message (IBV_WC_LOC_LEN_ERR) reports in len
 * what fitted and in olen the rest, when the device says in byte_len how
 * long the message was (verbs leaves byte_len undefined on errors; a
 * device that leaves it 0 gets olen 0). */
void vrb_wc_to_err(const struct ibv_wc *wc, const struct vrb_op_info *op,
		   struct fi_cq_err_entry *out);

/* Writes e in `format` to out (fabsim_cq_entry_size(format) bytes). */
void vrb_cqe_write(enum fi_cq_format format, const struct vrb_cqe *e,
		   void *out);

/* ---- Attributes (vrb_attr.c) -------------------------------------------------- */

/* What discovery learned about one device's port. */
struct vrb_device_desc {
	const char             *name;      /* ibv_get_device_name */
	struct ibv_device_attr  dev;
	struct ibv_port_attr    port;
	uint8_t                 port_num;
	union ibv_gid           gid0;      /* port's GID 0 (subnet prefix) */
	uint32_t                inline_max; /* largest inline send accepted */
};

/* Bytes of an IB MTU enumerator; 0 if invalid. */
uint32_t vrb_mtu_bytes(enum ibv_mtu mtu);

/* The fabric name of a port: "IB-0x" and its GID subnet prefix in hex, as
 * libfabric's verbs provider names it. */
void vrb_fabric_name(const union ibv_gid *gid, char *buf, size_t len);

/* An IPv4 address carried in a RoCEv2 GID (::ffff:a.b.c.d). */
bool vrb_gid_ipv4(const union ibv_gid *gid, struct in_addr *out);

/* Fills the attributes of an FI_EP_MSG offer for the device (every
 * attribute struct of info must be allocated; names are strdup'ed).
 * cq_data: offer remote CQ data (which then needs FI_RX_CQ_DATA: an RDMA
 * write with immediate data consumes a posted receive). -FI_ENOMEM. */
int vrb_msg_info_fill(const struct vrb_device_desc *d, bool cq_data,
		      struct fi_info *info);

/* ---- Access and registration (vrb_access.c) ----------------------------------------- */

/* IBV_ACCESS_* rights for a region registered with FI_* access bits
 * (fi_mr(3): none given means all). The NIC writes into buffers used for
 * receives, reads and atomic results; remote writes and atomics need
 * local write access as well, as verbs requires. */
int vrb_ibv_access(uint64_t fi_access);

/* The FI_MR_* rules a domain opened with `info` lives by, whatever API
 * version asked: FI_MR_BASIC is the bits it stands for, FI_LOCAL_MR (a
 * mode bit before 1.5) is FI_MR_LOCAL. */
int vrb_effective_mr_mode(const struct fi_info *info);

/* What a verbs device requires: local descriptors, virtual addresses,
 * allocated memory and provider-chosen keys. */
#define VRB_MR_MODE \
	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

#ifdef __cplusplus
}
#endif

#endif
