// Known deviations of the reference providers (Debian's libfabric 1.17) from
// the man pages. Each entry was observed while proving the suite against
// that provider; the test that depends on it skips there, printing the
// reason. The fabsim build never consults this table: sim must conform.
#include <cstdlib>
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

struct Known {
	const char* provider;  // CONFORMANCE_PROVIDER, exactly
	const char* id;        // the test's deviation id
	const char* why;
};

const Known kKnown[] = {
	{"tcp;ofi_rxm", "msg.trunc_olen",
	 "a truncated receive completes with FI_ETRUNC but olen 0 and len 0 "
	 "(libfabric 1.17's tcp receive path does not fill olen)"},
	{"tcp;ofi_rxm", "cq.readfrom_without_source",
	 "fi_cq_readfrom on an endpoint without FI_SOURCE leaves src_addr "
	 "untouched instead of setting FI_ADDR_NOTAVAIL"},
	{"sockets", "close.fabric_busy",
	 "fi_close(fabric) with a domain still open returns 0 and frees the "
	 "fabric (the domain's later close then corrupts the heap)"},
	{"tcp;ofi_rxm", "close.fabric_busy",
	 "fi_close(fabric) with a domain still open returns 0 and frees the "
	 "fabric"},
	{"tcp;ofi_rxm", "close.unbound_endpoint",
	 "fi_close on an endpoint that was never bound crashes (SIGSEGV in "
	 "ofi_rxm's endpoint close)"},
	{"tcp;ofi_rxm", "close.domain_busy",
	 "fi_close(domain) with children open returns -FI_EBUSY but has "
	 "already released the inner tcp domain: the later close double-frees"},
	{"tcp;ofi_rxm", "close.cq_busy",
	 "fi_close(cq) while bound returns -FI_EBUSY but has already released "
	 "part of the CQ: the later close double-frees"},
	{"sockets", "cq.signal_sread_eagain",
	 "fi_cq_sread woken by fi_cq_signal returns -FI_ECANCELED instead of "
	 "-FI_EAGAIN"},
	{"sockets", "cntr.wait_timeout_sign",
	 "fi_cntr_wait returns +FI_ETIMEDOUT (110) on timeout instead of "
	 "-FI_ETIMEDOUT"},
	{"tcp;ofi_rxm", "rma.bad_key",
	 "an RMA write with a key the target never registered completes "
	 "successfully: remote keys are not checked"},
	{"sockets", "ep.enable_without_cq",
	 "fi_enable succeeds on an endpoint bound to no CQ"},
	{"sockets", "ep.enable_without_av",
	 "fi_enable succeeds on an RDM endpoint bound to no AV"},
	{"tcp;ofi_rxm", "ep.enable_without_av",
	 "fi_enable without an AV returns -FI_EOPBADSTATE, but closing that "
	 "endpoint then crashes (SIGSEGV)"},
	{"tcp;ofi_rxm", "ep.post_before_enable",
	 "fi_recv on a bound endpoint that was not enabled crashes (SIGSEGV) "
	 "instead of returning -FI_EOPBADSTATE"},
	{"tcp;ofi_rxm", "rma.bounds",
	 "RMA past the end of a region is not refused: a write succeeds and "
	 "lands beyond the region, a read fails with FI_ECANCELED"},
	{"tcp;ofi_rxm", "rma.access",
	 "region access flags are not enforced: a write into a region "
	 "registered without FI_REMOTE_WRITE succeeds; a read from one "
	 "without FI_REMOTE_READ fails with FI_ECANCELED"},
	{"tcp;ofi_rxm", "rma.remote_write_flags",
	 "the target completion of a write with remote CQ data has "
	 "FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA but not FI_RMA"},
	{"shm", "rma.bad_key",
	 "RMA with a key the target never registered succeeds: shm copies "
	 "by virtual address without checking keys"},
	{"shm", "rma.bounds",
	 "RMA past the end of a region succeeds (no bounds check)"},
	{"shm", "rma.access",
	 "region access flags are not enforced"},
	{"sockets", "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows is "
	 "accepted (returns 0), not -FI_EMSGSIZE"},
	{"shm", "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows is "
	 "accepted (returns 0), not -FI_EMSGSIZE"},
	{"tcp;ofi_rxm", "atomic.count_limit",
	 "fi_atomic with one element more than fi_atomicvalid allows returns "
	 "-FI_EINVAL, not -FI_EMSGSIZE"},
	{nullptr, nullptr, nullptr},
};

}  // namespace

const char* Deviation(const char* id)
{
	// CONFORMANCE_IGNORE_DEVIATIONS=1 runs every case anyway, to re-check
	// a deviation (expect the failure or crash it describes).
	const char* ignore = getenv("CONFORMANCE_IGNORE_DEVIATIONS");
	if (!ReferenceBuild() || (ignore && *ignore == '1'))
		return nullptr;
	for (const Known& k : kKnown)
		if (k.provider && Provider() == k.provider &&
		    strcmp(k.id, id) == 0)
			return k.why;
	return nullptr;
}

}  // namespace conf
