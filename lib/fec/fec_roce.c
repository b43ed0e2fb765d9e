/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_roce.c
 * lib/fec behind lib/roce's FEC seam (roce_fec.h): one encoder and one
 * decoder per QP. The app registers `fec_roce_codec` with
 * roce_fec_register() and turns FEC on per QP with roce_qp_set_fec().
 */
#include <stdlib.h>

#include "fec.h"
#include "fec_adapt.h"
#include "roce_fec.h"

#include "fec_roce.h"

struct fec_roce {
	struct fec_params p;
	bool adapt; /**< --fec-adapt: the receiver's policy (fec_adapt.h) runs */
	struct fec_adapt ad;
	struct fec_enc *enc;
	struct fec_dec *dec;
	/* the engine's callbacks during one fec_dec_frame / fec_dec_flush */
	roce_fec_emit_fn deliver;
	roce_fec_event_fn ev;
	void *arg;
};

static void
fr_destroy(void *st)
{
	struct fec_roce *f = st;

	if (!f)
		return;
	fec_enc_free(f->enc);
	fec_dec_free(f->dec);
	free(f);
}

static void *
fr_create(const char *params, char *err, size_t errlen)
{
	struct fec_roce *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (fec_params_parse(params, &f->p, err, errlen) < 0 || f->p.mode == FEC_MODE_OFF) {
		free(f);
		return NULL;
	}
	f->enc = fec_enc_create(&f->p);
	f->dec = fec_dec_create(0);
	if (!f->enc || !f->dec) {
		fr_destroy(f);
		return NULL;
	}
	return f;
}

static int
fr_tx(void *st, const uint8_t *frame, size_t len, roce_fec_emit_fn pre, roce_fec_emit_fn post,
      void *arg)
{
	struct fec_roce *f = st;
	uint64_t recoded = fec_enc_stat(f->enc, FEC_ES_RECODED);

	if (fec_enc_frame(f->enc, frame, len, pre, post, arg) != FEC_ENC_CODED)
		return 0;
	return fec_enc_stat(f->enc, FEC_ES_RECODED) != recoded ? 2 : 1;
}

static void
fr_tx_recode(void *st, bool on)
{
	struct fec_roce *f = st;

	fec_enc_set_recode(f->enc, on);
}

static void
fr_tx_flush(void *st, roce_fec_emit_fn emit, void *arg)
{
	struct fec_roce *f = st;

	fec_enc_flush(f->enc, emit, arg);
}

static void
tramp_deliver(void *arg, const uint8_t *frame, size_t len)
{
	struct fec_roce *f = arg;

	if (f->deliver)
		f->deliver(f->arg, frame, len);
}

static void
tramp_event(void *arg, enum fec_event ev, int stream, uint32_t psn)
{
	struct fec_roce *f = arg;

	if (f->ev)
		f->ev(f->arg,
		      ev == FEC_EV_REBUILT ? ROCE_FEC_EV_REBUILT : ROCE_FEC_EV_UNRECOVERABLE,
		      stream, psn);
}

static int
fr_rx(void *st, const uint8_t *frame, size_t len, roce_fec_emit_fn deliver, roce_fec_event_fn ev,
      void *arg)
{
	struct fec_roce *f = st;
	int rc;

	f->deliver = deliver;
	f->ev = ev;
	f->arg = arg;
	rc = fec_dec_frame(f->dec, frame, len, tramp_deliver, tramp_event, f);

	switch (rc) {
	case FEC_DEC_PASS:
		return ROCE_FEC_RX_PASS;
	case FEC_DEC_DATA:
		return ROCE_FEC_RX_DATA;
	case FEC_DEC_PROPOSE:
		/* the receiver asks this side's encoder for new parameters */
		return fec_enc_rx_negotiate(f->enc, frame, len) == 0 ? ROCE_FEC_RX_CONSUMED
								     : -FEC_E_FRH;
	case FEC_DEC_CONSUMED:
		return ROCE_FEC_RX_CONSUMED;
	default:
		return rc < 0 ? rc : -FEC_E_PARSE;
	}
}

static void
fr_rx_flush(void *st, roce_fec_event_fn ev, void *arg)
{
	struct fec_roce *f = st;

	f->deliver = NULL;
	f->ev = ev;
	f->arg = arg;
	fec_dec_flush(f->dec, tramp_event, f);
}

static uint32_t
fr_span(void *st)
{
	struct fec_roce *f = st;
	struct fec_params p;

	/* the peer's parameters as its COMMITs and repairs announce them, else ours */
	fec_dec_params(f->dec, FEC_STREAM_REQ, &p);
	if (p.mode == FEC_MODE_OFF)
		p = f->p;
	return (uint32_t)p.k * p.d;
}

static void
fr_info(void *st, struct roce_fec_info *o)
{
	struct fec_roce *f = st;
	struct fec_params p;

	o->covered = fec_enc_stat(f->enc, FEC_ES_COVERED);
	o->repairs_sent = fec_enc_stat(f->enc, FEC_ES_REPAIRS);
	o->repairs_rx = fec_dec_stat(f->dec, FEC_DS_REPAIRS);
	o->unneeded = fec_dec_stat(f->dec, FEC_DS_UNNEEDED);
	o->rebuilt = fec_dec_stat(f->dec, FEC_DS_REBUILT);
	o->unrecoverable = fec_dec_stat(f->dec, FEC_DS_LOST_UNREC);
	fec_enc_params(f->enc, &p);
	o->mode = p.mode;
	o->k = p.k;
	o->d = p.d;
	o->r = p.r;
	fec_dec_params(f->dec, 0, &p); /* the request stream */
	o->dec_mode = p.mode;
	o->dec_k = p.k;
	o->dec_d = p.d;
	o->dec_r = p.r;
	o->adapt_level = f->adapt ? (int8_t)f->ad.level : -1;
	o->adapt_loss_ppm = f->adapt ? fec_adapt_loss_ppm(&f->ad) : 0;
}

static void
fr_adapt_sample(void *st, bool lost, uint32_t psn)
{
	struct fec_roce *f = st;

	if (!f->adapt) {
		/* the first sample turns the policy on, starting at the level of
		 * the peer's code if the table has it (else at xor:32,4) */
		struct fec_params p;
		int lv;

		fec_dec_params(f->dec, FEC_STREAM_REQ, &p);
		lv = fec_adapt_level_of(&p);
		fec_adapt_init(&f->ad, lv < 0 ? 0 : (unsigned)lv);
		f->adapt = true;
	}
	fec_adapt_sample(&f->ad, lost, psn);
}

static void
fr_adapt_gap(void *st, uint32_t run)
{
	struct fec_roce *f = st;

	if (f->adapt)
		fec_adapt_gap(&f->ad, run);
}

static int
fr_adapt_decide(void *st, uint64_t now, uint64_t hold_ns)
{
	struct fec_roce *f = st;

	return f->adapt ? fec_adapt_decide(&f->ad, now, hold_ns) : 0;
}

static int
fr_adapt_propose(void *st, const uint8_t *tmpl, size_t tmpl_len, uint32_t dqpn, uint8_t *out,
		 size_t cap)
{
	struct fec_roce *f = st;
	struct fec_frh h = {.type = FEC_T_PROPOSE};

	if (!f->adapt)
		return 0;
	h.p = *fec_adapt_params(f->ad.level);
	return fec_build_negotiate(out, cap, tmpl, tmpl_len, dqpn, 0, &h);
}

const struct roce_fec_ops fec_roce_codec = {
    .name = "fec",
    .create = fr_create,
    .destroy = fr_destroy,
    .tx = fr_tx,
    .tx_recode = fr_tx_recode,
    .tx_flush = fr_tx_flush,
    .rx = fr_rx,
    .rx_flush = fr_rx_flush,
    .span = fr_span,
    .info = fr_info,
    .adapt_sample = fr_adapt_sample,
    .adapt_gap = fr_adapt_gap,
    .adapt_decide = fr_adapt_decide,
    .adapt_propose = fr_adapt_propose,
};
