/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_cmep.c
 * rnic0's CM endpoint: lib/cm's struct cm on QP1 of the in-process device. MADs QP1
 * receives go to cm_rx() (a MAD of another class is left unclaimed and counted so by
 * QP1); the CM's MADs leave through roce_gsi_send() from GID 0 (IPv4) or 1 (IPv6),
 * the next hop's MAC from the device's own ARP/ND. A refused send is not queued: the
 * CM's retry timer resends it (IBTA Vol. 1 12.7.x).
 */
#include <errno.h>
#include <string.h>

#include "mad.h"
#include "net_hdr.h"
#include "roce_gsi.h"
#include "rv_cmep.h"
#include "rv_int.h"

static struct cm ep_cm;
static bool ep_up;
static rv_cmep_event_fn ep_fn;

static int
ep_send(void *ctx, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE])
{
	struct roce_gsi_dest d = {.qpn = dst->qpn, .qkey = dst->qkey, .pkey = dst->pkey};
	uint32_t ip;

	(void)ctx;
	memcpy(d.gid, dst->gid, 16);
	d.sgid_index = net_mapped_to_ip4(dst->gid, &ip) ? 0 : 1;
	return roce_gsi_send(rv.port.dev, &d, mad);
}

static void
ep_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	(void)ctx;
	if (ep_fn)
		ep_fn(id, ev);
}

static uint64_t
ep_now(void *ctx)
{
	(void)ctx;
	return rnic_now_ns(&rv.port);
}

static const struct cm_ops ep_ops = {.send_mad = ep_send, .event = ep_event, .now = ep_now};

static int
ep_on_mad(void *ctx, const uint8_t *mad, const struct roce_gsi_src *src)
{
	struct cm_dest from = {.qpn = src->qpn, .qkey = MAD_GSI_QKEY, .pkey = src->pkey};
	int rc;

	(void)ctx;
	memcpy(from.gid, src->gid, 16);
	rc = cm_rx(&ep_cm, &from, mad, MAD_SIZE);
	/* a MAD of another class is not the CM's: QP1 counts it unclaimed */
	return rc == -(1 + CM_DROP_CLASS) ? 1 : 0;
}

static const struct roce_gsi_ops ep_gsi = {.on_mad = ep_on_mad};

int
rv_cmep_start_locked(rv_cmep_event_fn fn)
{
	if (ep_up)
		return 0;
	if (!rv.up)
		return ENODEV;
	struct cm_config cfg = {.local_ca_guid = rv.guid, .seed = rv.prm.seed ^ rv.guid};

	cm_init(&ep_cm, &cfg, &ep_ops, NULL);
	ep_fn = fn;
	roce_gsi_set_ops(rv.port.dev, &ep_gsi, NULL);
	ep_up = true;
	return 0;
}

struct cm *
rv_cmep(void)
{
	return ep_up ? &ep_cm : NULL;
}

void
rv_cmep_tick_locked(void)
{
	if (ep_up)
		cm_tick(&ep_cm);
}
