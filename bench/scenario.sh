#!/usr/bin/env bash
# Issue 25's benchmark: what a scenario costs. The journey of
# bench/scenario/journey.toml (log in once; GET a JSON list and extract an
# id; GET the item by that id and check a field) against a private nginx
# (`return` locations) on loopback, measured three ways, CPU per request
# from /usr/bin/time (user + system) and the requests each run completed:
#
#   scenario  pelt run --scenario journey.toml
#   plain     pelt run -f targets (the same two requests, no extraction)
#   locust    Locust's FastHttpUser (bench/scenario/locustfile.py), one
#             process, no wait between tasks (PyPI, in a venv under
#             ~/.cache/pelt/locust; --no-locust skips it)
#
# in a closed loop at full speed (-c 50, 50 Locust users) and, for pelt,
# at a rate (--rate: requests per second; the scenario's flows per second
# are half, two requests a flow). A plain rate run batches its sends in a
# send window by default (fewer wake-ups); a scenario does not (a later
# step would wait the window out), so the rate rows are also given at
# equal precision: plain with --send-window 0, and the scenario with
# --send-window 1ms. Last, peak RSS with 1,000 virtual users (pelt -c 1000,
# Locust -u 1000).
#
# --pairs N (issue 37) first runs N interleaved pairs of the closed-loop
# plain and scenario runs and prints each pair's ratio of CPU per request
# and their median: on a shared machine one pair moves by ±20 %, the
# median of several much less. --pairs-only stops after them (to compare
# two builds, run the script for each in turn, several times).
#
# --pin runs nginx on CPU 1 and every client (pelt, Locust) on CPU 0
# (`taskset`): on a shared machine the client then never migrates
# between cores mid-run, and its CPU time moves less.
#
#   bench/scenario.sh [--pelt PATH] [--duration S] [--rate R] [--pairs N] [--pairs-only] [--pin] [--no-locust]
set -euo pipefail
cd "$(dirname "$0")/.."

pelt=""
duration=10
rate=20000
locust=1
pairs=0
pairs_only=0
pin_client=()
pin_server=()
while [ $# -gt 0 ]; do
    case "$1" in
    --pelt) pelt="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --rate) rate="$2"; shift ;;
    --no-locust) locust=0 ;;
    --pairs) pairs="$2"; shift ;;
    --pairs-only) pairs_only=1 ;;
    --pin) pin_client=(taskset -c 0); pin_server=(taskset -c 1) ;;
    *) echo "error: unknown argument $1; see the comment at the top of bench/scenario.sh" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$pelt" ]; then
    cargo build --release -p pelt >&2
    pelt=target/release/pelt
fi
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time is missing; apt-get install time" >&2; exit 2; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "error: nginx is missing; scripts/test installs it" >&2; exit 2; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
nginx_pid=""
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    client_body_temp_path $work;
    server {
        listen 127.0.0.1:$port;
        location = /login { add_header Set-Cookie "sid=s3ss10n; Path=/; HttpOnly"; return 302 /; }
        location = /api/items { default_type application/json; return 200 '{"ok":true,"items":[{"id":7001},{"id":7002},{"id":7003}]}'; }
        location ~ ^/item/(\d+)\$ { default_type application/json; return 200 '{"id":\$1,"name":"item \$1","ok":true}'; }
    }
}
CONF
"${pin_server[@]}" "$nginx_bin" -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "$base/api/items" && break; sleep 0.1; done
printf '%s/api/items\n%s/item/7002\n' "$base" "$base" > "$work/targets.txt"

# One pelt run: prints "cpu_s requests failed" (and leaves its peak RSS,
# KB, in $work/rss).
run_pelt() {
    PELT_NO_HISTORY=1 BENCH_BASE="$base" /usr/bin/time -f '%U %S %M' -o "$work/time" \
        "${pin_client[@]}" "$pelt" run "$@" -t 1 -d "${duration}s" -q --no-save --format json > "$work/out.json"
    python3 - "$work/time" "$work/out.json" <<'PY'
import json, sys
u, s, m = open(sys.argv[1]).read().split()[-3:]
open(sys.argv[1] + ".rss", "w").write(m)
r = json.load(open(sys.argv[2]))
print(float(u) + float(s), r["requests"]["completed"], r["requests"]["failed"])
PY
}

row() { # name cpu requests failed
    python3 -c "import sys; n,c,r,f=sys.argv[1:]; c=float(c); r=int(r); print(f'| {n} | {r:,} | {f} | {c:.2f} | {c/r*1e6:.1f} |')" "$@"
}

if [ "$pairs" -gt 0 ]; then
    ratios=()
    for i in $(seq "$pairs"); do
        read -r pc pr _ < <(run_pelt -f "$work/targets.txt" -c 50)
        read -r sc sr _ < <(run_pelt --scenario bench/scenario/journey.toml -c 50)
        ratio=$(python3 -c "import sys; pc,pr,sc,sr=map(float,sys.argv[1:]); print(f'{sc/sr/(pc/pr):.3f}')" "$pc" "$pr" "$sc" "$sr")
        python3 -c "import sys; pc,pr,sc,sr=map(float,sys.argv[1:5]); print(f'pair {sys.argv[5]}: plain {pc/pr*1e6:.2f} µs/request, scenario {sc/sr*1e6:.2f} µs/request: {sys.argv[6]}x')" "$pc" "$pr" "$sc" "$sr" "$i" "$ratio"
        ratios+=("$ratio")
    done
    python3 -c "import statistics, sys; r=sorted(map(float, sys.argv[1:])); print(f'scenario / plain CPU per request, closed loop, median of {len(r)} pairs: {statistics.median(r):.3f}x (range {r[0]:.3f} - {r[-1]:.3f}; goal: at most 1.15x, issue 37)\n')" "${ratios[@]}"
    [ "$pairs_only" = 1 ] && exit 0
fi

echo "| run | requests | failed | CPU s | CPU µs/request |"
echo "|---|---|---|---|---|"
read -r c1 r1 f1 < <(run_pelt -f "$work/targets.txt" -c 50)
row "plain, closed loop -c 50" "$c1" "$r1" "$f1"
read -r c2 r2 f2 < <(run_pelt --scenario bench/scenario/journey.toml -c 50)
row "scenario, closed loop -c 50" "$c2" "$r2" "$f2"
read -r c3 r3 f3 < <(run_pelt -f "$work/targets.txt" --rate "$rate" -c 200)
row "plain, --rate $rate" "$c3" "$r3" "$f3"
read -r c4 r4 f4 < <(run_pelt --scenario bench/scenario/journey.toml --rate $((rate / 2)) -c 200)
row "scenario, --rate $((rate / 2)) flows/s" "$c4" "$r4" "$f4"
read -r c5 r5 f5 < <(run_pelt -f "$work/targets.txt" --rate "$rate" -c 200 --send-window 0)
row "plain, --rate $rate --send-window 0" "$c5" "$r5" "$f5"
read -r c6 r6 f6 < <(run_pelt --scenario bench/scenario/journey.toml --rate $((rate / 2)) -c 200 --send-window 1ms)
row "scenario, --rate $((rate / 2)) flows/s --send-window 1ms" "$c6" "$r6" "$f6"
python3 -c "
import sys
c1,r1,c2,r2,c3,r3,c4,r4=map(float,sys.argv[1:9])
c5,r5,c6,r6=map(float,sys.argv[9:])
print(f'\nscenario / plain CPU per request (goal: at most 1.15x, issue 37): closed loop {c2/r2/(c1/r1):.2f}x; rate, each by default {c4/r4/(c3/r3):.2f}x; rate, no window either {c4/r4/(c5/r5):.2f}x; rate, both windowed {c6/r6/(c3/r3):.2f}x')
" "$c1" "$r1" "$c2" "$r2" "$c3" "$r3" "$c4" "$r4" "$c5" "$r5" "$c6" "$r6"
read -r c7 r7 f7 < <(run_pelt --scenario bench/scenario/journey.toml -c 1000)
pelt_rss=$(cat "$work/time.rss")
row "scenario, closed loop -c 1000" "$c7" "$r7" "$f7"

if [ "$locust" = 1 ]; then
    venv="$HOME/.cache/pelt/locust"
    if [ ! -x "$venv/bin/locust" ]; then
        echo "bench/scenario.sh: installing locust (PyPI) into $venv" >&2
        python3 -m venv "$venv" && "$venv/bin/pip" install --quiet locust >&2
    fi
    /usr/bin/time -f '%U %S %M' -o "$work/ltime" "${pin_client[@]}" "$venv/bin/locust" -f bench/scenario/locustfile.py \
        --headless -u 50 -r 50 -t "${duration}s" --host "$base" --csv "$work/locust" --only-summary \
        >/dev/null 2>&1 || true
    read -r lc lr lf < <(python3 - "$work/ltime" "$work/locust_stats.csv" <<'PY'
import csv, sys
u, s, _ = open(sys.argv[1]).read().split()[-3:]
rows = list(csv.DictReader(open(sys.argv[2])))
agg = [r for r in rows if r["Name"] == "Aggregated"][0]
print(float(u) + float(s), agg["Request Count"], agg["Failure Count"])
PY
)
    row "locust FastHttpUser, 50 users" "$lc" "$lr" "$lf"
    python3 -c "
import sys
c2,r2,lc,lr=map(float,sys.argv[1:])
print(f'pelt scenario / locust CPU per request: {c2/r2/(lc/lr):.3f}x (goal: at most 0.1x)')
" "$c2" "$r2" "$lc" "$lr"
    /usr/bin/time -f '%U %S %M' -o "$work/ltime" "${pin_client[@]}" "$venv/bin/locust" -f bench/scenario/locustfile.py \
        --headless -u 1000 -r 1000 -t "${duration}s" --host "$base" --only-summary >/dev/null 2>&1 || true
    locust_rss=$(awk 'END { print $3 }' "$work/ltime")
    python3 -c "
import sys
p,l=map(float,sys.argv[1:])
print(f'peak RSS at 1,000 virtual users: pelt {p/1024:.1f} MB, locust {l/1024:.1f} MB: {p/l:.3f}x (goal: at most 0.2x)')
" "$pelt_rss" "$locust_rss"
fi
