/* SPDX-License-Identifier: BSD-2-Clause
 * The queue behind an event queue (fi_eq(3)): events and error entries in
 * the order they arrive, read, peeked and read as errors the way fi_eq_read
 * and fi_eq_readerr define it. The err_data of the last error entry read
 * stays valid until the next one is read. Providers lock it, signal and
 * wait on it their own way. */
#ifndef FABSIM_EVENTQ_H
#define FABSIM_EVENTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fabsim_eventq_entry;

struct fabsim_eventq {
	struct fabsim_eventq_entry *head, *tail;
	struct fabsim_eventq_entry *err_reported;
};

void fabsim_eventq_init(struct fabsim_eventq *q);
/* Frees every entry, and the fi_info of FI_CONNREQ events nobody read. */
void fabsim_eventq_fini(struct fabsim_eventq *q);
bool fabsim_eventq_empty(const struct fabsim_eventq *q);
/* Drops the events and error entries about `fid` (an object being closed:
 * nobody may read of it afterwards); how many. */
size_t fabsim_eventq_drop_fid(struct fabsim_eventq *q, fid_t fid);

/* Appends an event of `len` bytes (a struct fi_eq_entry, or a struct
 * fi_eq_cm_entry and its private data). The info of a FI_CONNREQ entry
 * belongs to the queue until a reader takes it. 0 or -FI_ENOMEM. */
int fabsim_eventq_push(struct fabsim_eventq *q, uint32_t event,
		       const void *buf, size_t len);

/* Appends an error entry; `err_data` (len bytes) is kept with it and
 * err->err_data is pointed at the copy. 0 or -FI_ENOMEM. */
int fabsim_eventq_push_error(struct fabsim_eventq *q,
			     const struct fi_eq_err_entry *err,
			     const void *err_data, size_t len);

/* fi_eq_read: the bytes of the next event into buf, or -FI_EAGAIN (none),
 * -FI_EAVAIL (an error entry is next), -FI_ETOOSMALL (len cannot hold it).
 * FI_PEEK leaves it queued. */
ssize_t fabsim_eventq_read(struct fabsim_eventq *q, uint32_t *event,
			   void *buf, size_t len, uint64_t flags);

/* fi_eq_readerr: the next entry when it is an error, or -FI_EAGAIN. From
 * API 1.5 on, a reader's own err_data buffer receives a copy. */
ssize_t fabsim_eventq_readerr(struct fabsim_eventq *q,
			      struct fi_eq_err_entry *buf, uint64_t flags,
			      uint32_t api_version);

#ifdef __cplusplus
}
#endif

#endif
