"""A minimal DPDK telemetry v2 client (what DPDK's usertools/dpdk-telemetry.py does),
for changing a running lossy-emu's SPEC (/lossy_emu/set, docs/lossy-emu.md section 8)."""
import json
import socket
import time


def socket_path(file_prefix):
    """The telemetry socket of a DPDK process started with --file-prefix (as root)."""
    return f"/var/run/dpdk/{file_prefix}/dpdk_telemetry.v2"


class Telemetry:
    """One connection to a DPDK process's telemetry socket. @p alive (a callable) ends
    the wait for the socket early when the process has died."""

    def __init__(self, path, timeout=10.0, alive=None):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.connect(path)
                break
            except OSError as e:
                self.s.close()
                if time.monotonic() > deadline or (alive is not None and not alive()):
                    raise OSError(f"no telemetry socket at {path} within {timeout} s (is the "
                                  "process running, and telemetry not disabled by its EAL "
                                  "flags?)") from e
                time.sleep(0.05)
        self.info = json.loads(self.s.recv(1 << 16).decode())
        self.max = self.info.get("max_output_len", 16384)

    def cmd(self, text):
        """The whole reply: {command: value}."""
        self.s.send(text.encode())
        return json.loads(self.s.recv(self.max).decode())

    def get(self, text):
        """The reply's value (None for a command the process refused)."""
        reply = self.cmd(text)
        key = text.split(",")[0]
        if key not in reply:
            raise KeyError(f"telemetry reply to {text!r} lacks {key!r}: {reply}")
        return reply[key]

    def close(self):
        self.s.close()
