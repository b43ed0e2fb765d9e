/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane: SPEC changes at run time and the DPDK telemetry commands.
 * A change is parsed and validated here, turned into an immutable
 * struct lemu_dir_cfg and published with one atomic store; the data path
 * adopts it at its next poll (no lock on the fast path). Configs are never
 * freed while running (a few KB per change), so the data path can never see
 * freed memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_telemetry.h>

#include "emu_rng.h"
#include "lemu_app.h"

#define LEMU_ADOPT_TIMEOUT_NS 2000000000ull

struct lemu_dir_cfg *
lemu_cfg_new(struct lemu_app *app, unsigned d, const struct emu_spec *s)
{
	struct lemu_dir_cfg *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->spec = *s;
	c->seed = s->seed_set ? s->seed : emu_rng_direction_seed(app->prm.seed, d);
	lemu_spec_text(s, c->text, sizeof(c->text));
	c->older = app->cfgs;
	app->cfgs = c;
	return c;
}

void
lemu_ctl_free(struct lemu_app *app)
{
	while (app->cfgs) {
		struct lemu_dir_cfg *c = app->cfgs;

		app->cfgs = c->older;
		free(c);
	}
}

static void
sleep_us(unsigned us)
{
	struct timespec ts = {0, (long)us * 1000};

	nanosleep(&ts, NULL);
}

int
lemu_ctl_set(struct lemu_app *app, int d, const char *text, char *msg, size_t msglen, char *note,
	     size_t notelen)
{
	struct lemu_dir_cfg *c[LEMU_NDIR] = {NULL};
	struct emu_spec s;
	char pmsg[256];
	int rc = 0;

	if (note && notelen)
		note[0] = '\0';
	if (d < 0 || d > LEMU_NDIR) {
		snprintf(msg, msglen, "unknown direction (expected a2b, b2a or both)");
		return -EINVAL;
	}
	if (strlen(text) >= EMU_SPEC_MAX_LEN) {
		snprintf(msg, msglen, "SPEC longer than %d characters", EMU_SPEC_MAX_LEN - 1);
		return -EINVAL;
	}
	if (emu_spec_parse(&s, text, pmsg, sizeof(pmsg)) < 0) {
		snprintf(msg, msglen, "%s: %s", lemu_dir_name((unsigned)d), pmsg);
		return -EINVAL;
	}
	pthread_mutex_lock(&app->ctl_lock);
	if (!app->running) {
		snprintf(msg, msglen, "the data path is not running");
		rc = -EAGAIN;
		goto out;
	}
	for (unsigned i = 0; i < LEMU_NDIR; i++) {
		struct lemu_pool_need need;

		if (d != LEMU_NDIR && (unsigned)d != i)
			continue;
		c[i] = lemu_cfg_new(app, i, &s);
		if (c[i] == NULL) {
			snprintf(msg, msglen, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
		lemu_pool_need(&s, app->link_bps[i], app->prm.mbuf_size, 0, &need);
		if (note && need.mbufs > app->pool_mbufs[i]) {
			size_t used = strlen(note);

			snprintf(note + used, notelen - used,
				 "%s%s needs ~%u mbufs at line rate, has %u", used ? "; " : "",
				 lemu_dir_name(i), need.mbufs, app->pool_mbufs[i]);
		}
	}
	if (note && note[0]) {
		size_t used = strlen(note);

		snprintf(note + used, notelen - used,
			 " (pools are sized at start: frames beyond them are dropped at RX)");
	}
	/* every worker of a direction gets the same config; the first to adopt it
	 * reconfigures the direction's bottleneck */
	for (unsigned i = 0; i < LEMU_NDIR; i++)
		for (unsigned k = 0; c[i] && k < app->workers; k++)
			lemu_dir_publish(&app->dir[i][k], c[i]);
	for (unsigned i = 0; i < LEMU_NDIR * app->workers; i++) {
		unsigned dd = i / app->workers, k = i % app->workers;
		uint64_t waited = 0;

		while (c[dd] && !lemu_dir_adopted(&app->dir[dd][k], c[dd])) {
			if (waited >= LEMU_ADOPT_TIMEOUT_NS) {
				snprintf(msg, msglen, "%s: published but not adopted within 2 s",
					 lemu_dir_name(dd));
				rc = -ETIMEDOUT;
				goto out;
			}
			sleep_us(100);
			waited += 100000;
		}
	}
out:
	pthread_mutex_unlock(&app->ctl_lock);
	return rc;
}

/* ---- telemetry --------------------------------------------------------------- */

/* Telemetry strings are limited to RTE_TEL_MAX_STRING_LEN - 1 characters. */
static void
add_str(struct rte_tel_data *t, const char *key, const char *val)
{
	char buf[RTE_TEL_MAX_STRING_LEN];
	size_t n = strlen(val);

	if (n >= sizeof(buf)) {
		memcpy(buf, val, sizeof(buf) - 4);
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	} else {
		memcpy(buf, val, n + 1);
	}
	rte_tel_data_add_dict_string(t, key, buf);
}

static int
tel_set(const char *cmd, const char *params, struct rte_tel_data *t)
{
	char dname[16], msg[256], note[256];
	const char *comma;
	size_t dl;
	int d, rc;

	(void)cmd;
	rte_tel_data_start_dict(t);
	comma = params ? strchr(params, ',') : NULL;
	if (comma == NULL) {
		rte_tel_data_add_dict_int(t, "ok", 0);
		add_str(t, "error", "usage: /lossy_emu/set,DIR,SPEC with DIR a2b, b2a or both");
		return 0;
	}
	dl = (size_t)(comma - params);
	snprintf(dname, sizeof(dname), "%.*s", (int)(dl < sizeof(dname) ? dl : sizeof(dname) - 1),
		 params);
	d = lemu_dir_parse(dname);
	if (d < 0) {
		rte_tel_data_add_dict_int(t, "ok", 0);
		snprintf(msg, sizeof(msg), "unknown direction \"%s\" (a2b, b2a or both)", dname);
		add_str(t, "error", msg);
		return 0;
	}
	rc = lemu_ctl_set(&lemu_app, d, comma + 1, msg, sizeof(msg), note, sizeof(note));
	rte_tel_data_add_dict_int(t, "ok", rc == 0);
	if (rc < 0) {
		add_str(t, "error", msg);
		return 0;
	}
	for (unsigned i = 0; i < LEMU_NDIR; i++)
		if (d == LEMU_NDIR || (unsigned)d == i)
			add_str(t, lemu_dir_name(i), lemu_dir_current(lemu_app.dir[i])->text);
	if (note[0])
		add_str(t, "warning", note);
	return 0;
}

static int
tel_get(const char *cmd, const char *params, struct rte_tel_data *t)
{
	int d = params && *params ? lemu_dir_parse(params) : LEMU_NDIR;

	(void)cmd;
	if (!lemu_app.running)
		return -EAGAIN;
	if (d < 0)
		return -EINVAL;
	if (d < LEMU_NDIR) /* a single string may be long (8 KB): the full SPEC */
		return rte_tel_data_string(t, lemu_dir_current(lemu_app.dir[d])->text);
	rte_tel_data_start_dict(t);
	for (unsigned i = 0; i < LEMU_NDIR; i++)
		add_str(t, lemu_dir_name(i), lemu_dir_current(lemu_app.dir[i])->text);
	return 0;
}

static void
dir_stats(unsigned d, struct rte_tel_data *t, bool detail)
{
	const struct lemu_dir *dir = lemu_app.dir[d];
	uint64_t v[LEMU_ST__COUNT], b[EMU_LOSS_BURST_BUCKETS];
	static struct lemu_hist h; /* telemetry runs one command at a time */

	rte_tel_data_start_dict(t);
	/* summed over the workers: the accounting identity holds for the sums */
	lemu_dir_snapshot(dir, lemu_app.workers, v);
	for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
		rte_tel_data_add_dict_u64(t, lemu_stat_name(i), v[i]);
	lemu_hist_reset(&h);
	for (unsigned k = 0; k < lemu_app.workers; k++)
		lemu_hist_merge(&h, &dir[k].derr);
	rte_tel_data_add_dict_u64(t, "delay_err_ns_p50", lemu_hist_quantile(&h, 0.5));
	rte_tel_data_add_dict_u64(t, "delay_err_ns_p99", lemu_hist_quantile(&h, 0.99));
	rte_tel_data_add_dict_u64(t, "delay_err_ns_max", h.max);
	rte_tel_data_add_dict_u64(t, "workers", lemu_app.workers);
	/* mbufs of this direction's pool held now (frames in flight, the PMD's, leaks) */
	rte_tel_data_add_dict_u64(t, "mempool_in_use", rte_mempool_in_use_count(dir->pool));
	if (detail) {
		struct rte_tel_data *a = rte_tel_data_alloc();

		if (a == NULL)
			return;
		rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
		lemu_dir_loss_bursts(dir, lemu_app.workers, b);
		for (unsigned i = 0; i < EMU_LOSS_BURST_BUCKETS; i++)
			rte_tel_data_add_array_u64(a, b[i]);
		rte_tel_data_add_dict_container(t, "loss_bursts_by_length", a, 0);
	}
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *t)
{
	int d = params && *params ? lemu_dir_parse(params) : LEMU_NDIR;

	(void)cmd;
	if (!lemu_app.running)
		return -EAGAIN;
	if (d < 0)
		return -EINVAL;
	if (d < LEMU_NDIR) {
		dir_stats((unsigned)d, t, true);
		return 0;
	}
	rte_tel_data_start_dict(t);
	for (unsigned i = 0; i < LEMU_NDIR; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			return -ENOMEM;
		dir_stats(i, c, false);
		rte_tel_data_add_dict_container(t, lemu_dir_name(i), c, 0);
	}
	return 0;
}

int
lemu_ctl_telemetry_register(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd(
	    "/lossy_emu/set", tel_set,
	    "Change a direction's SPEC. Parameters: DIR,SPEC (DIR a2b, b2a or both), "
	    "e.g. a2b,delay 20ms loss 1%");
	rc |= rte_telemetry_register_cmd(
	    "/lossy_emu/get", tel_get,
	    "The SPEC in force. Parameters: [a2b|b2a] (one direction: the full text)");
	rc |= rte_telemetry_register_cmd(
	    "/lossy_emu/stats", tel_stats,
	    "Counters and delay-line release error. Parameters: [a2b|b2a] (adds loss bursts)");
	return rc;
}
