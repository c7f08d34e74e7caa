/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_trigger(3).
 *
 * Triggered operations: a data transfer posted with FI_TRIGGER and a
 * struct fi_triggered_context as its context waits until a counter reaches a
 * threshold (or, for XPU triggers, until a device writes given values).
 * Deferred work requests (fi_control FI_QUEUE_WORK on the domain) describe
 * the same thing with explicit operation structures.
 */
#ifndef FI_TRIGGER_H
#define FI_TRIGGER_H

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fi_trigger_event {
	FI_TRIGGER_THRESHOLD,
	FI_TRIGGER_XPU,
};

/* The kind of operation a deferred work request performs. */
enum fi_op_type {
	FI_OP_RECV,
	FI_OP_SEND,
	FI_OP_TRECV,
	FI_OP_TSEND,
	FI_OP_READ,
	FI_OP_WRITE,
	FI_OP_ATOMIC,
	FI_OP_FETCH_ATOMIC,
	FI_OP_COMPARE_ATOMIC,
	FI_OP_CNTR_SET,
	FI_OP_CNTR_ADD,
};

/* Fire when cntr reaches threshold; equal thresholds fire in post order. */
struct fi_trigger_threshold {
	struct fid_cntr *cntr;
	size_t           threshold;
};

/* One location a device writes to start an XPU-triggered transfer: count
 * values of datatype, inline in value when they fit in 64 bits, else in
 * value.data. */
struct fi_trigger_var {
	enum fi_datatype datatype;
	int              count;
	void            *addr;
	union {
		uint8_t  val8;
		uint16_t val16;
		uint32_t val32;
		uint64_t val64;
		uint8_t *data;
	} value;
};

struct fi_trigger_xpu {
	int                    count;   /* in: room in var[]; out: used */
	enum fi_hmem_iface     iface;
	union {
		uint64_t reserved;
		int      cuda;
		int      ze;
	} device;
	struct fi_trigger_var *var;
};

/* ---- Operation descriptions for deferred work ---------------------------- */

struct fi_op_msg {
	struct fid_ep *ep;
	struct fi_msg  msg;
	uint64_t       flags;
};

struct fi_op_tagged {
	struct fid_ep       *ep;
	struct fi_msg_tagged msg;
	uint64_t             flags;
};

struct fi_op_rma {
	struct fid_ep    *ep;
	struct fi_msg_rma msg;
	uint64_t          flags;
};

struct fi_op_atomic {
	struct fid_ep       *ep;
	struct fi_msg_atomic msg;
	uint64_t             flags;
};

struct fi_op_fetch_atomic {
	struct fid_ep       *ep;
	struct fi_msg_atomic msg;
	struct fi_msg_fetch  fetch;
	uint64_t             flags;
};

struct fi_op_compare_atomic {
	struct fid_ep        *ep;
	struct fi_msg_atomic  msg;
	struct fi_msg_fetch   fetch;
	struct fi_msg_compare compare;
	uint64_t              flags;
};

struct fi_op_cntr {
	struct fid_cntr *cntr;
	uint64_t         value;
};

/* ---- Trigger contexts ---------------------------------------------------- */

/* These stand in for struct fi_context / fi_context2 as an operation's
 * context, so each must be exactly as large as the one it replaces (32 and
 * 64 bytes on LP64); the internal[] members set that size. */
struct fi_triggered_context {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu       xpu;
		void                       *internal[3];
	} trigger;
};

struct fi_triggered_context2 {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu       xpu;
		void                       *internal[7];
	} trigger;
};

/* Queued on the domain: when triggering_cntr (successes plus errors)
 * reaches threshold, run op and bump completion_cntr. Must stay valid until
 * it completes or is cancelled. */
struct fi_deferred_work {
	struct fi_context2 context;    /* for the provider */

	uint64_t         threshold;
	struct fid_cntr *triggering_cntr;
	struct fid_cntr *completion_cntr;

	enum fi_op_type op_type;       /* selects the member of op */

	union {
		struct fi_op_msg            *msg;
		struct fi_op_tagged         *tagged;
		struct fi_op_rma            *rma;
		struct fi_op_atomic         *atomic;
		struct fi_op_fetch_atomic   *fetch_atomic;
		struct fi_op_compare_atomic *compare_atomic;
		struct fi_op_cntr           *cntr;
	} op;
};

#ifdef __cplusplus
}
#endif

#endif /* FI_TRIGGER_H */
