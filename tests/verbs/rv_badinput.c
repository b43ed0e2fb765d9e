/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_badinput: bad work requests and QP transitions on any ibverbs device, one line of
 * outcome per case ("case NAME: OUTCOME"), so that the same binary run on rnic0 (under
 * rnic-exec) and on Linux rxe gives outputs that can be compared line for line
 * (tests/netns/test_verbs_badinput.py, tests/interop/test_verbs_rxe.py).
 *
 *   rv_badinput DEV GID_INDEX server PORT
 *   rv_badinput DEV GID_INDEX client SERVER_IP PORT
 *
 * The client runs the cases; each case that needs a connected RC QP gets a fresh pair
 * (an error moves a QP to the error state), set up over the TCP connection. Outcomes are
 * an errno name at post / modify time, or the completion status (ibv_wc_status_str).
 * Exit status: 0 when every case ran (whatever its outcome), 1 on a setup failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define DEPTH 16

struct wire {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
	char round[24];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static int gidx, sock = -1;
static union ibv_gid my_gid;

static void
die(const char *what)
{
	fprintf(stderr, "rv_badinput: %s: %s\n", what, strerror(errno));
	exit(1);
}

static const char *
errname(int rc)
{
	static char b[32];

	switch (rc) {
	case 0:
		return "ok";
	case EINVAL:
		return "EINVAL";
	case ENOMEM:
		return "ENOMEM";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EBUSY:
		return "EBUSY";
	case EPERM:
		return "EPERM";
	case EFAULT:
		return "EFAULT";
	default:
		snprintf(b, sizeof(b), "errno%d", rc);
		return b;
	}
}

static void __attribute__((format(printf, 2, 3))) outcome(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("case %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void
xfer(void *p, size_t n, bool out)
{
	uint8_t *c = p;

	while (n) {
		ssize_t k = out ? write(sock, c, n) : read(sock, c, n);

		if (k <= 0)
			die(out ? "write to the peer" : "read from the peer (peer gone)");
		c += k;
		n -= (size_t)k;
	}
}

static struct ibv_qp *
new_qp(struct ibv_cq *cq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {
		.max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 2, .max_recv_sge = 2}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	if (cap)
		*cap = ia.cap;
	return qp;
}

static int
to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags =
				    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void
connect_qp(struct ibv_qp *qp, const struct wire *peer)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
				.path_mtu = IBV_MTU_1024,
				.dest_qp_num = peer->qpn,
				.rq_psn = peer->psn,
				.max_dest_rd_atomic = 1,
				.min_rnr_timer = 12,
				.ah_attr = {.is_global = 1, .port_num = 1}};

	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (to_init(qp) ||
	    ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static void sync_peer(void);

/* a fresh QP of this side, its description exchanged with the peer's */
static struct ibv_qp *
pair_up(struct ibv_cq *cq, const char *round, struct wire *peer, bool client)
{
	struct ibv_qp *qp = new_qp(cq, NULL);
	struct wire me = {
	    .qpn = qp->qp_num, .psn = 0x100, .rkey = mr->rkey, .addr = (uintptr_t)buf};

	memcpy(me.gid, my_gid.raw, 16);
	snprintf(me.round, sizeof(me.round), "%s", round);
	if (client) {
		xfer(&me, sizeof(me), true);
		xfer(peer, sizeof(*peer), false);
	} else {
		xfer(peer, sizeof(*peer), false);
		snprintf(me.round, sizeof(me.round), "%s", peer->round);
		xfer(&me, sizeof(me), true);
	}
	connect_qp(qp, peer);
	sync_peer(); /* both QPs are in RTS before the case posts */
	return qp;
}

static void
sync_peer(void)
{
	char c = 'd';

	xfer(&c, 1, true);
	xfer(&c, 1, false);
}

/* Completions of @cq within ~3 s, at most @max; returns how many. */
static int
poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int max, int want)
{
	int got = 0;

	for (int t = 0; t < 3000 && got < want; t++) {
		int n = ibv_poll_cq(cq, max - got, wc + got);

		if (n < 0)
			break;
		got += n;
		if (got < want)
			usleep(1000);
	}
	return got;
}

static void
post_one(const char *name, struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	int rc = ibv_post_send(qp, wr, &bad);

	if (rc) {
		outcome(name, "post %s%s", errname(rc), bad == wr ? "" : " (bad_wr not set)");
		return;
	}
	if (poll_for(cq, &wc, 1, 1) != 1) {
		outcome(name, "post ok, %s", "no completion in 3 s");
		return;
	}
	outcome(name, "post ok, completion %s%s", ibv_wc_status_str(wc.status),
		wc.wr_id == wr->wr_id ? "" : " (wrong wr_id)");
}

static void
local_cases(struct ibv_cq *cq)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = new_qp(cq, &cap);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;
	struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1}, *rbad = NULL;
	int rc;

	/* QP state jumps (IBTA Vol. 1 10.3.1: RESET goes to INIT only) */
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	outcome("reset_to_rts", "%s", errname(rc));
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	outcome("reset_to_rtr", "%s", errname(rc));
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	rc = ibv_query_qp(qp, &q, IBV_QP_STATE, &qi);
	outcome("state_after_jumps", "%s",
		rc			      ? errname(rc)
		: q.qp_state == IBV_QPS_RESET ? "RESET"
					      : "not RESET");
	/* posting on a RESET QP */
	rc = ibv_post_send(qp, &wr, &bad);
	outcome("post_send_reset", "%s", errname(rc));
	rc = ibv_post_recv(qp, &rwr, &rbad);
	outcome("post_recv_reset", "%s", errname(rc));
	rc = to_init(qp);
	outcome("reset_to_init", "%s", errname(rc));
	a.qp_state = IBV_QPS_RTS;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	outcome("init_to_rts", "%s", errname(rc));
	/* more SGEs than the QP's receive queue takes */
	struct ibv_sge many[8];

	for (int i = 0; i < 8; i++)
		many[i] = sge;
	rwr.sg_list = many;
	rwr.num_sge = (int)cap.max_recv_sge + 1;
	rc = ibv_post_recv(qp, &rwr, &rbad);
	outcome("recv_too_many_sge", "%s", errname(rc));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ibv_destroy_qp(qp);
}

static void
client(const char *ip, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct wire peer;

	if (!cq)
		die("ibv_create_cq");
	inet_pton(AF_INET, ip, &sa.sin_addr);
	sock = socket(AF_INET, SOCK_STREAM, 0);
	for (int i = 0; i < 100 && connect(sock, (struct sockaddr *)&sa, sizeof(sa)); i++)
		usleep(100000);
	local_cases(cq);

	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_qp *qp;

	/* a good WRITE first: the pair works (a negative control for the cases below) */
	qp = pair_up(cq, "write_ok", &peer, true);
	wr.wr.rdma.remote_addr = peer.addr;
	wr.wr.rdma.rkey = peer.rkey;
	post_one("write_ok", qp, cq, &wr);
	sync_peer();
	ibv_destroy_qp(qp);

	/* more SGEs than the send queue takes */
	struct ibv_qp_cap cap;
	struct ibv_sge many[8];

	qp = pair_up(cq, "send_too_many_sge", &peer, true);
	ibv_destroy_qp(new_qp(cq, &cap)); /* the caps a QP like this one gets */
	for (int i = 0; i < 8; i++)
		many[i] = sge;
	struct ibv_send_wr mw = wr;

	mw.sg_list = many;
	mw.num_sge = (int)cap.max_send_sge + 1;
	mw.wr.rdma.remote_addr = peer.addr;
	mw.wr.rdma.rkey = peer.rkey;
	post_one("send_too_many_sge", qp, cq, &mw);
	sync_peer();
	ibv_destroy_qp(qp);

	/* a wrong lkey */
	qp = pair_up(cq, "write_wrong_lkey", &peer, true);
	struct ibv_sge bs = sge;

	bs.lkey = mr->lkey ^ 0x5a5a00;
	struct ibv_send_wr bw = wr;

	bw.sg_list = &bs;
	bw.wr.rdma.remote_addr = peer.addr;
	bw.wr.rdma.rkey = peer.rkey;
	post_one("write_wrong_lkey", qp, cq, &bw);
	sync_peer();
	ibv_destroy_qp(qp);

	/* an SGE past the end of its MR */
	qp = pair_up(cq, "write_sge_past_mr", &peer, true);
	bs = (struct ibv_sge){.addr = (uintptr_t)buf + BUF - 8, .length = 64, .lkey = mr->lkey};
	bw.wr.rdma.remote_addr = peer.addr;
	bw.wr.rdma.rkey = peer.rkey;
	post_one("write_sge_past_mr", qp, cq, &bw);
	sync_peer();
	ibv_destroy_qp(qp);

	/* a wrong rkey: the responder's NAK (remote access error) */
	qp = pair_up(cq, "write_wrong_rkey", &peer, true);
	bw = wr;
	bw.wr.rdma.remote_addr = peer.addr;
	bw.wr.rdma.rkey = peer.rkey ^ 0x5a5a00;
	post_one("write_wrong_rkey", qp, cq, &bw);
	sync_peer();
	ibv_destroy_qp(qp);

	/* a remote range past the peer's MR */
	qp = pair_up(cq, "write_past_remote_mr", &peer, true);
	bw = wr;
	bw.wr.rdma.remote_addr = peer.addr + BUF - 8;
	bw.wr.rdma.rkey = peer.rkey;
	post_one("write_past_remote_mr", qp, cq, &bw);
	sync_peer();
	ibv_destroy_qp(qp);

	/* a CQ overrun: more signaled WRITEs than the CQ holds, none polled until all ran */
	struct ibv_cq *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);

	if (!small)
		die("ibv_create_cq (small)");
	qp = pair_up(small, "cq_overrun", &peer, true);
	int cqe = small->cqe, posted = 0;
	struct ibv_send_wr ow = wr;

	ow.wr.rdma.remote_addr = peer.addr;
	ow.wr.rdma.rkey = peer.rkey;
	struct ibv_send_wr *bad;

	for (int i = 0; i < cqe + 4 && i < DEPTH; i++) {
		ow.wr_id = 100 + (uint64_t)i;
		if (ibv_post_send(qp, &ow, &bad) == 0)
			posted++;
	}
	usleep(1500000);
	struct ibv_wc wc[64];
	int got = poll_for(small, wc, 64, cqe);
	int n;

	usleep(200000);
	while ((n = ibv_poll_cq(small, 64 - got, wc + got)) > 0)
		got += n;
	int ok = 0;

	for (int i = 0; i < got; i++)
		ok += wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == 100 + (uint64_t)i;
	printf("# cq_overrun: cq->cqe %d, posted %d, polled %d (%d successful in order)\n", cqe,
	       posted, got, ok);
	outcome("cq_overrun", "%s",
		posted == cqe + 4 && got == cqe && ok == cqe
		    ? "the CQ's cqe completions, the rest lost"
		: got == posted ? "every completion"
				: "other (see the # line)");
	sync_peer();
	ibv_destroy_qp(qp);
	ibv_destroy_cq(small);

	/* the server SENDs to a receive with a wrong lkey */
	qp = pair_up(cq, "recv_wrong_lkey", &peer, true);
	bs = sge;
	bs.lkey = mr->lkey ^ 0x5a5a00;
	struct ibv_recv_wr rw = {.wr_id = 9, .sg_list = &bs, .num_sge = 1}, *rbad;
	int rc = ibv_post_recv(qp, &rw, &rbad);

	if (rc) {
		outcome("recv_wrong_lkey", "post %s", errname(rc));
	} else {
		sync_peer(); /* posted: the server sends now */
		if (poll_for(cq, wc, 1, 1) == 1)
			outcome("recv_wrong_lkey", "post ok, completion %s",
				ibv_wc_status_str(wc[0].status));
		else
			outcome("recv_wrong_lkey", "post ok, %s", "no completion in 3 s");
	}
	sync_peer();
	ibv_destroy_qp(qp);
	struct wire end = {.round = "end"};

	xfer(&end, sizeof(end), true);
	ibv_destroy_cq(cq);
}

static void
server(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);

	if (!cq)
		die("ibv_create_cq");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen");
	sock = accept(ls, NULL, NULL);
	if (sock < 0)
		die("accept");
	for (;;) {
		struct wire peer;
		struct ibv_qp *qp = new_qp(cq, NULL);
		struct wire me = {
		    .qpn = qp->qp_num, .psn = 0x100, .rkey = mr->rkey, .addr = (uintptr_t)buf};

		memcpy(me.gid, my_gid.raw, 16);
		xfer(&peer, sizeof(peer), false);
		if (strcmp(peer.round, "end") == 0) {
			ibv_destroy_qp(qp);
			break;
		}
		xfer(&me, sizeof(me), true);
		connect_qp(qp, &peer);
		char s1;

		xfer(&s1, 1, false);
		xfer(&s1, 1, true);
		if (strcmp(peer.round, "recv_wrong_lkey") == 0) {
			char c;

			xfer(&c, 1, false); /* the client's receive is posted */
			struct ibv_sge sge = {
			    .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
			struct ibv_send_wr wr = {.wr_id = 5,
						 .sg_list = &sge,
						 .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED};

			xfer(&c, 1, true);
			post_one("recv_wrong_lkey_sender", qp, cq, &wr);
		}
		char c;

		xfer(&c, 1, false);
		xfer(&c, 1, true);
		struct ibv_wc wc[16];

		while (ibv_poll_cq(cq, 16, wc) > 0) /* flushes of a QP in error, if any */
			;
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

int
main(int argc, char **argv)
{
	if (argc < 5 || (strcmp(argv[3], "client") == 0 && argc < 6)) {
		fprintf(stderr, "usage: rv_badinput DEV GID_INDEX server PORT\n"
				"       rv_badinput DEV GID_INDEX client SERVER_IP PORT\n");
		return 2;
	}
	int n;
	struct ibv_device **l = ibv_get_device_list(&n);

	for (int i = 0; l && i < n && !ctx; i++)
		if (strcmp(ibv_get_device_name(l[i]), argv[1]) == 0)
			ctx = ibv_open_device(l[i]);
	if (!ctx)
		die("open the device");
	ibv_free_device_list(l);
	gidx = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gidx, &my_gid))
		die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF);
	if (!pd || !buf)
		die("ibv_alloc_pd");
	memset(buf, 0x5a, BUF);
	mr = ibv_reg_mr(pd, buf, BUF,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	if (strcmp(argv[3], "server") == 0)
		server(atoi(argv[4]));
	else
		client(argv[4], atoi(argv[5]));
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	printf("done\n");
	return 0;
}
