"""The command line and the order of runs: rounds of every tool and test in
a seeded shuffle, results saved after each run."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from . import measure
from . import ceiling, wirelag
from .caddy import Caddy, PeltServe
from .common import ALL_TOOLS, CLOSE_CONNECTIONS, CONNECTIONS, OHA_H3, REPO, log
from .tools import Pelt
from .measure import CURRENT, Interrupted, Quiet, on_signal, run_one, stall_truth
from .nginx import Nginx
from .report import fmt_lat, render, summarise_all
from .scale import run_scale
from .system import find_binary, machine_info, pick_cpus
from .tools import WIDE_WINDOW, Oha, Pelt, PeltH3, TOOL_CLASSES, Tool


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/peers.sh",
        description="Measure pelt against peer HTTP load generators (run through bench/peers.sh).",
    )
    p.add_argument("--quick", action="store_true", help="1 round, 2 s runs, rate 2,000/s only, short stall")
    p.add_argument("--tools", default=",".join(ALL_TOOLS), help=f"comma-separated subset of {','.join(ALL_TOOLS)}")
    p.add_argument("--pelt", help="the pelt binary (default: pelt on PATH)")
    p.add_argument("--rounds", type=int, help="rounds of interleaved runs (default 3; --quick 1)")
    p.add_argument("--duration", type=float, help="seconds per max-load and rate run (default 10; --quick 2)")
    p.add_argument("--rates", help="comma-separated rates for the rate test (default 5000,20000; --quick 2000)")
    p.add_argument("--seed", type=int, default=1, help="seed for the shuffled order (default 1)")
    p.add_argument("--path", default="/", help="URL path for the max-load and rate tests: / (ok), /1k.bin, /100k.bin")
    p.add_argument(
        "--tests",
        default="max,rate,stall,close,tls-close,h2,h3,ceiling,scale",
        help="comma-separated subset of max,rate,stall,close,tls-close,h2,h3,ceiling,scale (close: a new connection per request, "
        "ab's and siege's default, against wrk with Connection: close and pelt --no-keepalive; tls-close: the same over "
        "https, a TLS handshake per request, pelt with its default session resumption and with --no-tls-resume; "
        "h2: pelt --http2 against h2load, h2c and "
        "TLS; h3: pelt --http3 against pelt --http2 and oha's http3 build, on Caddy; ceiling: the highest rate "
        "each rate tool holds on one core; scale: pelt against wrk at many connections, and pelt's memory with "
        "1,000 targets)",
    )
    p.add_argument(
        "--close-connections",
        help="connections for the close and tls-close tests, a new TCP connection per request "
        "(default 1,2,4,10,50; --quick 1,50)",
    )
    p.add_argument("--scale-connections", help="connections for the scale test (default 1000,10000; --quick 1000)")
    p.add_argument("--scale-threads", help="threads for the scale test (default 1,2; --quick 1)")
    p.add_argument("--out-dir", default=str(REPO / "bench/out"), help="where the .md and .json go (default bench/out)")
    p.add_argument(
        "--wait-quiet",
        type=float,
        help="before each run, wait up to this many seconds for other processes to leave the CPUs "
        "(default 60, at most 20 min in all; --quick 0)",
    )
    p.add_argument("--command-line", help=argparse.SUPPRESS)
    p.add_argument("--skip-install", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.rounds = args.rounds or 1
        args.duration = args.duration or 2.0
        args.rates = args.rates or "2000"
        args.stall = {"rate": 1000.0, "duration_s": 2.0, "at_s": 0.5, "length_s": 0.5}
        args.wait_quiet = 0.0 if args.wait_quiet is None else args.wait_quiet
        args.scale_connections = args.scale_connections or "1000"
        args.scale_threads = args.scale_threads or "1"
        args.close_connections = args.close_connections or "1,50"
    else:
        args.close_connections = args.close_connections or ",".join(str(c) for c in CLOSE_CONNECTIONS)
        args.scale_connections = args.scale_connections or "1000,10000"
        args.scale_threads = args.scale_threads or "1,2"
        args.rounds = args.rounds or 3
        args.duration = args.duration or 10.0
        args.rates = args.rates or "5000,20000"
        args.stall = {"rate": 1000.0, "duration_s": 10.0, "at_s": 3.0, "length_s": 1.0}
        args.wait_quiet = 60.0 if args.wait_quiet is None else args.wait_quiet
    if args.rounds < 1 or args.duration <= 0:
        p.error("--rounds must be at least 1 and --duration positive")
    args.rate_list = [float(r) for r in args.rates.split(",") if r.strip()]
    args.tool_list = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in args.tool_list if t not in ALL_TOOLS]
    if unknown:
        p.error(f"unknown tool(s) {', '.join(unknown)}; known: {', '.join(ALL_TOOLS)}")
    args.test_list = [t.strip() for t in args.tests.split(",") if t.strip()]
    if not set(args.test_list) <= {"max", "rate", "stall", "close", "tls-close", "h2", "h3", "ceiling", "scale"}:
        p.error("--tests takes a subset of max,rate,stall,close,tls-close,h2,h3,ceiling,scale")
    try:
        args.close_connection_list = [int(c) for c in args.close_connections.split(",") if c.strip()]
        args.scale_connection_list = [int(c) for c in args.scale_connections.split(",") if c.strip()]
        args.scale_thread_list = [int(t) for t in args.scale_threads.split(",") if t.strip()]
    except ValueError:
        p.error("--close-connections, --scale-connections and --scale-threads take whole numbers, like 1000,10000")
    if not args.path.startswith("/"):
        p.error("--path must start with /")
    return args

def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # pelt's history off: the peers keep no record of their runs, so this
    # compares the load engines alike (the history's own cost is measured
    # in docs/BENCHMARKS.md), and benchmark runs stay out of the user's
    # history.
    os.environ["PELT_NO_HISTORY"] = "1"
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started = dt.datetime.now(dt.timezone.utc)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    t0 = time.monotonic()
    client_cpu, server_cpu = pick_cpus()
    measure.QUIET = Quiet(args.wait_quiet, 20 * 60)

    tools: dict[str, Tool] = {}
    tool_info: dict[str, dict] = {}
    for name in args.tool_list:
        if name == "oha-h3":
            path = str(OHA_H3) if OHA_H3.exists() else None
        else:
            path = args.pelt if name == "pelt" and args.pelt else find_binary(TOOL_CLASSES[name].binary)
        if path is None or not os.access(path, os.X_OK):
            tool_info[name] = {"status": "not installed: skipped"}
            log(f"{name} is not installed: skipped")
            continue
        tool = TOOL_CLASSES[name](path)
        try:
            version = tool.version()
        except Exception as e:  # noqa: BLE001
            version = f"? ({e})"
        tools[name] = tool
        tool_info[name] = {"status": "ok", "version": version, "path": path}
    if not tools:
        log("no tool to run")
        return 1
    if shutil.which("taskset") is None and client_cpu is not None:
        log("error: taskset is needed (Debian package util-linux)")
        return 1

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"peers-{stamp}.json"
    md_path = out_dir / f"peers-{stamp}.md"
    command_line = args.command_line or "python3 -m bench.peers " + " ".join(argv)
    st = args.stall
    truth = stall_truth(st["rate"], st["duration_s"], st["at_s"], st["length_s"])
    result: dict[str, Any] = {
        "started_utc": started.strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command_line": command_line,
        "machine": machine_info(),
        "config": {
            "rounds": args.rounds,
            "duration_s": args.duration,
            "rates": args.rate_list,
            "seed": args.seed,
            "path": args.path,
            "tests": args.test_list,
            "scale_connections": args.scale_connection_list,
            "scale_threads": args.scale_thread_list,
            "close_connections": args.close_connection_list,
            "connections": CONNECTIONS,
            "client_cpu": client_cpu,
            "server_cpu": server_cpu,
            "stall": st,
            "wait_quiet_s": args.wait_quiet,
        },
        "tools": tool_info,
        "stall_truth_p99_s": truth,
        "runs": [],
        "summary": {},
    }

    workdir = Path(tempfile.mkdtemp(prefix="pelt-peers-"))
    nginx = Nginx(workdir, server_cpu)
    caddy: Optional[Caddy] = None
    pelt_h3: Optional[PeltServe] = None
    status = 0
    try:
        nginx.start()
        result["nginx_version"] = nginx.version
        result["workdir"] = str(workdir)
        result["port"] = nginx.port
        log(f"nginx {nginx.version} on port {nginx.port}, worker pid {nginx.worker}")
        url = nginx.url(args.path)
        # The stall test is for rate-capable tools, plus wrk as the
        # closed-loop reference (ab adds nothing there).
        stall_tools: list[Tool] = [t for t in tools.values() if t.rate_capable or t.name == "wrk"]
        h2_tools = [t for t in tools.values() if t.name in ("pelt", "h2load")]
        # The close test: the tools that can open a connection per request.
        close_tools = [t for t in tools.values() if t.can_close]
        # The tls-close test: the same over https, and pelt once more with
        # every handshake full (--no-tls-resume), the work ab and siege do.
        tls_close_tools = list(close_tools)
        if "pelt" in tools:
            tls_close_tools.append(Pelt(tools["pelt"].path, full_handshakes=True))
        # The h3 test: HTTP/3 against Caddy (nginx 1.22 has none); pelt over
        # HTTP/2 on the same Caddy is its reference, oha's http3 build its peer.
        # oha's http3 build gets no answer from Caddy 2.6.2, so it and pelt
        # are compared on `pelt serve --http3` as well ("h3-serve").
        h3_tools: list[Tool] = []
        h3_plan0: list[tuple[Tool, str]] = []
        if "h3" in args.test_list:
            if "pelt" in tools:
                h3_tools += [PeltH3(tools["pelt"].path), PeltH3(tools["pelt"].path, gso=False)]
                h3_plan0 += [(h3_tools[0], "h3"), (h3_tools[0], "h2"), (h3_tools[1], "h3"), (h3_tools[0], "h3-serve")]
                try:
                    pelt_h3 = PeltServe(tools["pelt"].path, server_cpu)
                    pelt_h3.start()
                except (RuntimeError, OSError) as e:
                    log(f"no pelt serve --http3: {e}")
                    pelt_h3 = None
            if "oha-h3" in tools:
                h3_tools.append(tools["oha-h3"])
                h3_plan0.append((tools["oha-h3"], "h3-serve"))
            try:
                caddy = Caddy(workdir, server_cpu)
                caddy.start()
                result["caddy_version"] = caddy.version
                log(f"caddy {caddy.version} on port {caddy.port} (TCP and UDP), pid {caddy.worker}")
            except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
                log(f"no h3 test against Caddy: {e}")
                caddy = None
            h3_plan0 = [
                (t, p) for t, p in h3_plan0 if (p == "h3-serve" and pelt_h3) or (p != "h3-serve" and caddy)
            ]
        if "oha" in tools:
            stall_tools.append(Oha(tools["oha"].path, latency_correction=True))
        rate_tools = [t for t in tools.values() if t.rate_capable]
        if "pelt" in tools:
            # pelt with a bombardier-like spread of sends, for CPU at equal
            # send precision (the rate table's wire lag column).
            rate_tools.append(Pelt(tools["pelt"].path, send_window=WIDE_WINDOW))
        # Every rate tool's send lag from the wire, judged alike (wirelag);
        # without tcpdump (or root), only pelt's own figure is there.
        wire = wirelag.available() and ("rate" in args.test_list or "ceiling" in args.test_list)
        if not wire:
            log("no tcpdump (or not root): send lag is pelt's own figure alone")

        def save() -> None:
            result["elapsed_s"] = time.monotonic() - t0
            json_path.write_text(json.dumps(result, indent=2) + "\n")

        for rnd in range(args.rounds):
            rng = random.Random(args.seed * 1000 + rnd)
            plan: list[tuple[str, Tool, Optional[float]]] = []
            if "max" in args.test_list:
                order = [t for t in tools.values() if not (t.h2_only or t.close_only)]
                rng.shuffle(order)
                plan += [("max_load", t, None) for t in order]
            if "rate" in args.test_list:
                for r in args.rate_list:
                    order = list(rate_tools)
                    rng.shuffle(order)
                    plan += [("rate", t, r) for t in order]
            if "stall" in args.test_list:
                order = list(stall_tools)
                rng.shuffle(order)
                plan += [("stall", t, st["rate"]) for t in order]
            if "close" in args.test_list:
                # Each connection count's tools together, in a shuffled order.
                for c in args.close_connection_list:
                    order = list(close_tools)
                    rng.shuffle(order)
                    plan += [("close", t, float(c)) for t in order]
            if "tls-close" in args.test_list:
                for c in args.close_connection_list:
                    order = list(tls_close_tools)
                    rng.shuffle(order)
                    plan += [("tls_close", t, float(c)) for t in order]
            if "h2" in args.test_list:
                for tls in (0.0, 1.0):
                    order = list(h2_tools)
                    rng.shuffle(order)
                    plan += [("h2", t, tls) for t in order]
            if h3_plan0:
                h3_plan = list(h3_plan0)
                rng.shuffle(h3_plan)
                plan += [("h3", t, proto) for t, proto in h3_plan]
            for i, (test, tool, r) in enumerate(plan):
                label = f"round {rnd + 1}/{args.rounds}, {i + 1}/{len(plan)}: {test} {tool.name}" + (
                    f" {r:g}/s" if r and test == "rate" else ""
                ) + ((" tls" if r else " h2c") if test == "h2" else "") + (f" {r}" if test == "h3" else "") + (
                    f" -c {r:g}" if test in ("close", "tls_close") else ""
                )
                log(label)
                if test == "max_load":
                    d = args.duration
                    spec = tool.max_load(url, d, workdir)
                    rec = run_one(test, tool, spec, d, nginx, workdir, client_cpu, extra={"round": rnd + 1})
                elif test in ("close", "tls_close"):
                    assert r is not None
                    d = args.duration
                    spec = tool.close(url if test == "close" else nginx.url_h2(True), int(r), d, workdir)
                    assert spec is not None
                    rec = run_one(
                        test, tool, spec, d, nginx, workdir, client_cpu,
                        extra={"round": rnd + 1, "close_connections": int(r)},
                    )
                elif test == "h2":
                    d = args.duration
                    tls = bool(r)
                    spec = tool.h2(nginx.url_h2(tls), d, tls)
                    rec = run_one(
                        test, tool, spec, d, nginx, workdir, client_cpu,
                        extra={"round": rnd + 1, "proto": "tls" if tls else "h2c"},
                    )
                elif test == "h3":
                    server = pelt_h3 if r == "h3-serve" else caddy
                    assert server is not None
                    d = args.duration
                    spec = tool.h3(server.url("/"), d, "h3" if r == "h3-serve" else r)
                    rec = run_one(test, tool, spec, d, server, workdir, client_cpu, extra={"round": rnd + 1, "proto": r})
                elif test == "rate":
                    assert r is not None
                    d = args.duration
                    spec = tool.rate(url, r, d, workdir)
                    rec = run_one(
                        test, tool, spec, d, nginx, workdir, client_cpu, extra={"round": rnd + 1, "offered_rate": r},
                        wire=(r, server_cpu) if wire else None,
                    )
                    if "requests" in rec:
                        rec["achieved_rate"] = rec["requests"] / d
                else:
                    d = st["duration_s"]
                    stall_url = nginx.url("/")
                    spec = tool.stall(stall_url, st["rate"], d, workdir)
                    rec = run_one(
                        test,
                        tool,
                        spec,
                        d,
                        nginx,
                        workdir,
                        client_cpu,
                        stall=(st["at_s"], st["length_s"]),
                        extra={"round": rnd + 1, "offered_rate": st["rate"]},
                    )
                if "error" in rec:
                    log(f"  failed: {rec['error']}")
                else:
                    log(
                        f"  {rec['requests']} requests, {rec.get('cpu_us_per_req', 0):.2f} CPU µs/req, "
                        f"p99 {fmt_lat(rec.get('p99_s'))}, nginx {rec['nginx_busy']:.0%}"
                        + (" (noisy)" if rec.get("noisy") else "")
                    )
                result["runs"].append(rec)
                save()
        if "ceiling" in args.test_list:
            # Once, after the rounds: a search is many runs already.
            # Short steps (the quick mode's 2 s; at most 3 s).
            d = min(args.duration, 3.0)
            ceilings = {}
            order = [t for t in rate_tools if not getattr(t, "send_window", None)]
            random.Random(args.seed).shuffle(order)
            for tool in order:

                def step(r: float, tool: Tool = tool) -> dict:
                    log(f"ceiling {tool.name} {r:g}/s")
                    rec = run_one(
                        "ceiling", tool, tool.rate(url, r, d, workdir), d, nginx, workdir, client_cpu,
                        extra={"offered_rate": r}, wire=(r, server_cpu) if wire else None,
                    )
                    if "requests" in rec:
                        rec["achieved_rate"] = rec["requests"] / d
                    result["runs"].append(rec)
                    save()
                    return rec

                # --quick: a coarse bracket (25 %), to keep the harness honest
                # without a long search.
                best, fail = ceiling.search(step, 0.25 if args.quick else ceiling.TOLERANCE)
                def step_of(rate: Optional[float], tool: Tool = tool) -> dict:
                    return next(
                        (r for r in reversed(result["runs"]) if r["test"] == "ceiling"
                         and r["tool"] == tool.name and r.get("offered_rate") == rate),
                        {},
                    )

                ceilings[tool.name] = {
                    "held": best,
                    "not_held": fail,
                    "held_wire_lag_p99_s": step_of(best).get("wire_lag_p99_s"),
                    "held_send_lag_p99_s": step_of(best).get("send_lag_p99_s"),
                    "why_not": ceiling.why_not(step_of(fail), fail) if fail else None,
                }
                log(f"  {tool.name}: holds {best} req/s, not {fail}")
            result["ceiling"] = ceilings
        if "scale" in args.test_list:
            # Once, after the rounds, like the ceiling.
            def keep(rec: dict) -> None:
                result["runs"].append(rec)
                save()

            run_scale(
                tools, url, args.duration, nginx, workdir, client_cpu,
                args.scale_connection_list, args.scale_thread_list, keep,
            )
        summarise_all(result, args, tools, stall_tools, rate_tools, h2_tools, h3_tools, close_tools, tls_close_tools)
        save()
    except Interrupted as e:
        log(f"interrupted ({e}); partial results in {json_path}")
        status = 130
    except RuntimeError as e:
        log(f"error: {e}")
        status = 1
    finally:
        proc = CURRENT.get("proc")
        if proc is not None:
            proc.kill()
        nginx.stop()
        if caddy is not None:
            caddy.stop()
        if pelt_h3 is not None:
            pelt_h3.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if status != 0:
        return status

    report = render(result)
    md_path.write_text(report + "\n")
    print(report, flush=True)
    log(f"saved {md_path} and {json_path}")
    return 0
