"""lib/fec's repair and negotiation packets (docs/wire.md, docs/fec.md): an
independent re-computation of the repairs for ``rocewan validate``. The
Scapy layer of the FEC Repair Header (FRH) is in :mod:`rocewan.layers`, bound
with the others (``fec.FRH`` is the same class).

A FEC frame is a RoCEv2 frame whose BTH opcode is 0xD0 (RC_X_FEC_REPAIR:
BTH | FRH | coded payload | pad | ICRC) or 0xD1 (RC_X_FEC_NEGOTIATE: BTH |
FRH | ICRC). The coded symbol of a data frame is its 16-bit length L and the
L bytes from the IP header to the end of the ICRC with the fields the ICRC
masks set to zero. XOR repairs are the XOR of their members' symbols, RS
repairs the rows k..k+r-1 of ISA-L's Cauchy matrix (a[i][j] = 1/(i ^ j) in
GF(2^8) with polynomial 0x11d) applied to them; both are recomputed here with
plain Python arithmetic, independently of the C code.
"""

import collections
import struct

from . import icrc
from . import opcodes as ops
from .layers import (FEC_MODE_RS, FEC_MODE_XOR, FEC_OP_NEGOTIATE,  # noqa: F401 (FRH: fec.FRH)
                     FEC_OP_REPAIR, FEC_OPCODES, FEC_T_COMMIT, FEC_T_PROPOSE,
                     FEC_T_RS, FEC_T_XOR, FRH)

OP_REPAIR = FEC_OP_REPAIR
OP_NEGOTIATE = FEC_OP_NEGOTIATE
OPCODE_NAMES = FEC_OPCODES
FRH_LEN = 28
T_XOR, T_RS, T_PROPOSE, T_COMMIT = FEC_T_XOR, FEC_T_RS, FEC_T_PROPOSE, FEC_T_COMMIT
MODE_XOR, MODE_RS = FEC_MODE_XOR, FEC_MODE_RS
K_MAX, D_MAX, R_MAX = 64, 16, 8
DATA_MAX = 4224
PSN_MASK = 0xFFFFFF


def frh_problem(h):
    """None if the FRH dict ``h`` is in range (as fec_frh_read checks), else
    the reason."""
    if h["rsvd"]:
        return "reserved bits set"
    mode, k, d, r = h["mode"], h["k"], h["d"], h["r"]
    if not 1 <= k <= K_MAX:
        return "K out of range"
    if mode == MODE_XOR:
        if not (1 <= d <= D_MAX and r == 1):
            return "XOR with D out of range or R != 1"
    elif mode == MODE_RS:
        if not (d == 1 and 1 <= r <= R_MAX):
            return "RS with D != 1 or R out of range"
    else:
        return "unknown mode"
    if h["type"] in (T_XOR, T_RS):
        if h["type"] != mode:
            return "type and mode disagree"
        if h["row"] >= r or h["mask"] == 0 or h["mask"] >> k:
            return "row or cover mask out of range"
    elif h["type"] in (T_PROPOSE, T_COMMIT):
        if h["row"] or h["mask"] or h["len_code"]:
            return "negotiation with repair fields"
    else:
        return "unknown type"
    return None


def _l3(buf):
    """(l3_off, ip_version) of an Ethernet frame, or None."""
    off = 12
    while off + 2 <= len(buf) and struct.unpack_from(">H", buf, off)[0] in (0x8100, 0x88A8):
        off += 4
    if off + 2 > len(buf):
        return None
    et = struct.unpack_from(">H", buf, off)[0]
    off += 2
    if et == 0x0800 and len(buf) >= off + 20 and buf[off] >> 4 == 4:
        return off, 4
    if et == 0x86DD and len(buf) >= off + 40 and buf[off] >> 4 == 6:
        return off, 6
    return None


def _roce(buf):
    """(l3_off, ver, ihl, ip_len, bth_off) of a UDP 4791 frame, or None."""
    l3 = _l3(buf)
    if l3 is None:
        return None
    off, ver = l3
    if ver == 4:
        ihl = (buf[off] & 0x0F) * 4
        proto, ip_len = buf[off + 9], struct.unpack_from(">H", buf, off + 2)[0]
    else:
        ihl = 40
        proto, ip_len = buf[off + 6], 40 + struct.unpack_from(">H", buf, off + 4)[0]
    if proto != 17 or ihl < 20 or off + ip_len > len(buf) or \
            ip_len < ihl + 8 + 12 + 4:
        return None
    if struct.unpack_from(">H", buf, off + ihl + 2)[0] != ops.ROCE_UDP_PORT:
        return None
    return off, ver, ihl, ip_len, off + ihl + 8


def parse(buf):
    """A FEC frame as a dict (BTH fields, FRH fields, payload bytes, ICRC
    verdict), or None if ``buf`` is not a FEC frame. ``problem`` names the
    first thing wrong, or is None."""
    r = _roce(bytes(buf))
    if r is None:
        return None
    off, ver, ihl, ip_len, bth = r
    buf = bytes(buf)
    if buf[bth] not in OPCODE_NAMES:
        return None
    out = {"opcode": buf[bth], "name": OPCODE_NAMES[buf[bth]],
           "dqpn": int.from_bytes(buf[bth + 5:bth + 8], "big"),
           "psn": int.from_bytes(buf[bth + 9:bth + 12], "big"),
           "src": buf[off + 12:off + 16] if ver == 4 else buf[off + 8:off + 24],
           "dst": buf[off + 16:off + 20] if ver == 4 else buf[off + 24:off + 40],
           "problem": None}
    end = off + ip_len
    if end - bth < 12 + FRH_LEN + 4:
        out["problem"] = "FEC frame shorter than BTH + FRH + ICRC"
        return out
    if not icrc.verify(buf[off:end]):
        out["problem"] = "ICRC mismatch"
        return out
    f = buf[bth + 12:bth + 12 + FRH_LEN]
    h = {"type": f[0], "stream": f[1] & 1, "mode": f[2], "k": f[3], "d": f[4],
         "r": f[5], "row": f[6], "len_code": struct.unpack_from(">H", f, 8)[0],
         "block_id": struct.unpack_from(">I", f, 12)[0],
         "anchor": int.from_bytes(f[17:20], "big"),
         "mask": struct.unpack_from(">Q", f, 20)[0],
         "rsvd": (f[1] & 0xFE) or f[7] or f[10] or f[11] or f[16]}
    out.update(h)
    pad = (buf[bth + 1] >> 4) & 3
    body = end - 4 - (bth + 12 + FRH_LEN)
    out["payload"] = buf[bth + 12 + FRH_LEN:end - 4 - pad] if pad <= body else b""
    out["problem"] = frh_problem(h)
    if out["problem"] is None:
        if pad > body:
            out["problem"] = "pad count larger than the payload"
        elif out["opcode"] == OP_NEGOTIATE and (body or h["type"] not in (T_PROPOSE, T_COMMIT)):
            out["problem"] = "negotiation frame with a payload or a repair type"
        elif out["opcode"] == OP_REPAIR and (h["type"] not in (T_XOR, T_RS) or body - pad > DATA_MAX):
            out["problem"] = "repair with a negotiation type or too long"
    return out


def symbol(buf):
    """``(key, psn, symbol_bytes)`` of a covered data frame (requests and READ
    responses; key = (src, dst, dqpn, stream)), or None."""
    buf = bytes(buf)
    r = _roce(buf)
    if r is None:
        return None
    off, ver, ihl, ip_len, bth = r
    op = ops.lookup(buf[bth])
    if op is None or op.transport not in ("RC", "UC"):
        return None
    if op.request:
        stream = 0
    elif op.name.startswith("RC_RDMA_READ_RESPONSE"):
        stream = 1
    else:
        return None
    if ip_len > DATA_MAX:
        return None
    s = bytearray(struct.pack(">H", ip_len) + buf[off:off + ip_len])
    ip = 2
    if ver == 4:
        for i in (1, 8, 10, 11):
            s[ip + i] = 0
    else:
        s[ip] &= 0xF0
        for i in (1, 2, 3, 7):
            s[ip + i] = 0
    s[ip + ihl + 6] = s[ip + ihl + 7] = 0
    src = buf[off + 12:off + 16] if ver == 4 else buf[off + 8:off + 24]
    dst = buf[off + 16:off + 20] if ver == 4 else buf[off + 24:off + 40]
    dqpn = int.from_bytes(buf[bth + 5:bth + 8], "big")
    psn = int.from_bytes(buf[bth + 9:bth + 12], "big")
    return (src, dst, dqpn, stream), psn, bytes(s)


# GF(2^8) with x^8 + x^4 + x^3 + x^2 + 1 (0x11d), as ISA-L.
_EXP = [0] * 512
_LOG = [0] * 256
_x = 1
for _i in range(255):
    _EXP[_i] = _x
    _LOG[_x] = _i
    _x <<= 1
    if _x & 0x100:
        _x ^= 0x11D
for _i in range(255, 512):
    _EXP[_i] = _EXP[_i - 255]


def gf_mul(a, b):
    if a == 0 or b == 0:
        return 0
    return _EXP[_LOG[a] + _LOG[b]]


def gf_inv(a):
    return _EXP[255 - _LOG[a]]


def cauchy_coef(k, row, i):
    """ISA-L's gf_gen_cauchy1_matrix(a, k + r, k): a[(k + row) * k + i] =
    1 / ((k + row) ^ i)."""
    return gf_inv((k + row) ^ i)


def xor_code(symbols):
    """XOR of byte strings, each zero-padded to the longest."""
    n = max(len(s) for s in symbols)
    acc = bytearray(n)
    for s in symbols:
        for j, b in enumerate(s):
            acc[j] ^= b
    return bytes(acc)


def rs_code(symbols, coefs):
    """sum coef_i * symbol_i in GF(2^8), each symbol zero-padded."""
    n = max(len(s) for s in symbols)
    acc = bytearray(n)
    for s, c in zip(symbols, coefs):
        if c == 1:
            for j, b in enumerate(s):
                acc[j] ^= b
            continue
        row = [gf_mul(c, v) for v in range(256)]
        for j, b in enumerate(s):
            acc[j] ^= row[b]
    return bytes(acc)


def expected_repair(h, members):
    """The bytes ``len_code | payload`` a repair with FRH ``h`` must carry
    for the member symbols ``members`` (list of (i, symbol))."""
    syms = [s for _, s in members]
    if h["mode"] == MODE_XOR:
        return xor_code(syms)
    return rs_code(syms, [cauchy_coef(h["k"], h["row"], i) for i, _ in members])


class FecChecker:
    """Keeps the symbols of the last data frames of a capture (bounded) and
    recomputes each repair from its members when it arrives."""

    KEEP = 1 << 16   # data symbols kept (FIFO): a repair follows its members

    def __init__(self):
        self.data = collections.OrderedDict()  # (key, psn) -> [symbol, copies]
        self.counts = {"fec_repair_pkts": 0, "fec_negotiation_pkts": 0,
                       "fec_repairs_checked": 0, "fec_repairs_match": 0,
                       "fec_repairs_mismatch": 0, "fec_repairs_uncheckable": 0}
        self.first_mismatch = None

    def add_data(self, buf):
        s = symbol(buf)
        if s is None:
            return
        key, psn, sym = s
        e = self.data.get((key, psn))
        if e is None:
            self.data[(key, psn)] = [sym, 1]
            if len(self.data) > self.KEEP:
                self.data.popitem(last=False)
        else:
            e[1] += 1

    def add_fec(self, idx, f):
        """Account a parsed FEC frame without a problem; a repair is checked
        against the XOR / RS of its members if they are all in the capture."""
        if f["opcode"] == OP_NEGOTIATE:
            self.counts["fec_negotiation_pkts"] += 1
            return
        self.counts["fec_repair_pkts"] += 1
        key = (f["src"], f["dst"], f["dqpn"], f["stream"])
        members, resent = [], False
        for i in range(64):
            if f["mask"] >> i & 1:
                e = self.data.get((key, (f["psn"] + i * f["d"]) & PSN_MASK))
                if e is None:
                    self.counts["fec_repairs_uncheckable"] += 1
                    return
                resent |= e[1] > 1
                members.append((i, e[0]))
        want = expected_repair(f, members)
        got = struct.pack(">H", f["len_code"]) + f["payload"]
        n = max(len(want), len(got))
        if want.ljust(n, b"\0") == got.ljust(n, b"\0"):
            self.counts["fec_repairs_checked"] += 1
            self.counts["fec_repairs_match"] += 1
        elif resent:
            # a member seen twice: the copy kept may be a retransmission (new
            # IP identification), not the frame the encoder coded
            self.counts["fec_repairs_uncheckable"] += 1
        else:
            self.counts["fec_repairs_checked"] += 1
            self.counts["fec_repairs_mismatch"] += 1
            if self.first_mismatch is None:
                self.first_mismatch = idx
