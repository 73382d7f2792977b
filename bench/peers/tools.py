"""The tools' adapters: for each peer, the command line of each test and
the parser of its output into one `Parsed` record."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from .common import CONNECTIONS
from .system import find_binary


@dataclass
class Parsed:
    """What a tool reports about one run (latencies in seconds)."""

    requests: int
    rate: Optional[float] = None
    p50: Optional[float] = None
    p99: Optional[float] = None
    errors: int = 0
    send_lag_p99: Optional[float] = None


@dataclass
class Spec:
    """One run to make: the command, and how to read its output."""

    argv: list[str]
    parse: Callable[[str, str, Path], Parsed]
    env: dict[str, str] = field(default_factory=dict)
    stdin_file: Optional[Path] = None


UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def seconds(value: str, unit: str) -> float:
    return float(value) * UNITS[unit]


def must(match: Optional[re.Match], what: str) -> re.Match:
    if match is None:
        raise ValueError(f"output has no {what}")
    return match


def parse_wrk(out: str, _err: str, _dir: Path) -> Parsed:
    requests = int(must(re.search(r"^\s*(\d+) requests in ", out, re.M), "request count").group(1))
    rate = float(must(re.search(r"^Requests/sec:\s*([\d.]+)", out, re.M), "Requests/sec").group(1))
    pct = {
        m.group(1): seconds(m.group(2), m.group(3))
        for m in re.finditer(r"^\s*(50|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$", out, re.M)
    }
    errors = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors += int(m.group(1))
    return Parsed(requests, rate, pct.get("50"), pct.get("99"), errors)


def parse_ab(out: str, _err: str, _dir: Path) -> Parsed:
    requests = int(must(re.search(r"^Complete requests:\s*(\d+)", out, re.M), "Complete requests").group(1))
    rate = float(must(re.search(r"^Requests per second:\s*([\d.]+)", out, re.M), "Requests per second").group(1))
    # ab gives percentiles in whole milliseconds.
    pct = {m.group(1): int(m.group(2)) / 1000 for m in re.finditer(r"^\s*(50|99)%\s+(\d+)\s*$", out, re.M)}
    errors = 0
    m = re.search(r"^Failed requests:\s*(\d+)", out, re.M)
    if m:
        errors += int(m.group(1))
    m = re.search(r"^Non-2xx responses:\s*(\d+)", out, re.M)
    if m:
        errors += int(m.group(1))
    return Parsed(requests, rate, pct.get("50"), pct.get("99"), errors)


def parse_hey(out: str, _err: str, _dir: Path) -> Parsed:
    rate = float(must(re.search(r"Requests/sec:\s*([\d.]+)", out), "Requests/sec").group(1))
    codes = [int(m.group(1)) for m in re.finditer(r"^\s*\[\d{3}\]\s+(\d+) responses", out, re.M)]
    errors_section = out.split("Error distribution:", 1)
    errors = 0
    if len(errors_section) == 2:
        errors = sum(int(m.group(1)) for m in re.finditer(r"^\s*\[(\d+)\]", errors_section[1], re.M))
    # hey 0.1.5 prints "50%% in".
    pct = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s*(50|99)%+ in ([\d.]+) secs", out, re.M)}
    return Parsed(sum(codes) + errors, rate, pct.get("50"), pct.get("99"), errors)


def parse_vegeta(_out: str, _err: str, workdir: Path) -> Parsed:
    vegeta = find_binary("vegeta")
    assert vegeta is not None
    report = subprocess.run(
        [vegeta, "report", "-type=json", str(workdir / "vegeta.bin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if report.returncode != 0:
        raise ValueError(f"vegeta report failed: {report.stderr.strip()}")
    data = json.loads(report.stdout)
    lat = data["latencies"]
    requests = int(data["requests"])
    errors = requests - round(requests * float(data.get("success", 0)))
    return Parsed(requests, float(data["rate"]), lat["50th"] / 1e9, lat["99th"] / 1e9, errors)


def parse_bombardier(out: str, _err: str, _dir: Path) -> Parsed:
    data = json.loads(out[out.index("{") :])
    result = data["result"]
    requests = sum(int(result.get(k, 0)) for k in ["req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others"])
    errors = sum(int(result.get(k, 0)) for k in ["req4xx", "req5xx", "others"])
    pct = result["latency"].get("percentiles", {})
    # bombardier's latencies are in microseconds.
    p50 = pct["50"] / 1e6 if "50" in pct else None
    p99 = pct["99"] / 1e6 if "99" in pct else None
    taken = float(result.get("timeTakenSeconds") or 0)
    rate = requests / taken if taken > 0 else float(result["rps"]["mean"])
    return Parsed(requests, rate, p50, p99, errors)


def parse_oha(out: str, _err: str, _dir: Path) -> Parsed:
    data = json.loads(out[out.index("{") :])
    codes = data.get("statusCodeDistribution", {})
    # Requests still in flight at the deadline are cancelled and listed as
    # errors; they were never completed, so they are neither.
    errors_by_kind = {
        k: v for k, v in data.get("errorDistribution", {}).items() if "aborted due to deadline" not in k
    }
    ok = sum(int(v) for k, v in codes.items() if k.startswith(("2", "3")))
    requests = sum(int(v) for v in codes.values()) + sum(int(v) for v in errors_by_kind.values())
    pct = data.get("latencyPercentiles", {})
    return Parsed(
        requests,
        float(data["summary"]["requestsPerSec"]),
        pct.get("p50"),
        pct.get("p99"),
        requests - ok,
    )


def parse_pelt(out: str, _err: str, _dir: Path) -> Parsed:
    data = json.loads(out)
    headline = data.get("headline", "response_time")
    latency = data["latency"].get(headline) or data["latency"]["response_time"]
    pct = latency["percentiles_s"]
    send_lag = None
    if data.get("mode") == "rate":
        send_lag = data["latency"]["send_lag"]["percentiles_s"]["p99"]
    return Parsed(
        int(data["requests"]["total"]),
        float(data["requests"]["rate"]),
        pct["p50"],
        pct["p99"],
        int(data["requests"]["failed"]),
        send_lag,
    )


def dur(seconds_: float) -> str:
    """A duration flag value: whole seconds as `10s`, else milliseconds."""
    if float(seconds_).is_integer():
        return f"{int(seconds_)}s"
    return f"{int(round(seconds_ * 1000))}ms"


class Tool:
    name = ""
    binary = ""
    rate_capable = True
    # Only in the h2 test (h2load has no HTTP/1.1 or rate mode).
    h2_only = False
    # In the close test (a connection per request; see `close`).
    can_close = False
    # Only in the close test (siege, whose other modes add nothing).
    close_only = False

    def __init__(self, path: str):
        self.path = path

    def version(self) -> str:
        return ""

    def max_load(self, url: str, d: float, workdir: Path) -> Spec:
        raise NotImplementedError

    def rate(self, url: str, r: float, d: float, workdir: Path) -> Spec:
        raise NotImplementedError

    def stall(self, url: str, r: float, d: float, workdir: Path) -> Spec:
        """The stall test: the rate run, unless the tool needs other settings."""
        return self.rate(url, r, d, workdir) if self.rate_capable else self.max_load(url, d, workdir)

    def close(self, url: str, c: int, d: float, workdir: Path) -> Spec:
        """The close test (tools with `can_close`): flat out with `c`
        connections, a new TCP connection per request."""
        raise NotImplementedError


def first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout or "") + (out.stderr or "")
    return text.strip().splitlines()[0] if text.strip() else "?"


def go_module_version(path: str) -> str:
    go = find_binary("go") or "/usr/local/go/bin/go"
    try:
        out = subprocess.run([go, "version", "-m", path], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    m = re.search(r"^\s*mod\s+\S+\s+(\S+)", out.stdout, re.M)
    return m.group(1) if m else "?"


class Wrk(Tool):
    name = binary = "wrk"
    rate_capable = False
    can_close = True

    def version(self) -> str:
        m = re.search(r"wrk (\S+)", first_line([self.path, "-v"]))
        return m.group(1) if m else "?"

    def max_load(self, url, d, workdir):
        argv = [self.path, "-t1", f"-c{CONNECTIONS}", f"-d{dur(d)}", "--latency", url]
        return Spec(argv, parse_wrk)

    def close(self, url, c, d, workdir):
        # wrk keeps connections alive unless the request says otherwise:
        # then nginx closes each after its response and wrk reconnects.
        argv = [self.path, "-t1", f"-c{c}", f"-d{dur(d)}", "--latency", "-H", "Connection: close", url]
        return Spec(argv, parse_wrk)


class Ab(Tool):
    name = "ab"
    binary = "ab"
    rate_capable = False
    can_close = True

    def version(self) -> str:
        m = re.search(r"Version (\S+)", first_line([self.path, "-V"]))
        return m.group(1) if m else "?"

    def max_load(self, url, d, workdir):
        # -t stops after d seconds; -n only lifts ab's default cap of 50,000.
        argv = [self.path, "-k", f"-c{CONNECTIONS}", f"-t{max(1, round(d))}", "-n", "100000000", url]
        return Spec(argv, parse_ab)

    def close(self, url, c, d, workdir):
        # ab's default: HTTP/1.0 without keep-alive, a connection per request.
        argv = [self.path, f"-c{c}", f"-t{max(1, round(d))}", "-n", "100000000", url]
        return Spec(argv, parse_ab)


GO_ENV = {"GOMAXPROCS": "1"}


class Hey(Tool):
    name = binary = "hey"

    def version(self) -> str:
        return go_module_version(self.path)

    def max_load(self, url, d, workdir):
        argv = [self.path, "-z", dur(d), "-c", str(CONNECTIONS), "-cpus", "1", url]
        return Spec(argv, parse_hey, GO_ENV)

    def rate(self, url, r, d, workdir):
        # hey's -q is per worker.
        per_worker = f"{r / CONNECTIONS:g}"
        argv = [self.path, "-z", dur(d), "-c", str(CONNECTIONS), "-q", per_worker, "-cpus", "1", url]
        return Spec(argv, parse_hey, GO_ENV)


class Vegeta(Tool):
    name = binary = "vegeta"

    def version(self) -> str:
        m = re.search(r"Version: (\S+)", subprocess.run([self.path, "-version"], capture_output=True, text=True).stdout)
        return m.group(1) if m and m.group(1) != "unknown" else go_module_version(self.path)

    def attack(self, url: str, d: float, workdir: Path, pacing: list[str]) -> Spec:
        targets = workdir / "vegeta-targets.txt"
        targets.write_text(f"GET {url}\n")
        argv = [
            self.path,
            "attack",
            f"-targets={targets}",
            f"-duration={dur(d)}",
            f"-output={workdir / 'vegeta.bin'}",
            *pacing,
        ]
        return Spec(argv, parse_vegeta, GO_ENV)

    def max_load(self, url, d, workdir):
        return self.attack(url, d, workdir, ["-rate=0", f"-workers={CONNECTIONS}", f"-max-workers={CONNECTIONS}"])

    def rate(self, url, r, d, workdir):
        # Bounded: vegeta's default unbounded workers collapse at 20k/s on one
        # core (thousands of connections, most requests failing).
        return self.attack(url, d, workdir, [f"-rate={r:g}/1s", f"-max-workers={CONNECTIONS}"])

    def stall(self, url, r, d, workdir):
        # vegeta's own default (workers unbounded): how it keeps sending on
        # schedule through a stall, which is what this test is about.
        return self.attack(url, d, workdir, [f"-rate={r:g}/1s"])


class Bombardier(Tool):
    name = binary = "bombardier"

    def version(self) -> str:
        m = re.search(r"version (\S+)", first_line([self.path, "--version"]))
        return m.group(1) if m else "?"

    def max_load(self, url, d, workdir):
        argv = [self.path, "-c", str(CONNECTIONS), "-d", dur(d), "-l", "-p", "r", "-o", "json", url]
        return Spec(argv, parse_bombardier, GO_ENV)

    def rate(self, url, r, d, workdir):
        argv = [self.path, "-c", str(CONNECTIONS), "-d", dur(d), "-r", f"{round(r)}", "-l", "-p", "r", "-o", "json", url]
        return Spec(argv, parse_bombardier, GO_ENV)


class Oha(Tool):
    name = binary = "oha"

    def __init__(self, path: str, latency_correction: bool = False):
        super().__init__(path)
        self.latency_correction = latency_correction
        if latency_correction:
            self.name = "oha+lc"

    def version(self) -> str:
        m = re.search(r"oha (\S+)", first_line([self.path, "--version"]))
        return m.group(1) if m else "?"

    def base(self, d: float) -> list[str]:
        argv = [self.path, "-z", dur(d), "-c", str(CONNECTIONS), "--no-tui", "--output-format", "json"]
        if self.latency_correction:
            argv.append("--latency-correction")
        return argv

    def max_load(self, url, d, workdir):
        return Spec(self.base(d) + [url], parse_oha)

    def rate(self, url, r, d, workdir):
        return Spec(self.base(d) + ["-q", f"{r:g}", url], parse_oha)


# pelt's send window for its bombardier-like variant in the rate test: about
# the spread of bombardier's sends on the wire (p99 ~4-5 ms late).
WIDE_WINDOW = "10ms"


class Pelt(Tool):
    name = binary = "pelt"
    can_close = True

    def __init__(self, path: str, send_window: Optional[str] = None, full_handshakes: bool = False):
        super().__init__(path)
        self.send_window = send_window
        if send_window:
            self.name = f"pelt-w{send_window}"
        # The tls-close test's pelt with every handshake full
        # (--no-tls-resume), as ab's and siege's are.
        if full_handshakes:
            self.name = "pelt-full"

    def version(self) -> str:
        m = re.search(r"pelt (\S+)", first_line([self.path, "--version"]))
        return m.group(1) if m else "?"

    def base(self, url: str, d: float) -> list[str]:
        return [self.path, "run", url, "-c", str(CONNECTIONS), "-t", "1", "-d", dur(d), "--format", "json"]

    def max_load(self, url, d, workdir):
        return Spec(self.base(url, d), parse_pelt)

    def rate(self, url, r, d, workdir):
        window = ["--send-window", self.send_window] if self.send_window else []
        return Spec(self.base(url, d) + ["--rate", f"{r:g}"] + window, parse_pelt)

    def close(self, url, c, d, workdir):
        argv = [self.path, "run", url, "--no-keepalive", "-c", str(c), "-t", "1", "-d", dur(d), "--format", "json"]
        # The tls-close test: nginx's self-signed certificate (ab, siege and
        # wrk do not check certificates).
        if url.startswith("https://"):
            argv.append("--insecure")
            if self.name == "pelt-full":
                argv.append("--no-tls-resume")
        return Spec(argv, parse_pelt)

    def h2(self, url: str, d: float, tls: bool) -> Spec:
        argv = [self.path, "run", url, "--http2", "-c", str(H2_CONNECTIONS), "--streams", str(H2_STREAMS),
                "-t", "1", "-d", dur(d), "--format", "json"]
        return Spec(argv + (["--insecure"] if tls else []), parse_pelt)


def parse_h2load(out: str, _err: str, _dir: Path) -> Parsed:
    m = must(
        re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                  out, re.M),
        "requests line",
    )
    done, failed, errored = int(m.group(3)), int(m.group(5)), int(m.group(6))
    rate = float(must(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out), "req/s").group(1))
    return Parsed(done, rate, None, None, failed + errored)


class H2load(Tool):
    """nghttp2's h2load: the HTTP/2 reference (Debian nghttp2-client)."""

    name = binary = "h2load"
    rate_capable = False
    h2_only = True

    def version(self) -> str:
        m = re.search(r"nghttp2/(\S+)", first_line([self.path, "--version"]))
        return m.group(1) if m else "?"

    def h2(self, url: str, d: float, _tls: bool) -> Spec:
        return Spec([self.path, "-c", str(H2_CONNECTIONS), "-m", str(H2_STREAMS), "-D", f"{max(1, round(d))}", url], parse_h2load)


# The h2 test's shape: h2load's -c 4 -m 8 (pelt: -c 4 --streams 8).
H2_CONNECTIONS = 4
H2_STREAMS = 8


class PeltH3(Pelt):
    """pelt in the h3 test: HTTP/3 (or HTTP/2 over TLS, its reference)
    against Caddy, -c 4 --streams 8; `gso=False` runs it with
    PELT_QUIC_GSO=0 (quinn sends without segmentation offload)."""

    def __init__(self, path: str, gso: bool = True):
        super().__init__(path)
        self.gso = gso
        if not gso:
            self.name = "pelt-nogso"

    def h3(self, url: str, d: float, proto: str) -> Spec:
        argv = [self.path, "run", url, "--http3" if proto == "h3" else "--http2", "--insecure",
                "-c", str(H2_CONNECTIONS), "--streams", str(H2_STREAMS), "-t", "1", "-d", dur(d), "--format", "json"]
        return Spec(argv, parse_pelt, {} if self.gso else {"PELT_QUIC_GSO": "0"})


class OhaH3(Oha):
    """oha built with its experimental `http3` feature, in the h3 test only."""

    name = "oha-h3"
    binary = "oha-h3"
    rate_capable = False
    h2_only = True

    def h3(self, url: str, d: float, proto: str) -> Spec:
        version = "3" if proto == "h3" else "2"
        argv = [self.path, "-z", dur(d), "-c", str(H2_CONNECTIONS), "-p", str(H2_STREAMS), "--http-version", version,
                "--insecure", "--no-tui", "--output-format", "json", url]
        return Spec(argv, parse_oha)


def parse_siege(out: str, err: str, _dir: Path) -> Parsed:
    # siege 4 prints its summary as JSON (json_output), on stdout.
    text = out if "{" in out else err
    data = json.loads(text[text.index("{") : text.rindex("}") + 1])
    done = int(data["successful_transactions"])
    failed = int(data["failed_transactions"])
    return Parsed(done + failed, float(data["transaction_rate"]), errors=failed)


class Siege(Tool):
    """siege in benchmark mode (-b: no delay between requests) with
    Debian's default `connection = close`, stated in a private rc file so
    that no user's ~/.siege/siege.conf changes it."""

    name = binary = "siege"
    rate_capable = False
    can_close = True
    close_only = True

    def version(self) -> str:
        m = re.search(r"SIEGE (\S+)", first_line([self.path, "--version"]))
        return m.group(1) if m else "?"

    def close(self, url, c, d, workdir):
        rc = workdir / "siegerc"
        rc.write_text(
            "connection = close\nprotocol = HTTP/1.1\nlogging = false\nshow-logfile = false\n"
            "verbose = false\nquiet = true\njson_output = true\nlimit = 1000\n"
        )
        argv = [self.path, "-R", str(rc), "-b", "-c", str(c), "-t", f"{max(1, round(d))}S", url]
        # siege writes a template to $HOME/.siege on its first run: a
        # private HOME keeps the user's untouched.
        return Spec(argv, parse_siege, {"HOME": str(workdir)})


TOOL_CLASSES = {"wrk": Wrk, "ab": Ab, "hey": Hey, "vegeta": Vegeta, "bombardier": Bombardier, "oha": Oha, "pelt": Pelt, "h2load": H2load,
                "oha-h3": OhaH3, "siege": Siege}
