/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_caps_local.c
 * The local capability record from lib/roce's registries (kept apart from
 * perftest_caps.c so that the codec links without the RoCE engine, e.g. in
 * the fuzz_text target).
 */
#include <string.h>

#include "perftest_caps.h"
#include "roce_cc.h"
#include "roce_fec.h"
#include "roce_recovery.h"

void
perftest_caps_local(struct perftest_caps *c, const struct roce_recovery_ops *recovery, bool fec,
		    const char *cc)
{
	memset(c, 0, sizeof(*c));
	c->version = PERFTEST_CAPS_VERSION;
	for (int i = 0; i < PERFTEST_CAPS_NAMES; i++) {
		const char *rn = perftest_caps_recovery_names[i], *cn = perftest_caps_cc_names[i];

		if (rn && roce_recovery_find(rn))
			c->recovery |= (uint8_t)(1u << i);
		if (cn && roce_cc_find(cn))
			c->cc |= (uint8_t)(1u << i);
	}
	if (fec && roce_fec_codec())
		c->fec |= PERFTEST_CAPS_FEC;
	int ri =
	    perftest_caps_index(perftest_caps_recovery_names, recovery ? recovery->name : NULL);
	int ci = perftest_caps_index(perftest_caps_cc_names, cc);
	c->recovery_req = ri >= 0 && (c->recovery >> ri & 1) ? (uint8_t)ri : PERFTEST_CAPS_NONE;
	c->cc_req = ci >= 0 && (c->cc >> ci & 1) ? (uint8_t)ci : PERFTEST_CAPS_NONE;
}
