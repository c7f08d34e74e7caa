/* SPDX-License-Identifier: BSD-2-Clause
 * The call log shared by both dispatch builds, and stand-ins for the few
 * libfabric functions that inline wrappers and logging macros call
 * (fi_dupinfo, fi_open, fi_param_get, fi_log_enabled, fi_log_ready, fi_log).
 * The stand-ins record their arguments like the ops-table traps do. No
 * libfabric header is included: both builds call into this file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/abi/abi_dispatch.h"

const char *(*abi_fmt_ptr)(const void *p, char *buf);
void *abi_open_result;
int abi_open_ret;
int abi_log_enabled_result = 1;

static char *log_buf;
static size_t log_len, log_cap;

void abi_log_begin(void)
{
	free(log_buf);
	log_cap = 1 << 16;
	log_buf = malloc(log_cap);
	log_len = 0;
	if (log_buf)
		log_buf[0] = '\0';
}

void abi_logf(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!log_buf)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(log_buf + log_len, log_cap - log_len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n + 2 < log_cap - log_len)
			break;
		char *bigger = realloc(log_buf, log_cap * 2);
		if (!bigger)
			return;
		log_buf = bigger;
		log_cap *= 2;
	}
	log_len += (size_t)n;
	log_buf[log_len++] = '\n';
	log_buf[log_len] = '\0';
}

char *abi_log_end(void)
{
	char *out = log_buf;

	log_buf = NULL;
	log_len = log_cap = 0;
	return out;
}

static const char *ptr(const void *p, char *buf)
{
	if (abi_fmt_ptr)
		return abi_fmt_ptr(p, buf);
	snprintf(buf, 64, "%p", p);
	return buf;
}

/* A string argument: its text unless it is a test value or NULL. */
static const char *str(const char *s, char *buf)
{
	uintptr_t v = (uintptr_t)s;

	if (!s || (v >= ABI_SENTINEL_LO && v < ABI_SENTINEL_HI))
		return ptr(s, buf);
	snprintf(buf, 64, "\"%s\"", s);
	return buf;
}

/* ---- Stand-ins -------------------------------------------------------- */

void *fi_dupinfo(const void *info)
{
	char b[64];

	abi_logf("  extern fi_dupinfo(%s)", ptr(info, b));
	return (void *)(uintptr_t)(ABI_SENTINEL_LO + 0x990000u);
}

int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
	    uint64_t flags, void **fid, void *context)
{
	char b1[64], b2[64], b3[64], b4[64];

	abi_logf("  extern fi_open(%#x, %s, %s, %#zx, %#llx, %s, %s)",
		 version, str(name, b1), ptr(attr, b2), attr_len,
		 (unsigned long long)flags, ptr(fid, b3), ptr(context, b4));
	uintptr_t v = (uintptr_t)fid;
	if (abi_open_ret == 0 && fid &&
	    !(v >= ABI_SENTINEL_LO && v < ABI_SENTINEL_HI))
		*fid = abi_open_result;
	return abi_open_ret;
}

int fi_param_get(void *provider, const char *param_name, void *value)
{
	char b1[64], b2[64], b3[64];

	abi_logf("  extern fi_param_get(%s, %s, %s)", ptr(provider, b1),
		 str(param_name, b2), ptr(value, b3));
	return -61;
}

int fi_log_enabled(const void *prov, int level, int subsys)
{
	char b[64];

	abi_logf("  extern fi_log_enabled(%s, %d, %d) = %d", ptr(prov, b),
		 level, subsys, abi_log_enabled_result);
	return abi_log_enabled_result;
}

int fi_log_ready(const void *prov, int level, int subsys, uint64_t *showtime)
{
	char b1[64], b2[64];

	abi_logf("  extern fi_log_ready(%s, %d, %d, %s) = %d", ptr(prov, b1),
		 level, subsys, ptr(showtime, b2), abi_log_enabled_result);
	return abi_log_enabled_result;
}

void fi_log(const void *prov, int level, int subsys, const char *func,
	    int line, const char *fmt, ...)
{
	char b[64], msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	abi_logf("  extern fi_log(%s, %d, %d, \"%s\", %d, \"%s\")",
		 ptr(prov, b), level, subsys, func, line, msg);
	/* The logging macros must hide this from the caller. */
	errno = 4242;
}
