"""A minimal DPDK telemetry v2 client (what DPDK's usertools/dpdk-telemetry.py does),
for changing a running lossy-emu's SPEC (/lossy_emu/set, docs/lossy-emu.md section 8)."""
import json
import socket
import time


def socket_path(file_prefix):
    """The telemetry socket of a DPDK process started with --file-prefix (as root)."""
    return f"/var/run/dpdk/{file_prefix}/dpdk_telemetry.v2"


class Telemetry:
    def __init__(self, path, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.info = json.loads(self.s.recv(1 << 16).decode())
        self.max = self.info.get("max_output_len", 16384)

    def cmd(self, text):
        self.s.send(text.encode())
        return json.loads(self.s.recv(self.max).decode())

    def close(self):
        self.s.close()
