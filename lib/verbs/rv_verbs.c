/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_verbs.c
 * The libibverbs entry points, interposed (LD_PRELOAD): rnic0 is listed
 * beside the real devices, and every call on an object of rnic0 runs on the
 * engine (lib/roce, through rv_dev.c); every call on a real device's object
 * goes to the real libibverbs (dlvsym with the same symbol version).
 *
 * The objects are laid out as rdma-core 44's <infiniband/verbs.h> defines
 * them, because the hot verbs are inline there and call through them:
 * ibv_post_send / ibv_post_recv / ibv_poll_cq / ibv_req_notify_cq through
 * struct ibv_context.ops; ibv_query_port (a macro), ibv_query_device_ex and
 * ibv_create_qp_ex through struct verbs_context (found from the ibv_context by
 * abi_compat == __VERBS_ABI_IS_EXTENDED and sz); ibv_wr_* through struct
 * ibv_qp_ex's function pointers. rv_verbs.map gives each symbol libibverbs'
 * version node.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_hdr.h"
#include "roce_verbs.h"
#include "rv_int.h"

/* ------------------------------------------------------------------------- */
/* The real libibverbs                                                       */
/* ------------------------------------------------------------------------- */

static void *
real_sym(const char *name, const char *ver)
{
	void *p = dlvsym(RTLD_NEXT, name, ver);

	if (!p) {
		void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);

		p = h ? dlvsym(h, name, ver) : NULL;
	}
	if (!p) {
		fprintf(stderr, "rnic0: libibverbs has no %s@%s\n", name, ver);
		abort();
	}
	return p;
}

#define REAL(name, ver, ...)                                                                       \
	static __typeof__(name) *real_fn;                                                          \
	if (!real_fn)                                                                              \
		real_fn = (__typeof__(name) *)real_sym(#name, ver);                                \
	return real_fn(__VA_ARGS__)

/* ------------------------------------------------------------------------- */
/* Objects                                                                   */
/* ------------------------------------------------------------------------- */

static struct ibv_device rv_device = {
    .node_type = IBV_NODE_CA,
    .transport_type = IBV_TRANSPORT_IB,
    .name = "rnic0",
    .dev_name = "uverbs_rnic0",
};

struct rv_ctx {
	struct verbs_context vc; /* ibv_context last inside: verbs_get_ctx() finds vc */
	int async_pipe[2];
};

struct rv_pd {
	struct ibv_pd pd;
	struct roce_pd *r;
};

struct rv_mr {
	struct ibv_mr mr;
	struct roce_mr *r;
};

struct rv_cq {
	struct ibv_cq cq;
	struct roce_cq *r;
	struct rv_cq *next;  /* rv_cqs */
	unsigned int events; /* delivered by ibv_get_cq_event */
};

struct rv_chan {
	struct ibv_comp_channel ch; /* ch.fd: the read end */
	int wfd;
};

struct rv_ah {
	struct ibv_ah ah;
	struct roce_ah *r;
};

/* ibv_wr_*: work requests gathered between wr_start and wr_complete */
struct rv_wr {
	struct ibv_send_wr wr;
	struct ibv_sge sge[ROCE_MAX_SGE];
	uint8_t *inl; /* a copy of wr_set_inline_data's bytes */
};

struct rv_srq;

struct rv_qp {
	struct ibv_qp_ex qx; /* qx.qp_base is the struct ibv_qp */
	struct roce_qp *r;
	struct rv_srq *srq;
	struct rv_qp *srq_next;
	struct rv_wr *wrs;
	unsigned int nwr, cap_wr;
	int wr_err;    /* an ibv_wr_* call failed: wr_complete returns it */
	uint32_t lent; /* SRQ receive WRs in this QP's receive queue, not yet polled */
	uint32_t max_inline;
};

/* A shared receive queue on top of the engine's per-QP receive queues (docs/verbs.md) */
struct rv_srq_wqe {
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge sge[ROCE_MAX_SGE];
};

struct rv_srq {
	struct ibv_srq srq;
	struct rv_srq_wqe *ring;
	uint32_t max_wr, max_sge, head, count, limit;
	struct rv_qp *qps;
};

static struct rv_cq *rv_cqs; /* under rv.lock: the cq_event op finds the ibv_cq */

static void srq_polled_locked(const struct ibv_wc *wc, int n);

static bool
ours_ctx(const struct ibv_context *c)
{
	return c && c->device == &rv_device;
}

bool
rv_is_rnic0(const struct ibv_context *c)
{
	return ours_ctx(c);
}

#define CTX(c) ((struct rv_ctx *)(void *)verbs_get_ctx((struct ibv_context *)(c)))

/* In a child of fork() the device stayed in the parent (rv_dev.c): every verb on it fails. */
static bool
forked(void)
{
	static bool said;

	if (!rv.forked)
		return false;
	if (!said) {
		said = true;
		fprintf(
		    stderr, "rnic0: %s\n",
		    "this process is a child of fork(); rnic0 stays in its parent (docs/verbs.md)");
	}
	errno = ENODEV;
	return true;
}

static int
neg(int rc)
{
	return rc < 0 ? -rc : rc;
}

/* ------------------------------------------------------------------------- */
/* Device list                                                               */
/* ------------------------------------------------------------------------- */

/* The list handed out: rnic0, the real devices, NULL, then the real list to free. */
RV_EXPORT struct ibv_device **
ibv_get_device_list(int *num)
{
	static __typeof__(ibv_get_device_list) *real_fn;
	int n = 0;

	if (!real_fn)
		real_fn = (__typeof__(ibv_get_device_list) *)real_sym("ibv_get_device_list",
								      "IBVERBS_1.1");
	if (rv_in_eal()) /* a PMD plugin asking during EAL's start: the real devices only */
		return real_fn(num);
	struct ibv_device **real = real_fn(&n);

	if (!real)
		n = 0;
	struct ibv_device **l = calloc((size_t)n + 3, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = &rv_device;
	for (int i = 0; i < n; i++)
		l[i + 1] = real[i];
	l[n + 2] = (struct ibv_device *)(void *)real;
	if (num)
		*num = n + 1;
	return l;
}

RV_EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	static __typeof__(ibv_free_device_list) *real_fn;

	if (!real_fn)
		real_fn = (__typeof__(ibv_free_device_list) *)real_sym("ibv_free_device_list",
								       "IBVERBS_1.1");
	if (!list)
		return;
	if (list[0] != &rv_device) {
		real_fn(list);
		return;
	}
	int n = 1;

	while (list[n])
		n++;
	if (list[n + 1])
		real_fn((struct ibv_device **)(void *)list[n + 1]);
	free(list);
}

RV_EXPORT const char *
ibv_get_device_name(struct ibv_device *d)
{
	if (d == &rv_device)
		return rv_device.name;
	REAL(ibv_get_device_name, "IBVERBS_1.1", d);
}

RV_EXPORT __be64
ibv_get_device_guid(struct ibv_device *d)
{
	if (d == &rv_device) /* from the port's MAC: the device starts */
		return rv_dev_start() == 0 ? htobe64(rv.guid) : 0;
	REAL(ibv_get_device_guid, "IBVERBS_1.1", d);
}

RV_EXPORT int
ibv_get_device_index(struct ibv_device *d)
{
	if (d == &rv_device)
		return 0x7fff0000; /* no kernel index: one no kernel device has */
	REAL(ibv_get_device_index, "IBVERBS_1.9", d);
}

/* ------------------------------------------------------------------------- */
/* Context, device and port queries                                          */
/* ------------------------------------------------------------------------- */

static int rv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int rv_req_notify_cq(struct ibv_cq *cq, int solicited);
static int rv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int rv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int rv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int rv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
static int rv_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *a, size_t len);
static struct ibv_qp *rv_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *ia);
static int rv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a);

RV_EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *d)
{
	if (d != &rv_device) {
		REAL(ibv_open_device, "IBVERBS_1.1", d);
	}
	int rc = rv_dev_start();

	if (rc) {
		fprintf(stderr, "rnic0: %s\n", rv.err);
		errno = rc;
		return NULL;
	}
	struct rv_ctx *x = calloc(1, sizeof(*x));

	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_context *c = &x->vc.context;

	if (pipe2(x->async_pipe, O_CLOEXEC) != 0) {
		free(x);
		return NULL;
	}
	c->device = d;
	c->cmd_fd = -1;
	c->async_fd = x->async_pipe[0];
	c->num_comp_vectors = 1;
	pthread_mutex_init(&c->mutex, NULL);
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->ops.poll_cq = rv_poll_cq;
	c->ops.req_notify_cq = rv_req_notify_cq;
	c->ops.post_send = rv_post_send;
	c->ops.post_recv = rv_post_recv;
	c->ops.post_srq_recv = rv_post_srq_recv;
	/* ops.alloc_mw / bind_mw stay NULL: ibv_alloc_mw answers EOPNOTSUPP itself */
	x->vc.sz = sizeof(x->vc);
	x->vc.query_port = rv_query_port;
	x->vc.query_device_ex = rv_query_device_ex;
	x->vc.create_qp_ex = rv_create_qp_ex;
	x->vc.modify_qp_rate_limit = rv_modify_qp_rate_limit;
	return c;
}

RV_EXPORT int
ibv_close_device(struct ibv_context *c)
{
	if (!ours_ctx(c)) {
		REAL(ibv_close_device, "IBVERBS_1.1", c);
	}
	struct rv_ctx *x = CTX(c);

	close(x->async_pipe[0]);
	close(x->async_pipe[1]);
	free(x);
	return 0;
}

static void
fill_device_attr(struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "rocewan");
	a->node_guid = htobe64(rv.guid);
	a->sys_image_guid = htobe64(rv.guid);
	a->max_mr_size = ROCE_MAX_MSG_SIZE;
	a->page_size_cap = 4096;
	a->vendor_id = 0;
	a->vendor_part_id = 0;
	a->hw_ver = 1;
	a->max_qp = (int)ROCE_DEFAULT_MAX_QP;
	a->max_qp_wr = (int)ROCE_MAX_QP_WR;
	a->device_cap_flags =
	    IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE * 0 | IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = (int)ROCE_MAX_SGE;
	a->max_sge_rd = (int)ROCE_MAX_SGE;
	a->max_cq = (int)ROCE_DEFAULT_MAX_CQ;
	a->max_cqe = (int)ROCE_MAX_CQE;
	a->max_mr = (int)ROCE_DEFAULT_MAX_MR;
	a->max_pd = (int)ROCE_DEFAULT_MAX_PD;
	a->max_qp_rd_atom = (int)ROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = (int)ROCE_MAX_INIT_RD_ATOMIC;
	a->max_res_rd_atom = (int)(ROCE_MAX_RD_ATOMIC * ROCE_DEFAULT_MAX_QP);
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = (int)ROCE_DEFAULT_MAX_AH;
	a->max_srq = 64;
	a->max_srq_wr = (int)ROCE_MAX_QP_WR;
	a->max_srq_sge = (int)ROCE_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

RV_EXPORT int
ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	if (!ours_ctx(c)) {
		REAL(ibv_query_device, "IBVERBS_1.1", c, a);
	}
	fill_device_attr(a);
	return 0;
}

static int
rv_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *a, size_t len)
{
	struct ibv_device_attr_ex x;

	(void)c;
	if (in && in->comp_mask)
		return EINVAL;
	if (len < sizeof(a->orig_attr))
		return EINVAL;
	memset(&x, 0, sizeof(x));
	fill_device_attr(&x.orig_attr);
	/* IBV_QP_RATE_LIMIT: the engine paces each QP (roce_req.c), any RC/UC/UD QP */
	x.packet_pacing_caps.qp_rate_limit_min = 1;	    /* kbit/s */
	x.packet_pacing_caps.qp_rate_limit_max = 400000000; /* 400 Gb/s */
	x.packet_pacing_caps.supported_qpts =
	    (1u << IBV_QPT_RC) | (1u << IBV_QPT_UC) | (1u << IBV_QPT_UD);
	x.max_dm_size = 0;
	memcpy(a, &x, len < sizeof(x) ? len : sizeof(x));
	return 0;
}

static enum ibv_mtu
mtu_enum(uint32_t mtu)
{
	return mtu >= 4096   ? IBV_MTU_4096
	       : mtu >= 2048 ? IBV_MTU_2048
	       : mtu >= 1024 ? IBV_MTU_1024
	       : mtu >= 512  ? IBV_MTU_512
			     : IBV_MTU_256;
}

/*
 * A LID for programs that address by LID only (qperf without -cm1 exchanges LIDs, no
 * GIDs). RoCE has no LIDs; rnic0's port gives the low 16 bits of its IPv4 address (0 if
 * the --ip prefix is shorter than /16), and an address vector without a GRH
 * (is_global 0) with a DLID names the peer at that host part of the same /16
 * (rv_av_from_lid). A LID of 0 is what rxe and mlx5 report on RoCE.
 */
static uint16_t
lid_of_ip(void)
{
	if (rv.prm.prefix < 16)
		return 0;
	return (uint16_t)(rv.prm.ip & 0xffff);
}

bool
rv_av_from_lid(struct ibv_ah_attr *ah)
{
	uint16_t lid = lid_of_ip();

	if (ah->is_global || !ah->dlid || !lid || ah->dlid >= 0xc000)
		return false; /* 0xc000 and up: IB multicast LIDs */
	net_ip4_to_mapped((rv.prm.ip & 0xffff0000u) | ah->dlid, ah->grh.dgid.raw);
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = 64;
	ah->grh.flow_label = 0;
	ah->grh.traffic_class = 0;
	ah->is_global = 1;
	return true;
}

static void
fill_port_attr(struct ibv_port_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = mtu_enum(rv.prm.mtu);
	a->gid_tbl_len = rv.prm.has_ip6 ? 2 : 1;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = ROCE_MAX_MSG_SIZE;
	a->pkey_tbl_len = 1;
	a->active_width = 2;  /* 4X */
	a->active_speed = 32; /* EDR: the engine has no line rate of its own */
	a->phys_state = 5;    /* LinkUp */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->lid = lid_of_ip();
}

static int
rv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	struct ibv_port_attr x;

	(void)c;
	if (port != 1)
		return EINVAL;
	fill_port_attr(&x);
	memcpy(a, &x, len < sizeof(x) ? len : sizeof(x));
	return 0;
}

/*
 * The symbol (programs built before the macro, and the macro's fallback):
 * rdma-core's struct _compat_ibv_port_attr is struct ibv_port_attr up to
 * port_cap_flags2, so only that much is written.
 */
#undef ibv_query_port
RV_EXPORT int
ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *a)
{
	if (!ours_ctx(c)) {
		REAL(ibv_query_port, "IBVERBS_1.1", c, port, a);
	}
	return rv_query_port(c, port, (struct ibv_port_attr *)(void *)a,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

static int
gid_of(unsigned int index, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (index == 0) {
		net_ip4_to_mapped(rv.prm.ip, gid->raw);
		return 0;
	}
	if (index == 1 && rv.prm.has_ip6) {
		memcpy(gid->raw, rv.prm.ip6, 16);
		return 0;
	}
	return -1;
}

RV_EXPORT int
ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
	if (!ours_ctx(c)) {
		REAL(ibv_query_gid, "IBVERBS_1.1", c, port, index, gid);
	}
	if (port != 1 || index < 0 || index >= 16)
		return -1;
	(void)gid_of((unsigned int)index, gid); /* an empty entry reads as zeros */
	return 0;
}

RV_EXPORT int
_ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index, struct ibv_gid_entry *e,
		  uint32_t flags, size_t len)
{
	if (!ours_ctx(c)) {
		REAL(_ibv_query_gid_ex, "IBVERBS_1.11", c, port, index, e, flags, len);
	}
	struct ibv_gid_entry x;

	if (flags)
		return EINVAL;
	if (port != 1)
		return EINVAL;
	memset(&x, 0, sizeof(x));
	if (gid_of(index, &x.gid) < 0)
		return ENODATA;
	x.gid_index = index;
	x.port_num = 1;
	x.gid_type = IBV_GID_TYPE_ROCE_V2;
	x.ndev_ifindex = 0;
	memcpy(e, &x, len < sizeof(x) ? len : sizeof(x));
	return 0;
}

RV_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *c, struct ibv_gid_entry *e, size_t max, uint32_t flags,
		     size_t len)
{
	if (!ours_ctx(c)) {
		REAL(_ibv_query_gid_table, "IBVERBS_1.11", c, e, max, flags, len);
	}
	size_t n = 0;

	if (flags || len < sizeof(*e))
		return -EINVAL;
	for (uint32_t i = 0; i < 2 && n < max; i++)
		if (_ibv_query_gid_ex(c, 1, i,
				      (struct ibv_gid_entry *)(void *)((char *)e + n * len), 0,
				      len) == 0)
			n++;
	return (ssize_t)n;
}

/* rdma-core's private enum ibv_gid_type_sysfs (driver.h, not installed) */
enum { RV_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, RV_GID_TYPE_SYSFS_ROCE_V2 = 1 };

int ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index, int *type);

RV_EXPORT int
ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index, int *type)
{
	if (!ours_ctx(c)) {
		REAL(ibv_query_gid_type, "IBVERBS_PRIVATE_34", c, port, index, type);
	}
	union ibv_gid g;

	if (port != 1 || gid_of(index, &g) < 0)
		return -1;
	*type = RV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

RV_EXPORT int
ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	if (!ours_ctx(c)) {
		REAL(ibv_query_pkey, "IBVERBS_1.1", c, port, index, pkey);
	}
	if (port != 1 || index < 0)
		return -1;
	*pkey = index == 0 ? htobe16(0xffff) : 0;
	return 0;
}

RV_EXPORT int
ibv_get_pkey_index(struct ibv_context *c, uint8_t port, __be16 pkey)
{
	if (!ours_ctx(c)) {
		REAL(ibv_get_pkey_index, "IBVERBS_1.5", c, port, pkey);
	}
	return port == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

/* The async-event fd: a pipe that carries no event (the engine reports errors as completions) */
RV_EXPORT int
ibv_get_async_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	if (!ours_ctx(c)) {
		REAL(ibv_get_async_event, "IBVERBS_1.1", c, ev);
	}
	char b;

	return read(c->async_fd, &b, 1) == 1 ? 0 : -1; /* blocks like an idle device's */
}

RV_EXPORT void
ibv_ack_async_event(struct ibv_async_event *ev)
{
	static __typeof__(ibv_ack_async_event) *real_fn;

	if (!real_fn)
		real_fn = (__typeof__(ibv_ack_async_event) *)real_sym("ibv_ack_async_event",
								      "IBVERBS_1.1");
	/* no rnic0 event is ever handed out, so every event here is a real device's */
	real_fn(ev);
}

/* ------------------------------------------------------------------------- */
/* PD, MR, AH                                                                */
/* ------------------------------------------------------------------------- */

RV_EXPORT struct ibv_pd *
ibv_alloc_pd(struct ibv_context *c)
{
	if (!ours_ctx(c)) {
		REAL(ibv_alloc_pd, "IBVERBS_1.1", c);
	}
	if (forked())
		return NULL;
	struct rv_pd *p = calloc(1, sizeof(*p));

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	rv_lock();
	p->r = roce_pd_alloc(rv.port.dev);
	int e = errno;
	rv_unlock();
	if (!p->r) {
		free(p);
		errno = e;
		return NULL;
	}
	p->pd.context = c;
	return &p->pd;
}

RV_EXPORT int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_dealloc_pd, "IBVERBS_1.1", pd);
	}
	struct rv_pd *p = (struct rv_pd *)pd;

	rv_lock();
	int rc = roce_pd_dealloc(p->r);
	rv_unlock();
	if (rc)
		return neg(rc);
	free(p);
	return 0;
}

static struct ibv_mr *
reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	if (forked())
		return NULL;
	struct rv_pd *p = (struct rv_pd *)pd;

	if (iova != (uintptr_t)addr) { /* the engine's remote address is the local one */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (access & (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED)) {
		errno = EOPNOTSUPP; /* ODP, memory windows, zero-based MRs */
		return NULL;
	}
	access &= ~(unsigned int)(IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE);
	struct rv_mr *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	rv_lock();
	m->r = roce_reg_mr(p->r, addr, len, access);
	int e = errno;
	rv_unlock();
	if (!m->r) {
		free(m);
		errno = e;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.lkey = m->r->lkey;
	m->mr.rkey = m->r->rkey;
	return &m->mr;
}

#undef ibv_reg_mr
RV_EXPORT struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_reg_mr, "IBVERBS_1.1", pd, addr, len, access);
	}
	return reg_mr(pd, addr, len, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
RV_EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_reg_mr_iova, "IBVERBS_1.7", pd, addr, len, iova, access);
	}
	return reg_mr(pd, addr, len, iova, (unsigned int)access);
}

RV_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_reg_mr_iova2, "IBVERBS_1.8", pd, addr, len, iova, access);
	}
	return reg_mr(pd, addr, len, iova, access);
}

RV_EXPORT int
ibv_dereg_mr(struct ibv_mr *mr)
{
	if (!ours_ctx(mr->context)) {
		REAL(ibv_dereg_mr, "IBVERBS_1.1", mr);
	}
	struct rv_mr *m = (struct rv_mr *)mr;

	rv_lock();
	int rc = roce_dereg_mr(m->r);
	rv_unlock();
	if (rc)
		return neg(rc);
	free(m);
	return 0;
}

RV_EXPORT int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len, int access)
{
	if (!ours_ctx(mr->context)) {
		REAL(ibv_rereg_mr, "IBVERBS_1.1", mr, flags, pd, addr, len, access);
	}
	return EOPNOTSUPP;
}

RV_EXPORT struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_create_ah, "IBVERBS_1.1", pd, attr);
	}
	if (forked())
		return NULL;
	struct rv_pd *p = (struct rv_pd *)pd;
	uint8_t mac[6];
	struct ibv_ah_attr lid_av;

	if (!attr->is_global) { /* RoCEv2 addresses by GID: a LID only as rv_av_from_lid maps it */
		lid_av = *attr;
		if (!rv_av_from_lid(&lid_av)) {
			errno = EINVAL;
			return NULL;
		}
		attr = &lid_av;
	}
	struct rv_ah *a = calloc(1, sizeof(*a));

	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	rv_lock();
	int rc = rv_resolve_locked(&attr->grh.dgid, mac);

	a->r = rc == 0 ? roce_create_ah(p->r, attr, mac) : NULL;
	int e = rc ? EHOSTUNREACH : errno;
	rv_unlock();
	if (!a->r) {
		free(a);
		errno = e;
		return NULL;
	}
	a->ah.context = pd->context;
	a->ah.pd = pd;
	return &a->ah;
}

RV_EXPORT int
ibv_destroy_ah(struct ibv_ah *ah)
{
	if (!ours_ctx(ah->context)) {
		REAL(ibv_destroy_ah, "IBVERBS_1.1", ah);
	}
	struct rv_ah *a = (struct rv_ah *)ah;

	rv_lock();
	int rc = roce_destroy_ah(a->r);
	rv_unlock();
	if (rc)
		return neg(rc);
	free(a);
	return 0;
}

/* ibv_init_ah_from_wc(3): the reply's address from a UD receive and its GRH */
RV_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port, struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *attr)
{
	if (!ours_ctx(c)) {
		REAL(ibv_init_ah_from_wc, "IBVERBS_1.1", c, port, wc, grh, attr);
	}
	memset(attr, 0, sizeof(*attr));
	if (!(wc->wc_flags & IBV_WC_GRH) || !grh)
		return -1; /* RoCE always has one */
	attr->is_global = 1;
	attr->port_num = port;
	attr->sl = wc->sl;
	attr->dlid = wc->slid;
	attr->grh.dgid = grh->sgid;
	attr->grh.sgid_index = 0;
	attr->grh.hop_limit = 0xff;
	attr->grh.traffic_class = (uint8_t)((be32toh(grh->version_tclass_flow) >> 20) & 0xff);
	attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	/* the sender's GID family picks the local one (IPv4-mapped: index 0) */
	uint32_t ip;

	attr->grh.sgid_index = net_mapped_to_ip4(grh->sgid.raw, &ip) ? 0 : 1;
	return 0;
}

RV_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_create_ah_from_wc, "IBVERBS_1.1", pd, wc, grh, port);
	}
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port, wc, grh, &a)) {
		errno = EINVAL;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

/* ------------------------------------------------------------------------- */
/* Completion channels and CQs                                               */
/* ------------------------------------------------------------------------- */

RV_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *c)
{
	if (!ours_ctx(c)) {
		REAL(ibv_create_comp_channel, "IBVERBS_1.0", c);
	}
	struct rv_chan *ch = calloc(1, sizeof(*ch));
	int fds[2];

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		free(ch);
		return NULL;
	}
	(void)fcntl(fds[1], F_SETFL, O_NONBLOCK); /* the engine's thread never blocks on it */
	ch->ch.context = c;
	ch->ch.fd = fds[0];
	ch->wfd = fds[1];
	return &ch->ch;
}

RV_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *chan)
{
	if (!ours_ctx(chan->context)) {
		REAL(ibv_destroy_comp_channel, "IBVERBS_1.0", chan);
	}
	struct rv_chan *ch = (struct rv_chan *)chan;

	if (ch->ch.refcnt)
		return EBUSY;
	close(ch->ch.fd);
	close(ch->wfd);
	free(ch);
	return 0;
}

void
rv_cq_event(void *ctx, struct roce_cq *r)
{
	(void)ctx;
	for (struct rv_cq *c = rv_cqs; c; c = c->next)
		if (c->r == r && c->cq.channel) {
			struct rv_chan *ch = (struct rv_chan *)c->cq.channel;
			struct ibv_cq *p = &c->cq;

			/* one event per arming: the pipe never fills in practice */
			rv.calls_cq_events++;
			if (write(ch->wfd, &p, sizeof(p)) != (ssize_t)sizeof(p))
				fprintf(stderr, "rnic0: completion event lost\n");
			return;
		}
}

RV_EXPORT struct ibv_cq *
ibv_create_cq(struct ibv_context *c, int cqe, void *cq_context, struct ibv_comp_channel *chan,
	      int vector)
{
	if (!ours_ctx(c)) {
		REAL(ibv_create_cq, "IBVERBS_1.1", c, cqe, cq_context, chan, vector);
	}
	if (forked())
		return NULL;
	if (cqe < 1 || vector != 0 || (chan && chan->context != c)) {
		errno = EINVAL;
		return NULL;
	}
	struct rv_cq *q = calloc(1, sizeof(*q));

	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	rv_lock();
	q->r = roce_create_cq(rv.port.dev, cqe);
	int e = errno;
	if (q->r) {
		q->next = rv_cqs;
		rv_cqs = q;
		if (chan)
			chan->refcnt++;
	}
	rv_unlock();
	if (!q->r) {
		free(q);
		errno = e;
		return NULL;
	}
	q->cq.context = c;
	q->cq.channel = chan;
	q->cq.cq_context = cq_context;
	q->cq.cqe = cqe;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	return &q->cq;
}

RV_EXPORT int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (!ours_ctx(cq->context)) {
		REAL(ibv_resize_cq, "IBVERBS_1.1", cq, cqe);
	}
	return EOPNOTSUPP;
}

RV_EXPORT int
ibv_destroy_cq(struct ibv_cq *cq)
{
	if (!ours_ctx(cq->context)) {
		REAL(ibv_destroy_cq, "IBVERBS_1.1", cq);
	}
	struct rv_cq *q = (struct rv_cq *)cq;

	rv_lock();
	int rc = roce_destroy_cq(q->r);
	if (rc == 0) {
		for (struct rv_cq **pp = &rv_cqs; *pp; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
		if (cq->channel)
			cq->channel->refcnt--;
	}
	rv_unlock();
	if (rc)
		return neg(rc);
	free(q);
	return 0;
}

RV_EXPORT int
ibv_get_cq_event(struct ibv_comp_channel *chan, struct ibv_cq **cq, void **cq_context)
{
	if (!ours_ctx(chan->context)) {
		REAL(ibv_get_cq_event, "IBVERBS_1.1", chan, cq, cq_context);
	}
	struct ibv_cq *p;

	if (read(chan->fd, &p, sizeof(p)) != (ssize_t)sizeof(p))
		return -1; /* errno from read (EAGAIN on a non-blocking fd) */
	((struct rv_cq *)p)->events++;
	*cq = p;
	*cq_context = p->cq_context;
	return 0;
}

RV_EXPORT void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	if (!ours_ctx(cq->context)) {
		REAL(ibv_ack_cq_events, "IBVERBS_1.1", cq, n);
	}
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += n;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

static int
rv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	if (forked())
		return -1;
	struct rv_cq *q = (struct rv_cq *)cq;

	rv_lock();
	rv.calls_poll_cq++;
	int got = roce_poll_cq(q->r, n, wc);

	if (got == 0) { /* nothing yet: advance the engine (RX, timers, TX) and look again */
		rv_progress_locked();
		got = roce_poll_cq(q->r, n, wc);
	}
	if (got > 0)
		srq_polled_locked(wc, got);
	rv_unlock();
	return got;
}

static int
rv_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	struct rv_cq *q = (struct rv_cq *)cq;

	rv_lock();
	int rc = roce_req_notify_cq(q->r, solicited);
	rv_unlock();
	return neg(rc);
}

/* ------------------------------------------------------------------------- */
/* SRQ: a shared pool of receive WRs lent to the QPs that use it             */
/* ------------------------------------------------------------------------- */

/*
 * The engine has per-QP receive queues only. An SRQ keeps the posted receive
 * WRs and hands them, in order, to the receive queues of the QPs attached to
 * it: each QP holds at most a share (the SRQ's max_wr over its QPs, at least
 * 2) and is topped up after every engine step. A message that finds its QP's
 * share used up gets an RNR NAK and is retried (rnr_retry) once the share is
 * refilled; the receive completions are the QP's, as with an SRQ.
 */
static void
srq_refill_locked(struct rv_srq *s)
{
	unsigned int nq = 0;

	for (struct rv_qp *q = s->qps; q; q = q->srq_next)
		nq++;
	if (!nq)
		return;
	for (struct rv_qp *q = s->qps; q && s->count; q = q->srq_next) {
		enum ibv_qp_state st = roce_qp_state(q->r);
		uint32_t share = s->max_wr / nq < 2 ? 2 : s->max_wr / nq;

		if (st != IBV_QPS_INIT && st != IBV_QPS_RTR && st != IBV_QPS_RTS)
			continue;
		while (s->count && q->lent < share) {
			struct rv_srq_wqe *w = &s->ring[s->head];
			struct ibv_recv_wr wr = {
			    .wr_id = w->wr_id, .sg_list = w->sge, .num_sge = w->num_sge};
			struct ibv_recv_wr *bad;

			if (roce_post_recv(q->r, &wr, &bad) != 0)
				break;
			s->head = (s->head + 1) % s->max_wr;
			s->count--;
			q->lent++;
		}
	}
}

static void srq_refill_all_locked(void);

RV_EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *ia)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_create_srq, "IBVERBS_1.1", pd, ia);
	}
	if (ia->attr.max_wr < 1 || ia->attr.max_wr > ROCE_MAX_QP_WR || ia->attr.max_sge < 1 ||
	    ia->attr.max_sge > ROCE_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	struct rv_srq *s = calloc(1, sizeof(*s));

	if (!s || !(s->ring = calloc(ia->attr.max_wr, sizeof(*s->ring)))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->max_wr = ia->attr.max_wr;
	s->max_sge = ia->attr.max_sge;
	s->limit = ia->attr.srq_limit;
	s->srq.context = pd->context;
	s->srq.srq_context = ia->srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

RV_EXPORT int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	if (!ours_ctx(srq->context)) {
		REAL(ibv_modify_srq, "IBVERBS_1.1", srq, a, mask);
	}
	struct rv_srq *s = (struct rv_srq *)srq;

	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP; /* no resize */
	if (mask & IBV_SRQ_LIMIT)
		s->limit = a->srq_limit;
	return 0;
}

RV_EXPORT int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	if (!ours_ctx(srq->context)) {
		REAL(ibv_query_srq, "IBVERBS_1.1", srq, a);
	}
	struct rv_srq *s = (struct rv_srq *)srq;

	a->max_wr = s->max_wr;
	a->max_sge = s->max_sge;
	a->srq_limit = s->limit;
	return 0;
}

RV_EXPORT int
ibv_destroy_srq(struct ibv_srq *srq)
{
	if (!ours_ctx(srq->context)) {
		REAL(ibv_destroy_srq, "IBVERBS_1.1", srq);
	}
	struct rv_srq *s = (struct rv_srq *)srq;

	if (s->qps)
		return EBUSY;
	free(s->ring);
	free(s);
	return 0;
}

static int
rv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rv_srq *s = (struct rv_srq *)srq;
	int rc = 0;

	rv_lock();
	for (; wr; wr = wr->next) {
		if (s->count == s->max_wr) {
			rc = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > s->max_sge) {
			rc = EINVAL;
			break;
		}
		struct rv_srq_wqe *w = &s->ring[(s->head + s->count) % s->max_wr];

		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		memcpy(w->sge, wr->sg_list, sizeof(w->sge[0]) * (size_t)wr->num_sge);
		s->count++;
	}
	if (rc)
		*bad = wr;
	srq_refill_locked(s);
	rv_unlock();
	return rc;
}

/* ------------------------------------------------------------------------- */
/* QPs                                                                       */
/* ------------------------------------------------------------------------- */

static struct rv_srq *all_srq_users[64]; /* SRQs with QPs: refilled after each engine step */

static void
srq_refill_all_locked(void)
{
	for (unsigned int i = 0; i < 64; i++)
		if (all_srq_users[i])
			srq_refill_locked(all_srq_users[i]);
}

/* Receive completions of SRQ QPs return their WRs' slots: refill the QPs' shares. */
static void
srq_polled_locked(const struct ibv_wc *wc, int n)
{
	bool any = false;

	for (unsigned int i = 0; i < 64; i++) {
		struct rv_srq *s = all_srq_users[i];

		if (!s)
			continue;
		for (int k = 0; k < n; k++) {
			if (!(wc[k].opcode & IBV_WC_RECV))
				continue;
			for (struct rv_qp *q = s->qps; q; q = q->srq_next)
				if (q->qx.qp_base.qp_num == wc[k].qp_num && q->lent) {
					q->lent--;
					any = true;
					break;
				}
		}
	}
	if (any)
		srq_refill_all_locked();
}

static void wr_ops_init(struct ibv_qp_ex *qx);

struct ibv_qp *
rv_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *ia_in, uint64_t send_ops)
{
	if (forked())
		return NULL;
	struct rv_pd *p = (struct rv_pd *)pd;
	struct ibv_qp_init_attr ia = *ia_in;
	struct rv_srq *srq = (struct rv_srq *)ia.srq;

	if (!ia.send_cq || !ia.recv_cq || !ours_ctx(ia.send_cq->context) ||
	    !ours_ctx(ia.recv_cq->context)) {
		errno = EINVAL;
		return NULL;
	}
	if (ia.qp_type != IBV_QPT_RC && ia.qp_type != IBV_QPT_UC && ia.qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP; /* XRC, raw packet, DC */
		return NULL;
	}
	if (send_ops & ~(uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				   IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)) {
		errno = EOPNOTSUPP; /* memory windows, invalidation, TSO */
		return NULL;
	}
	ia.send_cq = roce_cq_ibv(((struct rv_cq *)ia_in->send_cq)->r);
	ia.recv_cq = roce_cq_ibv(((struct rv_cq *)ia_in->recv_cq)->r);
	ia.srq = NULL;
	if (srq) {
		ia.cap.max_recv_wr = srq->max_wr;
		ia.cap.max_recv_sge = srq->max_sge;
	}
	struct rv_qp *q = calloc(1, sizeof(*q));

	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	rv_lock();
	q->r = roce_create_qp(p->r, &ia);
	int e = errno;
	if (q->r && ia.qp_type == IBV_QPT_RC && rv.prm.rec.fec) {
		char why[160];

		if (roce_qp_set_fec(q->r, rv.prm.fec, why, sizeof(why)) != 0)
			fprintf(stderr, "rnic0: FEC %s not turned on: %s\n", rv.prm.fec, why);
	}
	if (q->r && srq) {
		q->srq = srq;
		q->srq_next = srq->qps;
		srq->qps = q;
		for (unsigned int i = 0; i < 64; i++)
			if (all_srq_users[i] == srq)
				break;
			else if (!all_srq_users[i]) {
				all_srq_users[i] = srq;
				break;
			}
	}
	rv_unlock();
	if (!q->r) {
		free(q);
		errno = e;
		return NULL;
	}
	if (!srq)
		ia_in->cap = ia.cap;
	else {
		ia_in->cap.max_send_wr = ia.cap.max_send_wr;
		ia_in->cap.max_send_sge = ia.cap.max_send_sge;
		ia_in->cap.max_inline_data = ia.cap.max_inline_data;
	}
	q->max_inline = ia.cap.max_inline_data;
	struct ibv_qp *qp = &q->qx.qp_base;

	qp->context = pd->context;
	qp->qp_context = ia_in->qp_context;
	qp->pd = pd;
	qp->send_cq = ia_in->send_cq;
	qp->recv_cq = ia_in->recv_cq;
	qp->srq = ia_in->srq;
	qp->qp_num = roce_qp_num(q->r);
	qp->state = IBV_QPS_RESET;
	qp->qp_type = ia_in->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	wr_ops_init(&q->qx);
	return qp;
}

RV_EXPORT struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	if (!ours_ctx(pd->context)) {
		REAL(ibv_create_qp, "IBVERBS_1.1", pd, ia);
	}
	return rv_qp_create(pd, ia, 0);
}

static struct ibv_qp *
rv_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *ix)
{
	struct ibv_qp_init_attr ia;

	if ((ix->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    !(ix->comp_mask & IBV_QP_INIT_ATTR_PD) || !ix->pd || ix->pd->context != c) {
		errno = ix->comp_mask &
				~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			    ? EOPNOTSUPP
			    : EINVAL;
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = ix->qp_context;
	ia.send_cq = ix->send_cq;
	ia.recv_cq = ix->recv_cq;
	ia.srq = ix->srq;
	ia.cap = ix->cap;
	ia.qp_type = ix->qp_type;
	ia.sq_sig_all = ix->sq_sig_all;
	struct ibv_qp *qp = rv_qp_create(
	    ix->pd, &ia, ix->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS ? ix->send_ops_flags : 0);

	if (qp)
		ix->cap = ia.cap;
	return qp;
}

RV_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_qp_to_qp_ex, "IBVERBS_1.6", qp);
	}
	return &((struct rv_qp *)qp)->qx;
}

RV_EXPORT int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_modify_qp, "IBVERBS_1.1", qp, a, mask);
	}
	return rv_qp_modify(qp, a, mask);
}

int
rv_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	if (forked())
		return ENODEV;
	struct rv_qp *q = (struct rv_qp *)qp;
	uint8_t mac[6];
	bool have_mac = false;
	int rc;
	struct ibv_qp_attr lid_attr;

	if ((mask & IBV_QP_AV) && !a->ah_attr.is_global && qp->qp_type != IBV_QPT_UD) {
		lid_attr = *a;
		if (rv_av_from_lid(&lid_attr.ah_attr))
			a = &lid_attr;
	}
	rv_lock();
	/* RTR on RC/UC: the peer's MAC first (ARP / ND), then the IBTA transition */
	if ((mask & IBV_QP_STATE) && a->qp_state == IBV_QPS_RTR && (mask & IBV_QP_AV) &&
	    qp->qp_type != IBV_QPT_UD && a->ah_attr.is_global &&
	    roce_qp_state(q->r) == IBV_QPS_INIT) {
		rc = rv_resolve_locked(&a->ah_attr.grh.dgid, mac);
		if (rc) {
			rv_unlock();
			fprintf(stderr,
				"rnic0: QP %u: the peer's address does not answer ARP/ND "
				"on the port (3 s)\n",
				qp->qp_num);
			return EHOSTUNREACH;
		}
		have_mac = true;
	}
	rc = roce_modify_qp(q->r, a, mask);
	if (rc == 0 && have_mac)
		rc = roce_qp_set_remote_mac(q->r, mac);
	qp->state = roce_qp_state(q->r);
	if (q->srq)
		srq_refill_locked(q->srq);
	rv_unlock();
	return neg(rc);
}

static int
rv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *r)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.rate_limit = r->rate_limit;
	return ibv_modify_qp(qp, &a, IBV_QP_RATE_LIMIT);
}

RV_EXPORT int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *ia)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_query_qp, "IBVERBS_1.1", qp, a, mask, ia);
	}
	struct rv_qp *q = (struct rv_qp *)qp;

	rv_lock();
	int rc = roce_query_qp(q->r, a, mask, ia);
	rv_unlock();
	if (rc == 0 && ia) { /* the application's objects, not the engine's */
		ia->send_cq = qp->send_cq;
		ia->recv_cq = qp->recv_cq;
		ia->srq = qp->srq;
		ia->qp_context = qp->qp_context;
	}
	return neg(rc);
}

RV_EXPORT int
ibv_destroy_qp(struct ibv_qp *qp)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_destroy_qp, "IBVERBS_1.1", qp);
	}
	struct rv_qp *q = (struct rv_qp *)qp;

	rv_lock();
	int rc = roce_destroy_qp(q->r);
	if (rc == 0 && q->srq) {
		for (struct rv_qp **pp = &q->srq->qps; *pp; pp = &(*pp)->srq_next)
			if (*pp == q) {
				*pp = q->srq_next;
				break;
			}
		if (!q->srq->qps)
			for (unsigned int i = 0; i < 64; i++)
				if (all_srq_users[i] == q->srq)
					all_srq_users[i] = NULL;
	}
	rv_unlock();
	if (rc)
		return neg(rc);
	for (unsigned int i = 0; i < q->cap_wr; i++)
		free(q->wrs[i].inl);
	free(q->wrs);
	free(q);
	return 0;
}

static int
post_send_locked(struct rv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int rc;

	if (q->qx.qp_base.qp_type != IBV_QPT_UD) {
		rc = roce_post_send(q->r, wr, bad);
	} else { /* the engine's AH in each WR, one at a time */
		rc = 0;
		for (; wr; wr = wr->next) {
			struct ibv_send_wr w = *wr, *b;

			w.next = NULL;
			if (!w.wr.ud.ah || !ours_ctx(w.wr.ud.ah->context)) {
				rc = -EINVAL;
				break;
			}
			w.wr.ud.ah = roce_ah_ibv(((struct rv_ah *)wr->wr.ud.ah)->r);
			rc = roce_post_send(q->r, &w, &b);
			if (rc)
				break;
		}
		if (rc)
			*bad = wr;
	}
	rnic_port_flush(&rv.port);
	return neg(rc);
}

static int
rv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	if (forked())
		return ENODEV;
	struct rv_qp *q = (struct rv_qp *)qp;

	rv_lock();
	rv.calls_post_send++;
	int rc = post_send_locked(q, wr, bad);
	rv_unlock();
	return rc;
}

static int
rv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	if (forked())
		return ENODEV;
	struct rv_qp *q = (struct rv_qp *)qp;

	if (q->srq) {
		*bad = wr;
		return EINVAL; /* its receives come from the SRQ */
	}
	rv_lock();
	rv.calls_post_recv++;
	int rc = roce_post_recv(q->r, wr, bad);
	rv_unlock();
	return neg(rc);
}

/* ------------------------------------------------------------------------- */
/* ibv_wr_*: the extended QP's send path (struct ibv_qp_ex)                  */
/* ------------------------------------------------------------------------- */

#define QOF(qx) ((struct rv_qp *)(void *)(qx))

static void
wr_start(struct ibv_qp_ex *qx)
{
	QOF(qx)->nwr = 0;
	QOF(qx)->wr_err = 0;
}

static struct rv_wr *
wr_new(struct ibv_qp_ex *qx, enum ibv_wr_opcode op)
{
	struct rv_qp *q = QOF(qx);

	if (q->nwr == q->cap_wr) {
		unsigned int cap = q->cap_wr ? 2 * q->cap_wr : 16;
		struct rv_wr *n = realloc(q->wrs, cap * sizeof(*n));

		if (!n) {
			q->wr_err = ENOMEM;
			return NULL;
		}
		memset(n + q->cap_wr, 0, (cap - q->cap_wr) * sizeof(*n));
		q->wrs = n;
		q->cap_wr = cap;
	}
	struct rv_wr *w = &q->wrs[q->nwr++];

	memset(&w->wr, 0, sizeof(w->wr));
	w->wr.wr_id = qx->wr_id;
	w->wr.send_flags = qx->wr_flags;
	w->wr.opcode = op;
	return w;
}

static struct rv_wr *
wr_last(struct ibv_qp_ex *qx)
{
	struct rv_qp *q = QOF(qx);

	if (!q->nwr) {
		q->wr_err = EINVAL;
		return NULL;
	}
	return &q->wrs[q->nwr - 1];
}

static void
wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_RDMA_WRITE);

	if (w) {
		w->wr.wr.rdma.rkey = rkey;
		w->wr.wr.rdma.remote_addr = addr;
	}
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (w) {
		w->wr.wr.rdma.rkey = rkey;
		w->wr.wr.rdma.remote_addr = addr;
		w->wr.imm_data = imm;
	}
}

static void
wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_RDMA_READ);

	if (w) {
		w->wr.wr.rdma.rkey = rkey;
		w->wr.wr.rdma.remote_addr = addr;
	}
}

static void
wr_send(struct ibv_qp_ex *qx)
{
	(void)wr_new(qx, IBV_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->wr.imm_data = imm;
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, uint64_t cmp, uint64_t swp)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (w) {
		w->wr.wr.atomic.rkey = rkey;
		w->wr.wr.atomic.remote_addr = addr;
		w->wr.wr.atomic.compare_add = cmp;
		w->wr.wr.atomic.swap = swp;
	}
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	struct rv_wr *w = wr_new(qx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (w) {
		w->wr.wr.atomic.rkey = rkey;
		w->wr.wr.atomic.remote_addr = addr;
		w->wr.wr.atomic.compare_add = add;
	}
}

static void
wr_unsupported_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	(void)rkey;
	QOF(qx)->wr_err = EOPNOTSUPP;
}

static void
wr_unsupported_mw(struct ibv_qp_ex *qx, struct ibv_mw *mw, uint32_t rkey,
		  const struct ibv_mw_bind_info *bi)
{
	(void)mw;
	(void)rkey;
	(void)bi;
	QOF(qx)->wr_err = EOPNOTSUPP;
}

static void
wr_unsupported_tso(struct ibv_qp_ex *qx, void *hdr, uint16_t sz, uint16_t mss)
{
	(void)hdr;
	(void)sz;
	(void)mss;
	QOF(qx)->wr_err = EOPNOTSUPP;
}

static void
wr_unsupported_xrc(struct ibv_qp_ex *qx, uint32_t srqn)
{
	(void)srqn;
	QOF(qx)->wr_err = EOPNOTSUPP;
}

static void
wr_unsupported_atomic_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, const void *v)
{
	(void)rkey;
	(void)addr;
	(void)v;
	QOF(qx)->wr_err = EOPNOTSUPP;
}

static void
wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct rv_wr *w = wr_last(qx);

	if (w) {
		w->wr.wr.ud.ah = ah; /* translated at post */
		w->wr.wr.ud.remote_qpn = qpn;
		w->wr.wr.ud.remote_qkey = qkey;
	}
}

static void
wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct rv_wr *w = wr_last(qx);

	if (w) {
		w->sge[0] = (struct ibv_sge){.addr = addr, .length = len, .lkey = lkey};
		w->wr.num_sge = 1;
	}
}

static void
wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *l)
{
	struct rv_wr *w = wr_last(qx);

	if (!w)
		return;
	if (n > ROCE_MAX_SGE) {
		QOF(qx)->wr_err = EINVAL;
		return;
	}
	memcpy(w->sge, l, n * sizeof(*l));
	w->wr.num_sge = (int)n;
}

static void
wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *l)
{
	struct rv_wr *w = wr_last(qx);
	struct rv_qp *q = QOF(qx);
	size_t len = 0;

	if (!w)
		return;
	for (size_t i = 0; i < n; i++)
		len += l[i].length;
	if (len > q->max_inline) {
		q->wr_err = EINVAL;
		return;
	}
	if (!w->inl && !(w->inl = malloc(q->max_inline ? q->max_inline : 1))) {
		q->wr_err = ENOMEM;
		return;
	}
	len = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(w->inl + len, l[i].addr, l[i].length);
		len += l[i].length;
	}
	/* the bytes are the library's copy: the caller may reuse its buffer at once */
	w->sge[0] = (struct ibv_sge){.addr = (uintptr_t)w->inl, .length = (uint32_t)len};
	w->wr.num_sge = 1;
	w->wr.send_flags |= IBV_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	struct ibv_data_buf b = {.addr = addr, .length = len};

	wr_set_inline_data_list(qx, 1, &b);
}

static int
wr_complete(struct ibv_qp_ex *qx)
{
	if (forked())
		return ENODEV;
	struct rv_qp *q = QOF(qx);
	struct ibv_send_wr *bad;
	int rc = q->wr_err;

	if (!rc && q->nwr) {
		for (unsigned int i = 0; i < q->nwr; i++) {
			q->wrs[i].wr.sg_list = q->wrs[i].sge;
			q->wrs[i].wr.next = i + 1 < q->nwr ? &q->wrs[i + 1].wr : NULL;
		}
		rv_lock();
		rv.calls_wr_complete++;
		rc = post_send_locked(q, &q->wrs[0].wr, &bad);
		rv_unlock();
	}
	q->nwr = 0;
	q->wr_err = 0;
	return rc;
}

static void
wr_abort(struct ibv_qp_ex *qx)
{
	QOF(qx)->nwr = 0;
	QOF(qx)->wr_err = 0;
}

static void
wr_ops_init(struct ibv_qp_ex *qx)
{
	qx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qx->wr_bind_mw = wr_unsupported_mw;
	qx->wr_local_inv = wr_unsupported_inv;
	qx->wr_rdma_read = wr_rdma_read;
	qx->wr_rdma_write = wr_rdma_write;
	qx->wr_rdma_write_imm = wr_rdma_write_imm;
	qx->wr_send = wr_send;
	qx->wr_send_imm = wr_send_imm;
	qx->wr_send_inv = wr_unsupported_inv;
	qx->wr_send_tso = wr_unsupported_tso;
	qx->wr_set_ud_addr = wr_set_ud_addr;
	qx->wr_set_xrc_srqn = wr_unsupported_xrc;
	qx->wr_set_inline_data = wr_set_inline_data;
	qx->wr_set_inline_data_list = wr_set_inline_data_list;
	qx->wr_set_sge = wr_set_sge;
	qx->wr_set_sge_list = wr_set_sge_list;
	qx->wr_start = wr_start;
	qx->wr_complete = wr_complete;
	qx->wr_abort = wr_abort;
	qx->wr_atomic_write = wr_unsupported_atomic_write;
}

/* ------------------------------------------------------------------------- */
/* Not on rnic0: multicast                                                   */
/* ------------------------------------------------------------------------- */

RV_EXPORT int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_attach_mcast, "IBVERBS_1.1", qp, gid, lid);
	}
	return EOPNOTSUPP;
}

RV_EXPORT int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!ours_ctx(qp->context)) {
		REAL(ibv_detach_mcast, "IBVERBS_1.1", qp, gid, lid);
	}
	return EOPNOTSUPP;
}
