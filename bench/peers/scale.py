"""The scale test (issue 27): many connections and many targets, pelt
against wrk, peak RSS per tool and the ratios.

Closed loop, flat out, at each of `--scale-connections` (default 1,000 and
10,000) and `--scale-threads` (default 1 and 2) for wrk and pelt alike;
then pelt alone at --rate 5000 with one URL and with a file of 1,000
distinct URLs (`/?t=I`), for what 1,000 targets cost. One thread runs
pinned to the client's CPU as elsewhere; more threads run unpinned (on a
2-core machine they share the cores with nginx, which stays pinned)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from .common import log
from .measure import run_one
from .nginx import Nginx
from .tools import Pelt, Spec, Tool, dur, parse_pelt, parse_wrk

TARGETS = 1000
TARGETS_RATE = 5000


def scale_spec(tool: Tool, url: str, connections: int, threads: int, d: float) -> Optional[Spec]:
    if tool.name == "wrk":
        return Spec([tool.path, f"-t{threads}", f"-c{connections}", f"-d{dur(d)}", "--latency", url], parse_wrk)
    if tool.name == "pelt":
        return Spec(
            [tool.path, "run", url, "-c", str(connections), "-t", str(threads), "-d", dur(d), "--format", "json"],
            parse_pelt,
        )
    return None


def targets_spec(pelt: Tool, url: str, targets: int, d: float, workdir: Path) -> Spec:
    source = ["-f", str(workdir / f"targets-{targets}.txt")] if targets > 1 else [url]
    if targets > 1:
        (workdir / f"targets-{targets}.txt").write_text("".join(f"{url}?t={i}\n" for i in range(targets)))
    return Spec(
        [pelt.path, "run", *source, "--rate", str(TARGETS_RATE), "-c", "50", "-t", "1", "-d", dur(d),
         "--format", "json"],
        parse_pelt,
    )


def run_scale(
    tools: dict[str, Tool],
    url: str,
    d: float,
    nginx: Nginx,
    workdir: Path,
    client_cpu: Optional[int],
    connections: list[int],
    threads: list[int],
    record: Callable[[dict], None],
) -> None:
    """Runs the scale test; each run goes to `record` as it ends."""
    for c in connections:
        for t in threads:
            for name in ("wrk", "pelt"):
                tool = tools.get(name)
                if tool is None:
                    continue
                spec = scale_spec(tool, url, c, t, d)
                assert spec is not None
                log(f"scale {name} -c {c} -t {t}")
                rec = run_one(
                    "scale", tool, spec, d, nginx, workdir, client_cpu if t == 1 else None,
                    extra={"connections": c, "threads": t, "scale": f"c{c} t{t}"},
                )
                report(rec)
                record(rec)
    pelt = tools.get("pelt")
    if pelt is not None and isinstance(pelt, Pelt):
        for n in (1, TARGETS):
            log(f"scale pelt {n} target(s) at {TARGETS_RATE}/s")
            rec = run_one(
                "scale", pelt, targets_spec(pelt, url, n, d, workdir), d, nginx, workdir, client_cpu,
                extra={"targets": n, "offered_rate": TARGETS_RATE, "scale": f"{n} targets"},
            )
            report(rec)
            record(rec)


def report(rec: dict) -> None:
    if "error" in rec:
        log(f"  failed: {rec['error']}")
    else:
        log(f"  {rec['requests']} requests, {rec.get('rate', 0):.0f} req/s, peak RSS {rec.get('rss_kb', 0) / 1024:.1f} MB")


def summarise_scale(runs: list[dict]) -> dict:
    """Medians by (connections, threads) and tool, and the targets' RSS."""
    from .report import median

    out: dict = {"connections": {}, "targets": {}}
    for r in runs:
        if r["test"] != "scale" or "error" in r:
            continue
        if "targets" in r:
            out["targets"].setdefault(str(r["targets"]), []).append(r["rss_kb"])
            continue
        key = f"{r['connections']} {r['threads']}"
        cell = out["connections"].setdefault(key, {}).setdefault(r["tool"], {"rate": [], "rss_kb": []})
        cell["rate"].append(r["rate"])
        cell["rss_kb"].append(r["rss_kb"])
    for cells in out["connections"].values():
        for cell in cells.values():
            cell["rate"] = median(cell["rate"])
            cell["rss_kb"] = median(cell["rss_kb"])
    out["targets"] = {k: median(v) for k, v in out["targets"].items()}
    return out


def render_scale(s: dict, duration_s: float, add: Callable[[str], None]) -> None:
    from .report import fmt_mb, fmt_num, ratio

    add(f"## Scale: connections and targets ({dur(duration_s)} per run)")
    add("")
    add("Closed loop, flat out; one thread pinned to the client's CPU, more unpinned. Peak RSS from /usr/bin/time.")
    add("")
    add("| connections | threads | wrk req/s | pelt req/s | pelt ÷ wrk | wrk RSS | pelt RSS | pelt ÷ wrk |")
    add("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, cells in s["connections"].items():
        c, t = key.split()
        w, p = cells.get("wrk", {}), cells.get("pelt", {})
        add(
            f"| {fmt_num(int(c))} | {t} | {fmt_num(w.get('rate'))} | {fmt_num(p.get('rate'))} | "
            f"{ratio(p.get('rate'), w.get('rate'))} | {fmt_mb(w.get('rss_kb'))} | {fmt_mb(p.get('rss_kb'))} | "
            f"{ratio(p.get('rss_kb'), w.get('rss_kb'))} |"
        )
    add("")
    one, many = s["targets"].get("1"), s["targets"].get(str(TARGETS))
    if one or many:
        extra = f"{(many - one) / 1024:+.1f} MB" if one and many else "–"
        add(
            f"pelt at {fmt_num(TARGETS_RATE)} req/s, 50 connections, 1 thread: one URL {fmt_mb(one)}, "
            f"{fmt_num(TARGETS)} distinct URLs {fmt_mb(many)} ({extra})."
        )
        add("")
