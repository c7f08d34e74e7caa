/* SPDX-License-Identifier: BSD-2-Clause
 * The file descriptor behind FI_WAIT_FD, shared by CQs, EQs and counters:
 * an eventfd that is readable while the object has something to read, so
 * that a program may poll(2) it after fi_trywait (fi_control FI_GETWAIT). */
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sim.h"

int sim_waitfd_open(enum fi_wait_obj wait_obj, int *fd)
{
	*fd = -1;
	if (wait_obj != FI_WAIT_FD)
		return 0;
	*fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return *fd < 0 ? -FI_ENOMEM : 0;
}

void sim_waitfd_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

void sim_waitfd_signal(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* Saturated: readable already. */
	}
}

void sim_waitfd_drain(int fd)
{
	uint64_t value;

	if (fd >= 0 && read(fd, &value, sizeof(value)) < 0) {
		/* Not readable: drained already (it does not block). */
	}
}

int sim_waitfd_control(int fd, enum fi_wait_obj wait_obj, int command,
		       void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (fd < 0)
			return -FI_ENODATA;
		*(int *)arg = fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}
