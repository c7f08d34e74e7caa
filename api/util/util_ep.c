/* SPDX-License-Identifier: BSD-2-Clause
 * Endpoint controls as fi_endpoint(3) defines them. */
#include <fabsim/util.h>

#include <rdma/fi_endpoint.h>

/* fi_endpoint(3), fi_control: "The control argument must include
 * FI_TRANSMIT or FI_RECV (not both)". */
static uint64_t *direction(uint64_t flags, uint64_t *tx_op_flags,
			   uint64_t *rx_op_flags)
{
	switch (flags & (FI_TRANSMIT | FI_RECV)) {
	case FI_TRANSMIT: return tx_op_flags;
	case FI_RECV: return rx_op_flags;
	default: return NULL;
	}
}

int fabsim_ep_opsflag(int command, uint64_t *flags, uint64_t *tx_op_flags,
		      uint64_t *rx_op_flags)
{
	uint64_t *ops;

	switch (command) {
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		ops = flags ? direction(*flags, tx_op_flags, rx_op_flags) : NULL;
		if (!ops)
			return -FI_EINVAL;
		if (command == FI_GETOPSFLAG)
			*flags = *ops;
		else
			*ops = *flags & ~(FI_TRANSMIT | FI_RECV);
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
