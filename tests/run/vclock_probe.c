/* SPDX-License-Identifier: BSD-2-Clause
 * An ordinary libfabric program that times itself with clock_gettime and
 * gettimeofday: two RDM endpoints on one simulated fabric exchange 100
 * ping-pongs of 4 KiB. It prints its own measurement of the elapsed time
 * and the fabric's virtual time for the same stretch (fabsim_ops_v1), then
 * waits 100 us by reading gettimeofday in a loop and prints the virtual
 * time that took, then sleeps (usleep, nanosleep, clock_nanosleep to an
 * absolute time, sleep) and prints what its clock and the fabric say that
 * took, so that tests/run/run_test.sh can check `fabsim run
 * --virtual-clock`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext_fabsim.h>

#define CHECK(call)                                                       \
	do {                                                              \
		int ret_ = (int)(call);                                   \
		if (ret_) {                                               \
			fprintf(stderr, "%s: %s\n", #call,                \
				fi_strerror(-ret_));                      \
			exit(1);                                          \
		}                                                         \
	} while (0)

#define SIZE 4096
#define ROUNDS 100

struct node {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	fi_addr_t peer;
	char buf[SIZE];
};

static void wait_one(struct fid_cq *cq)
{
	struct fi_cq_entry e;
	ssize_t r;

	while ((r = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
		;
	if (r != 1) {
		fprintf(stderr, "fi_cq_read: %zd\n", r);
		exit(1);
	}
}

static long long ns_of(struct timespec t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(void)
{
	static struct node n[2];
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fid_fabric *fab;
	struct fabsim_ops_v1 *ext;
	struct timespec t0, t1;
	struct timeval v0, v1;
	char name[2][64];

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	CHECK(fi_fabric(info->fabric_attr, &fab, NULL));
	for (int i = 0; i < 2; i++) {
		struct fi_av_attr av = { .type = FI_AV_TABLE };
		struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT };
		size_t len = sizeof(name[i]);

		CHECK(fi_domain(fab, info, &n[i].dom, NULL));
		CHECK(fi_av_open(n[i].dom, &av, &n[i].av, NULL));
		CHECK(fi_cq_open(n[i].dom, &cq, &n[i].cq, NULL));
		CHECK(fi_endpoint(n[i].dom, info, &n[i].ep, NULL));
		CHECK(fi_ep_bind(n[i].ep, &n[i].av->fid, 0));
		CHECK(fi_ep_bind(n[i].ep, &n[i].cq->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(n[i].ep));
		CHECK(fi_mr_reg(n[i].dom, n[i].buf, SIZE, FI_SEND | FI_RECV, 0,
				0, 0, &n[i].mr, NULL));
		CHECK(fi_getname(&n[i].ep->fid, name[i], &len));
	}
	for (int i = 0; i < 2; i++)
		if (fi_av_insert(n[i].av, name[1 - i], 1, &n[i].peer, 0,
				 NULL) != 1)
			exit(1);
	CHECK(fi_open_ops(&n[0].dom->fid, FABSIM_OPS_V1, 0, (void **)&ext,
			  NULL));

	uint64_t v_start = ext->now_ns(&n[0].dom->fid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gettimeofday(&v0, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < 2; i++) {
			struct node *to = &n[(i + 1) % 2], *from = &n[i];

			CHECK(fi_recv(to->ep, to->buf, SIZE,
				      fi_mr_desc(to->mr), 0, NULL));
			CHECK(fi_send(from->ep, from->buf, SIZE,
				      fi_mr_desc(from->mr), from->peer, NULL));
			wait_one(from->cq);
			wait_one(to->cq);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gettimeofday(&v1, NULL);
	uint64_t v_end = ext->now_ns(&n[0].dom->fid);

	printf("clock_gettime_ns %lld\n", ns_of(t1) - ns_of(t0));
	printf("gettimeofday_us %lld\n",
	       (v1.tv_sec - v0.tv_sec) * 1000000LL + (v1.tv_usec - v0.tv_usec));
	printf("virtual_ns %llu\n", (unsigned long long)(v_end - v_start));

	/* A delay timed by reading the clock in a loop, as perftest times
	 * its CPU's frequency: it must end, 100 us of virtual time later. */
	unsigned long readings = 0;

	gettimeofday(&v0, NULL);
	do {
		gettimeofday(&v1, NULL);
		readings++;
	} while ((v1.tv_sec - v0.tv_sec) * 1000000LL +
			 (v1.tv_usec - v0.tv_usec) < 100);
	printf("spin_virtual_ns %llu\n",
	       (unsigned long long)(ext->now_ns(&n[0].dom->fid) - v_end));
	printf("spin_readings %lu\n", readings);
	/* gettimeofday(2): either argument may be NULL (glibc declares the
	 * first nonnull: called through a pointer, which does not say so). */
	struct timezone tz;
	int (*volatile gtod)(struct timeval *, void *) =
		(int (*)(struct timeval *, void *))gettimeofday;
	printf("timezone_only %d\n", gtod(NULL, &tz));

	/* Sleeps: each lets its time pass in virtual time, which the clock
	 * and the fabric both show. */
	struct timespec s0, s1, req = { 0, 3000000 }, until;

	/* (This reading may let 1 us pass: the spin above left a run of
	 * still readings. The fabric's figure starts after it.) */
	clock_gettime(CLOCK_MONOTONIC, &s0);
	uint64_t f0 = ext->now_ns(&n[0].dom->fid);
	usleep(25000);
	nanosleep(&req, NULL);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += 100000000; /* absolute: 100 ms from here */
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
	sleep(1);
	clock_gettime(CLOCK_MONOTONIC, &s1);
	printf("sleep_clock_ns %lld\n", ns_of(s1) - ns_of(s0));
	printf("sleep_virtual_ns %llu\n",
	       (unsigned long long)(ext->now_ns(&n[0].dom->fid) - f0));
	for (int i = 0; i < 2; i++) {
		fi_close(&n[i].mr->fid);
		fi_close(&n[i].ep->fid);
		fi_close(&n[i].cq->fid);
		fi_close(&n[i].av->fid);
		fi_close(&n[i].dom->fid);
	}
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
