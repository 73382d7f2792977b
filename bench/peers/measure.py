"""The measurements: one run of one tool under one test, with its CPU time,
peak memory, nginx's and other processes' CPU, bounded in time."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from .common import CLK_TCK, HAVE_TIME, NOISY_OTHER_CPU, RUN_SLACK_S, log
from .nginx import Nginx
from . import wirelag
from .system import proc_cpu_ticks, process_ticks, system_busy_ticks, top_others
from .tools import Spec, Tool


class Quiet:
    """Waits before each run until other processes leave the CPUs alone.

    On a shared machine a compile or a test on either core distorts both the
    tool and nginx. Before each run this samples /proc/stat for 1 s and, while
    more than NOISY_OTHER_CPU of a core is busy, keeps waiting, up to
    `per_run` seconds per run and `total` seconds over the whole benchmark;
    after that the run goes ahead (and is flagged noisy if others kept on)."""

    def __init__(self, per_run: float, total: float):
        self.per_run = per_run
        self.budget = total

    def wait(self) -> float:
        if self.per_run <= 0 or self.budget <= 0:
            time.sleep(0.5)
            return 0.0
        start = time.monotonic()
        limit = start + min(self.per_run, self.budget)
        logged = False
        while True:
            before, busy0 = process_ticks(), system_busy_ticks()
            time.sleep(1.0)
            busy = (system_busy_ticks() - busy0) / CLK_TCK
            if busy <= NOISY_OTHER_CPU or time.monotonic() >= limit:
                break
            if not logged:
                top = ", ".join(f"{n} {c:.0%}" for n, c in top_others(before, process_ticks(), {os.getpid()}, 1.0))
                log(f"  waiting for other processes to leave the CPUs ({busy:.0%} of a core busy: {top or '?'})")
                logged = True
        waited = time.monotonic() - start - 1.0
        self.budget -= max(0.0, waited)
        if waited > 0.5:
            log(f"  waited {waited:.0f} s" + ("" if busy <= NOISY_OTHER_CPU else "; still busy, running anyway"))
        return max(0.0, waited)


QUIET = Quiet(0, 0)


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted(f"signal {signum}")


CURRENT: dict[str, Any] = {"proc": None}


class Child:
    """A started tool, reaped with wait4 so that its resource usage is kept
    (the fallback when /usr/bin/time is missing)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.rusage: Optional[Any] = None

    def poll(self) -> Optional[int]:
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            pid, status, rusage = os.wait4(self.proc.pid, os.WNOHANG)
        except ChildProcessError:
            self.proc.returncode = -1
            return -1
        if pid == 0:
            return None
        self.rusage = rusage
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return self.proc.returncode

    def wait_until(self, deadline: float) -> bool:
        """True once the process has exited; False if `deadline` came first."""
        while self.poll() is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def kill(self) -> None:
        """SIGKILL to the tool's whole process group (it has its own session)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.wait_until(time.monotonic() + 5)


def run_one(
    test: str,
    tool: Tool,
    spec: Spec,
    d: float,
    nginx: Nginx,
    workdir: Path,
    client_cpu: Optional[int],
    stall: Optional[tuple[float, float]] = None,
    extra: Optional[dict] = None,
    wire: Optional[tuple[float, Optional[int]]] = None,
) -> dict:
    """Runs one measurement and returns its record (never raises for a tool failure).

    `wire`: (offered rate, tcpdump's CPU) to time the requests' departures
    on the wire as well (see wirelag)."""
    record: dict[str, Any] = {"test": test, "tool": tool.name, "argv": spec.argv, "duration_s": d}
    record.update(extra or {})
    rundir = workdir / "run"
    shutil.rmtree(rundir, ignore_errors=True)
    rundir.mkdir()
    # Specs that write files (vegeta) point into workdir; clear the old ones.
    (workdir / "vegeta.bin").unlink(missing_ok=True)
    time_file = rundir / "time.txt"
    pin = ["taskset", "-c", str(client_cpu)] if client_cpu is not None else []
    # taskset and time both exec or wait: the CPU and RSS are the tool's own.
    # %c %w: involuntary and voluntary context switches.
    timer = ["/usr/bin/time", "-f", "%U %S %M %c %w", "-o", str(time_file)] if HAVE_TIME else []
    argv = pin + timer + spec.argv
    env = dict(os.environ, **spec.env)
    stdout_path, stderr_path = rundir / "stdout", rundir / "stderr"

    record["waited_s"] = QUIET.wait()  # also lets the previous run's sockets settle
    procs0 = process_ticks()
    nginx0 = nginx.cpu_ticks()
    capture = None
    if wire is not None:
        try:
            capture = wirelag.Capture(nginx.port, rundir / "wire.pcap", wire[1])
        except (OSError, RuntimeError) as e:
            record["wire_error"] = str(e)
    sys0 = system_busy_ticks()
    with open(stdout_path, "w") as out, open(stderr_path, "w") as err:
        start = time.monotonic()
        proc = Child(
            subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True
            )
        )
    CURRENT["proc"] = proc
    deadline = start + d + RUN_SLACK_S
    window: list[tuple[float, int]] = []
    try:
        if stall is not None:
            at, length = stall
            time.sleep(max(0.0, start + at - time.monotonic()))
            if proc.poll() is None:
                nginx.freeze()
                try:
                    time.sleep(length)
                finally:
                    nginx.thaw()
                record["stall"] = {"at_s": at, "length_s": length}
        else:
            # nginx's share of its core over the steady middle of the run.
            lead = min(1.0, d * 0.25)
            for t in (lead, d - min(0.5, d * 0.25)):
                time.sleep(max(0.0, start + t - time.monotonic()))
                if proc.poll() is not None:
                    break
                window.append((time.monotonic(), nginx.cpu_ticks()))
        if not proc.wait_until(deadline):
            proc.kill()
            record["error"] = f"killed after {d + RUN_SLACK_S:.0f} s"
    finally:
        CURRENT["proc"] = None
        if proc.poll() is None:
            proc.kill()
    wall = time.monotonic() - start
    nginx1 = nginx.cpu_ticks()
    sys1 = system_busy_ticks()
    procs1 = process_ticks()
    capture_cpu_s = 0.0
    if capture is not None and wire is not None:
        capture_cpu_s = proc_cpu_ticks(capture.proc.pid) / CLK_TCK
        seen = capture.stop()
        if seen["dropped"]:
            record["wire_error"] = f"tcpdump dropped {seen['dropped']} packets"
        else:
            record.update(wirelag.lag(seen["times"], wire[0]))

    out_text = stdout_path.read_text(errors="replace")
    err_text = stderr_path.read_text(errors="replace")
    record["wall_s"] = wall
    record["exit_code"] = proc.proc.returncode
    try:
        if HAVE_TIME:
            user, sys_, rss_kb, invol, vol = time_file.read_text().split()[-5:]
        else:
            assert proc.rusage is not None
            ru = proc.rusage
            user, sys_, rss_kb, invol, vol = ru.ru_utime, ru.ru_stime, ru.ru_maxrss, ru.ru_nivcsw, ru.ru_nvcsw
        record["cpu_s"] = float(user) + float(sys_)
        record["cpu_user_s"], record["cpu_sys_s"] = float(user), float(sys_)
        record["rss_kb"] = int(rss_kb)
        record["invol_csw"], record["vol_csw"] = int(invol), int(vol)
    except (OSError, ValueError, AssertionError):
        record.setdefault("error", "no CPU time for the tool (/usr/bin/time output or rusage)")
    nginx_cpu_s = (nginx1 - nginx0) / CLK_TCK
    record["nginx_cpu_s"] = nginx_cpu_s
    if len(window) == 2 and window[1][0] > window[0][0]:
        record["nginx_busy"] = (window[1][1] - window[0][1]) / CLK_TCK / (window[1][0] - window[0][0])
    else:
        record["nginx_busy"] = nginx_cpu_s / wall
    if "cpu_s" in record:
        record["client_busy"] = record["cpu_s"] / wall
        other = (sys1 - sys0) / CLK_TCK - record["cpu_s"] - nginx_cpu_s - capture_cpu_s
        record["other_cpu"] = max(0.0, other) / wall
        record["noisy"] = record["other_cpu"] > NOISY_OTHER_CPU
        exclude = {nginx.worker, os.getpid(), proc.proc.pid} | ({capture.proc.pid} if capture else set())
        record["other_top"] = top_others(procs0, procs1, exclude, wall)
    if proc.proc.returncode != 0 and "error" not in record:
        record["error"] = f"exit code {proc.proc.returncode}: {tail(err_text or out_text)}"
    if "error" not in record:
        try:
            parsed = spec.parse(out_text, err_text, workdir)
            record.update(
                requests=parsed.requests,
                rate=parsed.rate,
                p50_s=parsed.p50,
                p99_s=parsed.p99,
                errors=parsed.errors,
                send_lag_p99_s=parsed.send_lag_p99,
            )
            if parsed.requests <= 0:
                record["error"] = "no requests completed"
            elif "cpu_s" in record:
                record["cpu_us_per_req"] = record["cpu_s"] * 1e6 / parsed.requests
                # Preemptions per request: a client that wakes other work
                # on its own CPU (kernel workers, its own threads) pays
                # for it here.
                record["invol_csw_per_req"] = record["invol_csw"] / parsed.requests
        except Exception as e:  # noqa: BLE001 - any parse failure is data
            record["error"] = f"could not parse output ({type(e).__name__}: {e}): {tail(out_text or err_text)}"
    (workdir / "vegeta.bin").unlink(missing_ok=True)
    return record


def tail(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text[-n:] if len(text) > n else text


def stall_truth(rate: float, d: float, at: float, length: float) -> float:
    """p99 response time if requests leave at t_i = i/rate and every request
    scheduled during the stall [at, at+length) waits until it ends (others
    take ~0). Rank as HdrHistogram: the value at or below which 99 % lie."""
    n = int(round(rate * d))
    delays = []
    for i in range(n):
        t = i / rate
        delays.append(at + length - t if at <= t < at + length else 0.0)
    delays.sort()
    rank = max(1, math.ceil(0.99 * n))
    return delays[rank - 1]
