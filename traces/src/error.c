/* SPDX-License-Identifier: BSD-2-Clause */
#include "traces/tr_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tr_error_set(tr_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int tr_error_prefix(tr_error *err, const char *fmt, ...)
{
	char out[TR_ERROR_MSG_MAX];
	size_t pos, n;
	va_list ap;

	if (!err)
		return 0;
	va_start(ap, fmt);
	vsnprintf(out, sizeof(out), fmt, ap);
	va_end(ap);
	/* Keep as much of both as fits: the prefix says where, the old message what. */
	pos = strlen(out);
	if (pos + 2 < sizeof(out)) {
		out[pos++] = ':';
		out[pos++] = ' ';
	}
	n = strnlen(err->msg, sizeof(out) - 1 - pos);
	memcpy(out + pos, err->msg, n);
	out[pos + n] = '\0';
	memcpy(err->msg, out, pos + n + 1);
	return err->code;
}

void tr_error_clear(tr_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
