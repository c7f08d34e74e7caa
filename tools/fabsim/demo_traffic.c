/* SPDX-License-Identifier: BSD-2-Clause
 * The demo's traffic step: four simulated nodes in this process on the
 * preset in force, through the ordinary libfabric API (FI_EP_RDM on sim).
 * First a ping-pong per message size between two of them, timed in virtual
 * time and printed next to what the network model predicts; then every
 * node sends to every other with 1% loss, recorded to a pcap that
 * `fabsim trace summary` and Wireshark read. */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_fabsim.h>
#include <traces/tr_summary.h>

#include "commands.h"

#define NODES 4
#define MAX_SIZE (1u << 20)

struct node {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	fi_addr_t peer[NODES];
	char *buf;
};

struct demo {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct node n[NODES];
	struct fabsim_ops_v1 *ext;
};

#define TRY(call)                                                         \
	do {                                                              \
		int ret_ = (int)(call);                                   \
		if (ret_) {                                               \
			fprintf(out, "demo: %s: %s\n", #call,             \
				fi_strerror(-ret_));                      \
			return ret_;                                      \
		}                                                         \
	} while (0)

static int open_demo(struct demo *d, FILE *out)
{
	struct fi_info *hints = fi_allocinfo();
	char name[NODES][64];
	int ret;

	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("sim");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &d->info);
	fi_freeinfo(hints);
	TRY(ret);
	TRY(fi_fabric(d->info->fabric_attr, &d->fab, NULL));
	for (int i = 0; i < NODES; i++) {
		struct node *n = &d->n[i];
		struct fi_av_attr av = { .type = FI_AV_TABLE };
		struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT,
					 .size = 1024 };
		size_t len = sizeof(name[i]);

		n->buf = calloc(1, MAX_SIZE * NODES);
		if (!n->buf)
			return -FI_ENOMEM;
		TRY(fi_domain(d->fab, d->info, &n->dom, NULL));
		TRY(fi_av_open(n->dom, &av, &n->av, NULL));
		TRY(fi_cq_open(n->dom, &cq, &n->cq, NULL));
		TRY(fi_endpoint(n->dom, d->info, &n->ep, NULL));
		TRY(fi_ep_bind(n->ep, &n->av->fid, 0));
		TRY(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV));
		TRY(fi_enable(n->ep));
		TRY(fi_mr_reg(n->dom, n->buf, MAX_SIZE * NODES,
			      FI_SEND | FI_RECV, 0, 0, 0, &n->mr, NULL));
		TRY(fi_getname(&n->ep->fid, name[i], &len));
	}
	for (int i = 0; i < NODES; i++)
		for (int j = 0; j < NODES; j++)
			if (fi_av_insert(d->n[i].av, name[j], 1,
					 &d->n[i].peer[j], 0, NULL) != 1)
				return -FI_EINVAL;
	TRY(fi_open_ops(&d->n[0].dom->fid, FABSIM_OPS_V1, 0,
			(void **)&d->ext, NULL));
	return 0;
}

static void close_demo(struct demo *d)
{
	for (int i = 0; i < NODES; i++) {
		struct node *n = &d->n[i];

		if (n->mr)
			fi_close(&n->mr->fid);
		if (n->ep)
			fi_close(&n->ep->fid);
		if (n->cq)
			fi_close(&n->cq->fid);
		if (n->av)
			fi_close(&n->av->fid);
		if (n->dom)
			fi_close(&n->dom->fid);
		free(n->buf);
	}
	if (d->fab)
		fi_close(&d->fab->fid);
	fi_freeinfo(d->info);
}

/* Reads `want` completions from node i's CQ (errors count, and say so). */
static int reap(struct demo *d, int i, int want, FILE *out)
{
	while (want > 0) {
		struct fi_cq_entry e[16];
		ssize_t r = fi_cq_read(d->n[i].cq, e, want < 16 ? want : 16);

		if (r > 0) {
			want -= (int)r;
		} else if (r == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(d->n[i].cq, &err, 0);
			fprintf(out, "demo: node %d: %s\n", i,
				fi_strerror(err.err));
			return -err.err;
		} else if (r != -FI_EAGAIN) {
			return (int)r;
		}
	}
	return 0;
}

static uint64_t now(struct demo *d)
{
	return d->ext->now_ns(&d->n[0].dom->fid);
}

/* One-way latency of `size` bytes in virtual time: from posting the send
 * to the receive completion, as the model counts it, averaged over a few
 * messages each way. */
static int pingpong(struct demo *d, size_t size, uint64_t *one_way, FILE *out)
{
	const int rounds = 4;
	uint64_t total = 0;

	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 2; k++) {
			struct node *from = &d->n[k], *to = &d->n[1 - k];
			uint64_t start;

			TRY(fi_recv(to->ep, to->buf, size, fi_mr_desc(to->mr),
				    FI_ADDR_UNSPEC, NULL));
			start = now(d);
			TRY(fi_send(from->ep, from->buf, size,
				    fi_mr_desc(from->mr), from->peer[1 - k],
				    NULL));
			TRY(reap(d, 1 - k, 1, out));
			total += now(d) - start;
			TRY(reap(d, k, 1, out));
		}
	*one_way = total / (2 * rounds);
	return 0;
}

/* Every node sends `count` messages of `size` bytes to every other. */
static int all_to_all(struct demo *d, size_t size, int count, FILE *out)
{
	for (int c = 0; c < count; c++) {
		for (int i = 0; i < NODES; i++)
			for (int j = 0; j < NODES; j++)
				if (i != j)
					TRY(fi_recv(d->n[j].ep,
						    d->n[j].buf + (size_t)i * MAX_SIZE,
						    size, fi_mr_desc(d->n[j].mr),
						    FI_ADDR_UNSPEC, NULL));
		for (int i = 0; i < NODES; i++)
			for (int j = 0; j < NODES; j++)
				if (i != j)
					TRY(fi_send(d->n[i].ep, d->n[i].buf, size,
						    fi_mr_desc(d->n[i].mr),
						    d->n[i].peer[j], NULL));
		for (int i = 0; i < NODES; i++)
			TRY(reap(d, i, 2 * (NODES - 1), out));
	}
	return 0;
}

static int run_pingpongs(FILE *out)
{
	struct demo d = { 0 };
	int ret = open_demo(&d, out);

	fprintf(out, "  %10s  %16s  %12s\n", "bytes", "one-way latency", "Gb/s");
	for (size_t size = 64; !ret && size <= MAX_SIZE; size *= 4) {
		uint64_t ns;

		ret = pingpong(&d, size, &ns, out);
		if (!ret)
			fprintf(out, "  %10zu  %13.3f us  %12.2f\n", size, ns / 1e3,
				ns ? size * 8.0 / ns : 0.0);
	}
	close_demo(&d);
	return ret;
}

static int run_lossy(const char *pcap, FILE *out)
{
	struct demo d = { 0 };
	struct fabsim_stats st = { .size = sizeof(st) };
	uint64_t start;
	int ret;

	setenv("FI_SIM_LOSS_RATE", "0.01", 1);
	setenv("FI_SIM_PCAP", pcap, 1);
	ret = open_demo(&d, out);
	start = ret ? 0 : now(&d);
	if (!ret)
		ret = all_to_all(&d, 64 << 10, 8, out);
	if (!ret)
		ret = d.ext->stats(&d.n[0].dom->fid, &st);
	if (!ret)
		fprintf(out, "  %d nodes, all to all, 8 rounds of 64 KiB: done "
			"in %.1f us of virtual time; %" PRIu64 " packets sent, "
			"%" PRIu64 " lost and retransmitted (%" PRIu64 " "
			"retransmissions), every receive completed\n",
			NODES, (now(&d) - start) / 1e3, st.packets_sent,
			st.packets_dropped, st.retransmits);
	close_demo(&d); /* the trace is complete when the fabric closes */
	unsetenv("FI_SIM_LOSS_RATE");
	unsetenv("FI_SIM_PCAP");
	return ret;
}

/* The Wireshark dissector: installed beside the fabsim binary
 * (PREFIX/share/fabsim/fabsim.lua), else its place in the source tree. */
static const char *dissector_path(char *buf, size_t len)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		snprintf(path, sizeof(path), "%s/../share/fabsim/fabsim.lua",
			 dirname(exe));
		if (realpath(path, buf) && strlen(buf) < len)
			return buf;
	}
	snprintf(buf, len, "traces/wireshark/fabsim.lua");
	return buf;
}

int demo_traffic(FILE *out)
{
	char lua[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	char pcap[4096];
	tr_summary *s = NULL;
	tr_error err;
	int ret;

	fprintf(out, "  messages between two of them, post to receive "
		"completion in virtual time (the model's table in 2.):\n");
	ret = run_pingpongs(out);
	if (ret)
		return ret;
	/* One per user: another user's would not be ours to overwrite. */
	snprintf(pcap, sizeof(pcap), "%s/fabsim-demo-%u.pcap",
		 tmp && *tmp ? tmp : "/tmp", (unsigned)geteuid());
	ret = run_lossy(pcap, out);
	if (ret)
		return ret;
	if (tr_summary_file(pcap, &s, &err) || !s) {
		fprintf(out, "demo: %s: %s\n", pcap, err.msg);
		tr_summary_free(s);
		return -FI_EIO;
	}
	fprintf(out, "  recorded: %s — %" PRIu64 " packets, %" PRIu64
		" drops marked, %" PRIu64 " retransmissions seen, %" PRIu64
		" problems\n", pcap, s->packets, s->dropped,
		s->retransmissions, s->problems);
	tr_summary_free(s);
	fprintf(out, "  open it: fabsim trace summary %s\n"
		"           wireshark -X lua_script:%s %s\n", pcap,
		dissector_path(lua, sizeof(lua)), pcap);
	return 0;
}
