/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_stats.h
 * Every counter lossy-emu exports per direction, defined once: the X-macro
 * gives the enum, the export name (used by --json, the exit table and the
 * telemetry /lossy_emu/stats) and a description. The data path counts the
 * app's own events in struct lemu_dir::stat; the counters kept by the
 * lib/emu models (struct emu_counters) are folded in by lemu_dir_snapshot().
 */
#ifndef LEMU_STATS_H
#define LEMU_STATS_H

#include <stdint.h>

#define LEMU_STAT_LIST(X)                                                                          \
	X(RX_PKTS, "rx_pkts", "frames received on the input port")                                 \
	X(RX_BYTES, "rx_bytes", "bytes of those frames (FCS excluded)")                            \
	X(TX_PKTS, "tx_pkts", "frames sent on the output port (data and forwarded MAC control)")   \
	X(TX_BYTES, "tx_bytes", "bytes of those frames")                                           \
	X(TX_BURSTS, "tx_bursts",                                                                  \
	  "TX bursts that carried data (tx_pkts / tx_bursts = mean burst)")                        \
	X(DROP_LOSS, "drop_loss", "dropped by the loss model")                                     \
	X(DROP_QUEUE, "drop_queue", "tail drops at the bottleneck queue (limit, limit-bytes)")     \
	X(DROP_NOMBUF, "drop_nombuf", "duplicates or PFC frames not made: no free mbuf")           \
	X(DROP_CTRL, "drop_ctrl", "MAC control frames dropped: control TX buffer full")            \
	X(DROP_MULTISEG, "drop_multiseg", "chained (multi-segment) frames refused")                \
	X(DROP_CUT, "drop_cut",                                                                    \
	  "frames the input port cut (longer than its af_packet ring frame: the IP length says "   \
	  "more than arrived); not forwarded")                                                     \
	X(DROP_RULE, "drop_rule",                                                                  \
	  "RoCEv2 frames dropped by the SPEC's drop-psn / drop-nth / drop-mad rules (per rule: "   \
	  "drop_rules)")                                                                           \
	X(RX_MISSED, "rx_missed", "frames the input port dropped (imissed + rx_nombuf)")           \
	X(RX_POOL_EMPTY, "rx_pool_empty",                                                          \
	  "empty RX polls with fewer free mbufs than one burst: the port could not receive (null " \
	  "and memif ports count no rx_nombuf); size the pool for the packet rate (--min-frame, "  \
	  "--mbufs)")                                                                              \
	X(CORRUPTED, "corrupted", "frames with one bit flipped")                                   \
	X(CORRUPT_SKIPPED, "corrupt_skipped",                                                      \
	  "RoCEv2 frames without payload left intact by corrupt-recompute")                        \
	X(ICRC_RECOMPUTED, "icrc_recomputed",                                                      \
	  "corrupted RoCEv2 frames given a valid ICRC (corrupt-recompute)")                        \
	X(ECN_MARKED, "ecn_marked", "CE marks set, all causes (loss-model ecn + RED)")             \
	X(ECN_MARKED_LOSS, "ecn_marked_loss", "loss events turned into CE marks (netem ecn)")      \
	X(ECN_MARKED_RED, "ecn_marked_red", "CE marks by the RED congestion point")                \
	X(RED_NOT_ECT, "red_not_ect", "non-ECT frames RED selected (passed unmarked)")             \
	X(DUPLICATED, "duplicated", "duplicate copies made")                                       \
	X(REORDERED, "reordered", "frames sent ahead of the delay line (bounded by gap)")          \
	X(DELAY_DRAWN_NS, "delay_drawn_ns",                                                        \
	  "sum of the delays drawn for the delay line, ns (same SPEC, seed and input: same sum)")  \
	X(ENQUEUED, "enqueued", "frames accepted by the bottleneck queue")                         \
	X(QUEUE_MAX_BYTES, "queue_max_bytes", "largest bottleneck backlog seen, bytes")            \
	X(MAC_CTRL_FWD, "mac_ctrl_fwd", "MAC control frames (PFC/PAUSE) forwarded ahead of all")   \
	X(PFC_SENT, "pfc_sent", "PFC frames this direction's queue sent back out its input port")  \
	X(PFC_XOFF, "pfc_xoff", "PFC XOFF (first pause) decisions")                                \
	X(PFC_REFRESH, "pfc_xoff_refresh", "PFC XOFF refreshes")                                   \
	X(PFC_XON, "pfc_xon", "PFC XON decisions")                                                 \
	X(PFC_XOFF_AT_BYTES, "pfc_xoff_at_bytes", "backlog when the last first-XOFF was decided")  \
	X(PFC_XON_AT_BYTES, "pfc_xon_at_bytes", "backlog when the last XON was decided")           \
	X(TX_PEER_PFC, "tx_peer_pfc",                                                              \
	  "PFC frames of the other direction's queue sent on this output port")                    \
	X(IN_FLIGHT, "in_flight", "frames in the queue, the delay line and the TX buffer now")     \
	X(SPEC_CHANGES, "spec_changes", "SPECs applied at run time")

enum lemu_stat {
#define LEMU_STAT_ENUM(name, str, help) LEMU_ST_##name,
	LEMU_STAT_LIST(LEMU_STAT_ENUM)
#undef LEMU_STAT_ENUM
	    LEMU_ST__COUNT
};

/** Export name of counter @p i, NULL if out of range. */
const char *lemu_stat_name(unsigned i);
/** Description of counter @p i, NULL if out of range. */
const char *lemu_stat_help(unsigned i);

#endif /* LEMU_STATS_H */
