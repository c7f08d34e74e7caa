/* SPDX-License-Identifier: BSD-2-Clause
 * fi_strerror(3): the one place an error code becomes text. */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

static const char *const fabric_errors[] = {
	[FI_EOTHER - FI_ERRNO_OFFSET] = "Unspecified error",
	[FI_ETOOSMALL - FI_ERRNO_OFFSET] = "Provided buffer is too small",
	[FI_EOPBADSTATE - FI_ERRNO_OFFSET] =
		"Operation not permitted in current state",
	[FI_EAVAIL - FI_ERRNO_OFFSET] = "Error available",
	[FI_EBADFLAGS - FI_ERRNO_OFFSET] = "Flags not supported",
	[FI_ENOEQ - FI_ERRNO_OFFSET] = "Missing or unavailable event queue",
	[FI_EDOMAIN - FI_ERRNO_OFFSET] = "Invalid resource domain",
	[FI_ENOCQ - FI_ERRNO_OFFSET] =
		"Missing or unavailable completion queue",
	[FI_ECRC - FI_ERRNO_OFFSET] = "CRC error",
	[FI_ETRUNC - FI_ERRNO_OFFSET] = "Truncation error",
	[FI_ENOKEY - FI_ERRNO_OFFSET] = "Required key not available",
	[FI_ENOAV - FI_ERRNO_OFFSET] = "Missing or unavailable address vector",
	[FI_EOVERRUN - FI_ERRNO_OFFSET] = "Queue has been overrun",
	[FI_ENORX - FI_ERRNO_OFFSET] =
		"Receiver not ready, no receive buffers available",
};

/* Accepts a code with either sign, as callers print -ret or ret alike. */
const char *fi_strerror(int errnum)
{
	unsigned int code = errnum < 0 ? 0u - (unsigned int)errnum
				       : (unsigned int)errnum;

	if (code < FI_ERRNO_OFFSET)
		return strerror((int)code);
	if (code < FI_ERRNO_MAX)
		return fabric_errors[code - FI_ERRNO_OFFSET];
	return fabric_errors[FI_EOTHER - FI_ERRNO_OFFSET];
}
