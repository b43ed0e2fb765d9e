/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_cm.c
 * librdmacm's entry points (RDMACM_1.0 ... 1.3, rv_verbs.map) on rnic0, for unmodified
 * programs (docs/rdma-cm.md, "Unmodified applications"). The structs a program sees
 * (struct rdma_cm_id, rdma_cm_event, rdma_event_channel, rdma_addrinfo) are rdma-core
 * 44's <rdma/rdma_cma.h>, so rdma_verbs.h's inline helpers (rdma_post_send,
 * rdma_get_send_comp ...) work on the QP and CQs put in the id.
 *
 * What the kernel's rdma_cm (drivers/infiniband/core/cma.c) and librdmacm do between
 * them is done here, over lib/cm on QP1 (rv_cmep.c):
 *  - addresses are rnic0's (--ip / --ip6); resolve_addr resolves the next hop through
 *    the device's ARP/ND; resolve_route makes the one path from the GIDs;
 *  - RDMA_PS_TCP / PS_IB: REQ / REP / RTU with the IP CM header (Annex A11, ip_cm.h)
 *    ahead of the application's private data (56 bytes); RDMA_PS_UDP: SIDR_REQ/SIDR_REP
 *    (12.11) for UD, Q_Key RDMA_UDP_QKEY;
 *  - a QP made by rdma_create_qp is moved to INIT at once, to RTR and RTS from the
 *    peer's REQ (passive, in rdma_accept) or REP (active, in rdma_get_cm_event, which
 *    then sends the RTU and reports ESTABLISHED, as librdmacm's ucma_process_conn_resp),
 *    and to ERR by rdma_disconnect; rdma_init_qp_attr gives the same attributes;
 *  - an event channel's fd is a pipe carrying one byte per queued event (poll/select);
 *  - an id created without a channel is synchronous: each call waits for its event.
 * Every CM call holds rv.lock; the channel queues have a mutex of their own (taken
 * under rv.lock, never the other way round).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "cm.h"
#include "ip_cm.h"
#include "mad.h"
#include "net_hdr.h"
#include "rv_cmep.h"
#include "rv_int.h"

#define RVC_RESP_TIMEOUT 20 /* CM response timeout, 4.096 us x 2^20 (cma.c's value) */
#define RVC_MAX_CM_RETRIES 15
#define RVC_ACK_TIMEOUT 14
#define RVC_HOP_LIMIT 64
#define RVC_UDP_QKEY 0x01234567u /* librdmacm's RDMA_UDP_QKEY */

struct rvc_ev {
	struct rdma_cm_event ev;
	struct rvc_ev *next;
	int internal;		     /* CONNECT_RESPONSE to turn into ESTABLISHED */
	uint8_t pd[CM_REQ_PD + 160]; /* a copy of the private data (at most 216 bytes) */
};

struct rvc_chan {
	struct rdma_event_channel ch;
	int wfd;
	pthread_mutex_t mu;
	struct rvc_ev *head, *tail;
};

enum rvc_state { RVC_IDLE = 0, RVC_BOUND, RVC_LISTEN, RVC_CONNECTING, RVC_CONNECTED, RVC_DISC };

struct rvc_id {
	struct rdma_cm_id id;
	struct cm_id *cm;
	enum rvc_state st;
	int listen_handle;
	bool sync, own_chan, disc_reported, is_ud;
	uint8_t peer_gid[16];
	uint32_t psn;	     /* our starting PSN */
	uint32_t rqpn, rpsn; /* the peer's QPN and starting PSN */
	uint32_t rqkey;
	uint8_t resp_res, init_depth, retry, rnr_retry, mtu;
	struct ibv_qp_init_attr *ep_attr; /* rdma_create_ep on a passive id: for get_request */
	struct ibv_pd *ep_pd;
	struct ibv_sa_path_rec path;
};

static struct ibv_context *rvc_ctx;
static struct ibv_pd *rvc_pd; /* the device's PD for rdma_create_qp(id, NULL, ...) */
static uint16_t next_port = 0;
static uint64_t rvc_ids_live, rvc_qps_live;

#define RVC(cmid) ((struct rvc_id *)(void *)(cmid))
#define CHAN(c) ((struct rvc_chan *)(void *)(c))

static int
fail(int e)
{
	errno = e;
	return -1;
}

static void on_cm_event(struct cm_id *cid, const struct cm_event *ev);

/* The device and the CM endpoint, once. */
static int
rvc_init(void)
{
	if (rvc_ctx)
		return 0;
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (!l || n < 1)
		return fail(ENODEV);
	rvc_ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (!rvc_ctx)
		return -1;
	rvc_pd = ibv_alloc_pd(rvc_ctx);
	rv_lock();
	int rc = rv_cmep_start_locked(on_cm_event);

	rv_unlock();
	return rc ? fail(rc) : 0;
}

/* ---- event channels ---- */

RV_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	if (rvc_init())
		return NULL;
	struct rvc_chan *c = calloc(1, sizeof(*c));
	int p[2];

	if (!c || pipe2(p, O_CLOEXEC)) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = p[0];
	c->wfd = p[1];
	pthread_mutex_init(&c->mu, NULL);
	return &c->ch;
}

RV_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct rvc_chan *c = CHAN(ch);

	if (!c)
		return;
	for (struct rvc_ev *e = c->head, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	close(c->ch.fd);
	close(c->wfd);
	free(c);
}

/* Queue an event (under rv.lock). */
static void
push(struct rvc_id *r, enum rdma_cm_event_type t, int status, const uint8_t *pd, size_t pd_len,
     struct rdma_cm_id *listen, int internal)
{
	struct rvc_chan *c = CHAN(r->id.channel);
	struct rvc_ev *e = calloc(1, sizeof(*e));

	if (!c || !e) {
		free(e);
		return;
	}
	e->ev.id = &r->id;
	e->ev.listen_id = listen;
	e->ev.event = t;
	e->ev.status = status;
	e->internal = internal;
	if (pd && pd_len) {
		if (pd_len > sizeof(e->pd))
			pd_len = sizeof(e->pd);
		memcpy(e->pd, pd, pd_len);
		e->ev.param.conn.private_data = e->pd;
		e->ev.param.conn.private_data_len = (uint8_t)pd_len;
	}
	pthread_mutex_lock(&c->mu);
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	pthread_mutex_unlock(&c->mu);
	char b = 1;

	if (write(c->wfd, &b, 1) != 1)
		perror("rnic0: event channel");
}

/* ---- ids ---- */

static struct rvc_id *
new_id(struct rdma_event_channel *ch, void *ctx, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rvc_id *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (!ch) {
		ch = rdma_create_event_channel();
		if (!ch) {
			free(r);
			return NULL;
		}
		r->sync = r->own_chan = true;
	}
	r->id.verbs = rvc_ctx;
	r->id.channel = ch;
	r->id.context = ctx;
	r->id.ps = ps;
	r->id.qp_type = qpt;
	r->id.port_num = 1;
	r->id.pd = NULL;
	r->is_ud = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB || qpt == IBV_QPT_UD;
	r->listen_handle = -1;
	r->id.route.path_rec = &r->path;
	__atomic_add_fetch(&rvc_ids_live, 1, __ATOMIC_RELAXED);
	return r;
}

RV_EXPORT int
rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
	       enum rdma_port_space ps)
{
	if (rvc_init())
		return -1;
	struct rvc_id *r =
	    new_id(ch, ctx, ps, ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC);

	if (!r)
		return fail(ENOMEM);
	*id = &r->id;
	return 0;
}

RV_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rvc_id *r = RVC(id);

	if (!r)
		return fail(EINVAL);
	rv_lock();
	if (r->listen_handle >= 0 && rv_cmep())
		cm_listen_cancel(rv_cmep(), r->listen_handle);
	if (r->cm) {
		r->cm->user_ctx = NULL;
		cm_destroy(rv_cmep(), r->cm);
		r->cm = NULL;
	}
	rv_unlock();
	if (r->own_chan)
		rdma_destroy_event_channel(id->channel);
	free(r->ep_attr);
	free(r);
	__atomic_sub_fetch(&rvc_ids_live, 1, __ATOMIC_RELAXED);
	return 0;
}

/* ---- events ---- */

static int
wait_event(struct rvc_chan *c, struct rvc_ev **out)
{
	char b;
	ssize_t n = read(c->ch.fd, &b, 1);

	if (n == 0) {
		/* the channel was destroyed under a reader (rping's CM thread while main()
		 * returns): as on a kernel channel, that read never returns */
		for (;;)
			pause();
	}
	if (n != 1)
		return -1;
	pthread_mutex_lock(&c->mu);
	struct rvc_ev *e = c->head;

	if (e) {
		c->head = e->next;
		if (!c->head)
			c->tail = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	if (!e)
		return fail(EIO);
	*out = e;
	return 0;
}

static int modify_rtr_rts(struct rvc_id *r);

RV_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct rvc_ev *e;

	if (!ch || !event)
		return fail(EINVAL);
	if (wait_event(CHAN(ch), &e))
		return -1;
	struct rvc_id *r = RVC(e->ev.id);

	if (e->internal && r->id.qp) {
		/* active side, REP received: QP to RTR and RTS, then RTU (librdmacm's
		 * ucma_process_conn_resp) */
		int rc = modify_rtr_rts(r);

		rv_lock();
		if (rc == 0 && r->cm && cm_rtu(rv_cmep(), r->cm, NULL, 0) == 0) {
			r->st = RVC_CONNECTED;
			e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		} else {
			if (r->cm)
				cm_reject(rv_cmep(), r->cm, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL,
					  0);
			r->cm = NULL;
			e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
			e->ev.status = -EINVAL;
		}
		rv_unlock();
	}
	r->id.event = &e->ev;
	*event = &e->ev;
	return 0;
}

RV_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return fail(EINVAL);
	struct rvc_ev *e = (struct rvc_ev *)(void *)event;

	if (event->id && event->id->event == event)
		event->id->event = NULL;
	free(e);
	return 0;
}

/* A synchronous id's call waits for its event (librdmacm's ucma_complete). */
static int
complete(struct rvc_id *r)
{
	struct rdma_cm_event *ev;

	if (!r->sync)
		return 0;
	if (rdma_get_cm_event(r->id.channel, &ev))
		return -1;
	int st = ev->status;
	enum rdma_cm_event_type t = ev->event;

	rdma_ack_cm_event(ev);
	if (st)
		return fail(st < 0 ? -st : ECONNREFUSED);
	if (t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_UNREACHABLE ||
	    t == RDMA_CM_EVENT_CONNECT_ERROR || t == RDMA_CM_EVENT_ADDR_ERROR ||
	    t == RDMA_CM_EVENT_ROUTE_ERROR)
		return fail(ECONNREFUSED);
	return 0;
}

RV_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type e)
{
	static const char *const n[] = {
	    "RDMA_CM_EVENT_ADDR_RESOLVED",   "RDMA_CM_EVENT_ADDR_ERROR",
	    "RDMA_CM_EVENT_ROUTE_RESOLVED",  "RDMA_CM_EVENT_ROUTE_ERROR",
	    "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	    "RDMA_CM_EVENT_CONNECT_ERROR",   "RDMA_CM_EVENT_UNREACHABLE",
	    "RDMA_CM_EVENT_REJECTED",	     "RDMA_CM_EVENT_ESTABLISHED",
	    "RDMA_CM_EVENT_DISCONNECTED",    "RDMA_CM_EVENT_DEVICE_REMOVAL",
	    "RDMA_CM_EVENT_MULTICAST_JOIN",  "RDMA_CM_EVENT_MULTICAST_ERROR",
	    "RDMA_CM_EVENT_ADDR_CHANGE",     "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned)e < sizeof(n) / sizeof(n[0]) ? n[e] : "UNKNOWN EVENT";
}

/* ---- addresses ---- */

static int
sa_gid(const struct sockaddr *sa, uint8_t gid[16])
{
	if (sa->sa_family == AF_INET) {
		net_ip4_to_mapped(
		    ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr), gid);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

static uint16_t
sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6
			 ? ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port
			 : ((const struct sockaddr_in *)(const void *)sa)->sin_port);
}

static void
sa_set_port(struct sockaddr *sa, uint16_t p)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(p);
	else
		((struct sockaddr_in *)(void *)sa)->sin_port = htons(p);
}

/* rnic0's own address of @p family into @p sa, keeping the port. */
static int
local_addr(struct sockaddr *sa, int family)
{
	uint16_t port = sa->sa_family ? sa_port(sa) : 0;

	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)sa;

		if (!rv.prm.has_ip6)
			return -1;
		memset(s6, 0, sizeof(*s6));
		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, rv.prm.ip6, 16);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)(void *)sa;

		memset(s4, 0, sizeof(*s4));
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(rv.prm.ip);
	}
	sa_set_port(sa, port);
	return 0;
}

static uint16_t
ephemeral_port(void)
{
	if (!next_port)
		next_port = (uint16_t)(40000 + (getpid() * 37) % 20000);
	uint16_t p = next_port++;

	if (next_port < 40000)
		next_port = 40000;
	return p;
}

static socklen_t
sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

RV_EXPORT int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rvc_id *r = RVC(id);

	if (!r || !addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return fail(EAFNOSUPPORT);
	memcpy(&id->route.addr.src_storage, addr, sa_len(addr));
	if (addr->sa_family == AF_INET6 && !rv.prm.has_ip6)
		return fail(EADDRNOTAVAIL);
	if (!sa_port(addr))
		sa_set_port(&id->route.addr.src_addr, ephemeral_port());
	sa_gid(&id->route.addr.src_addr, id->route.addr.addr.ibaddr.sgid.raw);
	id->route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	r->st = RVC_BOUND;
	return 0;
}

RV_EXPORT int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms)
{
	struct rvc_id *r = RVC(id);
	uint8_t mac[6];

	(void)timeout_ms;
	if (!r || !dst || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return fail(EAFNOSUPPORT);
	if (src && src->sa_family) {
		if (rdma_bind_addr(id, src))
			return -1;
	}
	uint16_t port = id->route.addr.src_addr.sa_family ? sa_port(&id->route.addr.src_addr) : 0;

	if (local_addr(&id->route.addr.src_addr, dst->sa_family))
		return fail(EADDRNOTAVAIL);
	sa_set_port(&id->route.addr.src_addr, port ? port : ephemeral_port());
	memcpy(&id->route.addr.dst_storage, dst, sa_len(dst));
	sa_gid(&id->route.addr.src_addr, id->route.addr.addr.ibaddr.sgid.raw);
	sa_gid(dst, id->route.addr.addr.ibaddr.dgid.raw);
	id->route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	memcpy(r->peer_gid, id->route.addr.addr.ibaddr.dgid.raw, 16);
	rv_lock();
	int rc = rv_resolve_locked(&id->route.addr.addr.ibaddr.dgid, mac);

	if (rc == 0)
		push(r, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0, NULL, 0);
	else
		push(r, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH, NULL, 0, NULL, 0);
	rv_unlock();
	r->st = RVC_BOUND;
	return complete(r);
}

static uint8_t
port_mtu(void)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(rvc_ctx, 1, &pa))
		return IBV_MTU_1024;
	return (uint8_t)pa.active_mtu;
}

RV_EXPORT int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rvc_id *r = RVC(id);

	(void)timeout_ms;
	if (!r)
		return fail(EINVAL);
	struct ibv_sa_path_rec *p = &r->path;

	memset(p, 0, sizeof(*p));
	p->sgid = id->route.addr.addr.ibaddr.sgid;
	p->dgid = id->route.addr.addr.ibaddr.dgid;
	p->pkey = htobe16(0xffff);
	p->hop_limit = RVC_HOP_LIMIT;
	p->mtu = port_mtu();
	p->mtu_selector = 2;
	p->numb_path = 1;
	p->reversible = 1;
	r->mtu = p->mtu;
	id->route.path_rec = p;
	id->route.num_paths = 1;
	rv_lock();
	push(r, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, NULL, 0);
	rv_unlock();
	return complete(r);
}

RV_EXPORT uint16_t
rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(sa_port(&id->route.addr.src_addr));
}

RV_EXPORT uint16_t
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(sa_port(&id->route.addr.dst_addr));
}

/* ---- QPs ---- */

static int
qp_attr_for(struct rvc_id *r, enum ibv_qp_state s, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (r->is_ud) {
			a->qkey = RVC_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE;
		if (r->is_ud)
			return 0;
		a->path_mtu = r->mtu ? r->mtu : port_mtu();
		a->dest_qp_num = r->rqpn;
		a->rq_psn = r->rpsn;
		a->max_dest_rd_atomic = r->resp_res ? r->resp_res : 1;
		a->min_rnr_timer = 12;
		a->ah_attr.is_global = 1;
		memcpy(a->ah_attr.grh.dgid.raw, r->peer_gid, 16);
		uint32_t ip;

		a->ah_attr.grh.sgid_index = net_mapped_to_ip4(r->peer_gid, &ip) ? 0 : 1;
		a->ah_attr.grh.hop_limit = RVC_HOP_LIMIT;
		a->ah_attr.port_num = 1;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = r->psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (r->is_ud)
			return 0;
		a->timeout = RVC_ACK_TIMEOUT;
		a->retry_cnt = r->retry;
		a->rnr_retry = r->rnr_retry;
		a->max_rd_atomic = r->init_depth ? r->init_depth : 1;
		*mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return fail(EINVAL);
	}
}

RV_EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{
	if (!id || !attr || !mask)
		return fail(EINVAL);
	return qp_attr_for(RVC(id), attr->qp_state, attr, mask);
}

static int
modify_to(struct rvc_id *r, enum ibv_qp_state s)
{
	struct ibv_qp_attr a;
	int mask;

	if (qp_attr_for(r, s, &a, &mask))
		return -1;
	int rc = ibv_modify_qp(r->id.qp, &a, mask);

	return rc ? fail(rc) : 0;
}

static int
modify_rtr_rts(struct rvc_id *r)
{
	if (!r->id.qp)
		return 0;
	return modify_to(r, IBV_QPS_RTR) || modify_to(r, IBV_QPS_RTS) ? -1 : 0;
}

static int
make_cqs(struct rdma_cm_id *id, struct ibv_qp_init_attr *a)
{
	if (!a->send_cq) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		id->send_cq =
		    id->send_cq_channel
			? ibv_create_cq(id->verbs,
					(int)(a->cap.max_send_wr ? a->cap.max_send_wr : 1), id,
					id->send_cq_channel, 0)
			: NULL;
		if (!id->send_cq)
			return -1;
		a->send_cq = id->send_cq;
	}
	if (!a->recv_cq) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		id->recv_cq =
		    id->recv_cq_channel
			? ibv_create_cq(id->verbs,
					(int)(a->cap.max_recv_wr ? a->cap.max_recv_wr : 1), id,
					id->recv_cq_channel, 0)
			: NULL;
		if (!id->recv_cq)
			return -1;
		a->recv_cq = id->recv_cq;
	}
	return 0;
}

static void
drop_cqs(struct rdma_cm_id *id)
{
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

RV_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qia)
{
	struct rvc_id *r = RVC(id);

	if (!r || !qia)
		return fail(EINVAL);
	if (!pd)
		pd = id->pd ? id->pd : rvc_pd;
	if (!pd || pd->context != id->verbs)
		return fail(EINVAL);
	struct ibv_qp_init_attr a = *qia;

	if (!a.qp_type) /* rdma_create_ep's callers leave it to the id (librdmacm does too) */
		a.qp_type = id->qp_type;
	if (make_cqs(id, &a)) {
		drop_cqs(id);
		return -1;
	}
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp) {
		drop_cqs(id);
		return -1;
	}
	id->qp = qp;
	id->pd = pd;
	id->qp_type = a.qp_type;
	r->is_ud = a.qp_type == IBV_QPT_UD;
	qia->cap = a.cap;
	qia->send_cq = a.send_cq;
	qia->recv_cq = a.recv_cq;
	r->psn = (uint32_t)(lrand48() & 0xffffff);
	if (modify_to(r, IBV_QPS_INIT) || (r->is_ud && modify_rtr_rts(r))) {
		int e = errno;

		ibv_destroy_qp(qp);
		id->qp = NULL;
		drop_cqs(id);
		return fail(e);
	}
	__atomic_add_fetch(&rvc_qps_live, 1, __ATOMIC_RELAXED);
	return 0;
}

RV_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *ax)
{
	if (!ax)
		return fail(EINVAL);
	if (ax->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD))
		return fail(EOPNOTSUPP);
	struct ibv_qp_init_attr a = {.qp_context = ax->qp_context,
				     .send_cq = ax->send_cq,
				     .recv_cq = ax->recv_cq,
				     .srq = ax->srq,
				     .cap = ax->cap,
				     .qp_type = ax->qp_type,
				     .sq_sig_all = ax->sq_sig_all};
	int rc = rdma_create_qp(id, ax->comp_mask & IBV_QP_INIT_ATTR_PD ? ax->pd : NULL, &a);

	if (rc == 0)
		ax->cap = a.cap;
	return rc;
}

RV_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id || !id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	drop_cqs(id);
}

/* ---- connect / listen / accept ---- */

static void
ip_hdr_of(struct rdma_cm_id *id, struct ip_cm_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->cma_version = IP_CM_VERSION;
	if (id->route.addr.src_addr.sa_family == AF_INET6) {
		h->ip_version = 6;
		memcpy(h->src_ip, &id->route.addr.src_sin6.sin6_addr, 16);
		memcpy(h->dst_ip, &id->route.addr.dst_sin6.sin6_addr, 16);
	} else {
		h->ip_version = 4;
		ip_cm_set_ipv4(h->src_ip, (const uint8_t *)&id->route.addr.src_sin.sin_addr);
		ip_cm_set_ipv4(h->dst_ip, (const uint8_t *)&id->route.addr.dst_sin.sin_addr);
	}
	h->src_port = sa_port(&id->route.addr.src_addr);
}

static void
dest_of(const uint8_t gid[16], struct cm_dest *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->gid, gid, 16);
	d->qpn = MAD_GSI_QPN;
	d->qkey = MAD_GSI_QKEY;
	d->pkey = MAD_DEFAULT_PKEY;
}

RV_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *cp)
{
	struct rvc_id *r = RVC(id);
	struct ip_cm_hdr h;
	struct cm_dest d;
	int rc;

	if (!r || !rv_cmep())
		return fail(EINVAL);
	ip_hdr_of(id, &h);
	dest_of(r->peer_gid, &d);
	uint16_t dport = sa_port(&id->route.addr.dst_addr);
	uint64_t sid = ip_cm_service_id((uint16_t)id->ps, dport);
	const uint8_t *app = cp ? cp->private_data : NULL;
	size_t app_len = cp && app ? cp->private_data_len : 0;

	if (r->is_ud) {
		struct cm_sidr_req q = {.pkey = MAD_DEFAULT_PKEY, .service_id = sid};

		if (ip_cm_compose(q.private_data, CM_SIDR_REQ_PD, (uint16_t)id->ps, &h, app,
				  app_len) < 0)
			return fail(EINVAL);
		rv_lock();
		rc =
		    cm_sidr_req(rv_cmep(), &q, &d, RVC_RESP_TIMEOUT, RVC_MAX_CM_RETRIES, r, &r->cm);
		rv_unlock();
	} else {
		if (!id->qp && !(cp && cp->qp_num))
			return fail(EINVAL);
		struct cm_req q = {0};
		uint32_t ip;

		r->retry = cp ? (cp->retry_count > 7 ? 7 : cp->retry_count) : 7;
		r->rnr_retry = cp ? (cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count) : 7;
		r->resp_res = cp ? cp->responder_resources : 0;
		r->init_depth = cp ? cp->initiator_depth : 0;
		if (!r->mtu)
			r->mtu = port_mtu();
		q.service_id = sid;
		q.local_qpn = id->qp ? id->qp->qp_num : cp->qp_num;
		q.responder_resources = r->resp_res;
		q.initiator_depth = r->init_depth;
		q.remote_cm_response_timeout = RVC_RESP_TIMEOUT;
		q.local_cm_response_timeout = RVC_RESP_TIMEOUT;
		q.transport = id->qp_type == IBV_QPT_UC ? CM_TRANSPORT_UC : CM_TRANSPORT_RC;
		q.flow_control = cp ? cp->flow_control : 1;
		q.starting_psn = r->psn;
		q.retry_count = r->retry;
		q.rnr_retry_count = r->rnr_retry;
		q.pkey = MAD_DEFAULT_PKEY;
		q.path_mtu = r->mtu;
		q.max_cm_retries = RVC_MAX_CM_RETRIES;
		q.srq = id->srq != NULL || (id->qp && id->qp->srq);
		memcpy(q.primary.local_gid, id->route.addr.addr.ibaddr.sgid.raw, 16);
		memcpy(q.primary.remote_gid, r->peer_gid, 16);
		q.primary.hop_limit = RVC_HOP_LIMIT;
		q.primary.subnet_local = 1;
		q.primary.local_ack_timeout = RVC_ACK_TIMEOUT;
		(void)ip;
		if (ip_cm_compose(q.private_data, CM_REQ_PD, (uint16_t)id->ps, &h, app, app_len) <
		    0)
			return fail(EINVAL);
		rv_lock();
		rc = cm_connect(rv_cmep(), &q, &d, r, &r->cm);
		rv_unlock();
	}
	if (rc)
		return fail(-rc);
	r->st = RVC_CONNECTING;
	return complete(r);
}

RV_EXPORT int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rvc_id *r = RVC(id);

	(void)backlog;
	if (!r || !rv_cmep())
		return fail(EINVAL);
	if (!id->route.addr.src_addr.sa_family) {
		struct sockaddr_in any = {.sin_family = AF_INET};

		if (rdma_bind_addr(id, (struct sockaddr *)&any))
			return -1;
	}
	uint64_t sid = ip_cm_service_id((uint16_t)id->ps, sa_port(&id->route.addr.src_addr));

	rv_lock();
	int h = cm_listen(rv_cmep(), sid, ~0ull, r);

	rv_unlock();
	if (h < 0)
		return fail(-h);
	r->listen_handle = h;
	r->st = RVC_LISTEN;
	return 0;
}

RV_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *cp)
{
	struct rvc_id *r = RVC(id);
	int rc;

	if (!r || !r->cm)
		return fail(EINVAL);
	if (r->is_ud) {
		struct cm_sidr_rep s = {.status = CM_SIDR_SUCCESS, .qkey = RVC_UDP_QKEY};

		if (!id->qp && !(cp && cp->qp_num))
			return fail(EINVAL);
		s.qpn = id->qp ? id->qp->qp_num : cp->qp_num;
		s.service_id = r->cm->service_id;
		if (cp && cp->private_data && cp->private_data_len) {
			if (cp->private_data_len > CM_SIDR_REP_PD)
				return fail(EINVAL);
			memcpy(s.private_data, cp->private_data, cp->private_data_len);
		}
		rv_lock();
		rc = cm_sidr_rep(rv_cmep(), r->cm, &s);
		r->cm = NULL; /* the passive SIDR id is freed */
		rv_unlock();
		return rc ? fail(-rc) : 0;
	}
	if (cp) {
		r->resp_res =
		    cp->responder_resources < r->resp_res ? cp->responder_resources : r->resp_res;
		r->init_depth =
		    cp->initiator_depth < r->init_depth ? cp->initiator_depth : r->init_depth;
		r->rnr_retry = cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count;
	}
	if (!id->qp && !(cp && cp->qp_num))
		return fail(EINVAL);
	if (modify_rtr_rts(r))
		return -1;
	struct cm_rep p = {0};

	p.local_qpn = id->qp ? id->qp->qp_num : cp->qp_num;
	p.starting_psn = r->psn;
	p.responder_resources = r->resp_res;
	p.initiator_depth = r->init_depth;
	p.target_ack_delay = 0;
	p.flow_control = cp ? cp->flow_control : 1;
	p.rnr_retry_count = r->rnr_retry;
	p.srq = id->qp && id->qp->srq;
	if (cp && cp->private_data && cp->private_data_len) {
		if (cp->private_data_len > CM_REP_PD)
			return fail(EINVAL);
		memcpy(p.private_data, cp->private_data, cp->private_data_len);
	}
	rv_lock();
	rc = cm_accept(rv_cmep(), r->cm, &p);
	rv_unlock();
	if (rc)
		return fail(-rc);
	r->st = RVC_CONNECTING;
	return complete(r);
}

RV_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	struct rvc_id *r = RVC(id);

	if (!r)
		return fail(EINVAL);
	rv_lock();
	int rc = -EINVAL;

	if (r->cm && r->is_ud) {
		struct cm_sidr_rep s = {.status = CM_SIDR_REJECT, .service_id = r->cm->service_id};

		if (pd && len)
			memcpy(s.private_data, pd, len > CM_SIDR_REP_PD ? CM_SIDR_REP_PD : len);
		rc = cm_sidr_rep(rv_cmep(), r->cm, &s);
		r->cm = NULL;
	} else if (r->cm) {
		rc = cm_reject(rv_cmep(), r->cm, CM_REJ_CONSUMER_DEFINED, NULL, 0, pd,
			       len > CM_REJ_PD ? CM_REJ_PD : len);
		r->cm = NULL;
	}
	rv_unlock();
	return rc ? fail(-rc) : 0;
}

RV_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	struct rvc_id *r = RVC(id);

	if (!r || !r->cm)
		return fail(EINVAL);
	rv_lock();
	int rc = cm_rtu(rv_cmep(), r->cm, NULL, 0);

	rv_unlock();
	if (rc)
		return fail(-rc);
	r->st = RVC_CONNECTED;
	return 0;
}

RV_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct rvc_id *r = RVC(id);

	if (!r)
		return fail(EINVAL);
	if (id->qp && !r->is_ud) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

		ibv_modify_qp(id->qp, &a, IBV_QP_STATE);
	}
	rv_lock();
	bool wait = false;

	if (r->cm && r->cm->state == CM_ESTABLISHED)
		wait = cm_disconnect(rv_cmep(), r->cm, NULL, 0) == 0;
	rv_unlock();
	r->st = RVC_DISC;
	return wait ? complete(r) : 0;
}

RV_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	struct rvc_id *r = RVC(id);
	bool own = false;

	if (!r)
		return fail(EINVAL);
	if (!ch) {
		ch = rdma_create_event_channel();
		if (!ch)
			return -1;
		own = true;
	}
	rv_lock();
	struct rdma_event_channel *old = id->channel;
	bool old_own = r->own_chan;

	id->channel = ch;
	r->own_chan = own;
	r->sync = own;
	rv_unlock();
	if (old_own)
		rdma_destroy_event_channel(old);
	return 0;
}

RV_EXPORT int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)optval;
	(void)optlen;
	if (!id)
		return fail(EINVAL);
	if (level == RDMA_OPTION_ID || level == RDMA_OPTION_IB)
		return 0; /* TOS, REUSEADDR, AFONLY, ACK_TIMEOUT, PATH: accepted, no effect */
	(void)optname;
	return fail(ENOSYS);
}

/* ---- the CM's events (under rv.lock) ---- */

static void
on_cm_event(struct cm_id *cid, const struct cm_event *ev)
{
	struct rvc_id *r = cid->user_ctx;
	const struct cm_msg *m = ev->msg;

	switch (ev->type) {
	case CM_EV_REQ_RCVD:
	case CM_EV_SIDR_REQ_RCVD: {
		struct rvc_id *l = ev->listen_ctx;
		bool sidr = ev->type == CM_EV_SIDR_REQ_RCVD;
		const uint8_t *pd = sidr ? m->u.sidr_req.private_data : m->u.req.private_data;
		size_t pdl = sidr ? CM_SIDR_REQ_PD : CM_REQ_PD;
		struct ip_cm_hdr h;

		if (!l || ip_cm_hdr_parse(pd, pdl, &h) ||
		    !(r = new_id(l->id.channel, l->id.context, l->id.ps, l->id.qp_type))) {
			if (sidr) {
				struct cm_sidr_rep s = {.status = CM_SIDR_REJECT};

				cm_sidr_rep(rv_cmep(), cid, &s);
			} else {
				cm_reject(rv_cmep(), cid, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL,
					  0);
			}
			return;
		}
		/* queued on the listener's channel: rdma_get_request gives a synchronous
		 * listener's child a channel of its own */
		r->id.pd = l->id.pd;
		r->cm = cid;
		cid->user_ctx = r;
		memcpy(r->peer_gid, cid->dest.gid, 16);
		struct rdma_addr *a = &r->id.route.addr;

		if (h.ip_version == 6) {
			a->src_sin6.sin6_family = a->dst_sin6.sin6_family = AF_INET6;
			memcpy(&a->src_sin6.sin6_addr, h.dst_ip, 16);
			memcpy(&a->dst_sin6.sin6_addr, h.src_ip, 16);
		} else {
			a->src_sin.sin_family = a->dst_sin.sin_family = AF_INET;
			memcpy(&a->src_sin.sin_addr, h.dst_ip + 12, 4);
			memcpy(&a->dst_sin.sin_addr, h.src_ip + 12, 4);
		}
		sa_set_port(&a->src_addr, sa_port(&l->id.route.addr.src_addr));
		sa_set_port(&a->dst_addr, h.src_port);
		sa_gid(&a->src_addr, a->addr.ibaddr.sgid.raw);
		memcpy(a->addr.ibaddr.dgid.raw, r->peer_gid, 16);
		a->addr.ibaddr.pkey = htobe16(0xffff);
		r->path.sgid = a->addr.ibaddr.sgid;
		r->path.dgid = a->addr.ibaddr.dgid;
		r->id.route.num_paths = 1;
		if (!sidr) {
			const struct cm_req *q = &m->u.req;

			r->rqpn = q->local_qpn;
			r->rpsn = q->starting_psn;
			/* the peer's initiator depth bounds our responder resources */
			r->resp_res = q->initiator_depth;
			r->init_depth = q->responder_resources;
			r->retry = q->retry_count;
			r->rnr_retry = q->rnr_retry_count;
			r->mtu = q->path_mtu;
			uint8_t pm = port_mtu();

			if (!r->mtu || r->mtu > pm)
				r->mtu = pm;
			r->path.mtu = r->mtu;
		}
		size_t off = ip_cm_app_offset((uint16_t)l->id.ps);

		push(r, RDMA_CM_EVENT_CONNECT_REQUEST, 0, pd + off, pdl - off, &l->id, 0);
		if (!sidr) {
			struct rvc_ev *e = CHAN(r->id.channel)->tail;

			if (e) {
				e->ev.param.conn.responder_resources = m->u.req.responder_resources;
				e->ev.param.conn.initiator_depth = m->u.req.initiator_depth;
				e->ev.param.conn.flow_control = m->u.req.flow_control;
				e->ev.param.conn.retry_count = m->u.req.retry_count;
				e->ev.param.conn.rnr_retry_count = m->u.req.rnr_retry_count;
				e->ev.param.conn.srq = m->u.req.srq;
				e->ev.param.conn.qp_num = m->u.req.local_qpn;
			}
		}
		return;
	}
	default:
		break;
	}
	if (!r)
		return;
	switch (ev->type) {
	case CM_EV_REP_RCVD: {
		const struct cm_rep *p = &m->u.rep;

		r->rqpn = p->local_qpn;
		r->rpsn = p->starting_psn;
		if (p->initiator_depth < r->resp_res)
			r->resp_res = p->initiator_depth;
		if (p->responder_resources < r->init_depth)
			r->init_depth = p->responder_resources;
		push(r, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, p->private_data, CM_REP_PD, NULL, 1);
		struct rvc_ev *e = CHAN(r->id.channel)->tail;

		if (e) {
			e->ev.param.conn.responder_resources = p->responder_resources;
			e->ev.param.conn.initiator_depth = p->initiator_depth;
			e->ev.param.conn.flow_control = p->flow_control;
			e->ev.param.conn.rnr_retry_count = p->rnr_retry_count;
			e->ev.param.conn.srq = p->srq;
			e->ev.param.conn.qp_num = p->local_qpn;
		}
		break;
	}
	case CM_EV_ESTABLISHED:
		r->st = RVC_CONNECTED;
		push(r, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0, NULL, 0);
		break;
	case CM_EV_REJ_RCVD:
		r->cm = NULL;
		push(r, RDMA_CM_EVENT_REJECTED, m->u.rej.reason, m->u.rej.private_data, CM_REJ_PD,
		     NULL, 0);
		break;
	case CM_EV_TIMEOUT:
		r->cm = NULL;
		push(r, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0, NULL, 0);
		break;
	case CM_EV_DREQ_RCVD:
	case CM_EV_DREP_RCVD:
		if (!r->disc_reported) {
			r->disc_reported = true;
			push(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL, 0);
		}
		break;
	case CM_EV_TIMEWAIT_EXIT:
		r->cm = NULL;
		if (!r->disc_reported) { /* a DREQ that got no DREP */
			r->disc_reported = true;
			push(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL, 0);
		}
		break;
	case CM_EV_SIDR_REP_RCVD: {
		const struct cm_sidr_rep *s = &m->u.sidr_rep;

		r->cm = NULL;
		if (s->status != CM_SIDR_SUCCESS) {
			push(r, RDMA_CM_EVENT_UNREACHABLE, s->status, NULL, 0, NULL, 0);
			break;
		}
		push(r, RDMA_CM_EVENT_ESTABLISHED, 0, s->private_data, CM_SIDR_REP_PD, NULL, 0);
		struct rvc_ev *e = CHAN(r->id.channel)->tail;

		if (e) {
			struct ibv_ah_attr *ah = &e->ev.param.ud.ah_attr;
			uint32_t ip;

			e->ev.param.ud.qp_num = s->qpn;
			e->ev.param.ud.qkey = s->qkey;
			ah->is_global = 1;
			memcpy(ah->grh.dgid.raw, r->peer_gid, 16);
			ah->grh.sgid_index = net_mapped_to_ip4(r->peer_gid, &ip) ? 0 : 1;
			ah->grh.hop_limit = RVC_HOP_LIMIT;
			ah->port_num = 1;
		}
		break;
	}
	default:
		break;
	}
}

/* ---- synchronous helpers: rdma_create_ep / rdma_get_request ---- */

RV_EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rvc_id *l = RVC(listen);
	struct rdma_cm_event *ev;

	if (!l || !id)
		return fail(EINVAL);
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev))
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	struct rdma_cm_id *c = ev->id;
	struct rvc_id *cr = RVC(c);

	rdma_ack_cm_event(ev);
	/* the child gets a channel of its own and is synchronous, as librdmacm's */
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		return -1;
	rv_lock();
	c->channel = ch;
	cr->own_chan = cr->sync = true;
	rv_unlock();
	if (l->ep_attr) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(c, l->ep_pd, &a)) {
			int e = errno;

			rdma_reject(c, NULL, 0);
			rdma_destroy_id(c);
			return fail(e);
		}
	}
	*id = c;
	return 0;
}

RV_EXPORT int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qia)
{
	struct rdma_cm_id *c;

	if (!id || !res)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &c, NULL, (enum rdma_port_space)res->ai_port_space))
		return -1;
	struct rvc_id *r = RVC(c);

	if (res->ai_flags & RAI_PASSIVE) {
		if (res->ai_src_addr && rdma_bind_addr(c, res->ai_src_addr))
			goto err;
		if (qia) {
			r->ep_attr = malloc(sizeof(*qia));
			if (!r->ep_attr)
				goto err;
			*r->ep_attr = *qia;
			r->ep_pd = pd;
		}
		*id = c;
		return 0;
	}
	if (rdma_resolve_addr(c, res->ai_src_addr, res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(c, 2000))
		goto err;
	if (qia && rdma_create_qp(c, pd, qia))
		goto err;
	*id = c;
	return 0;
err:;
	int e = errno;

	rdma_destroy_id(c);
	return fail(e);
}

RV_EXPORT void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

/* ---- rdma_getaddrinfo ---- */

RV_EXPORT int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo gh = {.ai_flags = AI_NUMERICSERV}, *gr = NULL;
	int passive = hints && (hints->ai_flags & RAI_PASSIVE);

	if (!res)
		return fail(EINVAL);
	if (hints && (hints->ai_flags & RAI_NUMERICHOST))
		gh.ai_flags |= AI_NUMERICHOST;
	if (passive)
		gh.ai_flags |= AI_PASSIVE;
	gh.ai_family = hints && hints->ai_family ? hints->ai_family : AF_UNSPEC;
	gh.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(node, service, &gh, &gr);

	if (rc)
		return rc == EAI_SYSTEM ? -1 : fail(EADDRNOTAVAIL);
	/* the first IPv4 or IPv6 answer */
	struct addrinfo *g = gr;

	while (g && g->ai_family != AF_INET && g->ai_family != AF_INET6)
		g = g->ai_next;
	struct rdma_addrinfo *ra = calloc(1, sizeof(*ra));
	struct sockaddr *sa = g ? malloc(g->ai_addrlen) : NULL;

	if (!g || !ra || !sa) {
		freeaddrinfo(gr);
		free(ra);
		free(sa);
		return fail(g ? ENOMEM : EADDRNOTAVAIL);
	}
	memcpy(sa, g->ai_addr, g->ai_addrlen);
	ra->ai_flags = hints ? hints->ai_flags : 0;
	ra->ai_family = g->ai_family;
	ra->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	ra->ai_port_space = hints && hints->ai_port_space
				? hints->ai_port_space
				: (ra->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
	if (passive) {
		ra->ai_src_addr = sa;
		ra->ai_src_len = g->ai_addrlen;
	} else {
		ra->ai_dst_addr = sa;
		ra->ai_dst_len = g->ai_addrlen;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			ra->ai_src_addr = malloc(hints->ai_src_len);
			if (ra->ai_src_addr) {
				memcpy(ra->ai_src_addr, hints->ai_src_addr, hints->ai_src_len);
				ra->ai_src_len = hints->ai_src_len;
			}
		}
	}
	freeaddrinfo(gr);
	*res = ra;
	return 0;
}

RV_EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

/* ---- devices ---- */

RV_EXPORT struct ibv_context **
rdma_get_devices(int *num)
{
	if (rvc_init())
		return NULL;
	struct ibv_context **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = rvc_ctx;
	if (num)
		*num = 1;
	return l;
}

RV_EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- refused: what no tool of the reference list needs (errno ENOSYS) ---- */

RV_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id;
	(void)event;
	return fail(ENOSYS);
}

RV_EXPORT int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id;
	(void)addr;
	(void)context;
	return fail(ENOSYS);
}

RV_EXPORT int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	(void)addr;
	return fail(ENOSYS);
}

void
rv_cm_counts(uint64_t *ids, uint64_t *qps)
{
	*ids = __atomic_load_n(&rvc_ids_live, __ATOMIC_RELAXED);
	*qps = __atomic_load_n(&rvc_qps_live, __ATOMIC_RELAXED);
}

RV_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	(void)id;
	(void)mc_join_attr;
	(void)context;
	return fail(ENOSYS);
}
