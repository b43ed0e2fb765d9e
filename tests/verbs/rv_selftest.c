/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_selftest: a libibverbs program (built against rdma-core's headers and
 * linked with the real libibverbs) that tests/netns/test_verbs_selftest.py
 * runs under rnic-exec (docs/verbs.md):
 *
 *   rv_selftest affinity               the caller's CPU affinity is unchanged by
 *                                      opening rnic0 (EAL runs on a thread of its own)
 *   rv_selftest badinput PEER_IP       bad work requests and transitions: errno or
 *                                      completion status, never a crash (one line each)
 *   rv_selftest fork                   a child of fork() gets ENODEV from rnic0, the
 *                                      parent's device keeps working
 *   rv_selftest threads-server PORT N  receive N SENDs, check each byte
 *   rv_selftest threads-client IP PORT N
 *                                      post N SENDs from one thread while another polls
 *                                      the same CQ
 *
 * Every check prints "ok NAME" or "FAIL NAME: why"; the exit status is the
 * number of failures (0: all passed).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG 256

static int failures;

#define CHECK(name, cond, ...)                                                                     \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok %s\n", name);                                                   \
		} else {                                                                           \
			failures++;                                                                \
			printf("FAIL %s: ", name);                                                 \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

static struct ibv_context *
open_rnic0(void)
{
	int n;
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_context *c = NULL;

	for (int i = 0; l && i < n; i++)
		if (strcmp(ibv_get_device_name(l[i]), "rnic0") == 0)
			c = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!c) {
		fprintf(stderr, "rv_selftest: cannot open rnic0\n");
		exit(100);
	}
	return c;
}

/* ---- affinity ---- */

static int
do_affinity(void)
{
	cpu_set_t before, after;

	CPU_ZERO(&before);
	CPU_ZERO(&after);
	sched_getaffinity(0, sizeof(before), &before);
	struct ibv_context *c = open_rnic0();
	struct ibv_pd *pd = ibv_alloc_pd(c);

	sched_getaffinity(0, sizeof(after), &after);
	CHECK("affinity_unchanged", CPU_EQUAL(&before, &after),
	      "the caller's CPU set changed from %d to %d CPUs", CPU_COUNT(&before),
	      CPU_COUNT(&after));
	printf("cpus %d\n", CPU_COUNT(&after));
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	return failures;
}

/* ---- fork ---- */

static int
do_fork(void)
{
	struct ibv_context *c = open_rnic0();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	pid_t pid = fork();

	if (pid == 0) {
		int n, bad = 0;
		struct ibv_device **l = ibv_get_device_list(&n);

		for (int i = 0; l && i < n; i++)
			if (strcmp(ibv_get_device_name(l[i]), "rnic0") == 0) {
				errno = 0;
				bad += ibv_open_device(l[i]) != NULL || errno != ENODEV;
			}
		errno = 0;
		bad += ibv_alloc_pd(c) != NULL || errno != ENODEV;
		errno = 0;
		bad += ibv_create_cq(c, 4, NULL, NULL, 0) != NULL || errno != ENODEV;
		_exit(bad ? 1 : 0);
	}
	int st = -1;

	waitpid(pid, &st, 0);
	CHECK("fork_child_enodev", WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
	struct ibv_cq *cq = ibv_create_cq(c, 4, NULL, NULL, 0);

	CHECK("fork_parent_works", pd && cq, "errno %d", errno);
	if (cq)
		ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	return failures;
}

/* ---- bad input ---- */

static struct ibv_qp *
make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type t, uint32_t depth)
{
	struct ibv_qp_init_attr ia = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .qp_type = t,
	    .cap = {
		.max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 2, .max_recv_sge = 2}};

	return ibv_create_qp(pd, &ia);
}

static int
to_init(struct ibv_qp *qp, bool ud)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qkey = 0x11111111,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

static int
do_badinput(const char *peer)
{
	struct ibv_context *c = open_rnic0();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 64, NULL, NULL, 0);
	static uint8_t buf[65536];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_RC, 16);
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr ? mr->lkey : 0};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;
	struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1}, *rbad = NULL;
	struct ibv_qp_attr a;
	int rc;

	if (!pd || !cq || !mr || !qp) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}
	/* the IBTA QP state machine as ibv_modify_qp(3) lists it: RESET -> RTS is no transition */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	CHECK("reset_to_rts", rc == EINVAL, "rc %d", rc);
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	CHECK("reset_to_rtr", rc == EINVAL, "rc %d", rc);
	CHECK("state_still_reset", qp->state == IBV_QPS_RESET, "state %d", qp->state);
	/* posting on a RESET QP */
	rc = ibv_post_send(qp, &wr, &bad);
	CHECK("post_send_reset", rc == EINVAL && bad == &wr, "rc %d bad %p", rc, (void *)bad);
	rc = ibv_post_recv(qp, &rwr, &rbad);
	CHECK("post_recv_reset", rc == EINVAL && rbad == &rwr, "rc %d", rc);
	/* INIT, then a missing required attribute for RTR (no AV, no dest QPN) */
	rc = to_init(qp, false);
	CHECK("reset_to_init", rc == 0, "rc %d", rc);
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	CHECK("rtr_missing_attrs", rc == EINVAL, "rc %d", rc);
	/* out-of-range SGEs on a receive (INIT accepts receives) */
	rwr.num_sge = 3; /* max_recv_sge 2 */
	rc = ibv_post_recv(qp, &rwr, &rbad);
	CHECK("recv_too_many_sge", rc == EINVAL && rbad == &rwr, "rc %d", rc);
	rwr.num_sge = -1;
	rc = ibv_post_recv(qp, &rwr, &rbad);
	CHECK("recv_negative_sge", rc == EINVAL, "rc %d", rc);
	rwr.num_sge = 1;
	/* an SGE past the end of its MR, and a wrong lkey: posted, as on rxe (the completion
	 * status when a message lands: rv_badinput) */
	struct ibv_sge past = {
	    .addr = (uintptr_t)buf + sizeof(buf) - 8, .length = 64, .lkey = mr->lkey};
	struct ibv_recv_wr pw = {.wr_id = 3, .sg_list = &past, .num_sge = 1};

	rc = ibv_post_recv(qp, &pw, &rbad);
	CHECK("recv_sge_past_mr", rc == 0, "rc %d", rc);
	past = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey ^ 0x5a5a00};
	rc = ibv_post_recv(qp, &pw, &rbad);
	CHECK("recv_wrong_lkey", rc == 0, "rc %d", rc);
	/* busy objects */
	rc = ibv_destroy_cq(cq);
	CHECK("destroy_cq_in_use", rc == EBUSY, "rc %d", rc);
	rc = ibv_dealloc_pd(pd);
	CHECK("dealloc_pd_in_use", rc == EBUSY, "rc %d", rc);
	/* what rnic0 does not offer: libibverbs' own errno for a missing op */
	errno = 0;
	CHECK("alloc_mw", !ibv_alloc_mw(pd, IBV_MW_TYPE_1) && errno == EOPNOTSUPP, "errno %d",
	      errno);
	errno = 0;
	struct ibv_cq_init_attr_ex cx = {.cqe = 16};

	CHECK("create_cq_ex", !ibv_create_cq_ex(c, &cx) && errno == EOPNOTSUPP, "errno %d", errno);
	errno = 0;
	struct ibv_xrcd_init_attr xa = {
	    .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1};

	CHECK("open_xrcd", !ibv_open_xrcd(c, &xa) && errno == EOPNOTSUPP, "errno %d", errno);
	errno = 0;
	CHECK("reg_mr_odp",
	      !ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) &&
		  errno == EOPNOTSUPP,
	      "errno %d", errno);
	errno = 0;
	struct ibv_qp_init_attr xi = {.send_cq = cq,
				      .recv_cq = cq,
				      .qp_type = IBV_QPT_XRC_SEND,
				      .cap = {.max_send_wr = 1, .max_send_sge = 1}};

	CHECK("create_qp_xrc", !ibv_create_qp(pd, &xi) && errno == EOPNOTSUPP, "errno %d", errno);
	errno = 0;
	struct ibv_alloc_dm_attr dma = {.length = 4096};

	CHECK("alloc_dm", !ibv_alloc_dm(c, &dma) && errno == EOPNOTSUPP, "errno %d", errno);
	/* a UD QP: sends complete without a peer's answer; a CQ smaller than the sends */
	struct ibv_cq *small = ibv_create_cq(c, 2, NULL, NULL, 0);
	struct ibv_qp *ud = small ? make_qp(pd, small, IBV_QPT_UD, 16) : NULL;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

	aa.grh.dgid.raw[10] = 0xff;
	aa.grh.dgid.raw[11] = 0xff;
	inet_pton(AF_INET, peer, &aa.grh.dgid.raw[12]);
	aa.grh.hop_limit = 64;
	struct ibv_ah *ah = ud ? ibv_create_ah(pd, &aa) : NULL;

	CHECK("ud_setup", small && ud && ah, "errno %d", errno);
	if (small && ud && ah) {
		rc = to_init(ud, true);
		a.qp_state = IBV_QPS_RTR;
		rc |= ibv_modify_qp(ud, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 1;
		rc |= ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		CHECK("ud_rts", rc == 0, "rc %d", rc);
		struct ibv_send_wr u = {.sg_list = &sge,
					.num_sge = 1,
					.opcode = IBV_WR_SEND,
					.send_flags = IBV_SEND_SIGNALED};

		u.wr.ud.ah = ah;
		u.wr.ud.remote_qpn = 0x11;
		u.wr.ud.remote_qkey = 0x11111111;
		/* larger than the MTU: refused at post (a UD message is one packet) */
		struct ibv_sge big = {.addr = (uintptr_t)buf, .length = 8192, .lkey = mr->lkey};
		struct ibv_send_wr b = u;

		b.sg_list = &big;
		rc = ibv_post_send(ud, &b, &bad);
		CHECK("ud_larger_than_mtu", rc == EINVAL, "rc %d", rc);
		int posted = 0, polled = 0;

		for (int i = 0; i < 8; i++) {
			u.wr_id = (uint64_t)i;
			if (ibv_post_send(ud, &u, &bad) == 0)
				posted++;
		}
		struct ibv_wc wc[16];

		for (int t = 0; t < 2000 && polled < posted; t++) {
			int n = ibv_poll_cq(small, 16, wc);

			if (n < 0)
				break;
			polled += n;
			usleep(500);
		}
		/* the CQ holds at least what it was asked for; nothing is lost silently */
		printf("cq_overrun posted %d polled %d\n", posted, polled);
		CHECK("cq_overrun_no_crash", posted > 0 && polled > 0 && polled <= posted,
		      "posted %d polled %d", posted, polled);
		ibv_destroy_qp(ud);
		ibv_destroy_ah(ah);
	}
	if (small)
		ibv_destroy_cq(small);
	rc = ibv_destroy_qp(qp);
	CHECK("destroy_qp", rc == 0, "rc %d", rc);
	CHECK("dereg_mr", ibv_dereg_mr(mr) == 0, "failed");
	CHECK("destroy_cq", ibv_destroy_cq(cq) == 0, "failed");
	CHECK("dealloc_pd", ibv_dealloc_pd(pd) == 0, "failed");
	ibv_close_device(c);
	return failures;
}

/* ---- two threads on one QP and CQ ---- */

struct peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
};

static int
tcp_exchange(const char *ip, int port, const struct peer *mine, struct peer *theirs)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), fd = -1, one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	if (ip) {
		inet_pton(AF_INET, ip, &sa.sin_addr);
		for (int t = 0; t < 100; t++) {
			if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
				fd = s;
				break;
			}
			usleep(100000);
		}
	} else {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(s, 1) == 0)
			fd = accept(s, NULL, NULL);
		close(s);
	}
	if (fd < 0)
		return -1;
	if (write(fd, mine, sizeof(*mine)) != (ssize_t)sizeof(*mine) ||
	    read(fd, theirs, sizeof(*theirs)) != (ssize_t)sizeof(*theirs))
		fd = -1;
	return fd;
}

static int
connect_rc(struct ibv_qp *qp, const struct peer *p, uint32_t my_psn)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
				.path_mtu = IBV_MTU_1024,
				.dest_qp_num = p->qpn,
				.rq_psn = p->psn,
				.max_dest_rd_atomic = 1,
				.min_rnr_timer = 12,
				.ah_attr = {.is_global = 1, .port_num = 1}};
	int rc;

	memcpy(a.ah_attr.grh.dgid.raw, p->gid, 16);
	a.ah_attr.grh.hop_limit = 64;
	rc = ibv_modify_qp(qp, &a,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

struct tctx {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	int n, depth;
	atomic_int outstanding;
	int completed, errors, order_errors;
};

static void
fill(uint8_t *p, int i)
{
	for (int k = 0; k < MSG; k++)
		p[k] = (uint8_t)(i * 7 + k);
}

static void *
poller(void *arg)
{
	struct tctx *t = arg;
	struct ibv_wc wc[32];

	while (t->completed < t->n) {
		int got = ibv_poll_cq(t->cq, 32, wc);

		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				t->errors++;
			if (wc[i].wr_id != (uint64_t)t->completed)
				t->order_errors++;
			t->completed++;
			atomic_fetch_sub(&t->outstanding, 1);
		}
		if (got < 0)
			break;
	}
	return NULL;
}

static int
do_threads(const char *ip, int port, int n)
{
	struct ibv_context *c = open_rnic0();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 4096, NULL, NULL, 0);
	size_t len = (size_t)n * MSG;
	uint8_t *buf = calloc(1, len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_RC, ip ? 64 : (uint32_t)n);
	struct peer me = {.qpn = qp ? qp->qp_num : 0,
			  .psn = ip ? 0x1234 : 0x4321,
			  .rkey = mr ? mr->rkey : 0,
			  .addr = (uintptr_t)buf},
		    them;

	if (!pd || !cq || !buf || !mr || !qp || to_init(qp, false)) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}
	ibv_query_gid(c, 1, 0, (union ibv_gid *)me.gid);
	if (!ip) /* the receiver: every receive posted before the sender starts */
		for (int i = 0; i < n; i++) {
			struct ibv_sge s = {.addr = (uintptr_t)buf + (size_t)i * MSG,
					    .length = MSG,
					    .lkey = mr->lkey};
			struct ibv_recv_wr r = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1},
					   *bad;

			if (ibv_post_recv(qp, &r, &bad)) {
				printf("FAIL post_recv %d\n", i);
				return 1;
			}
		}
	int fd = tcp_exchange(ip, port, &me, &them);

	if (fd < 0 || connect_rc(qp, &them, me.psn)) {
		printf("FAIL connect: %s\n", strerror(errno));
		return 1;
	}
	char go = 1;

	if (!ip) { /* ready: the client may send */
		if (write(fd, &go, 1) != 1)
			return 1;
		struct ibv_wc wc[32];
		int got = 0, bad_data = 0, order = 0, err = 0;

		while (got < n) {
			int k = ibv_poll_cq(cq, 32, wc);

			for (int i = 0; i < k; i++, got++) {
				uint8_t want[MSG];

				err += wc[i].status != IBV_WC_SUCCESS;
				order += wc[i].wr_id != (uint64_t)got;
				fill(want, got);
				bad_data += wc[i].byte_len != MSG ||
					    memcmp(buf + (size_t)got * MSG, want, MSG) != 0;
			}
			if (k < 0)
				break;
		}
		CHECK("server_received", got == n && !err, "got %d errors %d", got, err);
		CHECK("server_in_order", order == 0, "%d out of order", order);
		CHECK("server_bytes", bad_data == 0, "%d messages differ", bad_data);
		if (write(fd, &got, sizeof(got)) != (ssize_t)sizeof(got))
			return 1;
		/* the client's RDMA WRITE with a wrong rkey arrives while this side waits */
		if (read(fd, &go, 1) != 1)
			return 1;
	} else {
		struct tctx t = {.qp = qp, .cq = cq, .mr = mr, .buf = buf, .n = n, .depth = 64};
		pthread_t th;

		if (read(fd, &go, 1) != 1)
			return 1;
		pthread_create(&th, NULL, poller, &t);
		for (int i = 0; i < n; i++) { /* this thread posts, the other polls */
			while (atomic_load(&t.outstanding) >= t.depth)
				sched_yield();
			fill(buf + (size_t)i * MSG, i);
			struct ibv_sge s = {.addr = (uintptr_t)buf + (size_t)i * MSG,
					    .length = MSG,
					    .lkey = mr->lkey};
			struct ibv_send_wr w = {.wr_id = (uint64_t)i,
						.sg_list = &s,
						.num_sge = 1,
						.opcode = IBV_WR_SEND,
						.send_flags = IBV_SEND_SIGNALED},
					   *bad;

			atomic_fetch_add(&t.outstanding, 1);
			if (ibv_post_send(qp, &w, &bad)) {
				printf("FAIL post_send %d\n", i);
				return 1;
			}
		}
		pthread_join(th, NULL);
		int srv = -1;

		if (read(fd, &srv, sizeof(srv)) != (ssize_t)sizeof(srv))
			srv = -1;
		CHECK("client_completed", t.completed == n && !t.errors, "completed %d errors %d",
		      t.completed, t.errors);
		CHECK("client_in_order", t.order_errors == 0, "%d out of order", t.order_errors);
		CHECK("server_count", srv == n, "server got %d", srv);
		/* an RDMA WRITE with an rkey the peer never gave: NAK remote access error
		 * (IBV_WC_REM_ACCESS_ERR), and the QP goes to the error state */
		struct ibv_sge s1 = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
		struct ibv_send_wr w1 = {.wr_id = 999999,
					 .sg_list = &s1,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad1;
		struct ibv_wc wc1;
		int got1 = 0;

		w1.wr.rdma.rkey = them.rkey ^ 0x00abcd00;
		w1.wr.rdma.remote_addr = them.addr;
		int prc = ibv_post_send(qp, &w1, &bad1);

		for (int tries = 0; prc == 0 && tries < 20000 && got1 == 0; tries++) {
			got1 = ibv_poll_cq(cq, 1, &wc1);
			if (got1 == 0)
				usleep(1000);
		}
		CHECK("wrong_rkey_rem_access_err",
		      prc == 0 && got1 == 1 && wc1.wr_id == 999999 &&
			  wc1.status == IBV_WC_REM_ACCESS_ERR,
		      "post %d got %d status %s", prc, got1,
		      got1 == 1 ? ibv_wc_status_str(wc1.status) : "-");
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;

		CHECK("wrong_rkey_qp_error",
		      ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia) == 0 && qa.qp_state == IBV_QPS_ERR,
		      "state %d", qa.qp_state);
		if (write(fd, &go, 1) != 1)
			return 1;
	}
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	free(buf);
	return failures;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "affinity") == 0)
		return do_affinity();
	if (argc >= 2 && strcmp(argv[1], "fork") == 0)
		return do_fork();
	if (argc >= 3 && strcmp(argv[1], "badinput") == 0)
		return do_badinput(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "threads-server") == 0)
		return do_threads(NULL, atoi(argv[2]), atoi(argv[3]));
	if (argc >= 5 && strcmp(argv[1], "threads-client") == 0)
		return do_threads(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr,
		"usage: rv_selftest affinity | fork | badinput PEER_IP | threads-server PORT N | "
		"threads-client IP PORT N\n");
	return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
