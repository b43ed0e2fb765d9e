/* SPDX-License-Identifier: BSD-3-Clause */
/* SPEC parser: one handler per keyword, each naming the bad token on error. */
#include "emu_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu_units.h"
#include "mad_kind.h"

void
emu_spec_init(struct emu_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->delay.kind = EMU_DIST_UNIFORM; /* netem's kernel default without a table */
	s->queue.limit_pkts = EMU_DEFAULT_LIMIT;
	s->pfc.prio = EMU_PFC_DEFAULT_PRIO;
	s->pfc.quanta = EMU_PFC_XOFF_QUANTA;
}

/* ---- token cursor and messages ------------------------------------------ */

struct cur {
	const char *const *tok;
	int n, i;
	char *msg;
	size_t msglen;
};

__attribute__((format(printf, 3, 4))) static int
fail(struct cur *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->msg != NULL && c->msglen != 0) {
		va_start(ap, fmt);
		vsnprintf(c->msg, c->msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *
peek(const struct cur *c)
{
	return c->i < c->n ? c->tok[c->i] : NULL;
}

/* An optional numeric argument follows (netem's NEXT_IS_NUMBER()). */
static bool
more_numeric(const struct cur *c, bool allow_sign)
{
	return emu_looks_numeric(peek(c), allow_sign);
}

enum vkind { V_TIME, V_SIZE, V_RATE, V_PROB, V_UINT, V_INT };

static const char *const vnoun[] = {"a time",	     "a size",	   "a rate",
				    "a probability", "an integer", "an integer"};

static int
value_error(struct cur *c, const char *ctx, const char *tok, enum vkind k, int rc)
{
	switch (k) {
	case V_PROB:
		return fail(c, rc, "%s: \"%s\" is not a probability (%s)", ctx, tok,
			    EMU_PROB_UNITS);
	case V_UINT:
	case V_INT:
		if (rc == -EMU_E_RANGE || rc == -EMU_E_NEGATIVE)
			return fail(c, rc, "%s: \"%s\" is out of range", ctx, tok);
		return fail(c, rc, "%s: \"%s\" is not an integer", ctx, tok);
	default:
		break;
	}
	if (rc == -EMU_E_UNSUPPORTED)
		return fail(c, rc,
			    "%s: \"%s\": a rate in %% of the device speed is not supported; "
			    "give an absolute rate (e.g. 10gbit)",
			    ctx, tok);
	if (rc == -EMU_E_NEED_UNIT)
		return fail(c, rc,
			    "%s: \"%s\" needs a time unit (" EMU_TIME_UNITS
			    "); tc reads a bare number as us or ns depending on its version",
			    ctx, tok);
	if (rc == -EMU_E_NEGATIVE)
		return fail(c, rc, "%s: \"%s\" must not be negative", ctx, tok);
	if (rc == -EMU_E_RANGE)
		return fail(c, rc, "%s: \"%s\" is too large", ctx, tok);
	if (rc == -EMU_E_BAD_UNIT)
		return fail(c, rc, "%s: \"%s\" has an unknown unit (allowed: %s)", ctx, tok,
			    k == V_TIME	  ? EMU_TIME_UNITS
			    : k == V_SIZE ? EMU_SIZE_UNITS
					  : EMU_RATE_UNITS);
	return fail(c, rc, "%s: \"%s\" is not %s", ctx, tok, vnoun[k]);
}

struct vout {
	uint64_t u;
	int64_t s;
	double d;
};

/* Take the next token as a value of kind @p k; @p what names it if missing. */
static int
take(struct cur *c, const char *ctx, const char *what, enum vkind k, struct vout *v)
{
	const char *t = peek(c);
	int rc = -EMU_E_INVAL;

	if (t == NULL)
		return fail(c, -EMU_E_MISSING_ARG, "%s: missing %s (%s)", ctx, what, vnoun[k]);
	switch (k) {
	case V_TIME:
		rc = emu_parse_time(t, &v->u);
		break;
	case V_SIZE:
		rc = emu_parse_size(t, &v->u);
		break;
	case V_RATE:
		rc = emu_parse_rate(t, &v->u);
		break;
	case V_PROB:
		rc = emu_parse_prob(t, &v->d);
		break;
	case V_UINT:
		rc = emu_parse_uint(t, UINT64_MAX, &v->u);
		break;
	case V_INT:
		rc = emu_parse_int(t, INT32_MIN, INT32_MAX, &v->s);
		break;
	}
	if (rc)
		return value_error(c, ctx, t, k, rc);
	c->i++;
	return 0;
}

/* Take an unsigned integer in [lo, hi]. */
static int
take_uint(struct cur *c, const char *ctx, const char *what, uint64_t lo, uint64_t hi, uint64_t *out)
{
	struct vout v = {0, 0, 0.};
	int rc = take(c, ctx, what, V_UINT, &v);

	if (rc == 0 && (v.u < lo || v.u > hi)) {
		c->i--; /* point back at the offending token */
		rc = -EMU_E_RANGE;
	}
	if (rc == -EMU_E_RANGE)
		return fail(c, rc, "%s: \"%s\" is out of range (%llu..%llu)", ctx, c->tok[c->i],
			    (unsigned long long)lo, (unsigned long long)hi);
	if (rc == 0)
		*out = v.u;
	return rc;
}

static int
take_prob(struct cur *c, const char *ctx, const char *what, double *out)
{
	struct vout v;
	int rc = take(c, ctx, what, V_PROB, &v);

	if (rc == 0)
		*out = v.d;
	return rc;
}

/* P [CORR], as duplicate, corrupt, reorder and loss random take them. */
static int
take_prob_corr(struct cur *c, const char *ctx, double *p, double *corr)
{
	int rc = take_prob(c, ctx, "PERCENT", p);

	if (rc == 0 && more_numeric(c, false))
		rc = take_prob(c, ctx, "CORRELATION", corr);
	return rc;
}

/* A size that must be > 0. */
static int
take_size(struct cur *c, const char *ctx, const char *what, uint64_t *out)
{
	struct vout v;
	int rc = take(c, ctx, what, V_SIZE, &v);

	if (rc)
		return rc;
	if (v.u == 0)
		return fail(c, -EMU_E_RANGE, "%s: \"%s\" must be more than 0 bytes", ctx,
			    c->tok[c->i - 1]);
	*out = v.u;
	return 0;
}

/* ---- keyword handlers ---------------------------------------------------- */

static int
kw_limit(struct cur *c, struct emu_spec *s)
{
	uint64_t v = 0;
	int rc = take_uint(c, "limit", "PACKETS", 1, UINT32_MAX, &v);

	if (rc == 0)
		s->queue.limit_pkts = (uint32_t)v;
	return rc;
}

static int
kw_limit_bytes(struct cur *c, struct emu_spec *s)
{
	return take_size(c, "limit-bytes", "BYTES", &s->queue.limit_bytes);
}

static int
kw_delay(struct cur *c, struct emu_spec *s)
{
	struct vout v;
	int rc = take(c, "delay", "TIME", V_TIME, &v);

	if (rc)
		return rc;
	s->delay.delay_ns = v.u;
	if (!more_numeric(c, false))
		return 0;
	rc = take(c, "delay", "JITTER", V_TIME, &v);
	if (rc)
		return rc;
	s->delay.jitter_ns = v.u;
	if (!more_numeric(c, false))
		return 0;
	return take_prob(c, "delay", "CORRELATION", &s->delay.corr);
}

static int
kw_distribution(struct cur *c, struct emu_spec *s)
{
	const char *t = peek(c);

	if (t == NULL)
		return fail(c, -EMU_E_MISSING_ARG,
			    "distribution: missing NAME (uniform, normal, pareto, paretonormal)");
	if (emu_dist_kind_parse(t, &s->delay.kind))
		return fail(c, -EMU_E_UNSUPPORTED,
			    "distribution: \"%s\" is not supported (uniform, normal, pareto, "
			    "paretonormal; no custom tables)",
			    t);
	c->i++;
	return 0;
}

static int
loss_gemodel(struct cur *c, struct emu_loss_params *lp)
{
	static const char ctx[] = "loss gemodel";
	double p;
	int rc = take_prob(c, ctx, "p", &p);

	if (rc)
		return rc;
	emu_loss_gemodel_defaults(lp, p);
	if (more_numeric(c, false) && (rc = take_prob(c, ctx, "r", &lp->ge_r)) == 0 &&
	    more_numeric(c, false) && (rc = take_prob(c, ctx, "1-h", &lp->ge_1h)) == 0 &&
	    more_numeric(c, false))
		rc = take_prob(c, ctx, "1-k", &lp->ge_1k);
	return rc;
}

static int
loss_state(struct cur *c, struct emu_loss_params *lp)
{
	static const char ctx[] = "loss state";
	static const char *const names[] = {"p31", "p32", "p23", "p14"};
	double *rest[] = {&lp->p31, &lp->p32, &lp->p23, &lp->p14};
	double p13;
	char a[32], b[32];
	int rc = take_prob(c, ctx, "p13", &p13);

	if (rc)
		return rc;
	emu_loss_state_defaults(lp, p13);
	for (int k = 0; k < 4 && more_numeric(c, false); k++) {
		rc = take_prob(c, ctx, names[k], rest[k]);
		if (rc)
			return rc;
	}
	if (emu_loss_params_check(lp) == 0)
		return 0;
	if (lp->p13 + lp->p14 > 1.) {
		emu_format_prob(a, sizeof(a), lp->p13 + lp->p14);
		return fail(c, -EMU_E_RANGE, "%s: p13 + p14 = %s exceeds 100%%", ctx, a);
	}
	emu_format_prob(a, sizeof(a), lp->p31 + lp->p32);
	emu_format_prob(b, sizeof(b), 1.);
	return fail(c, -EMU_E_RANGE, "%s: p31 + p32 = %s exceeds %s", ctx, a, b);
}

static int
kw_loss(struct cur *c, struct emu_spec *s)
{
	struct emu_loss_params *lp = &s->impair.loss;
	const char *t = peek(c);

	if (t != NULL && strcmp(t, "random") == 0) {
		c->i++;
		t = peek(c);
		if (t == NULL)
			return fail(c, -EMU_E_MISSING_ARG,
				    "loss random: missing PERCENT (a probability)");
	}
	if (t != NULL && emu_looks_numeric(t, false)) {
		lp->kind = EMU_LOSS_RANDOM;
		return take_prob_corr(c, "loss random", &lp->p, &lp->corr);
	}
	if (t != NULL && strcmp(t, "gemodel") == 0) {
		c->i++;
		return loss_gemodel(c, lp);
	}
	if (t != NULL && strcmp(t, "state") == 0) {
		c->i++;
		return loss_state(c, lp);
	}
	if (t == NULL)
		return fail(c, -EMU_E_MISSING_ARG,
			    "loss: missing model (random P, gemodel p [r [1-h [1-k]]], "
			    "state p13 [p31 [p32 [p23 [p14]]]])");
	return fail(c, -EMU_E_UNKNOWN_KEYWORD,
		    "loss: \"%s\" is not a loss model (random P, gemodel p [r [1-h [1-k]]], "
		    "state p13 [p31 [p32 [p23 [p14]]]])",
		    t);
}

static int
kw_ecn(struct cur *c, struct emu_spec *s)
{
	(void)c;
	s->impair.ecn = true;
	return 0;
}

static int
kw_duplicate(struct cur *c, struct emu_spec *s)
{
	return take_prob_corr(c, "duplicate", &s->impair.dup_p, &s->impair.dup_corr);
}

static int
kw_corrupt(struct cur *c, struct emu_spec *s)
{
	return take_prob_corr(c, "corrupt", &s->impair.corrupt_p, &s->impair.corrupt_corr);
}

static int
kw_corrupt_recompute(struct cur *c, struct emu_spec *s)
{
	(void)c;
	s->impair.corrupt_recompute = true;
	return 0;
}

static int
kw_reorder(struct cur *c, struct emu_spec *s)
{
	return take_prob_corr(c, "reorder", &s->impair.reorder_p, &s->impair.reorder_corr);
}

static int
kw_gap(struct cur *c, struct emu_spec *s)
{
	uint64_t v = 0;
	int rc = take_uint(c, "gap", "DISTANCE", 0, UINT32_MAX, &v);

	s->impair.gap = (uint32_t)v;
	return rc;
}

static int
kw_rate(struct cur *c, struct emu_spec *s)
{
	struct vout v;
	int rc = take(c, "rate", "RATE", V_RATE, &v);

	if (rc)
		return rc;
	if (v.u == 0)
		return fail(c, -EMU_E_RANGE, "rate: \"%s\" must be more than 0 bit/s",
			    c->tok[c->i - 1]);
	s->queue.rate_bps = v.u;
	if (!more_numeric(c, true))
		return 0;
	if ((rc = take(c, "rate", "PACKETOVERHEAD", V_INT, &v)) != 0)
		return rc;
	s->queue.overhead = (int32_t)v.s;
	if (!more_numeric(c, false))
		return 0;
	if ((rc = take(c, "rate", "CELLSIZE", V_UINT, &v)) != 0)
		return rc;
	if (v.u > UINT32_MAX)
		return fail(c, -EMU_E_RANGE, "rate: CELLSIZE \"%s\" is out of range",
			    c->tok[c->i - 1]);
	s->queue.cell_size = (uint32_t)v.u;
	if (!more_numeric(c, true))
		return 0;
	if ((rc = take(c, "rate", "CELLOVERHEAD", V_INT, &v)) != 0)
		return rc;
	s->queue.cell_overhead = (int32_t)v.s;
	if (s->queue.cell_size != 0 && (int64_t)s->queue.cell_size + v.s <= 0)
		return fail(c, -EMU_E_RANGE, "rate: CELLOVERHEAD \"%s\" leaves no cell",
			    c->tok[c->i - 1]);
	return 0;
}

static int
kw_seed(struct cur *c, struct emu_spec *s)
{
	s->seed_set = true;
	return take_uint(c, "seed", "SEED", 0, UINT64_MAX, &s->seed);
}

static int
kw_jitter_no_reorder(struct cur *c, struct emu_spec *s)
{
	(void)c;
	s->delay.no_reorder = true;
	return 0;
}

static int
kw_ctrl_delay(struct cur *c, struct emu_spec *s)
{
	(void)c;
	s->ctrl_delay = true;
	return 0;
}

/*
 * red's pmax must carry its "%". netem reads a bare probability as a percent
 * (iproute2 parse_percent()), tc-red reads its "probability" as a fraction
 * (tc-red(8): "probability 0.1" is 10 %), so a bare "pmax 0.1" means 0.1 % to
 * one reader and 10 % to the other: DCQCN-p (Wang et al.) 3.1's Pmax 0.1 is
 * "pmax 10%" here. A bare number is refused with both readings.
 */
static int
take_pmax(struct cur *c, double *out)
{
	const char *t = peek(c);
	size_t n = t != NULL ? strlen(t) : 0;
	double v;

	if (n == 0 || t[n - 1] == '%' || emu_parse_prob(t, &v) != 0)
		return take_prob(c, "red pmax", "P", out); /* P%, or an error naming the token */
	/* a bare number in [0, 100]: v is its netem reading, v * 100 its tc-red one */
	if (v > 0. && v <= 0.01)
		return fail(c, -EMU_E_NEED_UNIT,
			    "red pmax: \"%s\" is ambiguous: write pmax %s%% (netem's percent) or "
			    "pmax %.10g%% (tc-red's fraction %s)",
			    t, t, v * 1e4, t);
	return fail(c, -EMU_E_NEED_UNIT,
		    "red pmax: \"%s\" needs a %%: write pmax %s%% (0%%..100%%)", t, t);
}

/* "red kmin BYTES kmax BYTES pmax P%", the three in any order. */
static int
kw_red(struct cur *c, struct emu_spec *s)
{
	static const char usage[] = "kmin BYTES kmax BYTES pmax P%";
	bool got[3] = {false, false, false};
	char a[32], b[32];
	int rc;

	for (int k = 0; k < 3; k++) {
		const char *t = peek(c);

		if (t == NULL)
			return fail(c, -EMU_E_MISSING_ARG, "red: missing parameters (%s)", usage);
		if (strcmp(t, "kmin") == 0 && !got[0]) {
			c->i++;
			rc = take_size(c, "red kmin", "BYTES", &s->red.kmin_bytes);
			got[0] = true;
		} else if (strcmp(t, "kmax") == 0 && !got[1]) {
			c->i++;
			rc = take_size(c, "red kmax", "BYTES", &s->red.kmax_bytes);
			got[1] = true;
		} else if (strcmp(t, "pmax") == 0 && !got[2]) {
			c->i++;
			rc = take_pmax(c, &s->red.pmax);
			got[2] = true;
		} else {
			return fail(c, -EMU_E_MISSING_ARG,
				    "red: \"%s\" is not an expected red parameter (%s, each once)",
				    t, usage);
		}
		if (rc)
			return rc;
	}
	s->red.enabled = true;
	if (s->red.kmin_bytes >= s->red.kmax_bytes) {
		emu_format_size(a, sizeof(a), s->red.kmin_bytes);
		emu_format_size(b, sizeof(b), s->red.kmax_bytes);
		return fail(c, -EMU_E_RANGE, "red: kmin %s must be below kmax %s", a, b);
	}
	return 0;
}

/* "pfc xoff BYTES xon BYTES [prio N]", in any order. */
static int
kw_pfc(struct cur *c, struct emu_spec *s)
{
	bool got_xoff = false, got_xon = false, got_prio = false;
	struct vout v = {0, 0, 0.};
	char a[32], b[32];
	const char *t;
	int rc = 0;

	while (rc == 0 && (t = peek(c)) != NULL) {
		if (strcmp(t, "xoff") == 0 && !got_xoff) {
			c->i++;
			rc = take_size(c, "pfc xoff", "BYTES", &s->pfc.xoff_bytes);
			got_xoff = true;
		} else if (strcmp(t, "xon") == 0 && !got_xon) {
			c->i++;
			rc = take(c, "pfc xon", "BYTES", V_SIZE, &v);
			s->pfc.xon_bytes = v.u; /* 0 allowed: resume when empty */
			got_xon = true;
		} else if (strcmp(t, "prio") == 0 && !got_prio) {
			c->i++;
			rc = take_uint(c, "pfc prio", "N", 0, 7, &v.u);
			s->pfc.prio = (uint8_t)v.u;
			got_prio = true;
		} else {
			break;
		}
	}
	if (rc)
		return rc;
	if (!got_xoff || !got_xon)
		return fail(c, -EMU_E_MISSING_ARG,
			    "pfc: missing %s (xoff BYTES xon BYTES [prio N])",
			    got_xoff ? "xon BYTES" : "xoff BYTES");
	s->pfc.enabled = true;
	if (s->pfc.xon_bytes >= s->pfc.xoff_bytes) {
		emu_format_size(a, sizeof(a), s->pfc.xon_bytes);
		emu_format_size(b, sizeof(b), s->pfc.xoff_bytes);
		return fail(c, -EMU_E_RANGE, "pfc: xon %s must be below xoff %s", a, b);
	}
	return 0;
}

/* A decimal or 0x-hex number of @p n characters at @p t, at most @p max. */
static bool
num_part(const char *t, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;

	if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
		base = 16;
		t += 2;
		n -= 2;
	}
	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (t[i] >= '0' && t[i] <= '9')
			d = (unsigned)(t[i] - '0');
		else if (base == 16 && t[i] >= 'a' && t[i] <= 'f')
			d = (unsigned)(t[i] - 'a' + 10);
		else if (base == 16 && t[i] >= 'A' && t[i] <= 'F')
			d = (unsigned)(t[i] - 'A' + 10);
		else
			return false;
		if (x > (max - d) / base)
			return false;
		x = x * base + d;
	}
	*v = x;
	return true;
}

static int
add_rule(struct cur *c, struct emu_spec *s, const char *ctx, const struct emu_rule *r)
{
	if (s->rules.n >= EMU_RULES_MAX)
		return fail(c, -EMU_E_RANGE, "%s: more than %d drop rules", ctx, EMU_RULES_MAX);
	s->rules.r[s->rules.n++] = *r;
	return 0;
}

/* "drop-psn QPN:PSN[:TIMES]": numbers decimal or 0x-hex. */
static int
kw_drop_psn(struct cur *c, struct emu_spec *s)
{
	static const char usage[] = "QPN:PSN[:TIMES], e.g. 0x11:0x52e51e or 17:100:2";
	static const char *const what[3] = {"QPN", "PSN", "TIMES"};
	static const uint64_t max[3] = {0xffffff, 0xffffff, EMU_RULES_MAX_TIMES};
	uint64_t v[3] = {0, 0, 1};
	const char *t = peek(c), *p;
	int k = 0;

	if (t == NULL)
		return fail(c, -EMU_E_MISSING_ARG, "drop-psn: missing %s", usage);
	for (p = t;; k++) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (k == 3)
			return fail(c, -EMU_E_INVAL,
				    "drop-psn: \"%s\" has more than three fields (%s)", t, usage);
		if (!num_part(p, n, max[k], &v[k]) || (k == 2 && v[k] == 0))
			return fail(c, -EMU_E_RANGE,
				    "drop-psn: %s in \"%s\" is not a number in %s..%llu (%s)",
				    what[k], t, k == 2 ? "1" : "0", (unsigned long long)max[k],
				    usage);
		if (!e)
			break;
		p = e + 1;
	}
	if (k < 1)
		return fail(c, -EMU_E_MISSING_ARG, "drop-psn: \"%s\" lacks the PSN (%s)", t, usage);
	c->i++;
	struct emu_rule r = {.kind = EMU_RULE_DROP_PSN,
			     .qpn = (uint32_t)v[0],
			     .psn = (uint32_t)v[1],
			     .times = (uint32_t)v[2]};
	return add_rule(c, s, "drop-psn", &r);
}

/* "drop-nth N": every N-th RoCEv2 packet. */
static int
kw_drop_nth(struct cur *c, struct emu_spec *s)
{
	uint64_t n = 0;
	int rc = take_uint(c, "drop-nth", "N", 1, UINT32_MAX, &n);

	if (rc)
		return rc;
	struct emu_rule r = {.kind = EMU_RULE_DROP_NTH, .nth = n};
	return add_rule(c, s, "drop-nth", &r);
}

/* "drop-mad KIND ORD[,ORD]...": the ORD-th MADs of KIND to QP1 (lib/cm mad_kind names). */
static int
kw_drop_mad(struct cur *c, struct emu_spec *s)
{
	static const char usage[] = "KIND ORD[,ORD]..., e.g. cm-req 1 or cm-rep 1,3";
	const char *kind = peek(c), *t, *p;
	struct emu_rule r = {.kind = EMU_RULE_DROP_MAD};
	int k;

	if (kind == NULL)
		return fail(c, -EMU_E_MISSING_ARG, "drop-mad: missing %s", usage);
	k = mad_kind_from_name(kind);
	if (k < 0)
		return fail(c, -EMU_E_INVAL,
			    "drop-mad: \"%s\" is not a MAD kind (cm-req, cm-mra, cm-rej, cm-rep, "
			    "cm-rtu, cm-dreq, cm-drep, cm-sidr-req, cm-sidr-rep, cm-lap, cm-apr, "
			    "cm-other, vendor, other)",
			    kind);
	r.mad_kind = k;
	c->i++;
	t = peek(c);
	if (t == NULL)
		return fail(c, -EMU_E_MISSING_ARG, "drop-mad %s: missing the ordinals (%s)", kind,
			    usage);
	for (p = t;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		uint64_t v = 0;

		if (r.nords == EMU_RULES_MAX_ORDS)
			return fail(c, -EMU_E_RANGE, "drop-mad: \"%s\" has more than %d ordinals",
				    t, EMU_RULES_MAX_ORDS);
		if (!num_part(p, n, EMU_RULES_MAX_TIMES, &v) || v == 0)
			return fail(c, -EMU_E_RANGE,
				    "drop-mad: \"%s\" is not a list of numbers in 1..%u (%s)", t,
				    EMU_RULES_MAX_TIMES, usage);
		if (r.nords && v <= r.ords[r.nords - 1])
			return fail(c, -EMU_E_INVAL,
				    "drop-mad: the ordinals in \"%s\" must ascend (%s)", t, usage);
		r.ords[r.nords++] = (uint32_t)v;
		if (!e)
			break;
		p = e + 1;
	}
	c->i++;
	return add_rule(c, s, "drop-mad", &r);
}

/* ---- keyword table and driver ------------------------------------------- */

struct keyword {
	const char *name;
	const char *alias; /* netem's other spelling */
	int (*fn)(struct cur *c, struct emu_spec *s);
};

static const struct keyword keywords[] = {
    {"delay", "latency", kw_delay},
    {"distribution", NULL, kw_distribution},
    {"loss", "drop", kw_loss},
    {"ecn", NULL, kw_ecn},
    {"duplicate", NULL, kw_duplicate},
    {"corrupt", NULL, kw_corrupt},
    {"reorder", NULL, kw_reorder},
    {"gap", NULL, kw_gap},
    {"rate", NULL, kw_rate},
    {"limit", NULL, kw_limit},
    {"seed", NULL, kw_seed},
    {"limit-bytes", NULL, kw_limit_bytes},
    {"red", NULL, kw_red},
    {"pfc", NULL, kw_pfc},
    {"jitter-no-reorder", NULL, kw_jitter_no_reorder},
    {"corrupt-recompute", NULL, kw_corrupt_recompute},
    {"ctrl-delay", NULL, kw_ctrl_delay},
    {"drop-psn", NULL, kw_drop_psn}, /* repeatable */
    {"drop-nth", NULL, kw_drop_nth},
    {"drop-mad", NULL, kw_drop_mad}, /* repeatable */
};
#define N_KEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

static const char keyword_list[] =
    "delay, distribution, loss, ecn, duplicate, corrupt, reorder, gap, rate, limit, seed, "
    "limit-bytes, red, pfc, jitter-no-reorder, corrupt-recompute, ctrl-delay, drop-psn, "
    "drop-nth, drop-mad";

/* Levenshtein distance, capped: enough to suggest "delay" for "dealy". */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[32], cur[32];

	if (la >= 31 || lb >= 31)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

static int
unknown_keyword(struct cur *c, const char *t)
{
	const char *best = NULL;
	size_t best_d = 3;

	if (strcmp(t, "slot") == 0)
		return fail(c, -EMU_E_UNSUPPORTED,
			    "netem's \"slot\" is not supported by lossy-emu");
	for (size_t k = 0; k < N_KEYWORDS; k++) {
		size_t d = edit_distance(t, keywords[k].name);

		if (d < best_d && d < strlen(keywords[k].name)) {
			best_d = d;
			best = keywords[k].name;
		}
	}
	if (best != NULL)
		return fail(c, -EMU_E_UNKNOWN_KEYWORD,
			    "unknown keyword \"%s\" (did you mean \"%s\"? expected %s)", t, best,
			    keyword_list);
	return fail(c, -EMU_E_UNKNOWN_KEYWORD, "unknown keyword \"%s\" (expected %s)", t,
		    keyword_list);
}

/* Rules across keywords, iproute2's first, then ours. */
static int
check_combination(struct cur *c, struct emu_spec *s)
{
	const struct emu_impair_params *im = &s->impair;
	char a[32], b[32];

	if (s->delay.kind != EMU_DIST_UNIFORM &&
	    (s->delay.delay_ns == 0 || s->delay.jitter_ns == 0))
		return fail(c, -EMU_E_CONFLICT,
			    "distribution %s needs delay TIME JITTER with both above 0",
			    emu_dist_kind_name(s->delay.kind));
	if (im->reorder_p > 0. && s->delay.delay_ns == 0)
		return fail(c, -EMU_E_CONFLICT,
			    "reorder needs a delay: reordered packets skip the delay line");
	if (im->gap != 0 && im->reorder_p <= 0.)
		return fail(c, -EMU_E_CONFLICT, "gap %u given without reorder P",
			    (unsigned)im->gap);
	if (im->ecn && im->loss.kind == EMU_LOSS_NONE)
		return fail(c, -EMU_E_CONFLICT,
			    "ecn needs a loss model (netem's ecn marks instead of dropping; "
			    "for queue-based marking use red)");
	if (im->corrupt_recompute && im->corrupt_p <= 0.)
		return fail(c, -EMU_E_CONFLICT, "corrupt-recompute needs corrupt P");
	if (s->delay.no_reorder && s->delay.jitter_ns == 0)
		return fail(c, -EMU_E_CONFLICT, "jitter-no-reorder needs delay TIME JITTER");
	if (s->red.enabled && s->queue.rate_bps == 0)
		return fail(c, -EMU_E_CONFLICT,
			    "red needs rate RATE: without a bottleneck the queue never builds");
	if (s->pfc.enabled && s->queue.rate_bps == 0)
		return fail(c, -EMU_E_CONFLICT,
			    "pfc needs rate RATE: without a bottleneck the queue never builds");
	if (s->pfc.enabled && s->queue.limit_bytes != 0 &&
	    s->pfc.xoff_bytes > s->queue.limit_bytes) {
		emu_format_size(a, sizeof(a), s->pfc.xoff_bytes);
		emu_format_size(b, sizeof(b), s->queue.limit_bytes);
		return fail(c, -EMU_E_CONFLICT,
			    "pfc xoff %s exceeds limit-bytes %s: the queue would drop before "
			    "pausing",
			    a, b);
	}
	return 0;
}

int
emu_spec_parse_argv(struct emu_spec *s, int argc, const char *const argv[], char *msg,
		    size_t msglen)
{
	struct cur c = {.tok = argv, .n = argc, .i = 0, .msg = msg, .msglen = msglen};
	bool seen[N_KEYWORDS] = {false};
	int rc;

	emu_spec_init(s);
	if (msg != NULL && msglen != 0)
		msg[0] = '\0';
	if (c.n > 0 && strcmp(c.tok[0], "netem") == 0)
		c.i++; /* pasted "netem delay ..." */
	while (c.i < c.n) {
		const char *t = c.tok[c.i];
		size_t k;

		for (k = 0; k < N_KEYWORDS; k++)
			if (strcmp(t, keywords[k].name) == 0 ||
			    (keywords[k].alias && strcmp(t, keywords[k].alias) == 0))
				break;
		if (k == N_KEYWORDS)
			return unknown_keyword(&c, t);
		if (seen[k] && keywords[k].fn != kw_drop_psn && keywords[k].fn != kw_drop_mad)
			return fail(&c, -EMU_E_DUPLICATE, "\"%s\" given more than once", t);
		seen[k] = true;
		c.i++;
		rc = keywords[k].fn(&c, s);
		if (rc)
			return rc;
	}
	rc = check_combination(&c, s);
	if (rc)
		return rc;
	/* iproute2: a reorder probability without gap means gap 1 */
	if (s->impair.reorder_p > 0. && s->impair.gap == 0)
		s->impair.gap = 1;
	return 0;
}

int
emu_spec_parse(struct emu_spec *s, const char *text, char *msg, size_t msglen)
{
	char buf[EMU_SPEC_MAX_LEN];
	const char *tok[EMU_SPEC_MAX_TOKENS];
	struct cur c = {.msg = msg, .msglen = msglen};
	size_t len = text ? strlen(text) : 0;
	int n = 0;
	char *p;

	emu_spec_init(s);
	if (len >= sizeof(buf))
		return fail(&c, -EMU_E_RANGE, "spec is %zu characters long (at most %d)", len,
			    EMU_SPEC_MAX_LEN - 1);
	memcpy(buf, text ? text : "", len + 1);
	for (p = buf; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (*p == '\0')
			break;
		if (n == EMU_SPEC_MAX_TOKENS)
			return fail(&c, -EMU_E_RANGE, "spec has more than %d words",
				    EMU_SPEC_MAX_TOKENS);
		tok[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
	}
	return emu_spec_parse_argv(s, n, tok, msg, msglen);
}
