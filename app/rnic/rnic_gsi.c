/* SPDX-License-Identifier: BSD-3-Clause */
/* QP1 on the rnic: PSN from --seed, the no-CM handler, --json and metrics (rnic_gsi.h). */
#include "rnic_gsi.h"

#include <stdio.h>
#include <string.h>

#include "mad.h"
#include "mad_kind.h"
#include "rw_json.h"
#include "rw_metrics.h"

uint32_t
rnic_gsi_psn(uint64_t seed)
{
	/* the test QPs take (seed + 1 + 2 qp) and (seed + 2 + 2 qp) (rnic_initial_psn); QP1
	 * mixes its own constant in, so it repeats with the seed but is none of theirs */
	return (uint32_t)(((seed ^ 0x6753u) + 0x51u) * 2654435761u) & 0xffffff;
}

/* No connection manager: the MAD is counted by kind (lib/roce) and left unclaimed. */
static int
no_cm(void *ctx, const uint8_t *mad, const struct roce_gsi_src *src)
{
	(void)ctx;
	(void)mad;
	(void)src;
	return 1;
}

static const struct roce_gsi_ops no_cm_ops = {.on_mad = no_cm};

void
rnic_gsi_attach(struct roce_dev *dev, uint64_t seed)
{
	roce_gsi_set_psn(dev, rnic_gsi_psn(seed));
	roce_gsi_set_ops(dev, &no_cm_ops, NULL);
}

void
rnic_gsi_release(struct roce_dev *dev)
{
	roce_gsi_set_ops(dev, &no_cm_ops, NULL);
}

void
rnic_gsi_sum(struct roce_dev *const *devs, unsigned int n, struct roce_gsi_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int l = 0; l < n; l++) {
		struct roce_gsi_stats one;

		roce_gsi_stats(devs[l], &one);
		out->rx_total += one.rx_total;
		out->delivered += one.delivered;
		out->tx_total += one.tx_total;
		for (int i = 0; i < ROCE_GSI_DROP__COUNT; i++)
			out->drop[i] += one.drop[i];
		for (int i = 0; i < ROCE_GSI_TX_ERR__COUNT; i++)
			out->tx_err[i] += one.tx_err[i];
		for (int d = 0; d < 2; d++)
			for (int k = 0; k < MAD_KIND__COUNT; k++)
				out->mad[d][k] += one.mad[d][k];
	}
}

void
rnic_gsi_json(struct rw_json *w, const struct roce_gsi_stats *st)
{
	static const char *const dir[2] = {"rx_mads", "tx_mads"};

	rw_obj_begin(w, "gsi");
	rw_uint(w, "qpn", MAD_GSI_QPN);
	rw_uint(w, "rx_total", st->rx_total);
	rw_uint(w, "delivered", st->delivered);
	rw_obj_begin(w, "drops");
	for (int i = 0; i < ROCE_GSI_DROP__COUNT; i++)
		rw_uint(w, roce_gsi_drop_name((enum roce_gsi_drop)i), st->drop[i]);
	rw_obj_end(w);
	rw_uint(w, "tx_total", st->tx_total);
	rw_obj_begin(w, "tx_errors");
	for (int i = 0; i < ROCE_GSI_TX_ERR__COUNT; i++)
		rw_uint(w, roce_gsi_tx_err_name((enum roce_gsi_tx_err)i), st->tx_err[i]);
	rw_obj_end(w);
	for (int d = 0; d < 2; d++) {
		rw_obj_begin(w, dir[d]);
		for (int k = 0; k < MAD_KIND__COUNT; k++)
			rw_uint(w, mad_kind_name((enum mad_kind)k), st->mad[d][k]);
		rw_obj_end(w);
	}
	rw_obj_end(w);
}

/* "cm-req" -> class="cm",attr="req"; "vendor" -> class="vendor",attr="any" */
static void
kind_labels(enum mad_kind k, const char *dir, char *buf, size_t len)
{
	const char *n = mad_kind_name(k);

	if (strncmp(n, "cm-", 3) == 0)
		snprintf(buf, len, "dir=\"%s\",class=\"cm\",attr=\"%s\"", dir, n + 3);
	else
		snprintf(buf, len, "dir=\"%s\",class=\"%s\",attr=\"any\"", dir, n);
}

void
rnic_gsi_prom(struct rw_prom *p, const struct roce_gsi_stats *st)
{
	char lb[128];

	rw_prom_head(p, "rocewan_rnic_gsi_rx_total", "counter",
		     "packets to QP1 (the GSI) past the device's frame checks");
	rw_prom_u64(p, "rocewan_rnic_gsi_rx_total", NULL, st->rx_total);
	rw_prom_head(p, "rocewan_rnic_gsi_delivered_total", "counter",
		     "MADs QP1 handed to the connection manager");
	rw_prom_u64(p, "rocewan_rnic_gsi_delivered_total", NULL, st->delivered);
	rw_prom_head(p, "rocewan_rnic_gsi_drops_total", "counter",
		     "packets to QP1 dropped, by cause (rx_total = delivered + drops)");
	for (int i = 0; i < ROCE_GSI_DROP__COUNT; i++) {
		snprintf(lb, sizeof(lb), "cause=\"%s\"", roce_gsi_drop_name((enum roce_gsi_drop)i));
		rw_prom_u64(p, "rocewan_rnic_gsi_drops_total", lb, st->drop[i]);
	}
	rw_prom_head(p, "rocewan_rnic_gsi_tx_total", "counter", "MADs QP1 sent");
	rw_prom_u64(p, "rocewan_rnic_gsi_tx_total", NULL, st->tx_total);
	rw_prom_head(p, "rocewan_rnic_gsi_tx_errors_total", "counter",
		     "MADs QP1 could not send, by cause");
	for (int i = 0; i < ROCE_GSI_TX_ERR__COUNT; i++) {
		snprintf(lb, sizeof(lb), "cause=\"%s\"",
			 roce_gsi_tx_err_name((enum roce_gsi_tx_err)i));
		rw_prom_u64(p, "rocewan_rnic_gsi_tx_errors_total", lb, st->tx_err[i]);
	}
	rw_prom_head(p, "rocewan_rnic_gsi_mads_total", "counter",
		     "MADs with a valid header by direction, management class and CM attribute");
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < MAD_KIND__COUNT; k++) {
			kind_labels((enum mad_kind)k, d ? "tx" : "rx", lb, sizeof(lb));
			rw_prom_u64(p, "rocewan_rnic_gsi_mads_total", lb, st->mad[d][k]);
		}
}
