// Known deviations of the reference providers (Debian's libfabric 1.17) from
// the man pages. Each entry was observed while proving the suite against
// that provider; the test that depends on it skips there, printing the
// reason. The fabsim build never consults this table: sim must conform.
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
	{nullptr, nullptr, nullptr},
};

}  // namespace

const char* Deviation(const char* id)
{
	if (!ReferenceBuild())
		return nullptr;
	for (const Known& k : kKnown)
		if (k.provider && Provider() == k.provider &&
		    strcmp(k.id, id) == 0)
			return k.why;
	return nullptr;
}

}  // namespace conf
