/* SPDX-License-Identifier: BSD-3-Clause */
/* The rnic's CM endpoint: lib/cm on QP1, the clock, the timers, routes (rnic_cm.h). */
#include "rnic_cm.h"

#include <errno.h>
#include <string.h>

#include "mad.h"
#include "rnic_core.h"
#include "rnic_gsi.h"
#include "rnic_port.h"
#include "roce_verbs.h"
#include "rw_json.h"

#define RNIC_CM_TICK_NS 1000000ull /* cm_tick at least every 1 ms while polled */

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static int
is_v4(const uint8_t gid[16])
{
	return memcmp(gid, v4_prefix, sizeof(v4_prefix)) == 0;
}

uint64_t
rnic_cm_now(const struct rnic_cm *ep)
{
	return rnic_now_ns(ep->port);
}

/* ---- the CM's ops ---- */

static int
ep_send_mad(void *ctx, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE])
{
	struct rnic_cm *ep = ctx;
	const struct roce_dev_cfg *dc = roce_dev_config(ep->dev);
	struct roce_gsi_dest d = {.qpn = dst->qpn, .qkey = dst->qkey, .pkey = dst->pkey};

	memcpy(d.gid, dst->gid, 16);
	d.sgid_index = is_v4(dst->gid) ? 0 : 1;
	if (d.sgid_index >= dc->gid_count) {
		ep->cnt.tx_no_gid++;
		return -EAFNOSUPPORT;
	}
	/* MAC all zero: the device resolves it (ARP / ND); a refusal is resent by the CM */
	return roce_gsi_send(ep->dev, &d, mad);
}

static void
ep_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	struct rnic_cm *ep = ctx;

	if (ep->user && ep->user->event)
		ep->user->event(ep->user_ctx, ep, id, ev);
	rnic_cm_kick(ep); /* the user may have armed a timer (accept, rtu, disconnect) */
}

static uint64_t
ep_now(void *ctx)
{
	return rnic_cm_now(ctx);
}

static const struct cm_ops ep_cm_ops = {
    .send_mad = ep_send_mad,
    .event = ep_event,
    .now = ep_now,
};

/* ---- QP1's handler ---- */

static int
ep_on_mad(void *ctx, const uint8_t *mad, const struct roce_gsi_src *src)
{
	struct rnic_cm *ep = ctx;
	struct cm_dest from = {.qpn = src->qpn, .qkey = MAD_GSI_QKEY, .pkey = src->pkey};

	/* byte 1 of the common MAD header is the management class (13.4.2) */
	if (mad[1] == MAD_CLASS_CM) {
		memcpy(from.gid, src->gid, 16);
		ep->cnt.rx_cm++;
		cm_rx(&ep->cm, &from, mad, MAD_SIZE); /* every outcome counted by the CM */
		rnic_cm_kick(ep);
		return 0;
	}
	if (ep->user && ep->user->on_other_mad &&
	    ep->user->on_other_mad(ep->user_ctx, ep, mad, src) == 0) {
		ep->cnt.rx_other_taken++;
		return 0;
	}
	ep->cnt.rx_other_unclaimed++;
	return 1;
}

static const struct roce_gsi_ops ep_gsi_ops = {.on_mad = ep_on_mad};

int
rnic_cm_init(struct rnic_cm *ep, struct rnic_port *port, uint64_t seed,
	     const struct rnic_cm_user *user, void *user_ctx)
{
	struct cm_config cfg = {.seed = seed, .packet_life_time = 0};
	const uint8_t *m = port->mac;

	memset(&ep->cnt, 0, sizeof(ep->cnt));
	ep->port = port;
	ep->dev = port->dev;
	ep->user = user;
	ep->user_ctx = user_ctx;
	ep->next_tick = 0;
	/* EUI-64 from the MAC (RFC 4291 appendix A): the port's CA GUID */
	cfg.local_ca_guid = (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 |
			    (uint64_t)m[2] << 40 | 0xfffeull << 24 | (uint64_t)m[3] << 16 |
			    (uint64_t)m[4] << 8 | m[5];
	cm_init(&ep->cm, &cfg, &ep_cm_ops, ep);
	roce_gsi_set_ops(ep->dev, &ep_gsi_ops, ep);
	port->cm = ep; /* rnic_port_poll() calls rnic_cm_poll() from here on */
	return 0;
}

void
rnic_cm_fini(struct rnic_cm *ep)
{
	if (ep->port->cm == ep)
		ep->port->cm = NULL;
	rnic_gsi_release(ep->dev);
}

void
rnic_cm_poll(struct rnic_cm *ep)
{
	uint64_t now = rnic_cm_now(ep), next;

	if (now < ep->next_tick)
		return;
	ep->cnt.ticks++;
	next = cm_tick(&ep->cm);
	ep->next_tick = now + RNIC_CM_TICK_NS;
	if (next && next < ep->next_tick)
		ep->next_tick = next;
}

uint8_t
rnic_cm_ib_mtu(uint32_t bytes)
{
	uint8_t e = 1;

	while (e < 5 && (256u << e) <= bytes)
		e++;
	return e;
}

int
rnic_cm_resolve(struct rnic_cm *ep, const uint8_t ip[16], struct rnic_cm_route *r)
{
	const struct roce_dev_cfg *dc = roce_dev_config(ep->dev);
	int rc;

	memset(r, 0, sizeof(*r));
	r->sgid_index = is_v4(ip) ? 0 : 1;
	if (r->sgid_index >= dc->gid_count)
		return -EAFNOSUPPORT;
	memcpy(r->sgid, dc->gid[r->sgid_index].raw, 16);
	memcpy(r->dgid, ip, 16);
	rc = rnic_neigh_resolve(ep->port, ip, r->mac);
	if (rc < 0)
		return rc;
	r->path_mtu = rnic_cm_ib_mtu(dc->mtu);
	r->mtu = 128u << r->path_mtu;
	return 0;
}

void
rnic_cm_path(const struct rnic_cm_route *r, uint8_t ack_timeout, struct cm_path *p)
{
	memset(p, 0, sizeof(*p));
	/* RoCE: LIDs are the permissive LID 0xffff (the kernel's cm_format_req for RoCE) */
	p->local_lid = 0xffff;
	p->remote_lid = 0xffff;
	memcpy(p->local_gid, r->sgid, 16);
	memcpy(p->remote_gid, r->dgid, 16);
	p->hop_limit = 64;
	p->packet_rate = 2; /* 2.5 Gb/s, the rate code rdma_cm sends for RoCE */
	p->subnet_local = 0;
	p->local_ack_timeout = ack_timeout;
}

void
rnic_cm_dest(const struct rnic_cm_route *r, struct cm_dest *d)
{
	memcpy(d->gid, r->dgid, 16);
	d->qpn = MAD_GSI_QPN;
	d->qkey = MAD_GSI_QKEY;
	d->pkey = MAD_DEFAULT_PKEY;
}

void
rnic_cm_json(struct rw_json *w, const struct rnic_cm *ep)
{
	const struct cm_counters *c = &ep->cm.cnt;

	rw_obj_begin(w, "cm");
	rw_obj_begin(w, "rx");
	for (unsigned int i = 0; i < CM_ATTR_COUNT; i++)
		rw_uint(w, cm_attr_name((uint16_t)(MAD_ATTR_CM_REQ + i)), c->rx[i]);
	rw_obj_end(w);
	rw_obj_begin(w, "tx");
	for (unsigned int i = 0; i < CM_ATTR_COUNT; i++)
		rw_uint(w, cm_attr_name((uint16_t)(MAD_ATTR_CM_REQ + i)), c->tx[i]);
	rw_obj_end(w);
	rw_uint(w, "tx_err", c->tx_err);
	rw_uint(w, "retries", c->retries);
	rw_uint(w, "timeouts", c->timeouts);
	rw_uint(w, "dup_resends", c->dup_resends);
	rw_obj_begin(w, "drops");
	for (int i = 0; i < CM_DROP_COUNT; i++)
		rw_uint(w, cm_drop_name((enum cm_drop)i), c->drop[i]);
	rw_obj_end(w);
	rw_uint(w, "ids_alloc", c->ids_alloc);
	rw_uint(w, "ids_free", c->ids_free);
	rw_uint(w, "ids_in_use", cm_ids_in_use(&ep->cm));
	rw_uint(w, "established", c->established);
	rw_uint(w, "rx_cm", ep->cnt.rx_cm);
	rw_uint(w, "rx_other_taken", ep->cnt.rx_other_taken);
	rw_uint(w, "rx_other_unclaimed", ep->cnt.rx_other_unclaimed);
	rw_uint(w, "tx_no_gid", ep->cnt.tx_no_gid);
	rw_obj_end(w);
}
