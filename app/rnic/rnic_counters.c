/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_counters.c
 * The port counters (RNIC_PORT_COUNTERS in rnic_port.h): summed over lcores,
 * printed, and the engine's device-wide counters in the --json document.
 */
#include <string.h>

#include "rnic_port.h"
#include "roce_stats.h"
#include "rw_json.h"

void
rnic_port_counters_add(struct rnic_port_counters *sum, const struct rnic_port *p)
{
/* a high-water mark ("_max" in its name) is the largest over the lcores, not their sum */
#define RNIC_CNT_ADD(name, help)                                                                   \
	if (strstr(#name, "_max"))                                                                 \
		sum->name = sum->name > p->cnt.name ? sum->name : p->cnt.name;                     \
	else                                                                                       \
		sum->name += p->cnt.name;
	RNIC_PORT_COUNTERS(RNIC_CNT_ADD)
#undef RNIC_CNT_ADD
}

void
rnic_port_print_counters(const struct rnic_port *p, FILE *f)
{
#define RNIC_CNT_PRINT(name, help)                                                                 \
	if (p->cnt.name)                                                                           \
		fprintf(f, "  %-22s %12llu  %s\n", #name, (unsigned long long)p->cnt.name, help);
	RNIC_PORT_COUNTERS(RNIC_CNT_PRINT)
#undef RNIC_CNT_PRINT
	struct roce_stats st;

	roce_dev_stats(p->dev, &st);
	for (int i = 0; i < ROCE_STAT__COUNT; i++) {
		const char *name = roce_stat_name((enum roce_stat)i);

		if (st.v[i] && strncmp(name, "rx_drop_", 8) == 0)
			fprintf(f, "  device %-15s %12llu  %s\n", name, (unsigned long long)st.v[i],
				roce_stat_desc((enum roce_stat)i));
	}
}

void
rnic_port_json_device(const struct rnic_port *p, struct rw_json *w)
{
	struct roce_stats st;

	roce_dev_stats(p->dev, &st);
	rw_obj_begin(w, "device_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(w, roce_stat_name((enum roce_stat)i), st.v[i]);
	rw_obj_end(w);
}
