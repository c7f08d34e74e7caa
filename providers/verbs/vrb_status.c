/* SPDX-License-Identifier: BSD-2-Clause
 * Completion statuses and connection events, as libfabric reports them.
 * The tables follow the InfiniBand specification's meaning of each status
 * (IBA vol 1, 10.10.3 and 11.6.2) and rdma_cm(7). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/rdma_cma.h>

#include "vrb_translate.h"

/* "NAME: meaning", one literal per status. */
#define STATUS(name, what) [name] = #name ": " what

static const char *const status_text[] = {
	STATUS(IBV_WC_SUCCESS,
	       "success"),
	STATUS(IBV_WC_LOC_LEN_ERR,
	       "local length error: a received message is longer than the "
	       "receive buffer, or a request exceeds the device's limits"),
	STATUS(IBV_WC_LOC_QP_OP_ERR,
	       "local QP operation error: the request is malformed for this "
	       "queue pair (too many SGEs, inline data too long, bad opcode)"),
	STATUS(IBV_WC_LOC_EEC_OP_ERR,
	       "local EE context operation error"),
	STATUS(IBV_WC_LOC_PROT_ERR,
	       "local protection error: a buffer is not covered by a memory "
	       "region of this protection domain with the needed access "
	       "(wrong or missing descriptor)"),
	STATUS(IBV_WC_WR_FLUSH_ERR,
	       "work request flushed: the queue pair is in the error state "
	       "(after an earlier error or a disconnect)"),
	STATUS(IBV_WC_MW_BIND_ERR,
	       "memory window bind error"),
	STATUS(IBV_WC_BAD_RESP_ERR,
	       "bad response: the responder answered with an unexpected "
	       "transport opcode"),
	STATUS(IBV_WC_LOC_ACCESS_ERR,
	       "local access error: data for a read or atomic response could "
	       "not be written to the local buffer"),
	STATUS(IBV_WC_REM_INV_REQ_ERR,
	       "remote invalid request: the target could not accept the "
	       "request (message longer than its receive buffer, operation "
	       "not enabled on its queue pair)"),
	STATUS(IBV_WC_REM_ACCESS_ERR,
	       "remote access error: the target rejected the remote key, the "
	       "address range or the access rights"),
	STATUS(IBV_WC_REM_OP_ERR,
	       "remote operation error: the target could not complete the "
	       "operation"),
	STATUS(IBV_WC_RETRY_EXC_ERR,
	       "transport retry counter exceeded: no acknowledgement from "
	       "the peer (unreachable, or its queue pair is gone)"),
	STATUS(IBV_WC_RNR_RETRY_EXC_ERR,
	       "receiver-not-ready retry counter exceeded: the peer posted "
	       "no receive buffer"),
	STATUS(IBV_WC_LOC_RDD_VIOL_ERR,
	       "local RDD violation"),
	STATUS(IBV_WC_REM_INV_RD_REQ_ERR,
	       "remote invalid RD request"),
	STATUS(IBV_WC_REM_ABORT_ERR,
	       "remote aborted: the target aborted the operation"),
	STATUS(IBV_WC_INV_EECN_ERR,
	       "invalid EE context number"),
	STATUS(IBV_WC_INV_EEC_STATE_ERR,
	       "invalid EE context state"),
	STATUS(IBV_WC_FATAL_ERR,
	       "fatal error in the device"),
	STATUS(IBV_WC_RESP_TIMEOUT_ERR,
	       "response timeout"),
	STATUS(IBV_WC_GENERAL_ERR,
	       "general error reported by the device"),
	STATUS(IBV_WC_TM_ERR,
	       "tag matching error"),
	STATUS(IBV_WC_TM_RNDV_INCOMPLETE,
	       "tag matching rendezvous incomplete"),
};

int vrb_status_errno(enum ibv_wc_status status, bool recv)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_LOC_LEN_ERR:
		return recv ? FI_ETRUNC : FI_EMSGSIZE;
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_EEC_OP_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		return FI_EINVAL;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_MW_BIND_ERR:
	case IBV_WC_LOC_RDD_VIOL_ERR:
		return FI_EACCES;
	case IBV_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case IBV_WC_REM_OP_ERR:
		return FI_EREMOTEIO;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return FI_ETIMEDOUT;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return FI_ENORX;
	case IBV_WC_REM_ABORT_ERR:
		return FI_ECONNABORTED;
	default:
		return FI_EIO;
	}
}

const char *vrb_status_str(int prov_errno)
{
	if (prov_errno < 0 ||
	    (size_t)prov_errno >= sizeof(status_text) / sizeof(status_text[0]) ||
	    !status_text[prov_errno])
		return "unknown verbs completion status";
	return status_text[prov_errno];
}

/* ---- Connection events ------------------------------------------------------ */

enum vrb_cm_action vrb_cm_translate(int rdma_cm_event, int status,
				    uint32_t *event, int *err)
{
	switch (rdma_cm_event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		*event = FI_CONNREQ;
		return VRB_CM_EVENT;
	case RDMA_CM_EVENT_ESTABLISHED:
		*event = FI_CONNECTED;
		return VRB_CM_EVENT;
	case RDMA_CM_EVENT_DISCONNECTED:
		*event = FI_SHUTDOWN;
		return VRB_CM_EVENT;
	case RDMA_CM_EVENT_REJECTED:
		/* A consumer's reject (IB reason 28) is a refused connection;
		 * a reject because nobody listens there is the same to the
		 * application. */
		*err = FI_ECONNREFUSED;
		return VRB_CM_ERROR;
	case RDMA_CM_EVENT_UNREACHABLE:
		*err = status == -ETIMEDOUT ? FI_ETIMEDOUT : FI_EHOSTUNREACH;
		return VRB_CM_ERROR;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		*err = FI_ECONNABORTED;
		return VRB_CM_ERROR;
	case RDMA_CM_EVENT_ADDR_ERROR:
		*err = FI_EADDRNOTAVAIL;
		return VRB_CM_ERROR;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		*err = FI_EHOSTUNREACH;
		return VRB_CM_ERROR;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		*err = FI_ENODEV;
		return VRB_CM_ERROR;
	default:
		/* ADDR/ROUTE_RESOLVED are the provider's own steps;
		 * TIMEWAIT_EXIT, ADDR_CHANGE, CONNECT_RESPONSE and multicast
		 * events do not concern MSG endpoints. */
		return VRB_CM_IGNORE;
	}
}

int vrb_cm_prov_errno(int rdma_cm_event, int status)
{
	/* Event in the low byte, the status (reject reason or errno) above:
	 * one number fi_eq_strerror can explain. */
	int magnitude = status < 0 ? -status : status;

	return (magnitude & 0x7fffff) << 8 | (rdma_cm_event & 0xff);
}

static const char *cm_event_name(int ev)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	};

	if (ev < 0 || (size_t)ev >= sizeof(names) / sizeof(names[0]) ||
	    !names[ev])
		return "unknown event";
	return names[ev];
}

const char *vrb_cm_strerror(int prov_errno, char *buf, size_t len)
{
	int ev = prov_errno & 0xff, status = prov_errno >> 8;
	static __thread char own[160];

	if (!buf || !len) {
		buf = own;
		len = sizeof(own);
	}
	if (ev == RDMA_CM_EVENT_REJECTED)
		snprintf(buf, len, "rdma_cm %s: the peer rejected the "
			 "connection (IB CM reject reason %d%s)",
			 cm_event_name(ev), status,
			 status == 28 ? ": consumer reject" :
			 status == 8 ? ": nobody listens on that port" : "");
	else
		snprintf(buf, len, "rdma_cm %s: %s", cm_event_name(ev),
			 status ? strerror(status) : "no further detail");
	return buf;
}

/* ---- Private data ------------------------------------------------------------------- */

int vrb_cm_pack(const void *data, size_t len, size_t max, uint8_t *buf,
		uint8_t *total)
{
	struct vrb_cm_hdr hdr = { .size = (uint8_t)len };

	/* FI_OPT_CM_DATA_SIZE is the limit fi_connect, fi_accept and
	 * fi_reject all keep to (fi_endpoint(3)), though a REP or a REJ would
	 * carry more. */
	if (max < sizeof(hdr) || len > max - sizeof(hdr) ||
	    len > VRB_CM_DATA_SIZE || (len && !data))
		return -FI_EINVAL;
	memcpy(buf, &hdr, sizeof(hdr));
	if (len)
		memcpy(buf + sizeof(hdr), data, len);
	*total = (uint8_t)(sizeof(hdr) + len);
	return 0;
}

size_t vrb_cm_unpack(const void *data, size_t len, const uint8_t **out)
{
	struct vrb_cm_hdr hdr;

	*out = NULL;
	if (!data || len < sizeof(hdr))
		return 0;
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.size > len - sizeof(hdr))
		return 0;
	*out = (const uint8_t *)data + sizeof(hdr);
	return hdr.size;
}
