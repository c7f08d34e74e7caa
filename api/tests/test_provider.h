/* SPDX-License-Identifier: BSD-2-Clause
 * Two in-process providers for the core's tests, with known offers.
 *
 * "testprov" (API 1.17) offers, in this order:
 *   0  RDM  strict:  mode FI_CONTEXT, mr_mode LOCAL|VIRT_ADDR|ALLOCATED|PROV_KEY
 *   1  RDM  relaxed: no modes, no MR modes
 *   2  MSG  FI_MSG|FI_RMA, mode 0, mr_mode 0, auto progress
 *   3  DGRAM FI_MSG, address format FI_ADDR_STR, domain "test1"
 * All but 3 use FI_SOCKADDR_IN, fabric "testfab", domain "test0".
 * "oldprov" (API 1.5) offers one RDM entry in fabric "oldfab".
 */
#ifndef FABSIM_TEST_PROVIDER_H
#define FABSIM_TEST_PROVIDER_H

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESTPROV_CAPS                                                      \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |    \
	 FI_SEND | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |            \
	 FI_DIRECTED_RECV | FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT |     \
	 FI_LOCAL_COMM | FI_REMOTE_COMM)
#define TESTPROV_STRICT_MR \
	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
#define TESTPROV_TX_SIZE     256
#define TESTPROV_INJECT_SIZE 64
#define TESTPROV_MAX_MSG     (1u << 30)

/* The last node/service/flags the provider's getinfo saw. */
struct testprov_call {
	int         calls;
	const char *node;
	const char *service;
	uint64_t    flags;
};
extern struct testprov_call testprov_last_call;

/* The descriptor, for fi_param_get in tests. */
struct fi_provider *testprov_provider(void);

/* Makes testprov's getinfo fail with `err` (0 restores normal offers). */
void testprov_fail_with(int err);

#ifdef __cplusplus
}
#endif

#endif
