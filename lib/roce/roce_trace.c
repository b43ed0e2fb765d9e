/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_trace.c
 * Loss-recovery trace events: see roce_trace.h.
 */
#include "roce_trace.h"

#include "roce_int.h"

const char *
roce_trace_kind_name(enum roce_trace_kind k)
{
	switch (k) {
	case ROCE_TRACE_RETX:
		return "retx";
	case ROCE_TRACE_RX_LATE:
		return "rx_late";
	case ROCE_TRACE_RACK_SENT:
		return "rack_sent";
	case ROCE_TRACE_SACK_SENT:
		return "sack_sent";
	case ROCE_TRACE_FEC_REBUILT:
		return "fec_rebuilt";
	case ROCE_TRACE_RTO:
		return "rto";
	case ROCE_TRACE_RTO_SPURIOUS:
		return "rto_spurious";
	case ROCE_TRACE_RTO_GOBACK:
		return "rto_goback";
	}
	return "?";
}

void
roce_trace_loss(struct roce_qp *qp, enum roce_trace_kind kind, uint32_t psn)
{
	struct roce_dev *dev = qp->dev;
	struct roce_trace_event ev;

	if (roce_likely(!dev->ops.trace))
		return;
	ev.kind = kind;
	ev.qpn = qp->qpn;
	ev.dqpn = qp->attr.dest_qp_num;
	ev.psn = psn & ROCE_PSN_MASK;
	ev.now_ns = dev->now;
	dev->ops.trace(dev->ctx, &ev);
}
