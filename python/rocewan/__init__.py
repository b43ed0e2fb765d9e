"""rocewan: Python side of the RoCEv2 WAN testbed.

* :mod:`rocewan.layers`   Scapy layers for the IB extension transport headers
* :mod:`rocewan.icrc`     RoCEv2 ICRC for IPv4 and IPv6
* :mod:`rocewan.opcodes`  the BTH opcode table
* :mod:`rocewan.frame`    decode and check one frame (``rocewire parse`` shape)
* :mod:`rocewan.build`    build frames from the same shape
* :mod:`rocewan.validate` the ``validate`` command
* :mod:`rocewan.gen`, :mod:`rocewan.golden`  random and golden captures

Run ``python -m rocewan --help``.
"""

__version__ = "0.1.0"
