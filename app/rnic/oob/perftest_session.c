/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_session.c
 * perftest 6.06's exchange, the session: runs a plan's steps against the
 * connection, calling the app's hooks for QP set-up and the test (client and
 * server handshake, finish). See perftest_xchg.h and docs/perftest-exchange.md.
 * Written from the observed wire format; no perftest code is used.
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

int
perftest_session_init(struct perftest_session *s, struct oob_conn *c,
		      const struct perftest_params *p, const struct perftest_dest *local,
		      struct perftest_dest *remote)
{
	char err[OOB_ERR_LEN];
	memset(s, 0, sizeof(*s));
	s->conn = c;
	s->p = *p;
	if (!s->p.version)
		s->p.version = PERFTEST_VERSION;
	s->local = local;
	s->remote = remote;
	s->mtu = p->mtu;
	s->cycle_buffer = p->cycle_buffer;
	s->cache_line = p->cache_line;
	int rc = perftest_plan_build(p, s->plan, PERFTEST_MAX_STEPS, &s->nsteps, err, sizeof(err));
	if (rc)
		return oob_fail(c, rc, "%s", err);
	if (!local || !remote)
		return oob_fail(c, OOB_ERR_ARG,
				"perftest session needs local and remote QP arrays");
	for (unsigned i = 0; i < p->num_qps; i++)
		memset(&remote[i], 0, sizeof(remote[i]));
	return OOB_OK;
}

static const char *
why_text(enum perftest_dest_why w)
{
	switch (w) {
	case PERFTEST_WHY_QP_INFO:
		return "QP details";
	case PERFTEST_WHY_INITIAL:
		return "initial sync";
	case PERFTEST_WHY_QP_AGAIN:
		return "QP details (again, after connecting)";
	case PERFTEST_WHY_AFTER_RTR:
		return "sync after RTR";
	case PERFTEST_WHY_PRE_RUN:
		return "sync before the run";
	case PERFTEST_WHY_POST_RUN:
		return "sync after the run";
	case PERFTEST_WHY_CLIENT_DONE:
		return "sync: client finished";
	case PERFTEST_WHY_CLOSE:
		return "closing sync";
	}
	return "key line";
}

int
perftest_session_step(struct perftest_session *s, const struct perftest_hooks *h)
{
	static const struct perftest_hooks none = {0};
	struct oob_conn *c = s->conn;
	const struct perftest_params *p = &s->p;
	if (!h)
		h = &none;
	if (s->pos >= s->nsteps)
		return OOB_OK;
	const struct perftest_step *st = &s->plan[s->pos];
	int tmo = st->after_handshake ? p->wait_timeout_ms : c->timeout_ms;
	int rc = OOB_OK;

	switch (st->kind) {
	case PERFTEST_STEP_VERSION:
		rc = perftest_xchg_version_caps(c, p->role, p->version, p->caps, s->remote_version,
						&s->remote_caps, &s->remote_has_caps);
		break;
	case PERFTEST_STEP_SYSDATA:
		rc = perftest_xchg_sysdata(c, p->role, p->cycle_buffer, p->cache_line,
					   &s->remote_cycle_buffer, &s->remote_cache_line);
		if (!rc) {
			if (s->remote_cycle_buffer > s->cycle_buffer)
				s->cycle_buffer = s->remote_cycle_buffer;
			if (s->remote_cache_line > s->cache_line)
				s->cache_line = s->remote_cache_line;
		}
		break;
	case PERFTEST_STEP_MTU:
		rc = perftest_xchg_mtu(c, p->role, p->mtu, &s->remote_mtu);
		if (!rc)
			s->mtu = s->remote_mtu < p->mtu ? s->remote_mtu : p->mtu;
		break;
	case PERFTEST_STEP_DEST: {
		char what[96];
		struct perftest_dest got;
		snprintf(what, sizeof(what), "the key line of QP %u (%s)", st->qp,
			 why_text(st->why));
		rc = perftest_xchg_dest(c, p->role, p->no_gid, &s->local[st->qp], &got, what, tmo);
		if (rc)
			break;
		if (s->remote_seen[st->qp] && memcmp(&got, &s->remote[st->qp], sizeof(got))) {
			rc = oob_fail(c, OOB_ERR_PROTO,
				      "%s: QP %u's details changed from QPN 0x%06x PSN 0x%06x to "
				      "QPN 0x%06x PSN 0x%06x (or another field) since the first "
				      "exchange",
				      c->peer, st->qp, s->remote[st->qp].qpn, s->remote[st->qp].psn,
				      got.qpn, got.psn);
			break;
		}
		s->remote[st->qp] = got;
		s->remote_seen[st->qp] = 1;
		break;
	}
	case PERFTEST_STEP_CONNECT:
		if (h->connect_qps && h->connect_qps(h->arg, s))
			rc = oob_fail(c, OOB_ERR_ARG, "connecting the local QPs failed");
		break;
	case PERFTEST_STEP_POST_RECV:
		if (h->post_recv && h->post_recv(h->arg, s, st->size))
			rc = oob_fail(c, OOB_ERR_ARG, "posting receives for size %llu failed",
				      (unsigned long long)st->size);
		break;
	case PERFTEST_STEP_TRAFFIC:
		memset(&s->local_report, 0, sizeof(s->local_report));
		if (h->run_traffic && h->run_traffic(h->arg, s, st->size, &s->local_report))
			rc = oob_fail(c, OOB_ERR_ARG, "the traffic run for size %llu failed",
				      (unsigned long long)st->size);
		break;
	case PERFTEST_STEP_REPORT:
		rc = perftest_xchg_report(c, p->role, p->report_per_port, &s->local_report,
					  &s->remote_report, tmo);
		if (!rc)
			s->n_reports++;
		break;
	case PERFTEST_STEP_DONE:
		rc = perftest_xchg_done(c, tmo);
		break;
	}
	if (rc == OOB_OK)
		s->pos++;
	return rc;
}

static int
run_until(struct perftest_session *s, const struct perftest_hooks *h, int phase2)
{
	while (s->pos < s->nsteps && (phase2 || !s->plan[s->pos].after_handshake)) {
		int rc = perftest_session_step(s, h);
		if (rc)
			return rc;
	}
	return OOB_OK;
}

int
perftest_client_handshake(struct perftest_session *s, const struct perftest_hooks *h)
{
	if (s->p.role != PERFTEST_CLIENT)
		return oob_fail(s->conn, OOB_ERR_ARG,
				"perftest_client_handshake on a server session");
	return run_until(s, h, 0);
}

int
perftest_server_handshake(struct perftest_session *s, const struct perftest_hooks *h)
{
	if (s->p.role != PERFTEST_SERVER)
		return oob_fail(s->conn, OOB_ERR_ARG,
				"perftest_server_handshake on a client session");
	return run_until(s, h, 0);
}

int
perftest_session_finish(struct perftest_session *s, const struct perftest_hooks *h)
{
	return run_until(s, h, 1);
}

int
perftest_session_run(struct perftest_session *s, const struct perftest_hooks *h)
{
	return run_until(s, h, 1);
}
