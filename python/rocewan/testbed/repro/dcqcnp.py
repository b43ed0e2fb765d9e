"""DCQCN-p (Wang, Huang, Qiu, Guo, "Design of efficient congestion control method based
on RDMA", J. HFUT 2025; docs/cc.md): Fig. 4, Rc, Rt and alpha against scheduling rounds
after one, two and three consecutive congestion events and after decrease-increase-decrease,
for DCQCN-p and DCQCN. The rounds are replayed through lib/cc's state machines (the same
code the rnic runs per QP) by build/tools/cc-replay: one round is one rate-increase timer
event, a congestion event one CNP (§2.3). Not on the wire: the wire-level ECN/CNP path is
tests/testbed/test_cc_ecn.py and bench/cc/ecn.py."""
import json
import os
import subprocess

from .. import report
from ..references import DCQCNP
from ..topo import BUILD

PAPER = {"..C": "full in round 9: (3, 0.5), (4, 0.75), (5, 0.875), (9, 1)",
         "..CC": "9-10 rounds (DCQCN 11-13)", "..CCC": "9-10 rounds (DCQCN 11-13)",
         "..CIC": "6 rounds (DCQCN 9)"}
NAMES = {"..C": "one decrease", "..CC": "2 consecutive decreases",
         "..CCC": "3 consecutive decreases", "..CIC": "decrease-increase-decrease"}


def replay(max_rounds=2000):
    path = os.path.join(BUILD, "tools", "cc-replay", "cc-replay")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is not built (run `make build`, or set ROCEWAN_BUILD)")
    r = subprocess.run([path, str(max_rounds)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def table(runs):
    lines = ["scenario                     algorithm  params                                  "
             "full in round  rounds after last decrease  paper"]
    for x in runs:
        lines.append(f"{NAMES[x['scenario']]:<28} {x['algo']:<10} {x['params'][:38]:<39} "
                     f"{x['full_round']:<14} {x['rounds_after_last_decrease']:<27} "
                     f"{PAPER[x['scenario']] if x['algo'] == 'dcqcn-p' else ''}")
    return "\n".join(lines)


def plot(runs, path):
    plt = report._plt()
    scen = list(NAMES)
    fig, axes = plt.subplots(1, len(scen), figsize=(16, 4), sharey=True)
    for ax, sc in zip(axes, scen):
        for x in runs:
            if x["scenario"] != sc:
                continue
            rounds = [r for r in x["rounds"] if r[0] <= 20]
            lab = x["algo"] + ("" if x["algo"] == "dcqcn-p" else
                               " (R_ai 40 Gb/s)" if "literal" in x["params"] else " (R_ai 40 Mb/s)")
            line = ax.plot([r[0] for r in rounds], [r[2] for r in rounds], marker="o", ms=3,
                           label=f"{lab} Rc")[0]
            ax.plot([r[0] for r in rounds], [r[3] for r in rounds], ls=":", color=line.get_color(),
                    label=f"{lab} Rt")
            ax.plot([r[0] for r in rounds], [r[4] for r in rounds], ls="--", lw=0.8,
                    color=line.get_color(), label=f"{lab} alpha")
        ax.set_title(NAMES[sc], fontsize=9)
        ax.set_xlabel("scheduling round")
        ax.set_ylim(0, 1.45)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("fraction of the line rate / alpha")
    axes[0].legend(fontsize=6, loc="lower right")
    fig.suptitle(f"DCQCN-p ({DCQCNP}) Fig. 4 replayed through lib/cc (DCQCN with R_ai 40 Mb/s "
                 "needs hundreds of rounds after 2-3 decreases: beyond round 20)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def reproduce_recovery(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Fig. 4: recovery rounds of DCQCN-p and DCQCN (prefix and quick are not used: no network)."""
    out = out or os.path.join(report.RESULTS, "reproduce-dcqcn-p-recovery")
    os.makedirs(out, exist_ok=True)
    runs = replay()
    print(table(runs))
    doc = {"schema": "rocewan/1", "app": "testbed", "version": report.version(),
           "reproduction": "dcqcn-p-recovery", "paper": DCQCNP, "results": {"runs": runs}}
    with open(os.path.join(out, "dcqcn-p-recovery.json"), "w") as f:
        json.dump(doc, f, indent=1)
    png = os.path.join(out, "dcqcn-p-recovery.png")
    plot(runs, png)
    print(f"results: {out}/dcqcn-p-recovery.json (+ .png)")
    one = [x for x in runs if x["algo"] == "dcqcn-p" and x["scenario"] == "..C"][0]
    pts = {r[0]: r[2] for r in one["rounds"]}
    ok = (pts.get(3) == 0.5 and pts.get(4) == 0.75 and pts.get(5) == 0.875
          and one["full_round"] == 9)
    print("DCQCN-p single-event points (3, 0.5), (4, 0.75), (5, 0.875), (9, 1): "
          + ("reproduced" if ok else "NOT reproduced"))
    return 0 if ok else 1
