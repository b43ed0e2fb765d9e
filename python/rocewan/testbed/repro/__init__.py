"""Reproductions of the papers the project implements: one module per paper (full
citations in docs/references.md), each reproduction a function of typed arguments

    fn(prefix="tb", quick=False, out=None) -> exit code

prefix: namespace / DPDK file prefix; quick: the short CI variant; out: the results
directory (default results/reproduce-NAME).

    goback.py   Wang (NJUPT): the Go-Back-N goodput model (section IV.A)
    selective.py  Wang (NJUPT): Go-Back-ONE vs Go-Back-N (and IRN): goodput, FCT slowdown,
                the loss -> repair trace
    swing.py    Chen et al. (IEEE TPDS 2023), Swing: PFC-Relay buffer, throughput, FCT
    dcqcnp.py   Wang et al. (J. HFUT 2025), DCQCN-p: Fig. 4 recovery rounds
    lowar.py    Zuo et al., LoWAR: XOR FEC (and RS) under Go-Back-N vs gbn / gbone goodput,
                40 / 80 ms RTT sweep (lowar-rtt; over memif at LoWAR's
                packets per BDP: lowar-memif), GE bursts (lowar-burst), 1 MB flow FCT (lowar-fct),
                recovery latency per loss (lowar-latency)
    wancc.py    the four CCs on a 20-40 ms path through a RED/ECN bottleneck
    incast.py   Wang et al. (J. HFUT 2025), DCQCN-p Table 4: N:1 incast, rates and fairness
    vrp.py      Denis (LIP RR-2000-11), VRP: loss-tolerant throughput vs Go-Back-N
"""
from ..references import DCQCNP, SWING, VRP_BY, WANG_BY
from . import dcqcnp, goback, incast, lowar, selective, swing, vrp, wancc

REPRODUCTIONS = {
    "dcqcn-p-recovery": (dcqcnp.reproduce_recovery,
                         f"DCQCN-p ({DCQCNP}) Fig. 4: Rc, Rt, alpha over rounds, DCQCN-p vs DCQCN"),
    "wan-cc": (wancc.reproduce_wan_cc,
               "dcqcn (datacenter and profile=wan), dcqcn-p, dctcp, timely at 20-40 ms RTT"),
    "incast": (incast.reproduce_incast,
               f"DCQCN-p ({DCQCNP}) Table 4: {incast.FLOWS}:1 incast (QPs of one rnic) through RED/ECN, "
               "min rate, fairness, completion time per CC"),
    "gbn-model": (goback.reproduce_gbn_model,
                  f"{WANG_BY} IV.A: Go-Back-N goodput over loss x RTT vs the formula"),
    "gbone-goodput": (selective.reproduce_gbone_goodput,
                      f"{WANG_BY} IV Fig. 10: Go-Back-N / Go-Back-ONE / IRN goodput over random loss"),
    "gbone-fct": (selective.reproduce_gbone_fct,
                  f"{WANG_BY} IV Fig. 9: WebSearch FCT slowdown in 20 size groups per recovery"),
    "loss-trace": (selective.reproduce_loss_trace,
                   "loss -> repair latency CDF per recovery (docs/loss-trace.md)"),
    "swing-buffer": (swing.reproduce_buffer,
                     f"Swing ({SWING}): PFC-Relay with 1.0/0.9 BDP vs plain PFC with 1/2 BDP"),
    "swing-throughput": (swing.reproduce_throughput,
                         f"Swing ({SWING}) eq. (4)/(6): utilisation vs D and alpha"),
    "swing-fct": (swing.reproduce_fct,
                  f"Swing ({SWING}): WebSearch/FB_Hadoop FCT, PFC-Relay vs native PFC"),
    "lowar": (lowar.reproduce_lowar,
              f"{lowar.LOWAR}: fec+gbn (xor:32,4, rs:32,4) vs gbn / gbone goodput over random loss"),
    "lowar-rtt": (lowar.reproduce_lowar_rtt,
                  f"{lowar.LOWAR}: fec+gbn xor:32,4 vs gbn over loss 1e-5...1e-2 at 40 / 80 ms RTT, "
                  f"vs the {WANG_BY} IV.A model"),
    "lowar-memif": (lowar.reproduce_lowar_memif,
                    f"{lowar.LOWAR}: the 40 / 80 ms sweep at LoWAR's packets per BDP over memif links "
                    f"(MTU 4096, loss a->b), fec+gbn xor:32,4 vs gbn, vs the {WANG_BY} IV.A model"),
    "lowar-burst": (lowar.reproduce_lowar_burst,
                    f"{lowar.LOWAR}: GE bursts (bad-state loss 0.3 / 0.7), gbn vs XOR vs RS goodput"),
    "lowar-fct": (lowar.reproduce_lowar_fct,
                  f"{lowar.LOWAR}: 1 MB flows, FCT average and p99, gbn vs fec+gbn at 0.01-0.05 %"),
    "lowar-latency": (lowar.reproduce_lowar_latency,
                      f"{lowar.LOWAR}: recovery latency per loss under fec+gbn/gbone/irn, by FEC vs "
                      "by retransmission, in block fills and RTTs (the loss -> repair trace)"),
    "vrp": (vrp.reproduce_vrp,
            f"{VRP_BY}: intact goodput at 0/1/5/10 % tolerated loss (and 10 % per WR) vs gbn "
            "and gbone, 5 % loss, 20 ms"),
    "vrp-burst": (vrp.reproduce_vrp_burst,
                  f"{VRP_BY}: the same in GE bursts (5 % mean), vrp 10 % with and without "
                  "a 2-packet consecutive-loss bound"),
}
