/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_errno(3).
 *
 * Error codes: calls return 0 or a negative FI_E* value. The low codes are the
 * host's errno values (so -FI_EAGAIN == -EAGAIN); fabric-specific codes start
 * at FI_ERRNO_OFFSET.
 */
#ifndef FI_ERRNO_H
#define FI_ERRNO_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_SUCCESS        0

/* Codes shared with the C library. */
#define FI_EPERM          EPERM
#define FI_ENOENT         ENOENT
#define FI_EINTR          EINTR
#define FI_EIO            EIO
#define FI_E2BIG          E2BIG
#define FI_EBADF          EBADF
#define FI_EAGAIN         EAGAIN
#define FI_ENOMEM         ENOMEM
#define FI_EACCES         EACCES
#define FI_EFAULT         EFAULT
#define FI_EBUSY          EBUSY
#define FI_ENODEV         ENODEV
#define FI_EINVAL         EINVAL
#define FI_EMFILE         EMFILE
#define FI_ENOSPC         ENOSPC
#define FI_ENOSYS         ENOSYS
#define FI_EWOULDBLOCK    EWOULDBLOCK
#define FI_ENOMSG         ENOMSG
#define FI_ENODATA        ENODATA
#define FI_EOVERFLOW      EOVERFLOW
#define FI_EMSGSIZE       EMSGSIZE
#define FI_ENOPROTOOPT    ENOPROTOOPT
#define FI_EOPNOTSUPP     EOPNOTSUPP
#define FI_EADDRINUSE     EADDRINUSE
#define FI_EADDRNOTAVAIL  EADDRNOTAVAIL
#define FI_ENETDOWN       ENETDOWN
#define FI_ENETUNREACH    ENETUNREACH
#define FI_ECONNABORTED   ECONNABORTED
#define FI_ECONNRESET     ECONNRESET
#define FI_ENOBUFS        ENOBUFS
#define FI_EISCONN        EISCONN
#define FI_ENOTCONN       ENOTCONN
#define FI_ESHUTDOWN      ESHUTDOWN
#define FI_ETIMEDOUT      ETIMEDOUT
#define FI_ECONNREFUSED   ECONNREFUSED
#define FI_EHOSTDOWN      EHOSTDOWN
#define FI_EHOSTUNREACH   EHOSTUNREACH
#define FI_EALREADY       EALREADY
#define FI_EINPROGRESS    EINPROGRESS
#define FI_EREMOTEIO      EREMOTEIO
#define FI_ECANCELED      ECANCELED
#define FI_EKEYREJECTED   EKEYREJECTED

/* Fabric-specific codes, above every errno value. */
#define FI_ERRNO_OFFSET   256

enum {
	FI_EOTHER = FI_ERRNO_OFFSET, /* unspecified error */
	FI_ETOOSMALL,                /* caller's buffer too small */
	FI_EOPBADSTATE,              /* not allowed in the object's state */
	FI_EAVAIL,                   /* an error entry is waiting to be read */
	FI_EBADFLAGS,                /* flags not supported */
	FI_ENOEQ,                    /* no event queue bound */
	FI_EDOMAIN,                  /* wrong resource domain */
	FI_ENOCQ,                    /* no completion queue bound */
	FI_ECRC,                     /* CRC error */
	FI_ETRUNC,                   /* data truncated */
	FI_ENOKEY,                   /* required key not available */
	FI_ENOAV,                    /* no address vector bound */
	FI_EOVERRUN,                 /* queue overrun */
	FI_ENORX,                    /* receiver not ready */
	FI_ERRNO_MAX
};

const char *fi_strerror(int errnum);

#ifdef __cplusplus
}
#endif

#endif /* FI_ERRNO_H */
