/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "sim_cm_mad.h"

enum {
	MAD_HDR = 24,
	REQ_PRIVATE = 140, /* offsets within the CM message */
	MRA_PRIVATE = 10,
	REP_PRIVATE = 36,
	REJ_PRIVATE = 84,
	RTU_PRIVATE = 8,
	DREQ_PRIVATE = 12,
	DREP_PRIVATE = 8,
	SIDR_REQ_PRIVATE = 16,
	SIDR_REP_PRIVATE = 96,
	CMA_HDR = 36,      /* rdma_cm's header at the start of REQ data */
};

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put24(uint8_t *p, uint32_t v) { p[0] = v >> 16; p[1] = v >> 8; p[2] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, (uint32_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get24(const uint8_t *p) { return (uint32_t)p[0] << 16 | p[1] << 8 | p[2]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

static size_t private_offset(uint16_t attr)
{
	switch (attr) {
	case CM_ATTR_REQ: return REQ_PRIVATE + CMA_HDR;
	case CM_ATTR_SIDR_REQ: return SIDR_REQ_PRIVATE + CMA_HDR;
	case CM_ATTR_SIDR_REP: return SIDR_REP_PRIVATE;
	case CM_ATTR_MRA: return MRA_PRIVATE;
	case CM_ATTR_REP: return REP_PRIVATE;
	case CM_ATTR_REJ: return REJ_PRIVATE;
	case CM_ATTR_RTU: return RTU_PRIVATE;
	case CM_ATTR_DREQ: return DREQ_PRIVATE;
	case CM_ATTR_DREP: return DREP_PRIVATE;
	default: return 0;
	}
}

size_t cm_max_data(uint16_t attr)
{
	size_t off = private_offset(attr);

	return off ? CM_MAD_SIZE - MAD_HDR - off : 0;
}

/* An IPv4 address as an IPv4-mapped IPv6 address (a RoCEv2 GID). */
static void put_mapped(uint8_t *p, struct in_addr ip)
{
	memset(p, 0, 10);
	p[10] = p[11] = 0xff;
	memcpy(p + 12, &ip.s_addr, 4);
}

/* rdma_cm's header at the start of a request's private data: version 0,
 * IPv4, the requester's port, source and destination addresses. */
static void cma_header(uint8_t *h, const struct cm_msg *m)
{
	h[1] = 4 << 4;
	put16(h + 2, m->src_port);
	memcpy(h + 4 + 12, &m->src_ip.s_addr, 4);
	memcpy(h + 20 + 12, &m->dst_ip.s_addr, 4);
}

static void cma_header_read(const uint8_t *h, struct cm_msg *m)
{
	m->src_port = get16(h + 2);
	memcpy(&m->src_ip.s_addr, h + 4 + 12, 4);
	memcpy(&m->dst_ip.s_addr, h + 20 + 12, 4);
}

int cm_encode(const struct cm_msg *m, uint8_t mad[CM_MAD_SIZE])
{
	uint8_t *cm = mad + MAD_HDR;
	size_t off = private_offset(m->attr);

	if (!off || m->data_len > cm_max_data(m->attr))
		return -1;
	memset(mad, 0, CM_MAD_SIZE);
	mad[0] = 1;    /* base version */
	mad[1] = 0x07; /* management class: CM */
	mad[2] = 2;    /* class version */
	mad[3] = 0x03; /* method: Send */
	put64(mad + 8, m->tid);
	put16(mad + 16, m->attr);
	put32(cm + 0, m->local_comm_id);
	switch (m->attr) {
	case CM_ATTR_REQ:
		put64(cm + 8, m->service_id);
		put32(cm + 28, 0); /* Q_Key: RC does not use it */
		put24(cm + 32, m->qpn);
		cm[35] = m->responder_resources;
		cm[39] = m->initiator_depth;
		cm[43] = 0x10 << 3 | 0 << 1;    /* remote CM timeout; RC */
		put24(cm + 44, m->start_psn);
		cm[47] = 0x10 << 3 | (m->retry_count & 7); /* local CM timeout */
		put16(cm + 48, 0xffff);         /* partition key */
		cm[50] = 5 << 4 | (m->rnr_retry_count & 7); /* path MTU 4096 */
		cm[51] = 15 << 4;               /* max CM retries */
		/* Primary path LIDs: permissive, as the kernel's CM sends
		 * them on RoCE (routed, hop limit above 1). */
		put16(cm + 52, 0xffff);
		put16(cm + 54, 0xffff);
		put_mapped(cm + 56, m->src_ip); /* primary path GIDs */
		put_mapped(cm + 72, m->dst_ip);
		cm[93] = 64;                    /* hop limit */
		cma_header(cm + REQ_PRIVATE, m);
		break;
	case CM_ATTR_SIDR_REQ:
		put16(cm + 4, 0xffff);          /* partition key */
		put64(cm + 8, m->service_id);
		cma_header(cm + SIDR_REQ_PRIVATE, m);
		break;
	case CM_ATTR_SIDR_REP:
		/* The request ID is the requester's. */
		put32(cm + 0, m->remote_comm_id);
		cm[4] = (uint8_t)m->reason;
		put24(cm + 8, m->qpn);
		put64(cm + 12, m->service_id);
		put32(cm + 20, m->qkey);
		break;
	case CM_ATTR_REP:
		put32(cm + 4, m->remote_comm_id);
		put24(cm + 12, m->qpn);
		put24(cm + 20, m->start_psn);
		cm[24] = m->responder_resources;
		cm[25] = m->initiator_depth;
		cm[27] = (uint8_t)((m->rnr_retry_count & 7) << 5);
		break;
	case CM_ATTR_REJ:
		put32(cm + 4, m->remote_comm_id);
		put16(cm + 10, m->reason);
		break;
	case CM_ATTR_MRA:
		put32(cm + 4, m->remote_comm_id);
		cm[8] = (uint8_t)(m->mraed << 6);
		cm[9] = (uint8_t)(m->service_timeout << 3);
		break;
	case CM_ATTR_DREQ:
		put32(cm + 4, m->remote_comm_id);
		put24(cm + 8, m->qpn);
		break;
	default: /* RTU, DREP */
		put32(cm + 4, m->remote_comm_id);
		break;
	}
	memcpy(cm + off, m->data, m->data_len);
	return 0;
}

int cm_decode(const uint8_t *mad, size_t len, struct cm_msg *m)
{
	const uint8_t *cm = mad + MAD_HDR;
	size_t off;

	if (len < CM_MAD_SIZE || mad[0] != 1 || mad[1] != 0x07)
		return -1;
	memset(m, 0, sizeof(*m));
	m->attr = get16(mad + 16);
	m->tid = get64(mad + 8);
	off = private_offset(m->attr);
	if (!off)
		return -1;
	m->local_comm_id = get32(cm + 0);
	m->remote_comm_id = get32(cm + 4);
	switch (m->attr) {
	case CM_ATTR_REQ:
		m->remote_comm_id = 0;
		m->service_id = get64(cm + 8);
		m->qpn = get24(cm + 32);
		m->start_psn = get24(cm + 44);
		m->responder_resources = cm[35];
		m->initiator_depth = cm[39];
		m->retry_count = cm[47] & 7;
		m->rnr_retry_count = cm[50] & 7;
		cma_header_read(cm + REQ_PRIVATE, m);
		break;
	case CM_ATTR_SIDR_REQ:
		m->remote_comm_id = 0;
		m->service_id = get64(cm + 8);
		cma_header_read(cm + SIDR_REQ_PRIVATE, m);
		break;
	case CM_ATTR_SIDR_REP:
		m->remote_comm_id = m->local_comm_id;
		m->local_comm_id = 0;
		m->reason = cm[4];
		m->qpn = get24(cm + 8);
		m->service_id = get64(cm + 12);
		m->qkey = get32(cm + 20);
		break;
	case CM_ATTR_REP:
		m->qpn = get24(cm + 12);
		m->start_psn = get24(cm + 20);
		m->responder_resources = cm[24];
		m->initiator_depth = cm[25];
		m->rnr_retry_count = cm[27] >> 5;
		break;
	case CM_ATTR_REJ:
		m->reason = get16(cm + 10);
		break;
	case CM_ATTR_MRA:
		m->mraed = cm[8] >> 6;
		m->service_timeout = cm[9] >> 3;
		break;
	case CM_ATTR_DREQ:
		m->qpn = get24(cm + 8);
		break;
	default:
		break;
	}
	m->data_len = cm_max_data(m->attr);
	memcpy(m->data, cm + off, m->data_len);
	return 0;
}
