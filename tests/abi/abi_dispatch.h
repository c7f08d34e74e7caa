/* SPDX-License-Identifier: BSD-2-Clause
 * The dispatch test: every inline wrapper of libfabric's headers is called
 * against fake objects whose ops tables hold recording traps, once compiled
 * against our headers and once against Debian's. The two call logs must be
 * identical. This header is shared by both builds and the C++ test, so it
 * includes no <rdma/...> header.
 */
#ifndef ABI_DISPATCH_H
#define ABI_DISPATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs every scenario and returns the call log (malloc'd text, one event
 * per line; free it). */
char *abi_dispatch_log_ours(void);
char *abi_dispatch_log_debian(void);

/* 1 when that build saw fabsim's headers (FABSIM_RDMA_HEADERS). */
int abi_dispatch_fabsim_headers_ours(void);
int abi_dispatch_fabsim_headers_debian(void);

/* ---- Shared by both builds (abi_log.c) ---- */

/* Pointers passed as arguments are logged in a form that does not depend on
 * where each build put its objects: "NULL", "S:0x5e000100" for a test value
 * (never dereferenced), "<fake>[i]+off" for a fake object, "LOCAL" for
 * anything else (typically a wrapper's local variable). */
#define ABI_SENTINEL_LO 0x5E000000u
#define ABI_SENTINEL_HI 0x5F000000u

void abi_log_begin(void);
void abi_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *abi_log_end(void);

/* Set by the build that is running: formats a pointer as described above
 * into buf (at least 64 bytes) and returns buf. */
extern const char *(*abi_fmt_ptr)(const void *p, char *buf);
/* What the fi_open stub hands back through its fid argument, and returns. */
extern void *abi_open_result;
extern int abi_open_ret;
/* What the fi_log_enabled / fi_log_ready stubs return. */
extern int abi_log_enabled_result;

#ifdef __cplusplus
}
#endif

#endif /* ABI_DISPATCH_H */
