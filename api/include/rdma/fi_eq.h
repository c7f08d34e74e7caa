/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_eq(3), fi_cq(3),
 * fi_cntr(3) and fi_poll(3).
 *
 * The objects that report progress: event queues (control-path events such
 * as connection requests), completion queues (data transfers), counters, and
 * the wait and poll sets that group them. Every wrapper below is called from
 * the application's own code and goes straight to the provider's ops table,
 * so the tables and entry structures keep libfabric 1.17's exact layout.
 */
#ifndef FI_EQ_H
#define FI_EQ_H

#include <poll.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Wait objects and wait sets (fi_poll(3)) ----------------------------- */

/* How a blocking read waits. fi_control(FI_GETWAIT) hands out the object:
 * an int fd, a struct fi_mutex_cond or a struct fi_wait_pollfd. */
enum fi_wait_obj {
	FI_WAIT_NONE,        /* never block on this object */
	FI_WAIT_UNSPEC,      /* only through fabric calls; provider's choice */
	FI_WAIT_SET,         /* through the wait set given in wait_set */
	FI_WAIT_FD,          /* a pollable file descriptor */
	FI_WAIT_MUTEX_COND,  /* a pthread mutex and condition variable */
	FI_WAIT_YIELD,       /* no object: yield on every wait */
	FI_WAIT_POLLFD,      /* several file descriptors, see fi_wait_pollfd */
};

struct fi_wait_attr {
	enum fi_wait_obj wait_obj;
	uint64_t         flags;
};

struct fi_ops_wait {
	size_t size;
	int (*wait)(struct fid_wait *waitset, int timeout);
};

struct fid_wait {
	struct fid          fid;
	struct fi_ops_wait *ops;
};

struct fi_mutex_cond {
	pthread_mutex_t *mutex;
	pthread_cond_t  *cond;
};

/* With FI_WAIT_POLLFD the set of descriptors may change; change_index tells
 * the application when to fetch it again. */
struct fi_wait_pollfd {
	uint64_t       change_index;
	size_t         nfds;
	struct pollfd *fd;
};

/* ---- Poll sets (fi_poll(3)) ---------------------------------------------- */

struct fi_poll_attr {
	uint64_t flags;
};

struct fi_ops_poll {
	size_t size;
	int (*poll)(struct fid_poll *pollset, void **context, int count);
	int (*poll_add)(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags);
	int (*poll_del)(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags);
};

struct fid_poll {
	struct fid          fid;
	struct fi_ops_poll *ops;
};

/* ---- Event queues (fi_eq(3)) --------------------------------------------- */

struct fi_eq_attr {
	size_t           size;
	uint64_t         flags;
	enum fi_wait_obj wait_obj;
	int              signaling_vector;  /* with FI_AFFINITY */
	struct fid_wait *wait_set;          /* with FI_WAIT_SET */
};

/* Event numbers returned through fi_eq_read's *event. */
enum {
	FI_NOTIFY,
	FI_CONNREQ,
	FI_CONNECTED,
	FI_SHUTDOWN,
	FI_MR_COMPLETE,
	FI_AV_COMPLETE,
	FI_JOIN_COMPLETE,
};

struct fi_eq_entry {
	fid_t    fid;
	void    *context;
	uint64_t data;
};

/* err_data stays valid until the next read of the queue. */
struct fi_eq_err_entry {
	fid_t    fid;
	void    *context;
	uint64_t data;
	int      err;
	int      prov_errno;
	void    *err_data;
	size_t   err_data_size;
};

/* FI_CONNREQ / FI_CONNECTED: the peer's private data follows the header, as
 * much as the caller's buffer holds. The receiver owns info (fi_freeinfo). */
struct fi_eq_cm_entry {
	fid_t           fid;
	struct fi_info *info;
	uint8_t         data[];
};

struct fi_ops_eq {
	size_t size;
	ssize_t (*read)(struct fid_eq *eq, uint32_t *event, void *buf,
			size_t len, uint64_t flags);
	ssize_t (*readerr)(struct fid_eq *eq, struct fi_eq_err_entry *buf,
			   uint64_t flags);
	ssize_t (*write)(struct fid_eq *eq, uint32_t event, const void *buf,
			 size_t len, uint64_t flags);
	ssize_t (*sread)(struct fid_eq *eq, uint32_t *event, void *buf,
			 size_t len, int timeout, uint64_t flags);
	const char *(*strerror)(struct fid_eq *eq, int prov_errno,
				const void *err_data, char *buf, size_t len);
};

struct fid_eq {
	struct fid        fid;
	struct fi_ops_eq *ops;
};

/* ---- Completion queues (fi_cq(3)) ---------------------------------------- */

enum fi_cq_format {
	FI_CQ_FORMAT_UNSPEC,
	FI_CQ_FORMAT_CONTEXT,   /* struct fi_cq_entry */
	FI_CQ_FORMAT_MSG,       /* struct fi_cq_msg_entry */
	FI_CQ_FORMAT_DATA,      /* struct fi_cq_data_entry */
	FI_CQ_FORMAT_TAGGED,    /* struct fi_cq_tagged_entry */
};

/* Each format extends the previous one, so a reader may treat a richer entry
 * as a poorer one. */
struct fi_cq_entry {
	void *op_context;
};

struct fi_cq_msg_entry {
	void    *op_context;
	uint64_t flags;
	size_t   len;
};

struct fi_cq_data_entry {
	void    *op_context;
	uint64_t flags;
	size_t   len;
	void    *buf;
	uint64_t data;     /* remote CQ data, when FI_REMOTE_CQ_DATA is set */
};

struct fi_cq_tagged_entry {
	void    *op_context;
	uint64_t flags;
	size_t   len;
	void    *buf;
	uint64_t data;
	uint64_t tag;
};

/* err_data stays valid until the next read of the queue. */
struct fi_cq_err_entry {
	void    *op_context;
	uint64_t flags;
	size_t   len;
	void    *buf;
	uint64_t data;
	uint64_t tag;
	size_t   olen;     /* bytes that did not fit (FI_ETRUNC) */
	int      err;      /* positive FI_E* value */
	int      prov_errno;
	void    *err_data;
	size_t   err_data_size;
};

/* What the cond argument of fi_cq_sread points to. */
enum fi_cq_wait_cond {
	FI_CQ_COND_NONE,
	FI_CQ_COND_THRESHOLD,   /* size_t: wake when this many are ready */
};

struct fi_cq_attr {
	size_t               size;
	uint64_t             flags;
	enum fi_cq_format    format;
	enum fi_wait_obj     wait_obj;
	int                  signaling_vector;
	enum fi_cq_wait_cond wait_cond;
	struct fid_wait     *wait_set;
};

struct fi_ops_cq {
	size_t size;
	ssize_t (*read)(struct fid_cq *cq, void *buf, size_t count);
	ssize_t (*readfrom)(struct fid_cq *cq, void *buf, size_t count,
			    fi_addr_t *src_addr);
	ssize_t (*readerr)(struct fid_cq *cq, struct fi_cq_err_entry *buf,
			   uint64_t flags);
	ssize_t (*sread)(struct fid_cq *cq, void *buf, size_t count,
			 const void *cond, int timeout);
	ssize_t (*sreadfrom)(struct fid_cq *cq, void *buf, size_t count,
			     fi_addr_t *src_addr, const void *cond,
			     int timeout);
	int (*signal)(struct fid_cq *cq);
	const char *(*strerror)(struct fid_cq *cq, int prov_errno,
				const void *err_data, char *buf, size_t len);
};

struct fid_cq {
	struct fid        fid;
	struct fi_ops_cq *ops;
};

/* ---- Counters (fi_cntr(3)) ----------------------------------------------- */

enum fi_cntr_events {
	FI_CNTR_EVENTS_COMP,    /* count completed operations */
};

struct fi_cntr_attr {
	enum fi_cntr_events events;
	enum fi_wait_obj    wait_obj;
	struct fid_wait    *wait_set;
	uint64_t            flags;
};

struct fi_ops_cntr {
	size_t size;
	uint64_t (*read)(struct fid_cntr *cntr);
	uint64_t (*readerr)(struct fid_cntr *cntr);
	int (*add)(struct fid_cntr *cntr, uint64_t value);
	int (*set)(struct fid_cntr *cntr, uint64_t value);
	int (*wait)(struct fid_cntr *cntr, uint64_t threshold, int timeout);
	/* Appended later: callers check the table size first. */
	int (*adderr)(struct fid_cntr *cntr, uint64_t value);
	int (*seterr)(struct fid_cntr *cntr, uint64_t value);
};

struct fid_cntr {
	struct fid          fid;
	struct fi_ops_cntr *ops;
};

/* ---- Wait and poll set calls --------------------------------------------- */

/* Call before blocking on a native wait object (an fd from FI_GETWAIT):
 * FI_SUCCESS when that is safe, -FI_EAGAIN when events are already queued
 * (read them first) or blocking could hang. */
static inline int fi_trywait(struct fid_fabric *fabric, struct fid **fids,
			     int count)
{
	return fabric->ops->trywait(fabric, fids, count);
}

static inline int fi_wait(struct fid_wait *waitset, int timeout)
{
	return waitset->ops->wait(waitset, timeout);
}

static inline int fi_poll(struct fid_poll *pollset, void **context, int count)
{
	return pollset->ops->poll(pollset, context, count);
}

static inline int fi_poll_add(struct fid_poll *pollset, struct fid *event_fid,
			      uint64_t flags)
{
	return pollset->ops->poll_add(pollset, event_fid, flags);
}

static inline int fi_poll_del(struct fid_poll *pollset, struct fid *event_fid,
			      uint64_t flags)
{
	return pollset->ops->poll_del(pollset, event_fid, flags);
}

/* ---- Event queue calls --------------------------------------------------- */

static inline int fi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			     struct fid_eq **eq, void *context)
{
	return fabric->ops->eq_open(fabric, attr, eq, context);
}

static inline ssize_t fi_eq_read(struct fid_eq *eq, uint32_t *event, void *buf,
				 size_t len, uint64_t flags)
{
	return eq->ops->read(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_readerr(struct fid_eq *eq,
				    struct fi_eq_err_entry *buf,
				    uint64_t flags)
{
	return eq->ops->readerr(eq, buf, flags);
}

static inline ssize_t fi_eq_write(struct fid_eq *eq, uint32_t event,
				  const void *buf, size_t len, uint64_t flags)
{
	return eq->ops->write(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_sread(struct fid_eq *eq, uint32_t *event,
				  void *buf, size_t len, int timeout,
				  uint64_t flags)
{
	return eq->ops->sread(eq, event, buf, len, timeout, flags);
}

static inline const char *fi_eq_strerror(struct fid_eq *eq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	return eq->ops->strerror(eq, prov_errno, err_data, buf, len);
}

/* ---- Completion queue calls ---------------------------------------------- */

static inline ssize_t fi_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return cq->ops->read(cq, buf, count);
}

static inline ssize_t fi_cq_readfrom(struct fid_cq *cq, void *buf,
				     size_t count, fi_addr_t *src_addr)
{
	return cq->ops->readfrom(cq, buf, count, src_addr);
}

static inline ssize_t fi_cq_readerr(struct fid_cq *cq,
				    struct fi_cq_err_entry *buf,
				    uint64_t flags)
{
	return cq->ops->readerr(cq, buf, flags);
}

static inline ssize_t fi_cq_sread(struct fid_cq *cq, void *buf, size_t count,
				  const void *cond, int timeout)
{
	return cq->ops->sread(cq, buf, count, cond, timeout);
}

static inline ssize_t fi_cq_sreadfrom(struct fid_cq *cq, void *buf,
				      size_t count, fi_addr_t *src_addr,
				      const void *cond, int timeout)
{
	return cq->ops->sreadfrom(cq, buf, count, src_addr, cond, timeout);
}

/* Wakes a thread blocked in fi_cq_sread. */
static inline int fi_cq_signal(struct fid_cq *cq)
{
	return cq->ops->signal(cq);
}

static inline const char *fi_cq_strerror(struct fid_cq *cq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	return cq->ops->strerror(cq, prov_errno, err_data, buf, len);
}

/* ---- Counter calls ------------------------------------------------------- */

static inline uint64_t fi_cntr_read(struct fid_cntr *cntr)
{
	return cntr->ops->read(cntr);
}

static inline uint64_t fi_cntr_readerr(struct fid_cntr *cntr)
{
	return cntr->ops->readerr(cntr);
}

static inline int fi_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->add(cntr, value);
}

static inline int fi_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, adderr))
		return -FI_ENOSYS;
	return cntr->ops->adderr(cntr, value);
}

static inline int fi_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->set(cntr, value);
}

static inline int fi_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, seterr))
		return -FI_ENOSYS;
	return cntr->ops->seterr(cntr, value);
}

static inline int fi_cntr_wait(struct fid_cntr *cntr, uint64_t threshold,
			       int timeout)
{
	return cntr->ops->wait(cntr, threshold, timeout);
}

#ifdef __cplusplus
}
#endif

#endif /* FI_EQ_H */
