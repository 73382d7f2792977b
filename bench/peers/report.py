"""The report: medians, ranges and ratios over rounds, rendered as markdown."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any, Callable, Optional

from .common import CONNECTIONS, HAVE_TIME, NOISY_OTHER_CPU, SATURATED
from .tools import dur
from .scale import render_scale, summarise_scale


def median(values: list[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def usable(runs: list[dict]) -> tuple[list[dict], int]:
    """Successful runs, without the noisy ones when clean runs remain."""
    ok = [r for r in runs if "error" not in r]
    clean = [r for r in ok if not r.get("noisy")]
    return (clean, len(ok) - len(clean)) if clean else (ok, 0)


def summarise(runs: list[dict], keys: list[str]) -> dict:
    chosen, dropped = usable(runs)
    out: dict[str, Any] = {"runs": len(runs), "used": len(chosen), "dropped_noisy": dropped}
    out["failed"] = [r["error"] for r in runs if "error" in r]
    for key in keys:
        values = [r[key] for r in chosen if r.get(key) is not None]
        out[key] = {
            "median": median(values),
            "min": min(values) if values else None,
            "max": max(values) if values else None,
        }
    return out


MAX_KEYS = ["requests", "rate", "cpu_us_per_req", "rss_kb", "p50_s", "p99_s", "nginx_busy", "client_busy", "other_cpu", "errors"]
RATE_KEYS = MAX_KEYS + ["achieved_rate", "send_lag_p99_s", "wire_lag_p99_s"]
CLOSE_KEYS = MAX_KEYS + ["invol_csw_per_req"]


def verdict(s: dict) -> str:
    nginx = s["nginx_busy"]["median"]
    client = s["client_busy"]["median"]
    if nginx is None or client is None:
        return "?"
    if nginx >= SATURATED and client >= SATURATED:
        return f"both saturated (nginx {nginx:.0%}, client {client:.0%})"
    if nginx >= SATURATED:
        return f"server-bound (nginx {nginx:.0%})"
    if client >= SATURATED:
        return f"client-bound (client {client:.0%})"
    return f"neither saturated (nginx {nginx:.0%}, client {client:.0%})"




def fmt_lat(s: Optional[float]) -> str:
    if s is None:
        return "–"
    if s == 0:
        return "< 1 ms"  # ab's whole milliseconds
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def fmt_num(v: Optional[float], digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def fmt_pct(v: Optional[float]) -> str:
    return "–" if v is None else f"{v:.0%}"


def fmt_range(stat: dict, fmt: Callable[[Optional[float]], str]) -> str:
    if stat["min"] is None:
        return "–"
    if stat["min"] == stat["max"]:
        return fmt(stat["min"])
    return f"{fmt(stat['min'])} – {fmt(stat['max'])}"


def runs_cell(s: dict) -> str:
    cell = f"{s['used']}/{s['runs']}"
    notes = []
    if s["dropped_noisy"]:
        notes.append(f"{s['dropped_noisy']} noisy dropped")
    if s["failed"]:
        notes.append(f"{len(s['failed'])} failed")
    return cell + (f" ({', '.join(notes)})" if notes else "")

def render(result: dict) -> str:
    cfg = result["config"]
    m = result["machine"]
    lines: list[str] = []
    add = lines.append
    add(f"# pelt vs peer load generators — {result['started_utc']}")
    add("")
    add(f"- Date: {result['started_utc']} (whole run took {result['elapsed_s'] / 60:.1f} min)")
    add(f"- Machine: {m['nproc']} cores, {m['cpu_model']}, Linux {m['kernel']}")
    add(f"- Command: `{result['command_line']}`")
    pin = (
        f"nginx worker on CPU {cfg['server_cpu']}, tool on CPU {cfg['client_cpu']}"
        if cfg["client_cpu"] is not None
        else "no CPU pinning (fewer than 2 CPUs)"
    )
    add(
        f"- Setup: {result['nginx_version']}, 1 worker, access log off, `GET {cfg['path']}` on 127.0.0.1; {pin}; "
        f"each tool 1 thread, {CONNECTIONS} keep-alive connections; {cfg['rounds']} round(s) of {dur(cfg['duration_s'])} runs, "
        f"tools in a shuffled order each round (seed {cfg['seed']})."
    )
    add(
        f"- Medians over rounds; runs where other processes used > {NOISY_OTHER_CPU:.0%} of a core are flagged "
        "noisy and left out when clean runs remain"
        + (
            f"; before each run the harness waited up to {cfg['wait_quiet_s']:g} s for other processes to leave the CPUs"
            if cfg.get("wait_quiet_s")
            else ""
        )
        + ". Noise between runs is ±20 %: compare ratios, not absolute numbers."
    )
    add("")
    add("## Tools")
    add("")
    add("| tool | version | status |")
    add("|---|---|---|")
    for name, info in result["tools"].items():
        add(f"| {name} | {info.get('version') or '–'} | {info['status']} |")
    add("")

    ml = result["summary"].get("max_load", {})
    if ml:
        add(f"## Max load: medians ({cfg['rounds']} round(s) × {dur(cfg['duration_s'])})")
        add("")
        add(
            "CPU µs/req = the tool's user+sys CPU time / requests completed (the fair client figure: "
            "req/s is capped by nginx's one core). nginx CPU = its worker's share of its core; "
            f"client CPU = the tool's share of its core; either ≥ {SATURATED:.0%} is the bottleneck."
        )
        add("")
        add("| tool | requests | req/s | CPU µs/req | peak RSS | p50 | p99 | errors | nginx CPU | client CPU | bound by | runs |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for name, s in ml.items():
            add(
                f"| {name} | {fmt_num(s['requests']['median'])} | {fmt_num(s['rate']['median'])} | "
                f"{fmt_num(s['cpu_us_per_req']['median'], 2)} | {fmt_mb(s['rss_kb']['median'])} | "
                f"{fmt_lat(s['p50_s']['median'])} | {fmt_lat(s['p99_s']['median'])} | {fmt_num(s['errors']['median'])} | "
                f"{fmt_pct(s['nginx_busy']['median'])} | {fmt_pct(s['client_busy']['median'])} | {verdict(s)} | {runs_cell(s)} |"
            )
        add("")
        add("## Max load: ranges (min – max over rounds)")
        add("")
        add("| tool | req/s | CPU µs/req | p99 | nginx CPU | other CPU |")
        add("|---|---|---|---|---|---|")
        for name, s in ml.items():
            add(
                f"| {name} | {fmt_range(s['rate'], fmt_num)} | {fmt_range(s['cpu_us_per_req'], lambda v: fmt_num(v, 2))} | "
                f"{fmt_range(s['p99_s'], fmt_lat)} | {fmt_range(s['nginx_busy'], fmt_pct)} | {fmt_range(s['other_cpu'], fmt_pct)} |"
            )
        add("")
        add("## Max load: ratios to wrk (medians)")
        add("")
        wrk = ml.get("wrk")
        if wrk is None or wrk["cpu_us_per_req"]["median"] is None:
            add("wrk was not run (or failed), so there are no ratios.")
        else:
            add("CPU µs/req ÷ wrk's: below 1 is cheaper per request than wrk. req/s ÷ wrk's: above 1 is more requests.")
            add("")
            add("| tool | CPU µs/req ÷ wrk | req/s ÷ wrk |")
            add("|---|---:|---:|")
            for name, s in ml.items():
                add(
                    f"| {name} | {ratio(s['cpu_us_per_req']['median'], wrk['cpu_us_per_req']['median'])} | "
                    f"{ratio(s['rate']['median'], wrk['rate']['median'])} |"
                )
        add("")
        add("## Saturation verdict (max load)")
        add("")
        for name, s in ml.items():
            add(f"- **{name}**: {verdict(s)}")
        add("")

    rate = result["summary"].get("rate", {})
    if rate:
        add(f"## Rate test ({dur(cfg['duration_s'])} per run; medians, ranges in brackets)")
        add("")
        add(
            "Achieved = requests completed / run duration. CPU µs/req as above. Wire lag p99: how much later "
            "than usual the tool's requests left, from tcpdump, for every tool alike (bench/peers/wirelag.py). "
            "Send lag p99: pelt's own figure against its schedule (only pelt reports one). pelt-w10ms is pelt "
            "with `--send-window 10ms`, sends spread about as widely as bombardier's: CPU at equal precision."
        )
        add("")
        add("| offered req/s | tool | achieved req/s | CPU µs/req | p50 | p99 | wire lag p99 | send lag p99 | errors | runs |")
        add("|---:|---|---|---|---:|---:|---:|---:|---:|---|")
        for key, by_tool in rate.items():
            for name, s in by_tool.items():
                add(
                    f"| {fmt_num(float(key))} | {name} | {fmt_num(s['achieved_rate']['median'])} "
                    f"({fmt_range(s['achieved_rate'], fmt_num)}) | {fmt_num(s['cpu_us_per_req']['median'], 2)} "
                    f"({fmt_range(s['cpu_us_per_req'], lambda v: fmt_num(v, 2))}) | {fmt_lat(s['p50_s']['median'])} | "
                    f"{fmt_lat(s['p99_s']['median'])} | {fmt_lat(s['wire_lag_p99_s']['median'])} | "
                    f"{fmt_lat(s['send_lag_p99_s']['median'])} | "
                    f"{fmt_num(s['errors']['median'])} | {runs_cell(s)} |"
                )
        add("")

    close = result["summary"].get("close", {})
    if close:
        render_close(close, cfg, add)
    tls_close = result["summary"].get("tls_close", {})
    if tls_close:
        render_close(tls_close, cfg, add, tls=True)

    stall = result["summary"].get("stall", {})
    if stall:
        st = cfg["stall"]
        truth = result["stall_truth_p99_s"]
        expected = st["rate"] * st["duration_s"]
        add(
            f"## Stall test ({fmt_num(st['rate'])} req/s for {dur(st['duration_s'])}; nginx's worker stopped "
            f"{st['length_s']:g} s at {st['at_s']:g} s)"
        )
        add("")
        add(
            f"Truth from the schedule: p99 = **{truth:.3f} s** ({fmt_num(expected)} requests sent every "
            f"{1000 / st['rate']:g} ms; the {fmt_num(st['rate'] * st['length_s'])} due during the stall wait "
            f"{st['length_s']:g} s down to 0 s). A tool that times from the actual send instead of the schedule "
            "hides the stall (coordinated omission). wrk has no rate mode: closed-loop reference, with wrk's own "
            "correction. vegeta runs with its default unbounded workers here; oha+lc is oha --latency-correction."
        )
        add("")
        add("| tool | p99 (median) | p99 range | p50 | requests (median) | of expected | verdict | runs |")
        add("|---|---:|---|---:|---:|---:|---|---|")
        for name, s in stall.items():
            p99 = s["p99_s"]["median"]
            add(
                f"| {name} | {fmt_lat(p99)} | {fmt_range(s['p99_s'], fmt_lat)} | {fmt_lat(s['p50_s']['median'])} | "
                f"{fmt_num(s['requests']['median'])} | {share(s['requests']['median'], expected, name)} | "
                f"{stall_verdict(p99, truth)} | {runs_cell(s)} |"
            )
        add("")

    ceilings = result.get("ceiling", {})
    if ceilings:
        add("## Ceiling: the highest rate held on one core")
        add("")
        add(
            "Doubling from 5,000 req/s, then bisecting to 5 %, each step a short run (50 connections), a rate "
            "not held tried once more before it counts (for every tool alike: this VM pauses now and then). A rate "
            "is held when at least 99.5 % of the offered requests complete without errors and the send lag's "
            "p99 stays under 1 ms: measured on the wire for every tool alike when tcpdump ran (each request's "
            "packet against an evenly spaced schedule at the offered rate, bench/peers/wirelag.py), else pelt's "
            "own figure (the others then held to completions alone)."
        )
        add("")
        add("| tool | holds (req/s) | wire lag p99 there | own send lag p99 | does not hold (req/s) | why |")
        add("|---|---:|---:|---:|---:|---|")
        for name, c in sorted(ceilings.items(), key=lambda kv: -(kv[1]["held"] or 0)):
            add(
                f"| {name} | {fmt_num(c['held'])} | {fmt_lat(c.get('held_wire_lag_p99_s'))} | "
                f"{fmt_lat(c.get('held_send_lag_p99_s'))} | {fmt_num(c['not_held'])} | {c.get('why_not') or ''} |"
            )
        add("")

    h2 = result["summary"].get("h2", {})
    if h2:
        add(f"## HTTP/2 against h2load ({dur(cfg['duration_s'])} per run; `-c 4 -m 8`, pelt `-c 4 --streams 8`)")
        add("")
        add("Flat out over 4 connections of 8 streams each, cleartext (h2c, prior knowledge) and TLS. CPU µs/req as above.")
        add("")
        add("| protocol | tool | req/s | CPU µs/req | ÷ h2load | errors | runs |")
        add("|---|---|---:|---|---:|---:|---|")
        for proto, by_tool in h2.items():
            ref = by_tool.get("h2load", {}).get("cpu_us_per_req", {}).get("median")
            for name, s in by_tool.items():
                cpu = s["cpu_us_per_req"]
                add(
                    f"| {proto} | {name} | {fmt_num(s['rate']['median'])} | {fmt_num(cpu['median'], 2)} "
                    f"({fmt_range(cpu, lambda v: fmt_num(v, 2))}) | {ratio(cpu['median'], ref)} | "
                    f"{fmt_num(s['errors']['median'])} | {runs_cell(s)} |"
                )
        add("")

    h3 = result["summary"].get("h3", {})
    if h3:
        add(f"## HTTP/3 ({dur(cfg['duration_s'])} per run; `-c 4 --streams 8`, oha `-c 4 -p 8`)")
        add("")
        add(
            f"h3 and h2: Caddy {result.get('caddy_version', '?')} (GOMAXPROCS=1, pinned like nginx) serving `ok` "
            "over HTTP/3 and, as the reference, HTTP/2 over TLS; h3-serve: `pelt serve --http3 -t 1` (pinned), "
            "the server oha's http3 build is compared on, as it gets no answer from Caddy 2.6.2. "
            "`÷ pelt h2`: CPU µs/req over pelt's own HTTP/2 on Caddy at the same connections and streams "
            "(goal ≤ 1.5); `req/s per core`: requests per second of client CPU (1e6 ÷ CPU µs/req); "
            "`× oha-h3`: pelt's req/s per core over oha's http3 build's on the same server (goal ≥ 3). "
            "pelt-nogso: PELT_QUIC_GSO=0."
        )
        add("")
        add("| protocol | tool | req/s | CPU µs/req | ÷ pelt h2 | req/s per core | × oha-h3 | errors | runs |")
        add("|---|---|---:|---|---:|---:|---:|---:|---|")
        h2_ref = h3.get("h2", {}).get("pelt", {}).get("cpu_us_per_req", {}).get("median")
        oha_ref = h3.get("h3-serve", {}).get("oha-h3", {}).get("cpu_us_per_req", {}).get("median")
        for proto, by_tool in h3.items():
            for name, s in by_tool.items():
                cpu = s["cpu_us_per_req"]
                med = cpu["median"]
                per_core = 1e6 / med if med else None
                vs_oha = ratio(oha_ref, med) if oha_ref and name != "oha-h3" and proto == "h3-serve" else ""
                add(
                    f"| {proto} | {name} | {fmt_num(s['rate']['median'])} | {fmt_num(med, 2)} "
                    f"({fmt_range(cpu, lambda v: fmt_num(v, 2))}) | "
                    f"{ratio(med, h2_ref) if proto != 'h3-serve' else ''} | {fmt_num(per_core)} | {vs_oha} | "
                    f"{fmt_num(s['errors']['median'])} | {runs_cell(s)} |"
                )
        add("")
    if result["summary"].get("scale"):
        render_scale(result["summary"]["scale"], cfg["duration_s"], add)

    failures = [r for r in result["runs"] if "error" in r]
    noisy = [r for r in result["runs"] if r.get("noisy")]
    if failures or noisy:
        add("## Failed and noisy runs")
        add("")
        for r in failures:
            add(f"- failed: {run_label(r)}: {r['error']}")
        for r in noisy:
            top = ", ".join(f"{name} {share:.0%}" for name, share in r.get("other_top", []))
            add(
                f"- noisy: {run_label(r)}: other processes used {r['other_cpu']:.0%} of a core"
                + (f" ({top})" if top else "")
            )
        add("")

    add("## Commands")
    add("")
    add(
        "Each run as `taskset -c CPU /usr/bin/time -f '%U %S %M %c %w' -o FILE <command>`, "
        "pelt's with `PELT_NO_HISTORY=1` (the peers keep no history either)"
        + ("" if HAVE_TIME else " (here without /usr/bin/time: CPU and RSS from wait4's rusage)")
        + "; $PORT is nginx's port, $WORK the harness's temp dir."
    )
    add("")
    seen = set()
    for r in result["runs"]:
        rate = None if r["test"] == "ceiling" else r.get("offered_rate")
        key = (r["test"], r["tool"], rate, r.get("proto"), r.get("scale"), r.get("close_connections"))
        if key in seen:
            continue
        seen.add(key)
        argv = [Path(a).name if i == 0 else shown_arg(a, result) for i, a in enumerate(r["argv"])]
        label = r["test"] + (f" {fmt_num(r['offered_rate'])}/s" if r.get("offered_rate") else "")
        label += f" {r['proto']}" if r.get("proto") else ""
        label += f" {r['scale']}" if r.get("scale") else ""
        label += f" -c {r['close_connections']}" if r.get("close_connections") else ""
        add(f"- {label}, {r['tool']}: `{' '.join(argv)}`")
    add("")
    return "\n".join(lines)


def render_close(close: dict, cfg: dict, add: Callable[[str], None], tls: bool = False) -> None:
    """The close test's table (and, with `tls`, the tls-close test's): per
    connection count, each tool's req/s, CPU and involuntary context
    switches per request, and their ratios to ab's."""
    what = "A TLS connection per request" if tls else "A connection per request"
    add(f"## {what} ({dur(cfg['duration_s'])} per run; medians, ranges in brackets)")
    add("")
    if tls:
        add(
            "The close test over https, to nginx's TLS port (a self-signed RSA 2048 certificate; Debian's nginx 1.22 "
            "negotiates TLS 1.2 by default): a TLS handshake per request. ab, siege (OpenSSL) and pelt-full "
            "(`--no-tls-resume`) make every handshake full; wrk and pelt (its default) offer the session an earlier "
            "connection got, and nginx resumes it (a ticket: no certificate sent, no signature)."
        )
        add("")
    add(
        "Flat out, a new TCP connection for every request: ab's default (HTTP/1.0, no `-k`), siege's Debian "
        "default (`connection = close`, `-b`), wrk with `-H 'Connection: close'`, pelt `--no-keepalive`; each "
        "pinned and with one thread as in the other tests. CPU µs/req as above. Preemptions/req: the tool's "
        "involuntary context switches (`/usr/bin/time` %c) per request: how often something else was run on its "
        "CPU in its place (kernel workers it woke, its own threads, other processes). `÷ ab`: the ratio of the "
        "medians to ab's at the same connections."
    )
    add("")
    add("| -c | tool | req/s | ÷ ab | CPU µs/req | ÷ ab | preemptions/req | ÷ ab | nginx CPU | errors | runs |")
    add("|---:|---|---|---:|---|---:|---:|---:|---:|---:|---|")
    for c, by_tool in close.items():
        ab = by_tool.get("ab", {})

        def ref(key: str) -> Optional[float]:
            return ab.get(key, {}).get("median")

        for name, s in by_tool.items():
            rate, cpu, csw = s["rate"], s["cpu_us_per_req"], s["invol_csw_per_req"]
            add(
                f"| {c} | {name} | {fmt_num(rate['median'])} ({fmt_range(rate, fmt_num)}) | "
                f"{ratio(rate['median'], ref('rate'))} | {fmt_num(cpu['median'], 2)} "
                f"({fmt_range(cpu, lambda v: fmt_num(v, 2))}) | {ratio(cpu['median'], ref('cpu_us_per_req'))} | "
                f"{fmt_num(csw['median'], 4)} | {ratio(csw['median'], ref('invol_csw_per_req'))} | "
                f"{fmt_pct(s['nginx_busy']['median'])} | {fmt_num(s['errors']['median'])} | {runs_cell(s)} |"
            )
    add("")


def run_label(r: dict) -> str:
    rate = f" {fmt_num(r['offered_rate'])}/s" if r.get("offered_rate") else ""
    return f"round {r.get('round', '?')} {r['test']}{rate} {r['tool']}"


def shown_arg(arg: str, result: dict) -> str:
    """An argument as the report shows it: temp paths and the port replaced."""
    arg = arg.replace(result.get("workdir", "\0"), "$WORK")
    arg = arg.replace(f"127.0.0.1:{result.get('port', 0)}/", "127.0.0.1:$PORT/")
    # A header's value, say: one word for the shell.
    return f"'{arg}'" if " " in arg else arg


def fmt_mb(kb: Optional[float]) -> str:
    return "–" if kb is None else f"{kb / 1024:.0f} MB"


def ratio(a: Optional[float], b: Optional[float]) -> str:
    if a is None or not b:
        return "–"
    return f"{a / b:.2f}"


def share(requests: Optional[float], expected: float, name: str) -> str:
    """Requests as a share of the schedule's count (not for closed-loop wrk)."""
    if requests is None or name == "wrk":
        return "–"
    return f"{requests / expected:.0%}"


def stall_verdict(p99: Optional[float], truth: float) -> str:
    if p99 is None:
        return "–"
    if abs(p99 - truth) <= 0.15 * truth:
        return "sees the stall"
    if p99 < 0.25 * truth:
        return "misses the stall"
    return "partly" if p99 < truth else "over-reports"

def summarise_all(
    result: dict, args: argparse.Namespace, tools: dict, stall_tools: list, rate_tools: list, h2_tools: list,
    h3_tools: Optional[list] = None, close_tools: Optional[list] = None, tls_close_tools: Optional[list] = None,
) -> None:
    runs = result["runs"]
    summary: dict[str, Any] = {}
    if "max" in args.test_list:
        summary["max_load"] = {
            name: summarise([r for r in runs if r["test"] == "max_load" and r["tool"] == name], MAX_KEYS) for name in tools
        }
    if "rate" in args.test_list and rate_tools:
        summary["rate"] = {
            f"{r:g}": {
                t.name: summarise(
                    [x for x in runs if x["test"] == "rate" and x["tool"] == t.name and x["offered_rate"] == r], RATE_KEYS
                )
                for t in rate_tools
            }
            for r in args.rate_list
        }
    if "stall" in args.test_list:
        summary["stall"] = {
            t.name: summarise([x for x in runs if x["test"] == "stall" and x["tool"] == t.name], MAX_KEYS)
            for t in stall_tools
        }
    if "close" in args.test_list and close_tools:
        summary["close"] = {
            str(c): {
                t.name: summarise(
                    [x for x in runs if x["test"] == "close" and x["tool"] == t.name and x["close_connections"] == c],
                    CLOSE_KEYS,
                )
                for t in close_tools
            }
            for c in args.close_connection_list
        }
    if "tls-close" in args.test_list and tls_close_tools:
        summary["tls_close"] = {
            str(c): {
                t.name: summarise(
                    [x for x in runs if x["test"] == "tls_close" and x["tool"] == t.name and x["close_connections"] == c],
                    CLOSE_KEYS,
                )
                for t in tls_close_tools
            }
            for c in args.close_connection_list
        }
    if "h2" in args.test_list and h2_tools:
        summary["h2"] = {
            proto: {
                t.name: summarise([x for x in runs if x["test"] == "h2" and x["tool"] == t.name and x["proto"] == proto], MAX_KEYS)
                for t in h2_tools
            }
            for proto in ("h2c", "tls")
        }
    if h3_tools:
        summary["h3"] = {
            proto: {
                t.name: summarise([x for x in runs if x["test"] == "h3" and x["tool"] == t.name and x["proto"] == proto], MAX_KEYS)
                for t in h3_tools
                if any(x["test"] == "h3" and x["tool"] == t.name and x["proto"] == proto for x in runs)
            }
            for proto in ("h3", "h2", "h3-serve")
        }
    if "scale" in args.test_list:
        summary["scale"] = summarise_scale(runs)
    result["summary"] = summary
