/* SPDX-License-Identifier: BSD-3-Clause */
/* The IB CM communication state machine (IBTA Vol. 1 12.9, figures 93-95; 12.11 SIDR):
 * an enum plus a switch per received message and per timer. */
#include "cm.h"

#include <errno.h>
#include <string.h>

static const char *const state_names[CM_STATE_COUNT] = {
    "IDLE",	 "LISTEN",   "REQ_SENT",      "REQ_RCVD",     "MRA_REQ_SENT", "MRA_REQ_RCVD",
    "REP_SENT",	 "REP_RCVD", "MRA_REP_SENT",  "MRA_REP_RCVD", "ESTABLISHED",  "DREQ_SENT",
    "DREQ_RCVD", "TIMEWAIT", "SIDR_REQ_SENT", "SIDR_REQ_RCVD"};

const char *
cm_state_name(enum cm_state s)
{
	return (unsigned)s < CM_STATE_COUNT ? state_names[s] : "?";
}

const char *
cm_event_name(enum cm_event_type e)
{
	static const char *const n[] = {"?",	     "REQ_RCVD",      "MRA_RCVD",
					"REP_RCVD",  "ESTABLISHED",   "REJ_RCVD",
					"DREQ_RCVD", "DREP_RCVD",     "TIMEWAIT_EXIT",
					"TIMEOUT",   "SIDR_REQ_RCVD", "SIDR_REP_RCVD"};
	return (unsigned)e < sizeof(n) / sizeof(n[0]) ? n[e] : "?";
}

const char *
cm_drop_name(enum cm_drop d)
{
	static const char *const n[CM_DROP_COUNT] = {
	    "short",	    "base_version", "class",	   "class_version", "method",
	    "attr",	    "malformed",    "no_listener", "stale_id",	    "out_of_state",
	    "no_resources", "unsupported",  "duplicate"};
	return (unsigned)d < CM_DROP_COUNT ? n[d] : "?";
}

static uint64_t
rng_next(struct cm *cm)
{
	/* splitmix64 */
	uint64_t z = (cm->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
cm_init(struct cm *cm, const struct cm_config *cfg, const struct cm_ops *ops, void *ctx)
{
	memset(cm, 0, sizeof(*cm));
	cm->cfg = *cfg;
	if (cm->cfg.max_ids == 0 || cm->cfg.max_ids > CM_MAX_IDS)
		cm->cfg.max_ids = CM_MAX_IDS;
	cm->ops = ops;
	cm->ctx = ctx;
	cm->rng = cfg->seed;
}

static uint64_t
now(struct cm *cm)
{
	return cm->ops->now(cm->ctx);
}

static uint64_t
plt2(const struct cm *cm)
{
	return 2 * cm_time_ns(cm->cfg.packet_life_time);
}

static void
set_state(struct cm *cm, struct cm_id *id, enum cm_state to, const char *why)
{
	enum cm_state from = id->state;

	id->state = to;
	if (cm->ops->trace)
		cm->ops->trace(cm->ctx, id, from, to, why);
}

static struct cm_id *
find_local(struct cm *cm, uint32_t lcid)
{
	for (uint32_t i = 0; i < cm->cfg.max_ids; i++)
		if (cm->ids[i].in_use && cm->ids[i].local_comm_id == lcid)
			return &cm->ids[i];
	return NULL;
}

static struct cm_id *
find_remote(struct cm *cm, uint32_t rcid, const uint8_t gid[16], int sidr)
{
	for (uint32_t i = 0; i < cm->cfg.max_ids; i++) {
		struct cm_id *id = &cm->ids[i];

		if (id->in_use && id->passive && id->remote_comm_id == rcid &&
		    (id->state == CM_SIDR_REQ_RCVD) == !!sidr && !memcmp(id->dest.gid, gid, 16))
			return id;
	}
	return NULL;
}

static struct cm_id *
id_alloc(struct cm *cm)
{
	struct cm_id *id = NULL;
	uint32_t lcid;

	for (uint32_t i = 0; i < cm->cfg.max_ids; i++)
		if (!cm->ids[i].in_use) {
			id = &cm->ids[i];
			break;
		}
	if (!id)
		return NULL;
	do
		lcid = (uint32_t)rng_next(cm);
	while (lcid == 0 || find_local(cm, lcid));
	memset(id, 0, sizeof(*id));
	id->in_use = 1;
	id->local_comm_id = lcid;
	cm->cnt.ids_alloc++;
	return id;
}

static void
id_free(struct cm *cm, struct cm_id *id, const char *why)
{
	if (!id->in_use)
		return;
	id->deadline = 0;
	if (id->state != CM_IDLE)
		set_state(cm, id, CM_IDLE, why);
	id->in_use = 0;
	cm->cnt.ids_free++;
}

static void
emit(struct cm *cm, struct cm_id *id, enum cm_event_type t, const struct cm_msg *m, void *lctx)
{
	struct cm_event ev = {.type = t, .msg = m, .listen_ctx = lctx};

	if (id->held)
		return;
	cm->ops->event(cm->ctx, id, &ev);
}

static uint64_t
new_tid(struct cm *cm)
{
	return rng_next(cm);
}

static int
send_raw(struct cm *cm, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE])
{
	uint16_t a = (uint16_t)(mad[16] << 8 | mad[17]);

	if (a >= MAD_ATTR_CM_REQ && a <= MAD_ATTR_CM_APR)
		cm->cnt.tx[a - MAD_ATTR_CM_REQ]++;
	if (cm->ops->send_mad(cm->ctx, dst, mad) < 0) {
		cm->cnt.tx_err++;
		return -EIO;
	}
	return 0;
}

static int
send_msg(struct cm *cm, const struct cm_dest *dst, const struct cm_msg *m, uint8_t *save)
{
	uint8_t buf[MAD_SIZE];
	uint8_t *mad = save ? save : buf;

	cm_msg_build(mad, m);
	return send_raw(cm, dst, mad);
}

static void
arm(struct cm *cm, struct cm_id *id, uint64_t wait)
{
	id->wait_ns = wait;
	id->deadline = now(cm) + wait;
	if (id->deadline == 0)
		id->deadline = 1;
}

/* REJ from @p id (12.6.7); @p ari: ARI_length bytes */
static void
send_rej(struct cm *cm, struct cm_id *id, uint8_t msg_ref, uint16_t reason, const uint8_t *ari,
	 size_t ari_len, const uint8_t *pd, size_t pd_len)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REJ;
	m.hdr.tid = id->tid;
	m.u.rej.local_comm_id = id->local_comm_id;
	m.u.rej.remote_comm_id = id->remote_comm_id;
	m.u.rej.msg_rejected = msg_ref;
	m.u.rej.reason = reason;
	if (ari_len > CM_REJ_ARI)
		ari_len = CM_REJ_ARI;
	m.u.rej.ari_length = (uint8_t)ari_len;
	if (ari_len)
		memcpy(m.u.rej.ari, ari, ari_len);
	if (pd_len > CM_REJ_PD)
		pd_len = CM_REJ_PD;
	if (pd_len)
		memcpy(m.u.rej.private_data, pd, pd_len);
	send_msg(cm, &id->dest, &m, NULL);
}

/* A REJ answering a message no ID took (no listener, no resources): 12.6.7 */
static void
send_rej_unbound(struct cm *cm, const struct cm_dest *src, uint64_t tid, uint32_t remote_cid,
		 uint16_t reason)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REJ;
	m.hdr.tid = tid;
	m.u.rej.remote_comm_id = remote_cid;
	m.u.rej.msg_rejected = CM_MSG_REF_REQ;
	m.u.rej.reason = reason;
	send_msg(cm, src, &m, NULL);
}

int
cm_listen(struct cm *cm, uint64_t service_id, uint64_t mask, void *ctx)
{
	int free_slot = -1;

	for (unsigned i = 0; i < CM_MAX_LISTENS; i++) {
		struct cm_listen *l = &cm->listens[i];

		if (!l->in_use) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if ((l->service_id & l->mask & mask) == (service_id & l->mask & mask))
			return -EADDRINUSE;
	}
	if (free_slot < 0)
		return -ENOSPC;
	cm->listens[free_slot] = (struct cm_listen){service_id & mask, mask, ctx, 1};
	return free_slot;
}

void
cm_listen_cancel(struct cm *cm, int h)
{
	if (h >= 0 && h < (int)CM_MAX_LISTENS)
		cm->listens[h].in_use = 0;
}

static struct cm_listen *
listen_match(struct cm *cm, uint64_t sid)
{
	for (unsigned i = 0; i < CM_MAX_LISTENS; i++) {
		struct cm_listen *l = &cm->listens[i];

		if (l->in_use && (sid & l->mask) == l->service_id)
			return l;
	}
	return NULL;
}

/* ---- consumer verbs (12.9.5, 12.9.6) ---- */

int
cm_connect(struct cm *cm, const struct cm_req *req, const struct cm_dest *dst, void *user_ctx,
	   struct cm_id **out)
{
	struct cm_id *id = id_alloc(cm);
	struct cm_msg m;

	if (!id)
		return -ENOSPC;
	id->dest = *dst;
	id->user_ctx = user_ctx;
	id->service_id = req->service_id;
	id->tid = new_tid(cm);
	id->max_cm_retries = req->max_cm_retries;
	id->retries_left = req->max_cm_retries;
	id->local_resp_timeout = req->local_cm_response_timeout;
	id->remote_resp_timeout = req->remote_cm_response_timeout;
	id->ack_timeout = req->primary.local_ack_timeout;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REQ;
	m.hdr.tid = id->tid;
	m.u.req = *req;
	m.u.req.local_comm_id = id->local_comm_id;
	m.u.req.local_ca_guid = cm->cfg.local_ca_guid;
	/* 12.9.5.1: IDLE -> REQ_SENT on sending REQ */
	set_state(cm, id, CM_REQ_SENT, "connect: tx REQ");
	send_msg(cm, dst, &m, id->last_mad);
	arm(cm, id, plt2(cm) + cm_time_ns(req->remote_cm_response_timeout));
	*out = id;
	return 0;
}

int
cm_mra(struct cm *cm, struct cm_id *id, uint8_t service_timeout, const uint8_t *pd, size_t pd_len)
{
	struct cm_msg m;
	enum cm_state to;
	uint8_t ref;

	switch (id->state) {
	case CM_REQ_RCVD:
		to = CM_MRA_REQ_SENT;
		ref = CM_MSG_REF_REQ;
		break;
	case CM_REP_RCVD:
		to = CM_MRA_REP_SENT;
		ref = CM_MSG_REF_REP;
		break;
	default:
		return -EINVAL;
	}
	if (pd_len > CM_MRA_PD)
		return -EMSGSIZE;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_MRA;
	m.hdr.tid = id->tid;
	m.u.mra.local_comm_id = id->local_comm_id;
	m.u.mra.remote_comm_id = id->remote_comm_id;
	m.u.mra.msg_mraed = ref;
	m.u.mra.service_timeout = service_timeout;
	if (pd_len)
		memcpy(m.u.mra.private_data, pd, pd_len);
	set_state(cm, id, to, "tx MRA");
	id->has_reply = 1;
	return send_msg(cm, &id->dest, &m, id->reply_mad);
}

int
cm_accept(struct cm *cm, struct cm_id *id, const struct cm_rep *rep)
{
	struct cm_msg m;

	/* 12.9.5.2: REQ_RCVD / MRA_REQ_SENT -> REP_SENT */
	if (id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REP;
	m.hdr.tid = id->tid;
	m.u.rep = *rep;
	m.u.rep.local_comm_id = id->local_comm_id;
	m.u.rep.remote_comm_id = id->remote_comm_id;
	m.u.rep.local_ca_guid = cm->cfg.local_ca_guid;
	id->has_reply = 0;
	id->retries_left = id->max_cm_retries;
	set_state(cm, id, CM_REP_SENT, "accept: tx REP");
	send_msg(cm, &id->dest, &m, id->last_mad);
	arm(cm, id, plt2(cm) + cm_time_ns(id->local_resp_timeout));
	return 0;
}

int
cm_rtu(struct cm *cm, struct cm_id *id, const uint8_t *pd, size_t pd_len)
{
	struct cm_msg m;

	/* 12.9.5.1: REP_RCVD / MRA_REP_SENT -> ESTABLISHED on sending RTU */
	if (id->state != CM_REP_RCVD && id->state != CM_MRA_REP_SENT)
		return -EINVAL;
	if (pd_len > CM_RTU_PD)
		return -EMSGSIZE;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_RTU;
	m.hdr.tid = id->tid;
	m.u.rtu.local_comm_id = id->local_comm_id;
	m.u.rtu.remote_comm_id = id->remote_comm_id;
	if (pd_len)
		memcpy(m.u.rtu.private_data, pd, pd_len);
	set_state(cm, id, CM_ESTABLISHED, "tx RTU");
	cm->cnt.established++;
	id->has_reply = 1;
	return send_msg(cm, &id->dest, &m, id->reply_mad);
}

int
cm_reject(struct cm *cm, struct cm_id *id, uint16_t reason, const uint8_t *ari, size_t ari_len,
	  const uint8_t *pd, size_t pd_len)
{
	uint8_t ref;

	switch (id->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		ref = CM_MSG_REF_REQ;
		break;
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		ref = CM_MSG_REF_REP;
		break;
	default:
		return -EINVAL;
	}
	if (ari_len > CM_REJ_ARI || pd_len > CM_REJ_PD)
		return -EMSGSIZE;
	send_rej(cm, id, ref, reason, ari, ari_len, pd, pd_len);
	id_free(cm, id, "reject: tx REJ");
	return 0;
}

static void
send_dreq(struct cm *cm, struct cm_id *id, const uint8_t *pd, size_t pd_len)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_DREQ;
	m.hdr.tid = id->tid = new_tid(cm);
	m.u.dreq.local_comm_id = id->local_comm_id;
	m.u.dreq.remote_comm_id = id->remote_comm_id;
	m.u.dreq.remote_qpn = id->remote_qpn;
	if (pd_len)
		memcpy(m.u.dreq.private_data, pd, pd_len);
	id->retries_left = id->max_cm_retries;
	set_state(cm, id, CM_DREQ_SENT, "tx DREQ");
	send_msg(cm, &id->dest, &m, id->last_mad);
	arm(cm, id, plt2(cm) + cm_time_ns(id->remote_resp_timeout));
}

int
cm_disconnect(struct cm *cm, struct cm_id *id, const uint8_t *pd, size_t pd_len)
{
	/* 12.9.6: ESTABLISHED -> DREQ_SENT */
	if (id->state != CM_ESTABLISHED)
		return -EINVAL;
	if (pd_len > CM_DREQ_PD)
		return -EMSGSIZE;
	send_dreq(cm, id, pd, pd_len);
	return 0;
}

static void
enter_timewait(struct cm *cm, struct cm_id *id, const char *why)
{
	set_state(cm, id, CM_TIMEWAIT, why);
	arm(cm, id, plt2(cm) + cm_time_ns(id->ack_timeout));
}

void
cm_destroy(struct cm *cm, struct cm_id *id)
{
	uint64_t guid = cm->cfg.local_ca_guid;
	uint8_t ari[8];

	if (!id->in_use)
		return;
	id->held = 1; /* no event names it from now on */
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		/* as the kernel's cm_destroy_id: REJ Timeout with the local CA GUID as ARI */
		for (int i = 0; i < 8; i++)
			ari[i] = (uint8_t)(guid >> (56 - 8 * i));
		send_rej(cm, id, CM_MSG_REF_REQ, CM_REJ_TIMEOUT, ari, 8, NULL, 0);
		id_free(cm, id, "destroy: tx REJ");
		break;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		cm_reject(cm, id, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		send_rej(cm, id, CM_MSG_REF_REP, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		id_free(cm, id, "destroy: tx REJ");
		break;
	case CM_ESTABLISHED:
		send_dreq(cm, id, NULL, 0);
		break;
	case CM_DREQ_SENT:
	case CM_DREQ_RCVD:
	case CM_TIMEWAIT:
		break; /* freed on the timer */
	default:
		id_free(cm, id, "destroy");
		break;
	}
}

int
cm_sidr_req(struct cm *cm, const struct cm_sidr_req *req, const struct cm_dest *dst,
	    uint8_t timeout, uint8_t max_retries, void *user_ctx, struct cm_id **out)
{
	struct cm_id *id = id_alloc(cm);
	struct cm_msg m;

	if (!id)
		return -ENOSPC;
	id->dest = *dst;
	id->user_ctx = user_ctx;
	id->service_id = req->service_id;
	id->tid = new_tid(cm);
	id->max_cm_retries = id->retries_left = max_retries;
	id->remote_resp_timeout = timeout;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_SIDR_REQ;
	m.hdr.tid = id->tid;
	m.u.sidr_req = *req;
	m.u.sidr_req.request_id = id->local_comm_id;
	/* 12.11.2: IDLE -> SIDR_REQ_SENT */
	set_state(cm, id, CM_SIDR_REQ_SENT, "tx SIDR_REQ");
	send_msg(cm, dst, &m, id->last_mad);
	arm(cm, id, plt2(cm) + cm_time_ns(timeout));
	*out = id;
	return 0;
}

static void
send_sidr_rep(struct cm *cm, const struct cm_dest *dst, uint64_t tid, uint32_t request_id,
	      const struct cm_sidr_rep *rep, uint8_t status)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_SIDR_REP;
	m.hdr.tid = tid;
	if (rep)
		m.u.sidr_rep = *rep;
	else
		m.u.sidr_rep.status = status;
	m.u.sidr_rep.request_id = request_id;
	send_msg(cm, dst, &m, NULL);
}

int
cm_sidr_rep(struct cm *cm, struct cm_id *id, const struct cm_sidr_rep *rep)
{
	if (id->state != CM_SIDR_REQ_RCVD)
		return -EINVAL;
	send_sidr_rep(cm, &id->dest, id->tid, id->remote_comm_id, rep, 0);
	id_free(cm, id, "tx SIDR_REP");
	return 0;
}

/* ---- received messages (12.9.5-12.9.6, 12.11) ---- */

#define DROP(c) (cm->cnt.drop[(c)]++, -(1 + (c)))

static int
rx_req(struct cm *cm, const struct cm_dest *src, const struct cm_msg *m)
{
	const struct cm_req *r = &m->u.req;
	struct cm_listen *l;
	struct cm_id *id = find_remote(cm, r->local_comm_id, src->gid, 0);

	if (id) {
		/* a duplicate REQ (12.9.5.2; kernel cm_dup_req_handler) */
		switch (id->state) {
		case CM_MRA_REQ_SENT:
			cm->cnt.dup_resends++;
			send_raw(cm, &id->dest, id->reply_mad);
			return 0;
		case CM_REP_SENT:
		case CM_MRA_REP_RCVD:
			cm->cnt.dup_resends++;
			send_raw(cm, &id->dest, id->last_mad);
			return 0;
		default:
			return DROP(CM_DROP_DUPLICATE);
		}
	}
	l = listen_match(cm, r->service_id);
	if (!l) {
		send_rej_unbound(cm, src, m->hdr.tid, r->local_comm_id, CM_REJ_INVALID_SERVICE_ID);
		return DROP(CM_DROP_NO_LISTENER);
	}
	id = id_alloc(cm);
	if (!id) {
		send_rej_unbound(cm, src, m->hdr.tid, r->local_comm_id, CM_REJ_NO_RESOURCES);
		return DROP(CM_DROP_NO_RESOURCES);
	}
	id->passive = 1;
	id->dest = *src;
	id->remote_comm_id = r->local_comm_id;
	id->remote_qpn = r->local_qpn;
	id->remote_ca_guid = r->local_ca_guid;
	id->service_id = r->service_id;
	id->tid = m->hdr.tid;
	id->max_cm_retries = r->max_cm_retries;
	/* our REP waits for the active side's response: the REQ's local CM response timeout */
	id->local_resp_timeout = r->local_cm_response_timeout;
	id->remote_resp_timeout = r->local_cm_response_timeout;
	id->ack_timeout = r->primary.local_ack_timeout;
	/* 12.9.5.2: LISTEN -> REQ_RCVD */
	set_state(cm, id, CM_REQ_RCVD, "rx REQ");
	emit(cm, id, CM_EV_REQ_RCVD, m, l->ctx);
	return 0;
}

static int
rx_mra(struct cm *cm, const struct cm_msg *m)
{
	const struct cm_mra *r = &m->u.mra;
	struct cm_id *id = find_local(cm, r->remote_comm_id);
	uint64_t wait = plt2(cm) + cm_time_ns(r->service_timeout);

	if (!id)
		return DROP(CM_DROP_STALE_ID);
	switch (id->state) {
	case CM_REQ_SENT:
		if (r->msg_mraed != CM_MSG_REF_REQ)
			return DROP(CM_DROP_OUT_OF_STATE);
		id->remote_comm_id = r->local_comm_id;
		set_state(cm, id, CM_MRA_REQ_RCVD, "rx MRA");
		break;
	case CM_REP_SENT:
		if (r->msg_mraed != CM_MSG_REF_REP)
			return DROP(CM_DROP_OUT_OF_STATE);
		set_state(cm, id, CM_MRA_REP_RCVD, "rx MRA");
		break;
	case CM_MRA_REQ_RCVD:
	case CM_MRA_REP_RCVD:
		break; /* a later MRA extends the wait again */
	default:
		return DROP(CM_DROP_OUT_OF_STATE);
	}
	/* the MRA replaces the wait of this attempt (12.6.6) */
	id->deadline = now(cm) + wait;
	emit(cm, id, CM_EV_MRA_RCVD, m, NULL);
	return 0;
}

static int
rx_rej(struct cm *cm, const struct cm_dest *src, const struct cm_msg *m)
{
	const struct cm_rej *r = &m->u.rej;
	struct cm_id *id = find_local(cm, r->remote_comm_id);

	/* a REJ from an active side that never learnt our comm ID (its REQ timed out before
	 * our REP arrived): found by its comm ID, as the kernel's cm_acquire_rejected_id */
	if (!id && r->remote_comm_id == 0)
		id = find_remote(cm, r->local_comm_id, src->gid, 0);

	if (!id ||
	    (id->remote_comm_id && r->local_comm_id && id->remote_comm_id != r->local_comm_id))
		return DROP(CM_DROP_STALE_ID);
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		/* 12.9.5: a REJ in any establishment state -> IDLE */
		id_free(cm, id, "rx REJ");
		emit(cm, id, CM_EV_REJ_RCVD, m, NULL);
		return 0;
	default:
		return DROP(CM_DROP_OUT_OF_STATE);
	}
}

static int
rx_rep(struct cm *cm, const struct cm_msg *m)
{
	const struct cm_rep *r = &m->u.rep;
	struct cm_id *id = find_local(cm, r->remote_comm_id);

	if (!id || id->passive)
		return DROP(CM_DROP_STALE_ID);
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		/* 12.9.5.1: REQ_SENT / MRA_REQ_RCVD -> REP_RCVD */
		id->remote_comm_id = r->local_comm_id;
		id->remote_qpn = r->local_qpn;
		id->remote_ca_guid = r->local_ca_guid;
		id->deadline = 0;
		set_state(cm, id, CM_REP_RCVD, "rx REP");
		emit(cm, id, CM_EV_REP_RCVD, m, NULL);
		return 0;
	case CM_ESTABLISHED:
	case CM_MRA_REP_SENT:
		/* a duplicate REP: our RTU (or MRA) was lost; resend it (12.9.5.1) */
		if (id->remote_comm_id != r->local_comm_id || !id->has_reply)
			return DROP(CM_DROP_STALE_ID);
		cm->cnt.dup_resends++;
		send_raw(cm, &id->dest, id->reply_mad);
		return 0;
	case CM_REP_RCVD:
		return DROP(CM_DROP_DUPLICATE);
	default:
		return DROP(CM_DROP_OUT_OF_STATE);
	}
}

static int
rx_rtu(struct cm *cm, const struct cm_msg *m)
{
	const struct cm_rtu *r = &m->u.rtu;
	struct cm_id *id = find_local(cm, r->remote_comm_id);

	if (!id || !id->passive || id->remote_comm_id != r->local_comm_id)
		return DROP(CM_DROP_STALE_ID);
	switch (id->state) {
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		/* 12.9.5.2: REP_SENT / MRA_REP_RCVD -> ESTABLISHED */
		id->deadline = 0;
		set_state(cm, id, CM_ESTABLISHED, "rx RTU");
		cm->cnt.established++;
		emit(cm, id, CM_EV_ESTABLISHED, m, NULL);
		return 0;
	case CM_ESTABLISHED:
		return DROP(CM_DROP_DUPLICATE);
	default:
		return DROP(CM_DROP_OUT_OF_STATE);
	}
}

static void
send_drep(struct cm *cm, const struct cm_dest *dst, uint64_t tid, uint32_t lcid, uint32_t rcid,
	  uint8_t *save)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_DREP;
	m.hdr.tid = tid;
	m.u.drep.local_comm_id = lcid;
	m.u.drep.remote_comm_id = rcid;
	send_msg(cm, dst, &m, save);
}

static int
rx_dreq(struct cm *cm, const struct cm_dest *src, const struct cm_msg *m)
{
	const struct cm_dreq *r = &m->u.dreq;
	struct cm_id *id = find_local(cm, r->remote_comm_id);

	if (!id || id->remote_comm_id != r->local_comm_id) {
		/* as the kernel's cm_dreq_handler: answer a DREQ naming no ID with a DREP */
		send_drep(cm, src, m->hdr.tid, r->remote_comm_id, r->local_comm_id, NULL);
		return DROP(CM_DROP_STALE_ID);
	}
	switch (id->state) {
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		/* the RTU was lost; the DREQ implies it (12.9.5.2) */
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:
		/* 12.9.6: ESTABLISHED -> DREQ_RCVD -> (DREP sent) TIMEWAIT; a DREQ crossing ours
		 * in DREQ_SENT is answered the same way */
		id->tid = m->hdr.tid;
		set_state(cm, id, CM_DREQ_RCVD, "rx DREQ");
		id->has_reply = 1;
		send_drep(cm, &id->dest, m->hdr.tid, id->local_comm_id, id->remote_comm_id,
			  id->reply_mad);
		enter_timewait(cm, id, "tx DREP");
		emit(cm, id, CM_EV_DREQ_RCVD, m, NULL);
		return 0;
	case CM_TIMEWAIT:
		if (!id->has_reply)
			return DROP(CM_DROP_DUPLICATE);
		cm->cnt.dup_resends++;
		send_raw(cm, &id->dest, id->reply_mad);
		return 0;
	default:
		return DROP(CM_DROP_OUT_OF_STATE);
	}
}

static int
rx_drep(struct cm *cm, const struct cm_msg *m)
{
	const struct cm_drep *r = &m->u.drep;
	struct cm_id *id = find_local(cm, r->remote_comm_id);

	if (!id || id->remote_comm_id != r->local_comm_id)
		return DROP(CM_DROP_STALE_ID);
	if (id->state != CM_DREQ_SENT)
		return DROP(id->state == CM_TIMEWAIT ? CM_DROP_DUPLICATE : CM_DROP_OUT_OF_STATE);
	/* 12.9.6: DREQ_SENT -> TIMEWAIT */
	enter_timewait(cm, id, "rx DREP");
	emit(cm, id, CM_EV_DREP_RCVD, m, NULL);
	return 0;
}

static int
rx_sidr_req(struct cm *cm, const struct cm_dest *src, const struct cm_msg *m)
{
	const struct cm_sidr_req *r = &m->u.sidr_req;
	struct cm_listen *l;
	struct cm_id *id;

	if (find_remote(cm, r->request_id, src->gid, 1))
		return DROP(CM_DROP_DUPLICATE);
	l = listen_match(cm, r->service_id);
	if (!l) {
		send_sidr_rep(cm, src, m->hdr.tid, r->request_id, NULL, CM_SIDR_UNSUPPORTED);
		return DROP(CM_DROP_NO_LISTENER);
	}
	id = id_alloc(cm);
	if (!id) {
		send_sidr_rep(cm, src, m->hdr.tid, r->request_id, NULL, CM_SIDR_REJECT);
		return DROP(CM_DROP_NO_RESOURCES);
	}
	id->passive = 1;
	id->dest = *src;
	id->remote_comm_id = r->request_id;
	id->service_id = r->service_id;
	id->tid = m->hdr.tid;
	/* 12.11.2: IDLE -> SIDR_REQ_RCVD */
	set_state(cm, id, CM_SIDR_REQ_RCVD, "rx SIDR_REQ");
	emit(cm, id, CM_EV_SIDR_REQ_RCVD, m, l->ctx);
	return 0;
}

static int
rx_sidr_rep(struct cm *cm, const struct cm_msg *m)
{
	struct cm_id *id = find_local(cm, m->u.sidr_rep.request_id);

	if (!id || id->state != CM_SIDR_REQ_SENT)
		return DROP(CM_DROP_STALE_ID);
	id_free(cm, id, "rx SIDR_REP");
	emit(cm, id, CM_EV_SIDR_REP_RCVD, m, NULL);
	return 0;
}

static int
rx_lap(struct cm *cm, const struct cm_dest *src, const struct cm_msg *m)
{
	struct cm_msg a;

	/* alternate paths are not supported: APR status "unsupported" (12.8.2) */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_APR;
	a.hdr.tid = m->hdr.tid;
	a.u.apr.local_comm_id = m->u.lap.remote_comm_id;
	a.u.apr.remote_comm_id = m->u.lap.local_comm_id;
	a.u.apr.status = CM_APR_UNSUPPORTED;
	send_msg(cm, src, &a, NULL);
	return DROP(CM_DROP_UNSUPPORTED);
}

int
cm_rx(struct cm *cm, const struct cm_dest *src, const uint8_t *mad, size_t len)
{
	struct cm_msg m;
	int rc = cm_msg_parse(mad, len, &m);

	if (rc < 0) {
		/* enum cm_msg_err 1..7 map onto enum cm_drop 0..6 */
		return DROP((enum cm_drop)(-rc - 1));
	}
	cm->cnt.rx[m.hdr.attr_id - MAD_ATTR_CM_REQ]++;
	switch (m.hdr.attr_id) {
	case MAD_ATTR_CM_REQ:
		return rx_req(cm, src, &m);
	case MAD_ATTR_CM_MRA:
		return rx_mra(cm, &m);
	case MAD_ATTR_CM_REJ:
		return rx_rej(cm, src, &m);
	case MAD_ATTR_CM_REP:
		return rx_rep(cm, &m);
	case MAD_ATTR_CM_RTU:
		return rx_rtu(cm, &m);
	case MAD_ATTR_CM_DREQ:
		return rx_dreq(cm, src, &m);
	case MAD_ATTR_CM_DREP:
		return rx_drep(cm, &m);
	case MAD_ATTR_CM_SIDR_REQ:
		return rx_sidr_req(cm, src, &m);
	case MAD_ATTR_CM_SIDR_REP:
		return rx_sidr_rep(cm, &m);
	case MAD_ATTR_CM_LAP:
		return rx_lap(cm, src, &m);
	default: /* APR: we never send a LAP */
		return DROP(CM_DROP_UNSUPPORTED);
	}
}

/* ---- timers (12.7.x) ---- */

static void
timer_fire(struct cm *cm, struct cm_id *id)
{
	uint64_t guid = cm->cfg.local_ca_guid;
	uint8_t ari[8];

	id->deadline = 0;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_DREQ_SENT:
	case CM_SIDR_REQ_SENT:
		if (id->retries_left) {
			id->retries_left--;
			cm->cnt.retries++;
			if (id->state == CM_MRA_REQ_RCVD)
				set_state(cm, id, CM_REQ_SENT, "timer: retry REQ");
			else if (id->state == CM_MRA_REP_RCVD)
				set_state(cm, id, CM_REP_SENT, "timer: retry REP");
			else
				set_state(cm, id, id->state, "timer: retry");
			send_raw(cm, &id->dest, id->last_mad);
			arm(cm, id, id->wait_ns);
			return;
		}
		cm->cnt.timeouts++;
		if (id->state == CM_DREQ_SENT) {
			enter_timewait(cm, id, "timer: DREQ retries exhausted");
			return;
		}
		if (id->state != CM_SIDR_REQ_SENT) {
			int req = id->state == CM_REQ_SENT || id->state == CM_MRA_REQ_RCVD;

			/* REJ Timeout, the ARI carrying our CA GUID (12.6.7 table 103) */
			for (int i = 0; i < 8; i++)
				ari[i] = (uint8_t)(guid >> (56 - 8 * i));
			send_rej(cm, id, req ? CM_MSG_REF_REQ : CM_MSG_REF_REP, CM_REJ_TIMEOUT, ari,
				 8, NULL, 0);
		}
		id_free(cm, id, "timer: retries exhausted");
		emit(cm, id, CM_EV_TIMEOUT, NULL, NULL);
		return;
	case CM_TIMEWAIT:
		id_free(cm, id, "timer: TIMEWAIT over");
		emit(cm, id, CM_EV_TIMEWAIT_EXIT, NULL, NULL);
		return;
	default:
		return;
	}
}

uint64_t
cm_tick(struct cm *cm)
{
	uint64_t t = now(cm), next = 0;

	for (uint32_t i = 0; i < cm->cfg.max_ids; i++) {
		struct cm_id *id = &cm->ids[i];

		if (id->in_use && id->deadline && id->deadline <= t)
			timer_fire(cm, id);
		if (id->in_use && id->deadline && (!next || id->deadline < next))
			next = id->deadline;
	}
	return next;
}

uint32_t
cm_ids_in_use(const struct cm *cm)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cm->cfg.max_ids; i++)
		n += cm->ids[i].in_use;
	return n;
}
