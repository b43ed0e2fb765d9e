/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_stats.h
 * Transport counters, defined once as an X-macro list: the list gives the
 * enum, the exported names and the per-QP / per-device arrays together.
 * Every drop has a counter here. A counter that belongs to a QP is counted in
 * the QP and in its device; the receive path's early drops (before a QP is
 * known) are counted in the device only.
 */
#ifndef ROCE_STATS_H
#define ROCE_STATS_H

#include <stdint.h>

/* X(ENUM_SUFFIX, "exported_name", "description") */
#define ROCE_STATS_LIST(X)                                                                         \
	/* traffic */                                                                              \
	X(TX_PKTS, "tx_packets", "frames handed to ops->tx")                                       \
	X(TX_BYTES, "tx_bytes", "bytes handed to ops->tx")                                         \
	X(RX_PKTS, "rx_packets", "frames given to roce_dev_rx()")                                  \
	X(RX_BYTES, "rx_bytes", "bytes given to roce_dev_rx()")                                    \
	X(TX_ERRORS, "tx_errors", "ops->tx refused a frame (retried later)")                       \
	X(TX_REQ_PKTS, "tx_req_packets", "request packets sent (first transmissions)")             \
	X(TX_RETX_PKTS, "tx_retransmits", "request packets retransmitted")                         \
	X(TX_ACKS, "tx_acks", "ACKs sent")                                                         \
	X(TX_READ_RESP, "tx_read_responses", "RDMA READ response packets sent")                    \
	X(TX_ATOMIC_ACKS, "tx_atomic_acks", "ATOMIC ACKNOWLEDGE packets sent")                     \
	X(TX_CNPS, "tx_cnps", "CNPs sent")                                                         \
	X(TX_BECN_ACKS, "tx_becn_acks", "ACKs sent with BECN (ECN echo instead of a CNP)")         \
	X(TX_NAK_SEQ, "tx_nak_seq_err", "NAKs sent: PSN sequence error")                           \
	X(TX_NAK_RNR, "tx_nak_rnr", "RNR NAKs sent")                                               \
	X(TX_NAK_INV_REQ, "tx_nak_inv_req", "NAKs sent: invalid request")                          \
	X(TX_NAK_ACCESS, "tx_nak_rem_access", "NAKs sent: remote access error")                    \
	X(TX_NAK_REM_OP, "tx_nak_rem_op", "NAKs sent: remote operational error")                   \
	/* requester / completer */                                                                \
	X(RX_ACKS, "rx_acks", "ACKs received")                                                     \
	X(RX_READ_RESP, "rx_read_responses", "RDMA READ response packets received")                \
	X(RX_ATOMIC_ACKS, "rx_atomic_acks", "ATOMIC ACKNOWLEDGE packets received")                 \
	X(RX_NAK_SEQ, "rx_nak_seq_err", "NAKs received: PSN sequence error")                       \
	X(RX_NAK_RNR, "rx_nak_rnr", "RNR NAKs received")                                           \
	X(RX_NAK_INV_REQ, "rx_nak_inv_req", "NAKs received: invalid request")                      \
	X(RX_NAK_ACCESS, "rx_nak_rem_access", "NAKs received: remote access error")                \
	X(RX_NAK_REM_OP, "rx_nak_rem_op", "NAKs received: remote operational error")               \
	X(RX_NAK_OTHER, "rx_nak_other", "NAKs received with a reserved code")                      \
	X(RX_CNPS, "rx_cnps", "CNPs received")                                                     \
	X(RX_BECN_ACKS, "rx_becn_acks", "ACKs received with BECN (ECN echo)")                      \
	X(CC_DECREASES, "cc_decreases", "congestion control rate/window decreases")                \
	X(CC_INCREASES, "cc_increases", "congestion control rate/window increases")                \
	X(RX_DUP_RESP, "rx_dup_responses", "stale or duplicate responses ignored")                 \
	X(RX_BAD_RESP, "rx_bad_responses", "responses beyond the sent PSNs or malformed")          \
	X(IMPLIED_NAKS, "implied_naks", "lost READ/atomic responses found by a later response")    \
	X(TIMEOUTS, "timeouts", "local ACK timeouts")                                              \
	X(RTO_EXPIRIES, "rto_expiries",                                                            \
	  "adaptive RTO expiries: the timeout doubled (0 with --rto fixed)")                       \
	X(RTO_SPURIOUS, "rto_spurious",                                                            \
	  "timer expiries found spurious: the resent oldest PSN ACKed within 3/4 of the least "    \
	  "RTT sample (a lower bound)")                                                            \
	X(RTT_SAMPLES, "rtt_samples", "RTT samples taken from ACKs, responses and notices")        \
	X(RTT_NOTICE_SAMPLES, "rtt_notice_samples",                                                \
	  "of rtt_samples: from a RACK/SACK naming a PSN sent once")                               \
	X(KARN_SKIPPED, "karn_skipped",                                                            \
	  "responses giving no RTT sample: a retransmitted PSN acknowledged (Karn)")               \
	X(RETRIES, "retries", "go-back retransmission rounds started")                             \
	X(RNR_RETRIES, "rnr_retries", "retries after an RNR NAK")                                  \
	X(RETRY_EXC, "retry_exceeded", "retry_cnt exhausted (IBV_WC_RETRY_EXC_ERR)")               \
	X(RNR_RETRY_EXC, "rnr_retry_exceeded", "rnr_retry exhausted (IBV_WC_RNR_RETRY_EXC_ERR)")   \
	X(WINDOW_FULL, "window_full", "requester stopped by the in-flight packet window")          \
	X(LWIN_CUTS, "loss_window_cuts", "loss episodes that cut the loss-reactive window")        \
	X(LWIN_HELD, "loss_window_held",                                                           \
	  "loss episodes without a queue signal (random): window held")                            \
	X(LWIN_UNDONE, "loss_window_undone",                                                       \
	  "timeouts found spurious whose window cut was undone (RFC 4015)")                        \
	X(LWIN_UNDO_ECN, "loss_window_undo_ecn",                                                   \
	  "timeouts found spurious but not undone: an ECN echo came with them")                    \
	X(CC_BLOCKED, "cc_blocked", "requester stopped by congestion control")                     \
	X(RATE_BLOCKED, "rate_blocked", "requester paced by the QP rate limit")                    \
	X(RD_ATOMIC_BLOCKED, "rd_atomic_blocked", "requester stopped by max_rd_atomic")            \
	/* selective loss recovery (gbone, irn) */                                                 \
	X(TX_RACKS, "tx_racks", "Go-Back-ONE RACKs sent")                                          \
	X(RX_RACKS, "rx_racks", "Go-Back-ONE RACKs received")                                      \
	X(TX_SACKS, "tx_sacks", "IRN SACKs sent")                                                  \
	X(RX_SACKS, "rx_sacks", "IRN SACKs received")                                              \
	X(RX_HOLES, "holes", "gaps opened in the request PSN stream at the receiver")              \
	X(RX_OOO_PLACED, "rx_ooo_placed", "request packets placed out of order")                   \
	X(RX_OOO_FULL, "rx_ooo_bitmap_full", "out-of-order packets dropped: beyond --max-ooo")     \
	X(RX_OOO_UNPLACED, "rx_ooo_unplaceable",                                                   \
	  "out-of-order packets dropped: not placeable (READ/atomic, WRITE with immediate, no "    \
	  "receive WQE, check failed)")                                                            \
	X(RX_OOO_GUARDED, "rx_ooo_guarded_bytes",                                                  \
	  "bytes of an earlier message not written over a later one placed out of order")          \
	X(RX_SPURIOUS, "spurious_retransmits",                                                     \
	  "request packets whose PSN had already arrived (selective modes)")                       \
	X(RETX_QUEUE_HWM, "retx_queue_hwm", "high-water mark of the retransmit queue (PSNs)")      \
	X(RETX_LOST_DETECT, "retx_lost_detected",                                                  \
	  "IRN: retransmissions found lost before the timeout (beyond the paper)")                 \
	/* VRP loss-tolerant delivery (--recovery vrp, docs/vrp.md) */                             \
	X(TX_VRP_ACKS, "vrp_acks_sent", "VRP ACKs sent (cumulative + single)")                     \
	X(RX_VRP_ACKS, "vrp_acks_received", "VRP ACKs received")                                   \
	X(TX_VRP_NACKS, "vrp_nacks_sent", "VRP NACK packets sent")                                 \
	X(RX_VRP_NACKS, "vrp_nacks_received", "VRP NACK packets received")                         \
	X(RX_VRP_NACKED, "vrp_nacked_pkts", "PSNs the VRP receiver NACKed (all reasons)")          \
	X(RX_VRP_NACK_CRIT, "vrp_nack_critical",                                                   \
	  "VRP NACKs: a critical packet (first, last, --vrp-critical)")                            \
	X(RX_VRP_NACK_CONS, "vrp_nack_consecutive", "VRP NACKs: the consecutive-loss bound")       \
	X(RX_VRP_NACK_RATE, "vrp_nack_rate", "VRP NACKs: the window loss bound")                   \
	X(RX_VRP_NACK_UNKNOWN, "vrp_nack_unknown",                                                 \
	  "VRP NACKs: a PSN of no known WRITE message (SEND, lost FIRST, untracked)")              \
	X(RX_VRP_TOLERATED, "vrp_tolerated_pkts", "VRP losses tolerated (packets zero-filled)")    \
	X(RX_VRP_ZERO_BYTES, "vrp_zero_filled_bytes", "bytes zero-filled for tolerated losses")    \
	X(RX_VRP_UNTRACKED, "vrp_untracked_msgs",                                                  \
	  "WRITE messages delivered reliably: too large or too many in flight")                    \
	X(RX_VRP_WR_MSGS, "vrp_wr_tol_msgs",                                                       \
	  "VRP WRITE messages that carried their own tolerance (VTETH)")                           \
	X(RX_VRP_BAD_TOL, "vrp_bad_tolerance",                                                     \
	  "VRP WRITE messages whose VTETH was refused (delivered reliably)")                       \
	X(RX_VRP_MSGS, "vrp_msgs", "WRITE messages ended under VRP")                               \
	X(RX_VRP_HIST_0, "vrp_msgs_loss_0", "VRP messages that lost no packet")                    \
	X(RX_VRP_HIST_1, "vrp_msgs_loss_1", "VRP messages that lost 1 packet")                     \
	X(RX_VRP_HIST_2, "vrp_msgs_loss_2_3", "VRP messages that lost 2-3 packets")                \
	X(RX_VRP_HIST_4, "vrp_msgs_loss_4_15", "VRP messages that lost 4-15 packets")              \
	X(RX_VRP_HIST_16, "vrp_msgs_loss_16p", "VRP messages that lost 16 packets or more")        \
	X(TX_VRP_SUMMARIES, "vrp_summaries_sent",                                                  \
	  "VRP LOSS summaries sent (0xE3, one per WRITE message ended)")                           \
	X(TX_VRP_SUM_UNSENT, "vrp_summaries_unsent",                                               \
	  "VRP LOSS summaries the port refused (the requester reports none)")                      \
	X(RX_VRP_SUMMARIES, "vrp_summaries_received", "VRP LOSS summaries received")               \
	X(RX_VRP_SUM_DROP, "vrp_summaries_dropped",                                                \
	  "VRP LOSS summaries dropped: no outstanding WRITE ends at its PSN, bad fields, not vrp") \
	X(VRP_PEER_LOST_PKTS, "vrp_peer_lost_pkts",                                                \
	  "packets of our WRITEs the responder gave up (from its LOSS summaries)")                 \
	X(VRP_PEER_LOST_BYTES, "vrp_peer_lost_bytes",                                              \
	  "bytes of our WRITEs the responder zero-filled (from its LOSS summaries)")               \
	X(VRP_SUM_MISSING, "vrp_summary_missing",                                                  \
	  "WRITEs completed under vrp without a LOSS summary (lost on the way)")                   \
	/* responder */                                                                            \
	X(RX_REQ_PKTS, "rx_req_packets", "request packets accepted in order")                      \
	X(RX_REQ_BYTES, "rx_req_bytes", "payload bytes of request packets accepted in order")      \
	X(RX_DUP_REQ, "rx_dup_requests", "duplicate request packets (re-ACKed, not placed)")       \
	X(RX_OOS, "rx_out_of_sequence", "request packets after a PSN gap")                         \
	X(RX_BAD_RKEY, "rx_bad_rkey", "R_Key, access flag or bounds violation")                    \
	X(RX_INV_REQ, "rx_invalid_requests", "opcode sequence, length or operation errors")        \
	X(RX_RNR, "rx_rnr", "SENDs without a posted receive WQE")                                  \
	X(RX_DUP_NO_RES, "rx_dup_unretained", "duplicate READ/atomic no longer retained")          \
	X(RX_ATOMIC_REPLAYS, "rx_atomic_replays", "duplicate atomics answered from the cache")     \
	X(RX_READ_REPLAYS, "rx_read_replays", "duplicate READs re-executed")                       \
	X(RX_REPLAY_CUT, "rx_replays_cut",                                                         \
	  "READ/atomic replays cut short: a new request needed the resource")                      \
	X(RX_ECN_CE, "rx_ecn_ce", "packets received with ECN CE")                                  \
	X(RX_UC_MSG_DROP, "rx_uc_msg_drops", "UC messages dropped after a lost packet")            \
	X(RX_NO_RECV_WQE, "rx_no_recv_wqe", "UC/UD SENDs dropped: no receive WQE")                 \
	X(RX_LEN_ERR, "rx_length_errors", "SENDs larger than the receive WQE")                     \
	/* receive dispatch drops */                                                               \
	X(RX_DROP_MALFORMED, "rx_drop_malformed", "frames the wire parser rejected (not ICRC)")    \
	X(RX_DROP_ICRC, "rx_drop_icrc", "frames with a bad ICRC")                                  \
	X(RX_DROP_NOT_FOR_US, "rx_drop_not_for_us", "destination MAC/IP is not ours")              \
	X(RX_DROP_BAD_QPN, "rx_drop_bad_qpn", "destination QP does not exist")                     \
	X(RX_DROP_BAD_TRANSPORT, "rx_drop_bad_transport", "opcode transport is not the QP's")      \
	X(RX_DROP_BAD_PKEY, "rx_drop_bad_pkey", "P_Key does not match the QP's")                   \
	X(RX_DROP_BAD_QKEY, "rx_drop_bad_qkey", "UD Q_Key does not match the QP's")                \
	X(RX_DROP_BAD_SRC, "rx_drop_bad_src", "RC/UC packet not from the QP's peer")               \
	X(RX_DROP_QP_STATE, "rx_drop_qp_state", "QP state does not accept the packet")             \
	/* completions */                                                                          \
	X(SEND_CQES, "send_completions", "send WQEs completed (signaled or not)")                  \
	X(RECV_CQES, "recv_completions", "receive WQEs completed")                                 \
	X(FLUSHED_WQES, "flushed_wqes", "WQEs completed with IBV_WC_WR_FLUSH_ERR")                 \
	X(CQ_OVERFLOW, "cq_overflow", "completions lost because a CQ was full")                    \
	/* FEC (roce_fec.c, docs/fec.md) */                                                        \
	X(RX_DROP_FEC_OFF, "rx_drop_fec_off", "FEC frames for a QP without FEC")                   \
	X(FEC_TX_COVERED, "fec_tx_covered", "data packets coded into a FEC block")                 \
	X(FEC_TX_FRAMES, "fec_tx_frames", "FEC repair and negotiation frames sent")                \
	X(FEC_TX_OVERHEAD, "fec_tx_overhead_bytes", "bytes of FEC frames sent")                    \
	X(FEC_TX_FLUSHES, "fec_tx_flushes", "idle flushes: repairs of open blocks sent early")     \
	X(FEC_TX_RECODED, "fec_tx_recoded",                                                        \
	  "retransmissions coded on a new grid (fec+gbn go-back rounds)")                          \
	X(FEC_TX_DROPPED, "fec_tx_dropped", "FEC frames not sent (ops->tx refused, stash full)")   \
	X(FEC_RX_FRAMES, "fec_rx_frames", "FEC frames taken by the decoder")                       \
	X(FEC_RX_REFUSED, "fec_rx_refused",                                                        \
	  "FEC frames refused (malformed, bad ICRC, hostile FRH)")                                 \
	X(FEC_REBUILT, "fec_rebuilt",                                                              \
	  "packets rebuilt from repairs, received as if from the wire")                            \
	X(FEC_REBUILT_LOST, "fec_rebuilt_lost", "rebuilt packets beyond the stash, not received")  \
	X(FEC_UNRECOVERABLE, "fec_unrecoverable", "missing packets the code could not rebuild")    \
	X(FEC_WITHHELD, "fec_loss_signals_withheld",                                               \
	  "holes whose loss signal the hold-back withheld")                                        \
	X(FEC_HOLD_REPAIRED, "fec_holds_repaired",                                                 \
	  "holds ended by the hole rebuilt from a repair: no loss signal")                         \
	X(FEC_HOLD_FILLED, "fec_holds_filled",                                                     \
	  "holds ended by the missing packet itself arriving late: no loss signal")                \
	X(FEC_REBUILT_AFTER_RELEASE, "fec_rebuilt_after_release",                                  \
	  "holes rebuilt after their hold was released (deadline too short)")                      \
	X(FEC_REBUILT_DUP, "fec_rebuilt_dup", "rebuilt packets the responder already had")         \
	X(FEC_HOLD_RESET, "fec_holds_reset", "holds dropped by a QP reset")                        \
	X(FEC_ADAPT_UP, "fec_adapt_up", "--fec-adapt: policy moved one level up (more repair)")    \
	X(FEC_ADAPT_DOWN, "fec_adapt_down", "--fec-adapt: policy moved one level down")            \
	X(FEC_ADAPT_PROPOSALS, "fec_adapt_proposals", "--fec-adapt: PROPOSE frames sent")          \
	X(FEC_ADAPT_FAILED, "fec_adapt_failed", "--fec-adapt: a PROPOSE that could not be built")  \
	X(FEC_RELEASE_DEADLINE, "fec_release_deadline",                                            \
	  "holds released to the transport at the deadline: the stream fell silent")               \
	X(FEC_RELEASE_PROGRESS, "fec_release_progress",                                            \
	  "holds released: a packet sent after the hole's block's repairs arrived, hole open")     \
	X(FEC_RELEASE_UNREC, "fec_release_unrecoverable",                                          \
	  "holds released: the hole is unrecoverable")                                             \
	X(FEC_RELEASE_FULL, "fec_release_full", "holds released: a packet beyond the hold ring")   \
	X(FEC_HELD, "fec_held_packets", "request packets held back behind a hole")                 \
	X(FEC_HOLD_DUP, "fec_hold_duplicates", "packets already held (duplicates), dropped")

/** Counter identifiers. */
enum roce_stat {
#define ROCE_STAT_ENUM(e, name, desc) ROCE_STAT_##e,
	ROCE_STATS_LIST(ROCE_STAT_ENUM)
#undef ROCE_STAT_ENUM
	    ROCE_STAT__COUNT
};

/** A set of counters (per QP or per device). */
struct roce_stats {
	uint64_t v[ROCE_STAT__COUNT];
};

/** Exported name ("tx_packets") of a counter, or NULL if out of range. */
const char *roce_stat_name(enum roce_stat id);
/** One-line description of a counter, or NULL if out of range. */
const char *roce_stat_desc(enum roce_stat id);

#endif /* ROCE_STATS_H */
