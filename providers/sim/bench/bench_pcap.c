/* SPDX-License-Identifier: BSD-2-Clause
 * bazel run -c opt //providers/sim/bench:bench_pcap [-- small_count large_count dir]
 *
 * What recording (FI_SIM_PCAP) costs a simulation: the same run as
 * bench_msg (two nodes in one process, `ideal` preset, fi_send/fi_recv on
 * FI_EP_RDM) three times — recording off, whole frames, headers only
 * (snap length 128) — with the wall time of each phase and the size of the
 * file. Phases: 8-byte messages (a SEND and an ACK each), then 1 MiB
 * messages (256 packets of 4 KiB each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define CHECK(call)                                                       \
	do {                                                              \
		int ret_ = (int)(call);                                   \
		if (ret_) {                                               \
			fprintf(stderr, "%s: %s\n", #call,                \
				fi_strerror(-ret_));                      \
			exit(1);                                          \
		}                                                         \
	} while (0)

struct node {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void reap(struct node *n, long want)
{
	struct fi_cq_entry e[64];

	while (want > 0) {
		for (int i = 0; i < 2; i++) {
			ssize_t r = fi_cq_read(n[i].cq, e, 64);

			if (r > 0)
				want -= r;
			else if (r != -FI_EAGAIN)
				exit(2);
		}
	}
}

static double run(struct node *n, size_t size, long count, int batch,
		  char *sbuf, char *rbuf, void *sdesc, void *rdesc)
{
	static struct fi_context2 ctx[2 * 4096];
	double t0 = now_s();

	for (long done = 0; done < count; done += batch) {
		for (int b = 0; b < batch; b++)
			CHECK(fi_recv(n[1].ep, rbuf, size, rdesc, FI_ADDR_UNSPEC,
				      &ctx[b]));
		for (int b = 0; b < batch; b++)
			CHECK(fi_send(n[0].ep, sbuf, size, sdesc, n[0].peer,
				      &ctx[batch + b]));
		reap(n, 2L * batch);
	}
	return now_s() - t0;
}

struct result {
	double small_s, large_s, close_s;
	long long bytes;
};

/* One whole run: fabric open, both phases, fabric closed (the file is
 * complete then). */
static struct result one_run(long small, long large, const char *pcap,
			     const char *snaplen)
{
	size_t big = 1 << 20;
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fid_fabric *fab;
	struct fid_mr *smr, *rmr;
	struct node n[2];
	char *sbuf = malloc(big), *rbuf = malloc(big);
	char name[2][64];
	struct result res = { 0 };
	struct stat st;
	double t;

	if (pcap)
		setenv("FI_SIM_PCAP", pcap, 1);
	else
		unsetenv("FI_SIM_PCAP");
	if (snaplen)
		setenv("FI_SIM_PCAP_SNAPLEN", snaplen, 1);
	else
		unsetenv("FI_SIM_PCAP_SNAPLEN");
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	CHECK(fi_fabric(info->fabric_attr, &fab, NULL));
	for (int i = 0; i < 2; i++) {
		struct fi_av_attr av = { .type = FI_AV_TABLE };
		struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT,
					 .size = 8192 };
		size_t len = sizeof(name[i]);

		CHECK(fi_domain(fab, info, &n[i].dom, NULL));
		CHECK(fi_av_open(n[i].dom, &av, &n[i].av, NULL));
		CHECK(fi_cq_open(n[i].dom, &cq, &n[i].cq, NULL));
		CHECK(fi_endpoint(n[i].dom, info, &n[i].ep, NULL));
		CHECK(fi_ep_bind(n[i].ep, &n[i].av->fid, 0));
		CHECK(fi_ep_bind(n[i].ep, &n[i].cq->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(n[i].ep));
		CHECK(fi_getname(&n[i].ep->fid, name[i], &len));
	}
	for (int i = 0; i < 2; i++)
		if (fi_av_insert(n[i].av, name[1 - i], 1, &n[i].peer, 0, NULL) != 1)
			exit(1);
	memset(sbuf, 0xa5, big);
	memset(rbuf, 0, big);
	CHECK(fi_mr_reg(n[0].dom, sbuf, big, FI_SEND, 0, 0, 0, &smr, NULL));
	CHECK(fi_mr_reg(n[1].dom, rbuf, big, FI_RECV, 0, 0, 0, &rmr, NULL));

	res.small_s = run(n, 8, small, 256, sbuf, rbuf, fi_mr_desc(smr),
			  fi_mr_desc(rmr));
	res.large_s = run(n, big, large, 16, sbuf, rbuf, fi_mr_desc(smr),
			  fi_mr_desc(rmr));
	t = now_s();
	fi_close(&smr->fid);
	fi_close(&rmr->fid);
	for (int i = 0; i < 2; i++) {
		fi_close(&n[i].ep->fid);
		fi_close(&n[i].cq->fid);
		fi_close(&n[i].av->fid);
		fi_close(&n[i].dom->fid);
	}
	fi_close(&fab->fid);
	res.close_s = now_s() - t;
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(sbuf);
	free(rbuf);
	if (pcap && !stat(pcap, &st))
		res.bytes = (long long)st.st_size;
	return res;
}

int main(int argc, char **argv)
{
	long small = argc > 1 ? atol(argv[1]) : 200000;
	long large = argc > 2 ? atol(argv[2]) : 500;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	char path[4096];
	static const struct {
		const char *name;
		int record;
		const char *snaplen;
	} modes[] = {
		{ "off", 0, NULL },
		{ "full frames", 1, NULL },
		{ "headers only (128)", 1, "128" },
	};

	setenv("FI_SIM_PRESET", "ideal", 0);
	snprintf(path, sizeof(path), "%s/bench_pcap.pcap", dir);
	one_run(small / 10 + 1, large / 10 + 1, NULL, NULL); /* warm up */
	printf("%ld 8-byte messages, %ld 1 MiB messages; file %s\n", small,
	       large, path);
	printf("%-20s %12s %12s %12s %10s %14s\n", "recording", "8 B: ns/msg",
	       "1 MiB: GB/s", "1 MiB: s", "close: s", "file bytes");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct result r = one_run(small, large,
					  modes[m].record ? path : NULL,
					  modes[m].snaplen);

		printf("%-20s %12.0f %12.2f %12.3f %10.3f %14lld\n",
		       modes[m].name, r.small_s * 1e9 / small,
		       large * (double)(1 << 20) / r.large_s / 1e9, r.large_s,
		       r.close_s, r.bytes);
		fflush(stdout);
	}
	remove(path);
	return 0;
}
