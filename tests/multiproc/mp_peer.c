/* SPDX-License-Identifier: BSD-2-Clause
 * One node of an all-to-all over a shared simulated fabric: a plain
 * libfabric program, started once per node as its own process.
 *
 *   FI_PROVIDER=sim FI_SIM_FABRIC=NAME FI_SIM_NODE=i \
 *       mp_peer DIR NODES MESSAGES SIZE
 *
 * Each node publishes its endpoint address and the key of a target region
 * as a file in DIR (the out-of-band exchange real programs do with
 * sockets or a launcher), reads the others', then to every peer: sends
 * MESSAGES tagged messages of SIZE bytes, writes SIZE bytes into the
 * peer's region with fi_write (with MP_READ=1, reads it back with fi_read
 * and checks it), and sends a last "done" message. It checks
 * every payload and its own region, and prints one line:
 *   node I: ok, DIGEST, T ns, D dropped
 * where DIGEST sums the order, sources, tags and virtual times of its
 * receive completions — equal across runs when the fabric is
 * deterministic —, T is the virtual time at the end and D the packets the
 * fabric lost so far. MP_TRACE=1 also prints every completion on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_fabsim.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "tests/multiproc/peer_util.h"

#define MAX_NODES 64
#define DONE_TAG  (1ull << 40)

static int node;
/* MP_DEAD=k[:ms]: node k dies (SIGKILL) once its receives are posted,
 * after computing ms milliseconds if given; the others expect their first
 * send to k to fail and nothing from k. */
static int dead = -1, dead_after_ms;
/* MP_AWAY=k:ms: node k sleeps ms milliseconds outside the fabric once its
 * receives are posted (as a program blocked out of band would). */
static int away = -1, away_ms;
/* MP_READ=1: each write is read back (fi_read) and checked. */
static bool read_back;
/* MP_BURST=1: the tagged messages to every peer are all posted at once,
 * each from a buffer of its own, before anything waits (many requests
 * outstanding at a time); then the writes and "done" as usual. */
static bool burst;

#define CHECK(call) PEER_CHECK(node, call)

static void fail(const char *what)
{
	peer_fail(node, what);
}

struct published {
	char     addr[64];
	size_t   addrlen;
	uint64_t key;
	uint64_t base;
};

static void publish(const char *dir, const struct published *me)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.node%d.tmp", dir, node);
	snprintf(path, sizeof(path), "%s/node%d", dir, node);
	f = fopen(tmp, "wb");
	if (!f || fwrite(me, sizeof(*me), 1, f) != 1 || fclose(f))
		fail("cannot write the address file");
	if (rename(tmp, path))
		fail("cannot publish the address file");
}

static void fetch(const char *dir, int peer, struct published *out)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/node%d", dir, peer);
	for (int waited = 0; waited < 30000; waited += 5) {
		FILE *f = fopen(path, "rb");

		if (f) {
			size_t n = fread(out, sizeof(*out), 1, f);

			fclose(f);
			if (n == 1)
				return;
		}
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	fail("a peer never published its address");
}

static void cq_failed(struct fid_cq *cq, ssize_t n)
{
	peer_cq_failed(node, cq, n, "fi_cq_sread");
}

/* The digest of a receive completion: its tag and when it was read. */
static uint64_t fold(uint64_t digest, uint64_t tag, uint64_t now)
{
	return (digest * 1000003u + tag) * 1000003u + now;
}

/* What the completions taken in so far come to. */
struct tally {
	long     got_recv;   /* receives */
	long     pending_tx; /* sends posted and not completed */
	uint64_t digest;
};

/* Takes in one completion, waiting up to 10 s for it when `wait`; false
 * when none came. A receive goes into the digest with the virtual time it
 * was read at; a send ends a pending one. */
static bool take(struct fid_cq *cq, struct fid_domain *domain,
		 struct fabsim_ops_v1 *sim, struct tally *t, bool wait)
{
	struct fi_cq_tagged_entry e;
	ssize_t n = wait ? fi_cq_sread(cq, &e, 1, NULL, 10000) :
			   fi_cq_read(cq, &e, 1);

	if (n == -FI_EAGAIN)
		return false;
	if (n < 0)
		cq_failed(cq, n);
	if (getenv("MP_TRACE"))
		fprintf(stderr, "n%d %s %llx %llu\n", node,
			e.flags & FI_RECV ? "rx" : "tx",
			(unsigned long long)e.tag,
			(unsigned long long)sim->now_ns(&domain->fid));
	if (e.flags & FI_RECV) {
		t->got_recv++;
		t->digest = fold(t->digest, e.tag, sim->now_ns(&domain->fid));
	} else {
		t->pending_tx--;
	}
	return true;
}

/* Differs between messages, and between the packets of one message (a
 * packet delivered twice, or in another's place, shows). */
/* Busy without the fabric for ms milliseconds of real time, as a program
 * that computes. */
static void compute_for_ms(int ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000 +
		       (now.tv_nsec - start.tv_nsec) / 1000000 <
	       ms);
}

static uint8_t pattern(int src, int dst, int msg, size_t i)
{
	return (uint8_t)(src * 31 + dst * 7 + msg * 13 + i + (i >> 8) * 101 +
			 (i >> 16) * 37);
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	struct fabsim_ops_v1 *sim;
	struct published me = { 0 }, peers[MAX_NODES];
	fi_addr_t addr[MAX_NODES];
	const char *env = getenv("FI_SIM_NODE");
	int nodes, messages;
	size_t size;
	uint8_t *region, *sendbuf, *recvbuf;
	struct tally t = { 0 };

	if (argc != 5 || !env)
		fail("usage: FI_SIM_NODE=i mp_peer DIR NODES MESSAGES SIZE");
	node = atoi(env);
	if (getenv("MP_DEAD") &&
	    sscanf(getenv("MP_DEAD"), "%d:%d", &dead, &dead_after_ms) < 1)
		fail("MP_DEAD: expected NODE[:MILLISECONDS]");
	read_back = getenv("MP_READ") && atoi(getenv("MP_READ"));
	burst = getenv("MP_BURST") && atoi(getenv("MP_BURST"));
	if (getenv("MP_AWAY") &&
	    sscanf(getenv("MP_AWAY"), "%d:%d", &away, &away_ms) != 2)
		fail("MP_AWAY: expected NODE:MILLISECONDS");
	nodes = atoi(argv[2]);
	messages = atoi(argv[3]);
	size = (size_t)atol(argv[4]);
	if (nodes < 2 || nodes > MAX_NODES || node >= nodes || messages < 1 ||
	    size < 1)
		fail("bad arguments");

	hints = fi_allocinfo();
	hints->caps = FI_TAGGED | FI_RMA;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, info, &domain, NULL));
	CHECK(fi_av_open(domain, &(struct fi_av_attr){ .type = FI_AV_TABLE },
			 &av, NULL));
	CHECK(fi_cq_open(domain,
			 &(struct fi_cq_attr){ .format = FI_CQ_FORMAT_TAGGED,
					       .size = 4096,
					       .wait_obj = FI_WAIT_UNSPEC },
			 &cq, NULL));
	CHECK(fi_endpoint(domain, info, &ep, NULL));
	CHECK(fi_ep_bind(ep, &av->fid, 0));
	CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(ep));
	CHECK(fi_open_ops(&domain->fid, FABSIM_OPS_V1, 0, (void **)&sim, NULL));
	if (sim->host(&domain->fid) != (uint32_t)node)
		fail("the domain is not on the node FI_SIM_NODE names");

	/* One target region: peer p writes at p * size. */
	region = calloc((size_t)nodes, size);
	sendbuf = malloc(size);
	recvbuf = malloc(size * (size_t)(nodes - 1) * (size_t)messages);
	if (!region || !sendbuf || !recvbuf)
		fail("out of memory");
	CHECK(fi_mr_reg(domain, region, (size_t)nodes * size,
			FI_REMOTE_WRITE | FI_REMOTE_READ | FI_SEND | FI_RECV |
				FI_WRITE,
			0, 1, 0,
			&mr, NULL));
	me.addrlen = sizeof(me.addr);
	CHECK(fi_getname(&ep->fid, me.addr, &me.addrlen));
	me.key = fi_mr_key(mr);
	/* Remote addresses: virtual, or offsets into the region. */
	me.base = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
			  (uint64_t)(uintptr_t)region : 0;
	publish(argv[1], &me);
	for (int p = 0; p < nodes; p++) {
		if (p == node)
			continue;
		fetch(argv[1], p, &peers[p]);
		if (fi_av_insert(av, peers[p].addr, 1, &addr[p], 0, NULL) != 1)
			fail("fi_av_insert");
	}

	/* Receives first: messages from p land in their own slots. */
	struct fid_mr *rmr, *smr;
	size_t per_peer = size * (size_t)messages;
	int slot = 0;
	uint64_t done_buf[MAX_NODES];

	CHECK(fi_mr_reg(domain, recvbuf, per_peer * (size_t)(nodes - 1),
			FI_RECV, 0, 2, 0, &rmr, NULL));
	CHECK(fi_mr_reg(domain, sendbuf, size, FI_SEND | FI_WRITE | FI_READ, 0,
			3, 0, &smr, NULL));
	for (int p = 0; p < nodes; p++) {
		if (p == node)
			continue;
		if (p == dead) {
			slot++;
			continue;
		}
		for (int m = 0; m < messages; m++)
			CHECK(fi_trecv(ep, recvbuf + per_peer * slot + size * m,
				       size, fi_mr_desc(rmr), addr[p],
				       (uint64_t)p << 20 | (uint64_t)m, 0,
				       NULL));
		CHECK(fi_trecv(ep, &done_buf[p], sizeof(done_buf[p]), NULL,
			       addr[p], DONE_TAG | (uint64_t)p, 0, NULL));
		slot++;
	}

	if (node == dead) {
		compute_for_ms(dead_after_ms);
		raise(SIGKILL);
	}
	if (node == away)
		nanosleep(&(struct timespec){ away_ms / 1000,
					      (away_ms % 1000) * 1000000L },
			  NULL);

	/* Then sends, one at a time per completion to keep it simple. */
	long expect_recv = (long)(nodes - 1 - (dead >= 0)) * (messages + 1);
	const char *dead_error = NULL;
	struct fi_cq_tagged_entry e;

	if (burst && dead < 0) {
		uint8_t *all = malloc(size * (size_t)(nodes - 1) * messages);
		struct fid_mr *amr;
		int k = 0;

		if (!all)
			fail("out of memory");
		CHECK(fi_mr_reg(domain, all, size * (size_t)(nodes - 1) * messages,
				FI_SEND, 0, 4, 0, &amr, NULL));
		for (int p = 0; p < nodes; p++) {
			for (int m = 0; p != node && m < messages; m++, k++) {
				uint8_t *b = all + size * (size_t)k;
				ssize_t r;

				for (size_t i = 0; i < size; i++)
					b[i] = pattern(node, p, m, i);
				/* A full send queue: completions free it. */
				while ((r = fi_tsend(ep, b, size, fi_mr_desc(amr),
						     addr[p],
						     (uint64_t)node << 20 | (uint64_t)m,
						     NULL)) == -FI_EAGAIN)
					take(cq, domain, sim, &t, false);
				CHECK(r);
				t.pending_tx++;
			}
		}
		while (t.pending_tx)
			take(cq, domain, sim, &t, true);
		CHECK(fi_close(&amr->fid));
		free(all);
	}
	for (int p = 0; p < nodes; p++) {
		uint64_t word = (uint64_t)node;

		if (p == node)
			continue;
		if (p == dead) {
			/* A dead peer: the send must fail, as it would with a
			 * real one (no acknowledgement ever comes). */
			struct fi_cq_err_entry err = { 0 };

			CHECK(fi_tsend(ep, sendbuf, size, fi_mr_desc(smr),
				       addr[p], (uint64_t)node << 20, NULL));
			for (;;) {
				ssize_t n = fi_cq_sread(cq, &e, 1, NULL, 10000);

				if (n == -FI_EAGAIN)
					continue;
				if (n == -FI_EAVAIL &&
				    fi_cq_readerr(cq, &err, 0) == 1)
					break;
				if (n < 0)
					cq_failed(cq, n);
				if (!(e.flags & FI_RECV))
					fail("a send to the dead peer succeeded");
				t.got_recv++;
				t.digest = fold(t.digest, e.tag,
						sim->now_ns(&domain->fid));
			}
			dead_error = fi_strerror(err.err);
			continue;
		}
		/* The messages, the write (and reading it back), then "done"
		 * once it landed. */
		for (int m = burst ? messages : 0; m <= messages + 1 + read_back;
		     m++) {
			bool reading = read_back && m == messages + 1;

			for (size_t i = 0; i < size; i++)
				sendbuf[i] = reading ? 0 : pattern(node, p, m, i);
			if (reading)
				CHECK(fi_read(ep, sendbuf, size,
					      fi_mr_desc(smr), addr[p],
					      peers[p].base +
						      (uint64_t)node * size,
					      peers[p].key, NULL));
			else if (m < messages)
				CHECK(fi_tsend(ep, sendbuf, size,
					       fi_mr_desc(smr), addr[p],
					       (uint64_t)node << 20 |
						       (uint64_t)m,
					       NULL));
			else if (m == messages)
				CHECK(fi_write(ep, sendbuf, size,
					       fi_mr_desc(smr), addr[p],
					       peers[p].base +
						       (uint64_t)node * size,
					       peers[p].key, NULL));
			else
				CHECK(fi_tsend(ep, &word, sizeof(word), NULL,
					       addr[p],
					       DONE_TAG | (uint64_t)node,
					       NULL));
			t.pending_tx++;
			/* Wait for it to complete, taking receives as they
			 * come. */
			while (t.pending_tx)
				take(cq, domain, sim, &t, true);
			for (size_t i = 0; reading && i < size; i++)
				if (sendbuf[i] != pattern(node, p, messages, i))
					fail("fi_read brought back other bytes "
					     "than were written");
		}
	}
	while (t.got_recv < expect_recv)
		take(cq, domain, sim, &t, true);

	/* Every payload, and every peer's write into our region. */
	slot = 0;
	for (int p = 0; p < nodes; p++) {
		if (p == node)
			continue;
		if (p == dead) {
			slot++;
			continue;
		}
		for (int m = 0; m < messages; m++)
			for (size_t i = 0; i < size; i++)
				if (recvbuf[per_peer * slot + size * m + i] !=
				    pattern(p, node, m, i))
					fail("a message arrived damaged");
		for (size_t i = 0; i < size; i++)
			if (region[(size_t)p * size + i] !=
			    pattern(p, node, messages, i))
				fail("a peer's write is missing or damaged");
		if (done_buf[p] != (uint64_t)p)
			fail("a done message is wrong");
		slot++;
	}
	struct fabsim_stats st = { .size = sizeof(st) };

	CHECK(sim->stats(&domain->fid, &st));
	printf("node %d: ok, %016" PRIx64 ", %" PRIu64 " ns, %" PRIu64
	       " dropped",
	       node, t.digest, sim->now_ns(&domain->fid), st.packets_dropped);
	if (dead_error)
		printf(", send to node %d failed: %s", dead, dead_error);
	printf("\n");
	fflush(stdout);

	/* Out of band, as programs end with a barrier: nobody closes its NIC
	 * while a peer may still need it to acknowledge. */
	struct published bye = me;

	bye.key = ~0ull;
	{
		char sub[512];

		snprintf(sub, sizeof(sub), "%s/bye", argv[1]);
		mkdir(sub, 0700);
		publish(sub, &bye);
		for (int p = 0; p < nodes; p++)
			if (p != node && p != dead)
				fetch(sub, p, &peers[p]);
	}

	fi_close(&ep->fid);
	fi_close(&mr->fid);
	fi_close(&rmr->fid);
	fi_close(&smr->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	free(region);
	free(sendbuf);
	free(recvbuf);
	return 0;
}
