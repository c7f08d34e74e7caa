/* SPDX-License-Identifier: BSD-2-Clause
 * Dispatch test, one build: calls every static inline function of the
 * libfabric headers against fake objects and logs what reaches the ops
 * tables. Compiled twice, -DABI_SIDE=ours (with //api:headers) and
 * -DABI_SIDE=debian (with /usr/include/rdma); abi_dispatch_test.cc compares
 * the two logs line by line.
 *
 * How it works:
 * - Every ops table of the manifest (ABI_OPS_TABLE) gets one instance whose
 *   slots all hold traps, one trap per slot. A trap is defined with
 *   libfabric 1.17's prototype for that slot (ABI_OPS_SLOT); it logs the
 *   table, the slot name, the slot's offset in this build's layout, and every
 *   argument, then returns a value that depends only on how many traps ran.
 * - Fake objects (fid_ep, fid_domain, fid_cq, ...) point at those tables.
 * - Each inline wrapper is called once with distinctive arguments
 *   (ABI_INLINE_CALL, generated from libfabric's prototypes), and its return
 *   value is logged. Hand-written scenarios follow: the FI_CHECK_OP fallbacks
 *   (table too small, slot NULL, table NULL), the flags == 0 paths of the
 *   "2" calls, the success path of fi_ep_alias, edge values of the pure
 *   helpers, and the logging macros of fi_log.h.
 * Pointers are logged so that the two builds compare: fake objects by name
 * and offset, test values by value, pointers to a wrapper's locals (the
 * struct fi_alias that fi_alias builds, for example) by their decoded
 * contents where the slot is known to receive one (fi_ops.control,
 * fi_ops_cm.join).
 *
 * Traps are stored into the tables through memcpy, without regard to the
 * slot's declared type in the build's headers; if a slot's prototype
 * differed, the wrapper would call the trap through a mismatched function
 * type. On x86-64 System V that is harmless for this purpose (integer and
 * pointer arguments travel in rdi, rsi, rdx, rcx, r8, r9 and then on the
 * stack, whatever the prototype says), and such a mismatch already fails
 * abi_equality_test's type checks; here it would show up as different
 * logged arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/abi/abi_includes.h"
#include "tests/abi/abi_dispatch.h"

#ifndef ABI_SIDE
#error "compile with -DABI_SIDE=ours or -DABI_SIDE=debian"
#endif

#if !defined(__x86_64__)
#error "the dispatch test's trap calling convention assumes x86-64 System V"
#endif

#define ABI_SENTINEL(pos) ((uintptr_t)ABI_SENTINEL_LO + 0x100u * (pos))

/* ---- Ops tables and traps ------------------------------------------------ */

#define ABI_OPS_TABLE(tag) static struct tag tbl_##tag;
#include "tests/abi/abi_manifest.inc"
#undef ABI_OPS_TABLE

static unsigned trap_seq;
static int trap_ret_override = -1;

/* What a trap returns: 0x7000 + its sequence number, unless a scenario
 * asked for a specific value for the next one. */
static uint64_t trap_ret(void)
{
	trap_seq++;
	if (trap_ret_override >= 0) {
		uint64_t v = (uint64_t)trap_ret_override;

		trap_ret_override = -1;
		return v;
	}
	return 0x7000u + trap_seq;
}

struct rec {
	char     line[1024];
	size_t   len;
	int      nargs;
	uint64_t args[16];
	int      is_ptr[16];
};

static void rec_add(struct rec *r, const char *s)
{
	size_t n = strlen(s);

	if (r->len + n + 1 < sizeof(r->line)) {
		memcpy(r->line + r->len, s, n + 1);
		r->len += n;
	}
}

static const char *fmt_ptr(const void *p, char *buf);

static void rec_begin(struct rec *r, const char *slot, size_t offset)
{
	char head[160];

	r->len = 0;
	r->line[0] = '\0';
	r->nargs = 0;
	snprintf(head, sizeof(head), "  slot %s @%zu(", slot, offset);
	rec_add(r, head);
}

static void rec_arg(struct rec *r, uint64_t v, int is_ptr)
{
	char buf[64];

	if (r->nargs)
		rec_add(r, ", ");
	if (r->nargs < 16) {
		r->args[r->nargs] = v;
		r->is_ptr[r->nargs] = is_ptr;
	}
	r->nargs++;
	if (is_ptr) {
		rec_add(r, fmt_ptr((const void *)(uintptr_t)v, buf));
	} else {
		snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
		rec_add(r, buf);
	}
}

static void slot_hook(const char *table, const char *slot, struct rec *r);

#define ABI_REC_P(a) rec_arg(&r, (uint64_t)(uintptr_t)(a), 1);
#define ABI_REC_I(a) rec_arg(&r, (uint64_t)(a), 0);
#define ABI_REC_NONE

#define ABI_TRAP_RETURN_I(rt) return (rt)trap_ret();
#define ABI_TRAP_RETURN_B(rt) trap_ret(); return 1;
#define ABI_TRAP_RETURN_V(rt) trap_ret(); return;
#define ABI_TRAP_RETURN_P(rt) \
	return (rt)(uintptr_t)(ABI_SENTINEL_LO + 0x700000u + trap_ret());

#define ABI_OPS_SLOT(tag, slot, rk, rt, params, recs)                       \
	static rt trap_##tag##_##slot params                                \
	{                                                                   \
		struct rec r;                                               \
		rec_begin(&r, #tag "." #slot, offsetof(struct tag, slot));  \
		recs                                                        \
		rec_add(&r, ")");                                           \
		abi_logf("%s", r.line);                                     \
		slot_hook(#tag, #slot, &r);                                 \
		ABI_TRAP_RETURN_##rk(rt)                                    \
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/abi/abi_manifest.inc"
#pragma GCC diagnostic pop
#undef ABI_OPS_SLOT

static void fill_tables(void)
{
#define ABI_OPS_TABLE(tag)                                                  \
	memset(&tbl_##tag, 0, sizeof(tbl_##tag));                           \
	tbl_##tag.size = sizeof(tbl_##tag);
#define ABI_OPS_SLOT(tag, slot, rk, rt, params, recs)                       \
	{                                                                   \
		void (*fn)(void) = (void (*)(void))trap_##tag##_##slot;     \
		memcpy((char *)&tbl_##tag + offsetof(struct tag, slot), &fn, \
		       sizeof(fn));                                         \
	}
#include "tests/abi/abi_manifest.inc"
#undef ABI_OPS_TABLE
#undef ABI_OPS_SLOT
}

/* ---- Fake objects -------------------------------------------------------- */

static struct {
	struct fid_fabric  fabric[2];
	struct fid_domain  domain[2];
	struct fid_ep      ep[2];
	struct fid_pep     pep[2];
	struct fid_av      av[2];
	struct fid_av_set  av_set[2];
	struct fid_mr      mr[2];
	struct fid_eq      eq[2];
	struct fid_cq      cq[2];
	struct fid_cntr    cntr[2];
	struct fid_wait    wait[2];
	struct fid_poll    poll[2];
	struct fid_mc      mc[2];
	struct fid_logging logging[2];
} fx;

#define ABI_FAKE(kind, i) (&fx.kind[i])
#define ABI_FAKE_FID      (&fx.ep[0].fid)

#define FAKE(kind) { #kind, fx.kind, sizeof(fx.kind[0]), 2 }
static const struct {
	const char *name;
	const void *base;
	size_t      size;
	size_t      count;
} fakes[] = {
	FAKE(fabric), FAKE(domain), FAKE(ep), FAKE(pep), FAKE(av),
	FAKE(av_set), FAKE(mr), FAKE(eq), FAKE(cq), FAKE(cntr), FAKE(wait),
	FAKE(poll), FAKE(mc), FAKE(logging),
};

static const char *fmt_ptr(const void *p, char *buf)
{
	uintptr_t v = (uintptr_t)p;

	if (!p) {
		snprintf(buf, 64, "NULL");
		return buf;
	}
	if (v >= ABI_SENTINEL_LO && v < ABI_SENTINEL_HI) {
		snprintf(buf, 64, "S:%#lx", (unsigned long)v);
		return buf;
	}
	for (size_t i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++) {
		uintptr_t base = (uintptr_t)fakes[i].base;

		if (v >= base && v < base + fakes[i].size * fakes[i].count) {
			size_t off = v - base;

			snprintf(buf, 64, "%s[%zu]+%zu", fakes[i].name,
				 off / fakes[i].size, off % fakes[i].size);
			return buf;
		}
	}
	snprintf(buf, 64, "LOCAL");
	return buf;
}

static int is_local(const void *p)
{
	char buf[64];

	return strcmp(fmt_ptr(p, buf), "LOCAL") == 0;
}

static void init_fakes(void)
{
	memset(&fx, 0, sizeof(fx));
	fill_tables();
	for (int i = 0; i < 2; i++) {
		fx.fabric[i].fid.fclass = FI_CLASS_FABRIC;
		fx.fabric[i].fid.ops = &tbl_fi_ops;
		fx.fabric[i].ops = &tbl_fi_ops_fabric;
		fx.fabric[i].api_version = FI_VERSION(1, 17);

		fx.domain[i].fid.fclass = FI_CLASS_DOMAIN;
		fx.domain[i].fid.ops = &tbl_fi_ops;
		fx.domain[i].ops = &tbl_fi_ops_domain;
		fx.domain[i].mr = &tbl_fi_ops_mr;

		fx.ep[i].fid.fclass = FI_CLASS_EP;
		fx.ep[i].fid.ops = &tbl_fi_ops;
		fx.ep[i].ops = &tbl_fi_ops_ep;
		fx.ep[i].cm = &tbl_fi_ops_cm;
		fx.ep[i].msg = &tbl_fi_ops_msg;
		fx.ep[i].rma = &tbl_fi_ops_rma;
		fx.ep[i].tagged = &tbl_fi_ops_tagged;
		fx.ep[i].atomic = &tbl_fi_ops_atomic;
		fx.ep[i].collective = &tbl_fi_ops_collective;

		fx.pep[i].fid.fclass = FI_CLASS_PEP;
		fx.pep[i].fid.ops = &tbl_fi_ops;
		fx.pep[i].ops = &tbl_fi_ops_ep;
		fx.pep[i].cm = &tbl_fi_ops_cm;

		fx.av[i].fid.fclass = FI_CLASS_AV;
		fx.av[i].fid.ops = &tbl_fi_ops;
		fx.av[i].ops = &tbl_fi_ops_av;

		fx.av_set[i].fid.fclass = FI_CLASS_AV_SET;
		fx.av_set[i].fid.ops = &tbl_fi_ops;
		fx.av_set[i].ops = &tbl_fi_ops_av_set;

		fx.mr[i].fid.fclass = FI_CLASS_MR;
		fx.mr[i].fid.ops = &tbl_fi_ops;
		fx.mr[i].mem_desc = (void *)ABI_SENTINEL(0x600 + i);
		fx.mr[i].key = 0xC0FFEE0000000000ULL + (uint64_t)i;

		fx.eq[i].fid.fclass = FI_CLASS_EQ;
		fx.eq[i].fid.ops = &tbl_fi_ops;
		fx.eq[i].ops = &tbl_fi_ops_eq;

		fx.cq[i].fid.fclass = FI_CLASS_CQ;
		fx.cq[i].fid.ops = &tbl_fi_ops;
		fx.cq[i].ops = &tbl_fi_ops_cq;

		fx.cntr[i].fid.fclass = FI_CLASS_CNTR;
		fx.cntr[i].fid.ops = &tbl_fi_ops;
		fx.cntr[i].ops = &tbl_fi_ops_cntr;

		fx.wait[i].fid.fclass = FI_CLASS_WAIT;
		fx.wait[i].fid.ops = &tbl_fi_ops;
		fx.wait[i].ops = &tbl_fi_ops_wait;

		fx.poll[i].fid.fclass = FI_CLASS_POLL;
		fx.poll[i].fid.ops = &tbl_fi_ops;
		fx.poll[i].ops = &tbl_fi_ops_poll;

		fx.mc[i].fid.fclass = FI_CLASS_MC;
		fx.mc[i].fid.ops = &tbl_fi_ops;
		fx.mc[i].fi_addr = 0x3C00000000000000ULL + (uint64_t)i;

		fx.logging[i].fid.ops = &tbl_fi_ops;
		fx.logging[i].ops = &tbl_fi_ops_log;
	}
	/* fi_import hands this to fi_import_fid and fi_close. */
	abi_open_result = &fx.ep[1].fid;
	abi_fmt_ptr = fmt_ptr;
	abi_log_enabled_result = 1;
	abi_open_ret = 0;
	trap_ret_override = -1;
}

/* ---- Decoding pointers to a wrapper's locals ----------------------------- */

static void log_u64(const char *what, uint64_t v)
{
	abi_logf("    %s = %#llx", what, (unsigned long long)v);
}

static void log_ptr(const char *what, const void *p)
{
	char buf[64];

	abi_logf("    %s = %s", what, fmt_ptr(p, buf));
}

/* fi_control's argument, by command, when it points into the caller. */
static void decode_control(int command, void *arg)
{
	switch (command) {
	case FI_ALIAS: {
		struct fi_alias *a = arg;

		log_ptr("fi_alias.fid", a->fid);
		log_u64("fi_alias.flags", a->flags);
		/* Play the provider: hand back an alias (fi_ep_alias turns it
		 * into an endpoint on success). */
		if (is_local(a->fid))
			*a->fid = &fx.ep[1].fid;
		break;
	}
	case FI_GET_VAL:
	case FI_SET_VAL: {
		struct fi_fid_var *v = arg;

		log_u64("fi_fid_var.name", (uint64_t)(int64_t)v->name);
		log_ptr("fi_fid_var.val", v->val);
		break;
	}
	case FI_GET_RAW_MR: {
		struct fi_mr_raw_attr *a = arg;

		log_u64("fi_mr_raw_attr.flags", a->flags);
		log_ptr("fi_mr_raw_attr.base_addr", a->base_addr);
		log_ptr("fi_mr_raw_attr.raw_key", a->raw_key);
		log_ptr("fi_mr_raw_attr.key_size", a->key_size);
		break;
	}
	case FI_MAP_RAW_MR: {
		struct fi_mr_map_raw *m = arg;

		log_u64("fi_mr_map_raw.flags", m->flags);
		log_u64("fi_mr_map_raw.base_addr", m->base_addr);
		log_ptr("fi_mr_map_raw.raw_key", m->raw_key);
		log_u64("fi_mr_map_raw.key_size", m->key_size);
		log_ptr("fi_mr_map_raw.key", m->key);
		break;
	}
	case FI_UNMAP_KEY:
		log_u64("*(uint64_t *)", *(uint64_t *)arg);
		break;
	case FI_REFRESH: {
		struct fi_mr_modify *m = arg;

		log_u64("fi_mr_modify.flags", m->flags);
		log_ptr("fi_mr_modify.attr.mr_iov", m->attr.mr_iov);
		log_u64("fi_mr_modify.attr.iov_count", m->attr.iov_count);
		/* The rest must have been zeroed. */
		log_u64("fi_mr_modify.attr.access", m->attr.access);
		log_u64("fi_mr_modify.attr.offset", m->attr.offset);
		log_u64("fi_mr_modify.attr.requested_key",
			m->attr.requested_key);
		log_ptr("fi_mr_modify.attr.context", m->attr.context);
		log_u64("fi_mr_modify.attr.auth_key_size",
			m->attr.auth_key_size);
		log_ptr("fi_mr_modify.attr.auth_key", m->attr.auth_key);
		log_u64("fi_mr_modify.attr.iface", (uint64_t)m->attr.iface);
		log_u64("fi_mr_modify.attr.device", m->attr.device.reserved);
		break;
	}
	case FI_EXPORT_FID: {
		struct fi_fid_export *e = arg;

		log_ptr("fi_fid_export.fid", e->fid);
		log_u64("fi_fid_export.flags", e->flags);
		log_ptr("fi_fid_export.context", e->context);
		break;
	}
	default:
		abi_logf("    (no decoder for command %d)", command);
		break;
	}
}

static void slot_hook(const char *table, const char *slot, struct rec *r)
{
	if (!strcmp(table, "fi_ops") && !strcmp(slot, "control") &&
	    r->nargs >= 3) {
		void *arg = (void *)(uintptr_t)r->args[2];

		if (arg && is_local(arg))
			decode_control((int)r->args[1], arg);
	}
	if (!strcmp(table, "fi_ops_cm") && !strcmp(slot, "join") &&
	    r->nargs >= 3) {
		void *addr = (void *)(uintptr_t)r->args[1];

		if (addr && is_local(addr) && (r->args[2] & FI_COLLECTIVE)) {
			struct fi_collective_addr *a = addr;

			log_ptr("fi_collective_addr.set", a->set);
			log_u64("fi_collective_addr.coll_addr", a->coll_addr);
		}
	}
}

/* ---- Calling the wrappers ------------------------------------------------ */

static void log_call(const char *name)
{
	abi_logf("call %s", name);
}

static void log_ret_i(uint64_t v)
{
	abi_logf("  = %#llx", (unsigned long long)v);
}

static void log_ret_p(const void *p)
{
	char buf[64];

	abi_logf("  = %s", fmt_ptr(p, buf));
}

#define ABI_CALL_RET_I(e) log_ret_i((uint64_t)(e))
#define ABI_CALL_RET_B(e) log_ret_i((uint64_t)(e))
#define ABI_CALL_RET_P(e) log_ret_p((const void *)(e))
#define ABI_CALL_RET_V(e) ((e), abi_logf("  = (void)"))

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void run_every_inline(void)
{
	abi_logf("# every inline function, with distinct arguments");
#define ABI_INLINE_CALL(name, rk, args) \
	log_call(#name);                \
	ABI_CALL_RET_##rk(name args);
#include "tests/abi/abi_manifest.inc"
#undef ABI_INLINE_CALL

	abi_logf("# fi_import_log: what it set in the caller's fid_logging");
	log_u64("logging[0].fid.fclass", fx.logging[0].fid.fclass);
	log_u64("logging[0].ops->size", fx.logging[0].ops->size);
}

/* The calls whose wrappers fall back to fi_xxx when flags == 0. */
static void run_flag_fallbacks(void)
{
	abi_logf("# flags == 0 takes the original call");
	log_call("fi_domain2 flags=0");
	log_ret_i((uint64_t)fi_domain2(&fx.fabric[0], (struct fi_info *)
				       ABI_SENTINEL(1), (struct fid_domain **)
				       ABI_SENTINEL(2), 0,
				       (void *)ABI_SENTINEL(4)));
	log_call("fi_endpoint2 flags=0");
	log_ret_i((uint64_t)fi_endpoint2(&fx.domain[0], (struct fi_info *)
					 ABI_SENTINEL(1), (struct fid_ep **)
					 ABI_SENTINEL(2), 0,
					 (void *)ABI_SENTINEL(4)));
	log_call("fi_barrier2 flags=0");
	log_ret_i((uint64_t)fi_barrier2(&fx.ep[0], 0x42, 0,
					(void *)ABI_SENTINEL(3)));
}

/* For one FI_CHECK_OP-guarded wrapper: the table's size just below and just
 * above the slot, only the size field, a NULL slot, and no table at all. The
 * object's table pointer is swapped for a local copy and put back. */
#define CHECK_OP_CASES(label, tblptr, type, slot, call)                     \
	do {                                                                \
		type *saved_ = (tblptr);                                    \
		type copy_ = *saved_;                                       \
		size_t sizes_[] = { offsetof(type, slot),                   \
				    offsetof(type, slot) + sizeof(void *),  \
				    sizeof(size_t), sizeof(type) };         \
		(tblptr) = &copy_;                                          \
		for (size_t k_ = 0; k_ < 4; k_++) {                         \
			copy_ = *saved_;                                    \
			copy_.size = sizes_[k_];                            \
			abi_logf("call %s, table size %s", label,           \
				 k_ == 0 ? "offsetof(slot)" :               \
				 k_ == 1 ? "offsetof(slot)+8" :             \
				 k_ == 2 ? "8" : "full");                   \
			log_ret_i((uint64_t)(call));                        \
		}                                                           \
		copy_ = *saved_;                                            \
		copy_.slot = NULL;                                          \
		abi_logf("call %s, slot NULL", label);                      \
		log_ret_i((uint64_t)(call));                                \
		(tblptr) = NULL;                                            \
		abi_logf("call %s, table NULL", label);                     \
		log_ret_i((uint64_t)(call));                                \
		(tblptr) = saved_;                                          \
	} while (0)

static void run_check_op_fallbacks(void)
{
	struct fid_mc *mc = NULL;
	/* FI_COLLECTIVE (bit 6) clear, so fi_join_collective must add it. */
	const uint64_t flags = 0xA500000000000A00ULL;

	abi_logf("# FI_CHECK_OP fallbacks (-FI_ENOSYS = %lld)",
		 (long long)-FI_ENOSYS);
	CHECK_OP_CASES("fi_set_ops", fx.ep[0].fid.ops, struct fi_ops, ops_set,
		       fi_set_ops(&fx.ep[0].fid, (const char *)ABI_SENTINEL(1),
				  flags, (void *)ABI_SENTINEL(3),
				  (void *)ABI_SENTINEL(4)));
	CHECK_OP_CASES("fi_domain2", fx.fabric[0].ops, struct fi_ops_fabric,
		       domain2,
		       fi_domain2(&fx.fabric[0],
				  (struct fi_info *)ABI_SENTINEL(1),
				  (struct fid_domain **)ABI_SENTINEL(2), flags,
				  (void *)ABI_SENTINEL(4)));
	CHECK_OP_CASES("fi_endpoint2", fx.domain[0].ops, struct fi_ops_domain,
		       endpoint2,
		       fi_endpoint2(&fx.domain[0],
				    (struct fi_info *)ABI_SENTINEL(1),
				    (struct fid_ep **)ABI_SENTINEL(2), flags,
				    (void *)ABI_SENTINEL(4)));
	CHECK_OP_CASES("fi_query_atomic", fx.domain[0].ops,
		       struct fi_ops_domain, query_atomic,
		       fi_query_atomic(&fx.domain[0], FI_UINT64, FI_SUM,
				       (struct fi_atomic_attr *)ABI_SENTINEL(3),
				       flags));
	CHECK_OP_CASES("fi_query_collective", fx.domain[0].ops,
		       struct fi_ops_domain, query_collective,
		       fi_query_collective(&fx.domain[0], FI_ALLREDUCE,
					   (struct fi_collective_attr *)
					   ABI_SENTINEL(2), flags));
	CHECK_OP_CASES("fi_join", fx.ep[0].cm, struct fi_ops_cm, join,
		       fi_join(&fx.ep[0], (const void *)ABI_SENTINEL(1), flags,
			       &mc, (void *)ABI_SENTINEL(4)));
	CHECK_OP_CASES("fi_join_collective", fx.ep[0].cm, struct fi_ops_cm,
		       join,
		       fi_join_collective(&fx.ep[0], 0x77, &fx.av_set[1],
					  flags, &mc,
					  (void *)ABI_SENTINEL(5)));
	CHECK_OP_CASES("fi_cntr_adderr", fx.cntr[0].ops, struct fi_ops_cntr,
		       adderr, fi_cntr_adderr(&fx.cntr[0], 5));
	CHECK_OP_CASES("fi_cntr_seterr", fx.cntr[0].ops, struct fi_ops_cntr,
		       seterr, fi_cntr_seterr(&fx.cntr[0], 6));
	CHECK_OP_CASES("fi_av_set", fx.av[0].ops, struct fi_ops_av, av_set,
		       fi_av_set(&fx.av[0],
				 (struct fi_av_set_attr *)ABI_SENTINEL(1),
				 (struct fid_av_set **)ABI_SENTINEL(2),
				 (void *)ABI_SENTINEL(3)));
	CHECK_OP_CASES("fi_barrier2", fx.ep[0].collective,
		       struct fi_ops_collective, barrier2,
		       fi_barrier2(&fx.ep[0], 0x42, flags,
				   (void *)ABI_SENTINEL(3)));
}

static void run_special_paths(void)
{
	struct fid_ep *alias = NULL;
	int ret;

	abi_logf("# fi_ep_alias success: the alias fid becomes an endpoint");
	trap_ret_override = 0;
	log_call("fi_ep_alias (provider returns 0)");
	ret = fi_ep_alias(&fx.ep[0], &alias, 0x11);
	log_ret_i((uint64_t)(int64_t)ret);
	log_ptr("*alias_ep", alias);

	abi_logf("# pure helpers at edge values");
	log_call("fi_tc_dscp_set(0x3f)");
	log_ret_i(fi_tc_dscp_set(0x3f));
	log_call("fi_tc_dscp_get(FI_TC_DSCP | 0x2e)");
	log_ret_i(fi_tc_dscp_get(FI_TC_DSCP | 0x2e));
	log_call("fi_tc_dscp_get(FI_TC_BULK_DATA)");
	log_ret_i(fi_tc_dscp_get(FI_TC_BULK_DATA));
	for (int bits = 1; bits <= 16; bits += 5) {
		abi_logf("call fi_rx_addr(0x1234, 3, %d)", bits);
		log_ret_i(fi_rx_addr(0x1234, 3, bits));
	}
	log_call("fi_rx_addr(FI_ADDR_NOTAVAIL >> 8, 0, 8)");
	log_ret_i(fi_rx_addr(FI_ADDR_NOTAVAIL >> 8, 0, 8));
	log_call("fi_mr_desc(mr[1]) / fi_mr_key(mr[1])");
	log_ret_p(fi_mr_desc(&fx.mr[1]));
	log_ret_i(fi_mr_key(&fx.mr[1]));
	log_call("fi_mc_addr(mc[1])");
	log_ret_i(fi_mc_addr(&fx.mc[1]));
	abi_logf("# fi_import when fi_open fails: no import, no close");
	abi_open_ret = -FI_ENOENT;
	log_call("fi_import (fi_open fails)");
	log_ret_i((uint64_t)(int64_t)fi_import(FI_VERSION(1, 17),
					      (const char *)ABI_SENTINEL(1),
					      NULL, 0, 0x5,
					      (struct fid *)ABI_SENTINEL(5),
					      (void *)ABI_SENTINEL(6)));
	abi_open_ret = 0;
}

/* fi_log.h's macros expand in the caller: they decide which of
 * fi_log_enabled / fi_log_ready / fi_log to call, pass __func__ and
 * __LINE__, and keep errno. */
static void run_log_macros(void)
{
	const struct fi_provider *prov =
		(const struct fi_provider *)ABI_SENTINEL(0x50);

	abi_logf("# logging macros (fi_log.h)");
	abi_log_enabled_result = 1;
	errno = 1234;
	FI_LOG(prov, FI_LOG_INFO, FI_LOG_CQ, "plain %d", 1);
	abi_logf("  errno after FI_LOG = %d", errno);
	FI_WARN(prov, FI_LOG_AV, "warn %s", "x");
	FI_TRACE(prov, FI_LOG_EP_DATA, "trace %d", 3);
	FI_INFO(prov, FI_LOG_MR, "info %d", 4);
	FI_DBG(prov, FI_LOG_CORE, "debug %d", 5);
	FI_DBG_TRACE(prov, FI_LOG_CORE, "debug trace %d", 6);
	for (int i = 0; i < 2; i++)
		FI_WARN_ONCE(prov, FI_LOG_FABRIC, "once %d", i);
	FI_LOG_SPARSE(prov, FI_LOG_WARN, FI_LOG_EQ, "sparse %d", 7);
	FI_WARN_SPARSE(prov, FI_LOG_CNTR, "warn sparse %d", 8);
	abi_logf("  errno after all = %d", errno);
	abi_log_enabled_result = 0;
	FI_LOG(prov, FI_LOG_WARN, FI_LOG_DOMAIN, "disabled %d", 9);
	FI_WARN(prov, FI_LOG_DOMAIN, "disabled %d", 10);
	FI_LOG_SPARSE(prov, FI_LOG_WARN, FI_LOG_EQ, "disabled sparse %d", 11);
	abi_log_enabled_result = 1;
}

#pragma GCC diagnostic pop

char *ABI_CAT(abi_dispatch_log_, ABI_SIDE)(void)
{
	abi_log_begin();
	trap_seq = 0;
	init_fakes();
	run_every_inline();
	init_fakes();
	run_flag_fallbacks();
	init_fakes();
	run_check_op_fallbacks();
	init_fakes();
	run_special_paths();
	init_fakes();
	run_log_macros();
	abi_fmt_ptr = NULL;
	return abi_log_end();
}

int ABI_CAT(abi_dispatch_fabsim_headers_, ABI_SIDE)(void)
{
#ifdef FABSIM_RDMA_HEADERS
	return 1;
#else
	return 0;
#endif
}
