"""Send lag as the wire sees it, the same way for every tool.

Only pelt reports how late it sent; the other tools would be held to their
completions alone, and a tool that sends in bursts (a token bucket with a
millisecond timer) would pass a rate it spreads unevenly. So during a
ceiling step tcpdump records each request's packet to nginx (the segments
with data: one per HTTP/1.1 request), and the lag of the i-th request is
how much later than usual it left, against an evenly spaced schedule at
the offered rate:

    o_i = t_i - i / R          (its offset from the schedule)
    lag_i = max(0, o_i - median(o))

The wire cannot say when a tool meant its schedule to start, so the
typical request's offset stands for "on time": a tool that sends every
request 0.3 ms late looks punctual (nothing outside the tool can see
that), but one whose requests leave in bursts, or late after a pause,
shows the spread. A request sent early counts as on time; the ones
after a burst's early sends wait for the next and show as late. A tool
that sends fewer requests than the rate asks for falls ever further
behind and fails on its count first. pelt's own send lag (against the
schedule it knows) is reported beside it.

tcpdump runs on nginx's CPU (the tool's is measured) and writes headers
only to a file, in immediate mode: otherwise the packets of the ring's
last, unfilled block are never read when it is stopped. A capture the
kernel dropped packets from is not judged.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import struct
import subprocess
import time
from pathlib import Path
from typing import Optional

TCPDUMP = shutil.which("tcpdump") or "/usr/bin/tcpdump"


def available() -> bool:
    return os.path.exists(TCPDUMP) and os.geteuid() == 0


class Capture:
    """tcpdump on loopback for the requests to `port`, into `path`."""

    def __init__(self, port: int, path: Path, cpu: Optional[int]):
        self.path = path
        self.err = path.with_suffix(".err")
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        # Data segments to nginx's port: TCP header length from the data
        # offset, data present when the IP length exceeds the headers.
        data = f"tcp dst port {port} and (ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) > 0"
        argv = pin + [TCPDUMP, "-i", "lo", "-n", "-s", "64", "-B", "65536", "-U", "--immediate-mode",
                      "--time-stamp-precision", "nano", "-w", str(path), data]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"),
                                     start_new_session=True)
        # tcpdump says "listening on" once its filter is in place.
        end = time.monotonic() + 5
        while time.monotonic() < end and "listening on" not in self.err.read_text():
            if self.proc.poll() is not None:
                raise RuntimeError(f"tcpdump exited: {self.err.read_text().strip()}")
            time.sleep(0.01)

    def stop(self) -> dict:
        """Stops tcpdump; the packets' times (ns) and how many it dropped."""
        # Let the last packets reach the file before asking it to finish.
        time.sleep(0.2)
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        err = self.err.read_text()
        dropped = sum(int(n) for n in re.findall(r"(\d+) packets? dropped by (?:kernel|interface)", err))
        return {"times": read_times(self.path), "dropped": dropped}


def read_times(path: Path) -> list[int]:
    """Every packet's time in a pcap file, ns, in file order."""
    data = path.read_bytes() if path.exists() else b""
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    scale = {0xA1B23C4D: 1, 0xA1B2C3D4: 1000}.get(magic)
    if scale is None:
        raise RuntimeError(f"{path} is not a little-endian pcap (magic {magic:#x})")
    times, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
        times.append(sec * 1_000_000_000 + frac * scale)
        off += 16 + incl
    return times


def lag(times: list[int], rate: float) -> dict:
    """The lag of each request against an evenly spaced schedule at `rate`
    (see the module's docstring): its p50, p99 and max in seconds."""
    if len(times) < 2:
        return {"wire_requests": len(times)}
    times = sorted(times)
    gap = 1e9 / rate
    offsets = [t - i * gap for i, t in enumerate(times)]
    usual = sorted(offsets)[len(offsets) // 2]
    lags = sorted(max(0.0, o - usual) for o in offsets)

    def q(p: float) -> float:
        return lags[min(len(lags) - 1, int(p * len(lags)))] / 1e9

    return {
        "wire_requests": len(times),
        "wire_lag_p50_s": q(0.50),
        "wire_lag_p99_s": q(0.99),
        "wire_lag_max_s": lags[-1] / 1e9,
    }
