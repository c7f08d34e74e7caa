/* SPDX-License-Identifier: BSD-2-Clause
 * Endpoint controls as fi_endpoint(3) defines them. */
#include <fabsim/util.h>

#include <rdma/fi_endpoint.h>

int fabsim_ep_opsflag(int command, uint64_t *flags, uint64_t *tx_op_flags,
		      uint64_t *rx_op_flags)
{
	switch (command) {
	case FI_GETOPSFLAG:
		if (!flags || !(*flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EINVAL;
		*flags = (*flags & FI_TRANSMIT) ? *tx_op_flags : *rx_op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			*tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			*rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

int fabsim_getopt_size(void *optval, size_t *optlen, size_t value)
{
	if (*optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = value;
	*optlen = sizeof(size_t);
	return 0;
}
