"""PSN continuity of request streams, as seen by a passive observer.

PSNs are 24-bit serial numbers (IBTA 9.7.1): ``b`` is ahead of ``a`` when
``(b - a) mod 2**24`` is below 2**23. Each request stream is keyed by
(source IP, destination IP, destination QP). Every request packet consumes one
PSN, except an RDMA READ Request, which reserves one PSN per response packet:
between ceil(len / 4096) and ceil(len / 256) of them (IBTA 9.7.1 and C9-88,
PMTU 256..4096), so any advance in that range is in order.

A gap (PSN jumps ahead of the highest PSN seen so far) means packets were lost
before the capture point; a PSN that does not advance (repeat or going back)
is a retransmission, which is legal (go-back-N, or the single PSNs the
selective recoveries resend, docs/transport.md). Gaps are judged against the
highest PSN, so new data after a selective retransmission is no gap. Both
are counted, never treated as failures.
"""

PSN_BITS = 24
PSN_MASK = (1 << PSN_BITS) - 1
PSN_HALF = 1 << (PSN_BITS - 1)
MIN_PMTU = 256


def psn_delta(a, b):
    """Signed distance from PSN ``a`` to PSN ``b`` in 24-bit serial
    arithmetic: positive if ``b`` is ahead of ``a``."""
    d = (b - a) & PSN_MASK
    return d - (1 << PSN_BITS) if d >= PSN_HALF else d


def psn_span(is_read_request, dma_len=0):
    """Most PSNs a request packet can consume."""
    if not is_read_request:
        return 1
    return max(1, -(-dma_len // MIN_PMTU))


class FlowState:
    """PSN state and counters of one request stream."""

    __slots__ = ("packets", "first_psn", "last_psn", "span", "gaps",
                 "missing", "retransmissions", "high_psn", "high_span")

    def __init__(self, psn, span):
        self.packets = 1
        self.first_psn = psn
        self.last_psn = psn
        self.span = span
        self.high_psn = psn
        self.high_span = span
        self.gaps = 0
        self.missing = 0
        self.retransmissions = 0

    def as_dict(self):
        """JSON-ready counters (units in the key names)."""
        return {"pkts": self.packets, "first_psn": self.first_psn,
                "last_psn": self.last_psn, "gaps": self.gaps,
                "missing_psns": self.missing,
                "retransmissions": self.retransmissions}


class PsnTracker:
    """Feed request packets in capture order with :meth:`add`."""

    def __init__(self):
        self.flows = {}
        self.first_gap = None        # packet index of the first gap
        self.first_retransmission = None

    def add(self, idx, key, psn, span=1):
        """Account request packet ``idx`` of stream ``key`` carrying ``psn``
        that may consume up to ``span`` PSNs."""
        st = self.flows.get(key)
        if st is None:
            self.flows[key] = FlowState(psn, span)
            return
        st.packets += 1
        delta = psn_delta(st.last_psn, psn)
        ahead = psn_delta(st.high_psn, psn)
        if delta <= 0:
            st.retransmissions += 1
            if self.first_retransmission is None:
                self.first_retransmission = idx
        elif ahead > st.high_span:
            st.gaps += 1
            st.missing += ahead - st.high_span
            if self.first_gap is None:
                self.first_gap = idx
        if ahead > 0:
            st.high_psn = psn
            st.high_span = span
        st.last_psn = psn
        st.span = span

    def totals(self):
        """Counts summed over all streams."""
        fl = self.flows.values()
        return {
            "streams": len(self.flows),
            "pkts": sum(f.packets for f in fl),
            "gaps": sum(f.gaps for f in fl),
            "missing_psns": sum(f.missing for f in fl),
            "retransmissions": sum(f.retransmissions for f in fl),
            "first_gap_idx": self.first_gap,
            "first_retransmission_idx": self.first_retransmission,
        }
