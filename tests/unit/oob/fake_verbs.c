/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fake_verbs.c
 * A test-only LD_PRELOAD stand-in for libibverbs, just enough for the
 * unmodified Debian perftest (6.06) and ibv_rc_pingpong binaries to run
 * their whole out-of-band TCP exchange on a machine without an RDMA device.
 *
 * It offers one RoCE device "fake0" (port 1, Ethernet link layer, active MTU
 * 1024, GID 0 fe80::1, GID 1 ::ffff:<FAKE_VERBS_IPV4 or 127.0.0.1>) and
 * completes every posted work request at once: a signalled send completes
 * when posted, and a posted receive completes as if a message had come in.
 * That makes the bandwidth tests and send/read latency tests run to their
 * end. For the RDMA-write latency test (which polls its own memory for the
 * peer's write) FAKE_VERBS_ECHO makes each posted RDMA write also appear in
 * the local receive half of the largest registered buffer, as the peer's
 * answer would: "answer" for the side that writes first (the server, in
 * perftest 6.06), "first" for the side that waits first (it also finds the
 * first "incoming" value there when its QP goes to RTS).
 *
 * No data goes anywhere: this is only for exercising the TCP side.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#undef ibv_query_port
#undef ibv_reg_mr

#define FV_CQ_RING 65536u

struct fv_cq {
	struct ibv_cq cq;
	struct ibv_wc *ring;
	unsigned head, tail; /* tail - head entries pending */
	pthread_mutex_t lock;
};

struct fv_qp {
	struct ibv_qp_ex qpx;
	struct fv_cq *scq, *rcq;
	int sig_all;
	/* wr API state */
	enum ibv_wc_opcode cur_op;
	int cur_valid;
	int cur_signaled;
	uint64_t cur_wr_id;
	enum ibv_wr_opcode cur_wr_opcode;
	uint64_t cur_sge_addr;
	uint32_t cur_sge_len;
};

static struct ibv_device fv_dev;
static struct ibv_device *fv_list[2];
static uint32_t fv_next_qpn = 0x11;
static uint32_t fv_next_key = 0x203;

/* The one registered data buffer perftest uses (the largest MR). */
static char *fv_mr_addr;
static size_t fv_mr_len;

static void
fv_echo_fill(char v)
{
	if (fv_mr_addr && fv_mr_len >= 2)
		memset(fv_mr_addr + fv_mr_len / 2, v, fv_mr_len / 2);
}

static void
fv_cq_push(struct fv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len, uint32_t qpn)
{
	pthread_mutex_lock(&cq->lock);
	if (cq->tail - cq->head < FV_CQ_RING) {
		struct ibv_wc *wc = &cq->ring[cq->tail % FV_CQ_RING];
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = wr_id;
		wc->status = IBV_WC_SUCCESS;
		wc->opcode = op;
		wc->byte_len = len;
		wc->qp_num = qpn;
		cq->tail++;
	}
	pthread_mutex_unlock(&cq->lock);
}

static int
fv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fv_cq *cq = (struct fv_cq *)ibcq;
	int got = 0;
	pthread_mutex_lock(&cq->lock);
	while (got < n && cq->head != cq->tail) {
		wc[got++] = cq->ring[cq->head % FV_CQ_RING];
		cq->head++;
	}
	pthread_mutex_unlock(&cq->lock);
	return got;
}

static int
fv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)cq;
	(void)solicited_only;
	return 0;
}

static enum ibv_wc_opcode
fv_wc_op(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

static void
fv_mark(const char *m)
{
	if (getenv("FAKE_VERBS_TRACE")) {
		ssize_t r = write(2, m, strlen(m));
		(void)r;
	}
}

static void
fv_echo(enum ibv_wr_opcode op, uint64_t addr, uint32_t len)
{
	const char *mode = getenv("FAKE_VERBS_ECHO");
	if (!mode || op != IBV_WR_RDMA_WRITE || len == 0)
		return;
	char last = *(const char *)(uintptr_t)(addr + len - 1);
	if (!strcmp(mode, "answer"))
		fv_echo_fill(last);
	else if (!strcmp(mode, "first")) {
		/* FAKE_VERBS_ITERS: perftest's -n, after which the count starts anew (-a) */
		const char *it = getenv("FAKE_VERBS_ITERS");
		if (it && last == (char)atoi(it))
			fv_echo_fill(1);
		else
			fv_echo_fill((char)(last + 1));
	}
}

static int
fv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fv_qp *qp = (struct fv_qp *)ibqp;
	(void)bad;
	fv_mark("@post_send\n");
	for (; wr; wr = wr->next) {
		uint32_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (wr->num_sge > 0)
			fv_echo(wr->opcode, wr->sg_list[0].addr, wr->sg_list[0].length);
		if (qp->sig_all || (wr->send_flags & IBV_SEND_SIGNALED))
			fv_cq_push(qp->scq, wr->wr_id, fv_wc_op(wr->opcode), len, ibqp->qp_num);
	}
	return 0;
}

static int
fv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fv_qp *qp = (struct fv_qp *)ibqp;
	(void)bad;
	fv_mark("@post_recv\n");
	for (; wr; wr = wr->next) {
		uint32_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		fv_cq_push(qp->rcq, wr->wr_id, IBV_WC_RECV, len, ibqp->qp_num);
	}
	return 0;
}

static int
fv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)srq;
	(void)wr;
	(void)bad;
	return 0;
}

/* ---- the wr_* API ---- */
static void
fv_wr_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct fv_qp *qp = (struct fv_qp *)qpx;
	if (qp->cur_valid && (qp->sig_all || qp->cur_signaled)) {
		fv_cq_push(qp->scq, qp->cur_wr_id, fv_wc_op(qp->cur_wr_opcode), qp->cur_sge_len,
			   qpx->qp_base.qp_num);
	}
	if (qp->cur_valid)
		fv_echo(qp->cur_wr_opcode, qp->cur_sge_addr, qp->cur_sge_len);
	qp->cur_valid = 1;
	qp->cur_wr_opcode = op;
	qp->cur_wr_id = qpx->wr_id;
	qp->cur_signaled = !!(qpx->wr_flags & IBV_SEND_SIGNALED);
	qp->cur_sge_addr = 0;
	qp->cur_sge_len = 0;
}

static void
fv_wr_start(struct ibv_qp_ex *qpx)
{
	((struct fv_qp *)qpx)->cur_valid = 0;
}

static int
fv_wr_complete(struct ibv_qp_ex *qpx)
{
	struct fv_qp *qp = (struct fv_qp *)qpx;
	fv_mark("@post_send\n");
	if (qp->cur_valid) {
		fv_echo(qp->cur_wr_opcode, qp->cur_sge_addr, qp->cur_sge_len);
		if (qp->sig_all || qp->cur_signaled)
			fv_cq_push(qp->scq, qp->cur_wr_id, fv_wc_op(qp->cur_wr_opcode),
				   qp->cur_sge_len, qpx->qp_base.qp_num);
	}
	qp->cur_valid = 0;
	return 0;
}

static void
fv_wr_abort(struct ibv_qp_ex *qpx)
{
	((struct fv_qp *)qpx)->cur_valid = 0;
}

static void
fv_wr_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{
	(void)rkey;
	(void)ra;
	fv_wr_begin(q, IBV_WR_RDMA_WRITE);
}

static void
fv_wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, __be32 imm)
{
	(void)rkey;
	(void)ra;
	(void)imm;
	fv_wr_begin(q, IBV_WR_RDMA_WRITE_WITH_IMM);
}

static void
fv_wr_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{
	(void)rkey;
	(void)ra;
	fv_wr_begin(q, IBV_WR_RDMA_READ);
}

static void
fv_wr_send(struct ibv_qp_ex *q)
{
	fv_wr_begin(q, IBV_WR_SEND);
}

static void
fv_wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	(void)imm;
	fv_wr_begin(q, IBV_WR_SEND_WITH_IMM);
}

static void
fv_wr_cas(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t c, uint64_t s)
{
	(void)rkey;
	(void)ra;
	(void)c;
	(void)s;
	fv_wr_begin(q, IBV_WR_ATOMIC_CMP_AND_SWP);
}

static void
fv_wr_faa(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t add)
{
	(void)rkey;
	(void)ra;
	(void)add;
	fv_wr_begin(q, IBV_WR_ATOMIC_FETCH_AND_ADD);
}

static void
fv_wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct fv_qp *qp = (struct fv_qp *)q;
	(void)lkey;
	qp->cur_sge_addr = addr;
	qp->cur_sge_len = len;
}

static void
fv_wr_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *sg)
{
	if (n > 0)
		fv_wr_set_sge(q, sg[0].lkey, sg[0].addr, sg[0].length);
}

static void
fv_wr_set_inline_data(struct ibv_qp_ex *q, void *addr, size_t len)
{
	fv_wr_set_sge(q, 0, (uintptr_t)addr, (uint32_t)len);
}

static void
fv_wr_set_inline_data_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *b)
{
	if (n > 0)
		fv_wr_set_inline_data(q, b[0].addr, b[0].length);
}

static void
fv_wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)q;
	(void)ah;
	(void)qpn;
	(void)qkey;
}

static void
fv_wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	(void)q;
	(void)srqn;
}

/* ---- device, context, port ---- */
static int
fv_query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len)
{
	struct ibv_port_attr a;
	(void)ctx;
	if (port != 1)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	a.state = IBV_PORT_ACTIVE;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu =
	    getenv("FAKE_VERBS_MTU") ? (enum ibv_mtu)atoi(getenv("FAKE_VERBS_MTU")) : IBV_MTU_1024;
	a.gid_tbl_len = 2;
	a.port_cap_flags = 0;
	a.max_msg_sz = 0x80000000u;
	a.pkey_tbl_len = 1;
	a.lid = 0;
	a.active_width = 1;
	a.active_speed = 1;
	a.phys_state = 5;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	return fv_query_port_ex(context, port_num, (struct ibv_port_attr *)port_attr,
				sizeof(struct ibv_port_attr));
}

static int
fv_gid(int index, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (index == 0) {
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		gid->raw[15] = 1;
		return 0;
	}
	if (index == 1) {
		const char *ip = getenv("FAKE_VERBS_IPV4");
		struct in_addr in;
		if (!ip || inet_pton(AF_INET, ip, &in) != 1)
			in.s_addr = htonl(0x7f000001);
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &in.s_addr, 4);
		return 0;
	}
	return EINVAL;
}

int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	(void)context;
	(void)port_num;
	return fv_gid(index, gid) ? -1 : 0;
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	(void)context;
	(void)flags;
	(void)entry_size;
	memset(entry, 0, sizeof(*entry));
	if (fv_gid((int)gid_index, &entry->gid))
		return ENODATA;
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = 1;
	return 0;
}

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	(void)context;
	(void)port_num;
	(void)index;
	*pkey = htons(0xffff);
	return 0;
}

static void
fv_fill_dev_attr(struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "0.0.0");
	a->max_mr_size = ~0ull;
	a->page_size_cap = 0xfffff000u;
	a->vendor_id = 0xffffff;
	a->max_qp = 1024;
	a->max_qp_wr = 16384;
	a->device_cap_flags = 0;
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = 1024;
	a->max_cqe = 65536;
	a->max_mr = 1024;
	a->max_pd = 1024;
	a->max_qp_rd_atom = 128;
	a->max_qp_init_rd_atom = 128;
	a->max_res_rd_atom = 1024;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = 1024;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 32;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	(void)context;
	fv_fill_dev_attr(device_attr);
	return 0;
}

static int
fv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	(void)context;
	(void)in;
	memset(&a, 0, sizeof(a));
	fv_fill_dev_attr(&a.orig_attr);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l = calloc(2, sizeof(*l));
	if (!fv_dev.name[0]) {
		fv_dev.node_type = IBV_NODE_CA;
		fv_dev.transport_type = IBV_TRANSPORT_IB;
		snprintf(fv_dev.name, sizeof(fv_dev.name), "fake0");
		snprintf(fv_dev.dev_name, sizeof(fv_dev.dev_name), "uverbs0");
		snprintf(fv_dev.dev_path, sizeof(fv_dev.dev_path), "/nonexistent/uverbs0");
		snprintf(fv_dev.ibdev_path, sizeof(fv_dev.ibdev_path), "/nonexistent/fake0");
		fv_list[0] = &fv_dev;
	}
	if (!l)
		return NULL;
	l[0] = &fv_dev;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	(void)device;
	return 0;
}

static struct ibv_qp *fv_create_qp_common(struct ibv_pd *pd, struct ibv_qp_init_attr_ex *ia);

static struct ibv_qp *
fv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ia)
{
	(void)context;
	return fv_create_qp_common(ia->pd, ia);
}

static int
fv_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	(void)srq;
	*num = 0;
	return 0;
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct verbs_context *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->sz = sizeof(*v);
	v->query_port = fv_query_port_ex;
	v->query_device_ex = fv_query_device_ex;
	v->create_qp_ex = fv_create_qp_ex;
	v->get_srq_num = fv_get_srq_num;
	v->context.device = device;
	v->context.cmd_fd = -1;
	v->context.async_fd = -1;
	v->context.num_comp_vectors = 1;
	v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&v->context.mutex, NULL);
	v->context.ops.poll_cq = fv_poll_cq;
	v->context.ops.req_notify_cq = fv_req_notify_cq;
	v->context.ops.post_send = fv_post_send;
	v->context.ops.post_recv = fv_post_recv;
	v->context.ops.post_srq_recv = fv_post_srq_recv;
	return &v->context;
}

int
ibv_close_device(struct ibv_context *context)
{
	(void)context;
	return 0;
}

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (pd) {
		pd->context = context;
		pd->handle = 1;
	}
	return pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct ibv_mr *mr = calloc(1, sizeof(*mr));
	(void)iova;
	(void)access;
	if (!mr)
		return NULL;
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = mr->rkey = fv_next_key;
	fv_next_key += 0x70;
	if (length > fv_mr_len) {
		fv_mr_addr = addr;
		fv_mr_len = length;
	}
	return mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	return 0;
}

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *c = calloc(1, sizeof(*c));
	if (c) {
		c->context = context;
		c->fd = -1;
	}
	return c;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	free(channel);
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	(void)channel;
	(void)cq;
	(void)cq_context;
	errno = ENOSYS;
	return -1;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	(void)cq;
	(void)nevents;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct fv_cq *cq = calloc(1, sizeof(*cq));
	(void)comp_vector;
	if (!cq)
		return NULL;
	cq->ring = calloc(FV_CQ_RING, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return NULL;
	}
	pthread_mutex_init(&cq->lock, NULL);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	return &cq->cq;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct fv_cq *cq = (struct fv_cq *)ibcq;
	free(cq->ring);
	free(cq);
	return 0;
}

static struct ibv_qp *
fv_create_qp_common(struct ibv_pd *pd, struct ibv_qp_init_attr_ex *ia)
{
	struct fv_qp *qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	const char *q = getenv("FAKE_VERBS_QPN");
	if (q && fv_next_qpn == 0x11)
		fv_next_qpn = (uint32_t)strtoul(q, NULL, 0);
	qp->qpx.qp_base.context = pd->context;
	qp->qpx.qp_base.pd = pd;
	qp->qpx.qp_base.send_cq = ia->send_cq;
	qp->qpx.qp_base.recv_cq = ia->recv_cq;
	qp->qpx.qp_base.srq = ia->srq;
	qp->qpx.qp_base.qp_num = fv_next_qpn++;
	qp->qpx.qp_base.qp_type = ia->qp_type;
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	qp->scq = (struct fv_cq *)ia->send_cq;
	qp->rcq = (struct fv_cq *)ia->recv_cq;
	qp->sig_all = ia->sq_sig_all;
	qp->qpx.wr_atomic_cmp_swp = fv_wr_cas;
	qp->qpx.wr_atomic_fetch_add = fv_wr_faa;
	qp->qpx.wr_rdma_read = fv_wr_rdma_read;
	qp->qpx.wr_rdma_write = fv_wr_rdma_write;
	qp->qpx.wr_rdma_write_imm = fv_wr_rdma_write_imm;
	qp->qpx.wr_send = fv_wr_send;
	qp->qpx.wr_send_imm = fv_wr_send_imm;
	qp->qpx.wr_set_ud_addr = fv_wr_set_ud_addr;
	qp->qpx.wr_set_xrc_srqn = fv_wr_set_xrc_srqn;
	qp->qpx.wr_set_inline_data = fv_wr_set_inline_data;
	qp->qpx.wr_set_inline_data_list = fv_wr_set_inline_data_list;
	qp->qpx.wr_set_sge = fv_wr_set_sge;
	qp->qpx.wr_set_sge_list = fv_wr_set_sge_list;
	qp->qpx.wr_start = fv_wr_start;
	qp->qpx.wr_complete = fv_wr_complete;
	qp->qpx.wr_abort = fv_wr_abort;
	if (ia->cap.max_inline_data > 220)
		ia->cap.max_inline_data = 220;
	return &qp->qpx.qp_base;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ia;
	memset(&ia, 0, sizeof(ia));
	memcpy(&ia, attr, sizeof(*attr));
	ia.pd = pd;
	struct ibv_qp *qp = fv_create_qp_common(pd, &ia);
	if (qp)
		attr->cap = ia.cap;
	return qp;
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &((struct fv_qp *)qp)->qpx;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (attr_mask & IBV_QP_STATE) {
		qp->state = attr->qp_state;
		const char *mode = getenv("FAKE_VERBS_ECHO");
		if (attr->qp_state == IBV_QPS_RTS && mode && !strcmp(mode, "first"))
			fv_echo_fill(1);
		fv_mark(attr->qp_state == IBV_QPS_RTS	? "@qp_rts\n"
			: attr->qp_state == IBV_QPS_RTR ? "@qp_rtr\n"
							: "@qp_state\n");
	}
	return 0;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	(void)attr_mask;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = qp->state;
	attr->qkey = 0x11111111;
	if (init_attr)
		memset(init_attr, 0, sizeof(*init_attr));
	return 0;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	free(qp);
	return 0;
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq *s = calloc(1, sizeof(*s));
	(void)attr;
	if (s) {
		s->context = pd->context;
		s->pd = pd;
	}
	return s;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	free(srq);
	return 0;
}

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah = calloc(1, sizeof(*ah));
	(void)attr;
	if (ah) {
		ah->context = pd->context;
		ah->pd = pd;
	}
	return ah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	free(ah);
	return 0;
}
