/* SPDX-License-Identifier: BSD-2-Clause
 * Shared receive queues: one list of posted receives that several RC
 * queue pairs of a NIC take from (nic.h). The matching itself is
 * nic_match.c's; a QP that uses an SRQ points its receive list at the
 * SRQ's. */
#include <errno.h>
#include <stdlib.h>

#include "nic_internal.h"

int nic_srq_create(struct nic *nic, struct nic_srq **out)
{
	struct nic_srq *srq = fs_mem_calloc(nic->world->arena, 1, sizeof(*srq));

	if (!srq)
		return -ENOMEM;
	srq->nic = nic;
	srq->matcher.arena = nic->world->arena;
	*out = srq;
	return 0;
}

int nic_srq_destroy(struct nic_srq *srq)
{
	if (srq->users)
		return -EBUSY;
	nic_match_release(&srq->matcher);
	fs_mem_free(srq->nic->world->arena, srq);
	return 0;
}

int nic_srq_post_recv(struct nic_srq *srq, const struct nic_recv *recv)
{
	if (recv->flags || recv->sge_count > NIC_MAX_SGE ||
	    recv->source.host != NIC_ANY_SOURCE.host)
		return -EINVAL;
	return nic_match_append(&srq->matcher, recv);
}

int nic_qp_use_srq(struct nic_qp *qp, struct nic_srq *srq)
{
	const struct nic_matcher *own = &qp->matcher;

	if (!nic_qp_connected_type(qp) || srq->nic != qp->nic || qp->srq ||
	    own->posted_msg.head || own->posted_tag.head)
		return -EINVAL;
	qp->srq = srq;
	qp->rq = &srq->matcher;
	srq->users++;
	return 0;
}
