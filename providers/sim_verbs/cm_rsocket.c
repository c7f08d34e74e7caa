/* SPDX-License-Identifier: BSD-2-Clause
 * The rsocket API (rdma/rsocket.h): sockets carried over RDMA connections,
 * which the face does not simulate. Its symbols are there, with rdma-core's
 * versions, because programs link them whether or not they use them
 * (rdma-core's examples poll through rpoll even without rsockets).
 *
 * rsocket() fails with ENOSYS, so no descriptor is ever an rsocket: rpoll
 * and rselect are poll and select, as they are for ordinary descriptors in
 * librdmacm, and every call that needs an rsocket fails with EBADF, as
 * librdmacm's do for a descriptor that is not one.
 */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <rdma/rsocket.h>

static int not_rsocket(void)
{
	errno = EBADF;
	return -1;
}

int rsocket(int domain, int type, int protocol)
{
	(void)domain;
	(void)type;
	(void)protocol;
	errno = ENOSYS; /* rsockets are not simulated */
	return -1;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return not_rsocket();
}

int rlisten(int socket, int backlog)
{
	return not_rsocket();
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return not_rsocket();
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return not_rsocket();
}

int rshutdown(int socket, int how)
{
	return not_rsocket();
}

int rclose(int socket)
{
	return not_rsocket();
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	return not_rsocket();
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
		  struct sockaddr *src_addr, socklen_t *addrlen)
{
	return not_rsocket();
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return not_rsocket();
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	return not_rsocket();
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	return not_rsocket();
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return not_rsocket();
}

ssize_t rread(int socket, void *buf, size_t count)
{
	return not_rsocket();
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return not_rsocket();
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return not_rsocket();
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return not_rsocket();
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return not_rsocket();
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return not_rsocket();
}

int rsetsockopt(int socket, int level, int optname, const void *optval,
		socklen_t optlen)
{
	return not_rsocket();
}

int rgetsockopt(int socket, int level, int optname, void *optval,
		socklen_t *optlen)
{
	return not_rsocket();
}

int rfcntl(int socket, int cmd, ...)
{
	return not_rsocket();
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags,
	     off_t offset)
{
	return not_rsocket();
}

int riounmap(int socket, void *buf, size_t len)
{
	return not_rsocket();
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset,
		int flags)
{
	errno = EBADF;
	return (size_t)-1;
}
