#include "netmodel/nm_error.h"

#include <stdarg.h>
#include <stdio.h>

int nm_error_set(nm_error *err, int code, const char *fmt, ...)
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

void nm_error_clear(nm_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
