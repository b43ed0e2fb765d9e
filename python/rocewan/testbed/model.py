"""Analytic models the testbed compares measurements against."""
import math

from . import spec

# Bytes a RoCEv2 packet adds to its payload on the Ethernet wire (Eth+FCS 18,
# IPv4 20, UDP 8, BTH 12, ICRC 4), as the rnic's pacer counts them.
ROCE_OVERHEAD = 62


def gbn_goodput_fraction(error_rate, mtu, rate_bps, rtt_s):
    """The Go-Back-N goodput formula, Wang (NJUPT) section IV.A (docs/references.md):

        Goodput = sum_k (1 - E)^(k-1) * E * ((k-1) * MTU) / ((k-1) * MTU + B * RTT)

    k is the index of the first lost packet (geometric with parameter E, the
    per-packet loss-event rate): k-1 packets get through, then one RTT's worth
    of bytes (B * RTT) is sent again. Returns the fraction of the link rate
    that carries new data. E = 0 gives 1.
    """
    if error_rate <= 0:
        return 1.0
    bdp = rate_bps / 8 * rtt_s
    e, total, k = error_rate, 0.0, 1
    # sum term by term until the geometric tail is negligible (P(k) < 1e-12 e)
    kmax = int(min(50 / e, 5e7))
    q = 1 - e
    pk = e  # P(k) = (1-e)^(k-1) e
    while k <= kmax:
        good = (k - 1) * mtu
        total += pk * good / (good + bdp)
        pk *= q
        k += 1
        if pk < 1e-12 * e:
            break
    return total


def ge_params(loss_words):
    """A netem loss fragment -> (mean loss rate, loss-event rate per packet).

    The fragment (the words after 'loss': 'P%', 'random P [CORR]', 'gemodel p [r
    [1-h [1-k]]]') is parsed by lossy-emu's own parser (spec.py), which fills in
    netem's defaults (r = 1 - p, 1-h = 100 %, 1-k = 0 %); this function only does
    the arithmetic.
    'random': every loss is its own event.
    'gemodel': a Go-Back-N sender pays one round per loss *event* (a burst of
    consecutive losses costs one go-back), so the event rate is what the formula
    needs: events per packet = P(good state) * p * (1-h), approximately, for 1-k = 0.
    """
    if not loss_words.split():
        return 0.0, 0.0
    lp = spec.loss_params(loss_words)
    if lp["model"] == "gemodel":
        p, r, h1, k1 = (float(lp[k]) for k in ("p", "r", "1-h", "1-k"))  # 1-h: loss in bad state, 1-k: in good
        pi_b = p / (p + r)
        pi_g = 1 - pi_b
        loss = pi_g * k1 + pi_b * h1
        # an event: a lost packet whose predecessor was not lost
        p_lost_prev_kept = (pi_g * (1 - k1) * (p * h1 + (1 - p) * k1) +
                            pi_b * (1 - h1) * (r * k1 + (1 - r) * h1))
        return loss, p_lost_prev_kept
    if lp["model"] == "random":
        e = float(lp["p"])
        return e, e * (1 - e)
    raise ValueError(f"the {lp['model']} loss model is not supported by this formula helper")


def percentile(xs, q):
    """Nearest-rank percentile of a list (q in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    i = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[i]


def slowdown_groups(records, rtt_s, rate_bps, groups=20):
    """Wang (NJUPT)'s FCT presentation: flows sorted by size, cut into `groups`
    groups of equal count, median and p95 FCT slowdown per group. Slowdown =
    FCT / ideal FCT, ideal = base RTT + size / bottleneck rate.

    records: [size_bytes, start_us, fct_us] with fct_us > 0 for completed flows.
    """
    done = sorted((r for r in records if r[2] > 0), key=lambda r: r[0])
    out = []
    if not done:
        return out
    n = len(done)
    for g in range(groups):
        part = done[g * n // groups:(g + 1) * n // groups]
        if not part:
            continue
        sl = [r[2] / 1e6 / (rtt_s + r[0] * 8 / rate_bps) for r in part]
        out.append({"group": g, "size_max_bytes": part[-1][0], "flows": len(part),
                    "slowdown_p50": percentile(sl, 50), "slowdown_p95": percentile(sl, 95)})
    return out


def swing_phi_pfc(d_s, alpha, buffer_bytes, bw_bps):
    """Swing (Chen et al., TPDS 2023) eq. (4): long-link utilisation (fraction of BW) of native PFC with a
    buffer B_a at the far switch, one-way delay D and drain alpha x BW, XOFF =
    B_a - 2 D BW (all headroom for the in-flight bytes), XON = XOFF:

        t3 = X_off / (alpha BW)                                       (1)
        phi = alpha (2 BW D alpha - B_a) / (2 BW D (-1 + alpha + alpha^2) - alpha B_a)
              if t3 < 2D, else alpha                                   (4)

    BW in bytes/s inside the formula. B_a >= 4 D BW (2 BDP) gives phi = alpha.
    """
    bw = bw_bps / 8
    x_off = buffer_bytes - 2 * d_s * bw
    if x_off < 0:
        return float("nan")  # less than one BDP: not lossless, the formula does not apply
    t3 = x_off / (alpha * bw)
    if t3 >= 2 * d_s:
        return alpha
    return alpha * (2 * bw * d_s * alpha - buffer_bytes) / \
        (2 * bw * d_s * (-1 + alpha + alpha * alpha) - alpha * buffer_bytes)


def swing_phi_relay(alpha):
    """Swing (Chen et al., TPDS 2023) eq. (6): with PFC-Relay the long link runs at the drain rate, phi = alpha."""
    return alpha
