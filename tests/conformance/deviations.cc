// Known deviations of the reference providers (Debian's libfabric 1.17) from
// the man pages. Each entry was observed while proving the suite against
// that provider; the test that depends on it skips there, printing the
// reason. The fabsim build never consults this table: sim must conform.
#include <cstdlib>
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

// Which endpoint type's runs an entry was observed in.
enum Runs { kRdm, kMsg, kBoth };

struct Known {
	const char* provider;  // CONFORMANCE_PROVIDER, exactly
	Runs runs;
	const char* id;        // the test's deviation id
	const char* why;
};

const Known kKnown[] = {
	{"tcp;ofi_rxm", kRdm, "msg.trunc_olen",
	 "a truncated receive completes with FI_ETRUNC but olen 0 and len 0 "
	 "(libfabric 1.17's tcp receive path does not fill olen)"},
	{"tcp;ofi_rxm", kRdm, "cq.readfrom_without_source",
	 "fi_cq_readfrom on an endpoint without FI_SOURCE leaves src_addr "
	 "untouched instead of setting FI_ADDR_NOTAVAIL"},
	{"sockets", kBoth, "close.fabric_busy",
	 "fi_close(fabric) with a domain still open returns 0 and frees the "
	 "fabric (the domain's later close then corrupts the heap)"},
	{"tcp;ofi_rxm", kRdm, "close.fabric_busy",
	 "fi_close(fabric) with a domain still open returns 0 and frees the "
	 "fabric"},
	{"tcp;ofi_rxm", kRdm, "close.unbound_endpoint",
	 "fi_close on an endpoint that was never bound crashes (SIGSEGV in "
	 "ofi_rxm's endpoint close)"},
	{"tcp;ofi_rxm", kRdm, "close.domain_busy",
	 "fi_close(domain) with children open returns -FI_EBUSY but has "
	 "already released the inner tcp domain: the later close double-frees"},
	{"tcp;ofi_rxm", kRdm, "close.cq_busy",
	 "fi_close(cq) while bound returns -FI_EBUSY but has already released "
	 "part of the CQ: the later close double-frees"},
	{"tcp;ofi_rxm", kRdm, "poll.set",
	 "fi_poll on a poll set with a CQ crashes (SIGSEGV)"},
	{"tcp", kMsg, "poll.set",
	 "fi_poll on a poll set with a CQ crashes (SIGSEGV)"},
	{"sockets", kBoth, "av.insertsym_order",
	 "fi_av_insertsym returns nodecnt x svccnt, but its fi_addr array "
	 "does not name the addresses in the man page's order (every service "
	 "of a node before the next node) and some entries look up as 0.0.0.0"},
	{"sockets", kBoth, "cntr.remote_atomic_reads",
	 "an atomic fetch or compare counts on the target's FI_REMOTE_WRITE "
	 "counter, where fi_endpoint(3) has FI_REMOTE_READ count them"},
	{"sockets", kBoth, "cq.error_order",
	 "an error entry is read before successes that completed earlier "
	 "(fi_cq_read returns -FI_EAVAIL while they wait behind it)"},
	{"sockets", kBoth, "cq.signal_sread_eagain",
	 "fi_cq_sread woken by fi_cq_signal returns -FI_ECANCELED instead of "
	 "-FI_EAGAIN"},
	{"tcp", kMsg, "cm.reject_data_size",
	 "fi_reject takes more private data than FI_OPT_CM_DATA_SIZE, and the "
	 "request's later fi_reject then double-frees"},
	{"sockets", kMsg, "cm.reject_data_size",
	 "fi_reject takes more private data than FI_OPT_CM_DATA_SIZE, and the "
	 "request's later fi_reject then double-frees"},
	{"sockets", kMsg, "cm.connect_once",
	 "a second fi_connect on an endpoint whose first was rejected returns "
	 "0 and sends a new request (fi_cm(3): once in its lifetime)"},
	{"sockets", kBoth, "cntr.wait_timeout_sign",
	 "fi_cntr_wait returns +FI_ETIMEDOUT (110) on timeout instead of "
	 "-FI_ETIMEDOUT"},
	{"tcp;ofi_rxm", kRdm, "rma.bad_key",
	 "an RMA write with a key the target never registered completes "
	 "successfully: remote keys are not checked"},
	{"sockets", kBoth, "ep.enable_without_cq",
	 "fi_enable succeeds on an endpoint bound to no CQ"},
	{"sockets", kRdm, "ep.enable_without_av",
	 "fi_enable succeeds on an RDM endpoint bound to no AV"},
	{"tcp;ofi_rxm", kRdm, "ep.enable_without_av",
	 "fi_enable without an AV returns -FI_EOPBADSTATE, but closing that "
	 "endpoint then crashes (SIGSEGV)"},
	{"tcp;ofi_rxm", kRdm, "ep.post_before_enable",
	 "fi_recv on a bound endpoint that was not enabled crashes (SIGSEGV) "
	 "instead of returning -FI_EOPBADSTATE"},
	{"tcp;ofi_rxm", kRdm, "rma.bounds",
	 "RMA past the end of a region is not refused: a write succeeds and "
	 "lands beyond the region, a read fails with FI_ECANCELED"},
	{"tcp;ofi_rxm", kRdm, "rma.access",
	 "region access flags are not enforced: a write into a region "
	 "registered without FI_REMOTE_WRITE succeeds; a read from one "
	 "without FI_REMOTE_READ fails with FI_ECANCELED"},
	{"tcp;ofi_rxm", kRdm, "rma.remote_write_flags",
	 "the target completion of a write with remote CQ data has "
	 "FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA but not FI_RMA"},
	{"shm", kRdm, "rma.bad_key",
	 "RMA with a key the target never registered succeeds: shm copies "
	 "by virtual address without checking keys"},
	{"shm", kRdm, "rma.bounds",
	 "RMA past the end of a region succeeds (no bounds check)"},
	{"shm", kRdm, "rma.access",
	 "region access flags are not enforced"},
	{"sockets", kBoth, "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows is "
	 "accepted (returns 0), not -FI_EMSGSIZE"},
	{"shm", kRdm, "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows is "
	 "accepted (returns 0), not -FI_EMSGSIZE"},
	{"tcp;ofi_rxm", kRdm, "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows returns "
	 "-FI_EINVAL, not -FI_EMSGSIZE"},
	// tcp's own FI_EP_MSG endpoints: mostly what tcp;ofi_rxm shows above.
	{"tcp", kMsg, "msg.trunc_olen",
	 "a truncated receive completes with FI_ETRUNC but olen 0 and len 0"},
	{"tcp", kMsg, "cq.readfrom_without_source",
	 "fi_cq_readfrom on an endpoint without FI_SOURCE leaves src_addr "
	 "untouched instead of setting FI_ADDR_NOTAVAIL"},
	{"tcp", kMsg, "close.cq_busy",
	 "fi_close(cq) while bound returns -FI_EBUSY but has already released "
	 "part of the CQ: the later close double-frees"},
	{"tcp", kMsg, "rma.bad_key",
	 "an RMA write with a key the target never registered completes "
	 "successfully (remote keys are not checked); a read fails with "
	 "FI_ECANCELED"},
	{"tcp", kMsg, "rma.bounds",
	 "RMA past the end of a region is not refused: a write succeeds and "
	 "lands beyond the region, a read fails with FI_ECANCELED"},
	{"tcp", kMsg, "rma.access",
	 "region access flags are not enforced: a write into a region "
	 "registered without FI_REMOTE_WRITE succeeds; a read from one "
	 "without FI_REMOTE_READ fails with FI_ECANCELED"},
	{"tcp", kMsg, "rma.remote_write_flags",
	 "the target completion of a write with remote CQ data has "
	 "FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA but not FI_RMA"},
	{"tcp", kMsg, "cntr.remote_rma_events",
	 "FI_RMA_EVENT is offered, but counters bound with FI_REMOTE_WRITE / "
	 "FI_REMOTE_READ never count the writes and reads that target the "
	 "endpoint"},
	{"tcp", kMsg, "ep.post_before_enable",
	 "fi_recv on a bound FI_EP_MSG endpoint that was never enabled "
	 "returns 0 instead of -FI_EOPBADSTATE"},
	{"tcp", kMsg, "close.discards_posted",
	 "receives still posted when their endpoint is closed complete with "
	 "FI_ECANCELED error entries instead of being discarded silently"},
	{"sockets", kMsg, "cm.implicit_enable",
	 "fi_connect and fi_accept on endpoints that were not enabled connect "
	 "them (FI_CONNECTED on both sides) but leave them disabled: fi_send "
	 "and fi_recv then return -FI_EOPBADSTATE"},
	{"sockets", kMsg, "close.eq_busy",
	 "fi_close(eq) while an endpoint or passive endpoint is bound to it "
	 "returns 0 and frees the EQ (the later close double-frees)"},
	{"sockets", kBoth, "wait.cq_trywait_queued",
	 "fi_trywait on a CQ opened with FI_WAIT_FD returns FI_SUCCESS while "
	 "an unread completion is queued (its descriptor readable), not "
	 "-FI_EAGAIN"},
	{"sockets", kBoth, "wait.cntr_trywait_unread",
	 "fi_trywait on a counter opened with FI_WAIT_FD returns FI_SUCCESS "
	 "after a change the application has not read (fi_cntr_add, then no "
	 "fi_cntr_read), not -FI_EAGAIN"},
	{"sockets", kBoth, "wait.eq_trywait_queued",
	 "fi_trywait on an EQ opened with FI_WAIT_FD returns FI_SUCCESS while "
	 "an event written with fi_eq_write is queued, not -FI_EAGAIN"},
	{"sockets", kBoth, "wait.trywait_endpoint",
	 "fi_trywait given an endpoint among its descriptors returns "
	 "FI_SUCCESS, not -FI_EINVAL (fi_poll(3) lists EQs, CQs, counters and "
	 "wait sets)"},
	{nullptr, kBoth, nullptr, nullptr},
};

}  // namespace

const char* Deviation(const char* id)
{
	// CONFORMANCE_IGNORE_DEVIATIONS=1 runs every case anyway, to re-check
	// a deviation (expect the failure or crash it describes).
	const char* ignore = getenv("CONFORMANCE_IGNORE_DEVIATIONS");
	if (!ReferenceBuild() || (ignore && *ignore == '1'))
		return nullptr;
	Runs mine = MsgMode() ? kMsg : kRdm;
	for (const Known& k : kKnown)
		if (k.provider && Provider() == k.provider &&
		    (k.runs == kBoth || k.runs == mine) &&
		    strcmp(k.id, id) == 0)
			return k.why;
	return nullptr;
}

}  // namespace conf
