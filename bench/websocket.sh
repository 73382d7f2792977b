#!/usr/bin/env bash
# Issue 40's benchmark: client CPU per echoed WebSocket message, pelt
# against Locust, on a Go echo server (bench/websocket/echo.go, on
# github.com/coder/websocket from the Go module proxy) on loopback.
#
#   pelt    pelt run ws://... --body hello -c 50 -t 1 (a closed loop at full
#           speed), and at a fixed --rate
#   locust  bench/websocket/locustfile.py: 50 users, each one connection
#           (websocket-client under Locust's gevent), send, wait for the
#           echo, report, no wait between; one process (PyPI, in the venv
#           under ~/.cache/pelt/locust; --no-locust skips it)
#
# CPU is user + system from /usr/bin/time; messages are what the client
# counted, checked against the server's own count (it prints what it
# received when its input closes). The server runs on CPU 0 and the
# client on CPU 1 (taskset), so that each is measured on a core of its
# own; the machine's other work still shares them, so run it twice.
# Artillery (npm) is not run: see docs/BENCHMARKS.md.
#
#   bench/websocket.sh [--pelt PATH] [--duration S] [--rate R] [--no-locust]
set -euo pipefail
cd "$(dirname "$0")/.."

pelt=""
duration=10
rate=5000
locust=1
while [ $# -gt 0 ]; do
    case "$1" in
    --pelt) pelt="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --rate) rate="$2"; shift ;;
    --no-locust) locust=0 ;;
    *) echo "error: unknown argument $1; see the comment at the top of bench/websocket.sh" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$pelt" ]; then
    cargo build --release -p pelt >&2
    pelt=target/release/pelt
fi
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time is missing; apt-get install time" >&2; exit 2; }
command -v go >/dev/null || { echo "error: go is missing (the echo server is built from the Go module proxy)" >&2; exit 2; }

work=$(mktemp -d)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
(cd bench/websocket && go build -o "$work/ws-echo" .) >&2

# Starts a fresh echo server on CPU 0; sets $port and $server_pid, and
# keeps its input open on fd 3.
start_server() {
    mkfifo "$work/in"
    taskset -c 0 "$work/ws-echo" < "$work/in" > "$work/server.out" &
    server_pid=$!
    exec 3> "$work/in"
    for _ in $(seq 100); do
        grep -q '^port ' "$work/server.out" 2>/dev/null && break
        sleep 0.05
    done
    port=$(awk '/^port /{print $2}' "$work/server.out")
}

# Stops the server (in this shell: its input is this shell's fd 3); sets
# $got to the messages it received.
stop_server() {
    exec 3>&-
    wait "$server_pid" || true
    server_pid=""
    rm -f "$work/in"
    got=$(awk '/^received /{print $2}' "$work/server.out")
}

# One pelt run: prints "cpu_s messages failed sent".
run_pelt() {
    PELT_NO_HISTORY=1 taskset -c 1 /usr/bin/time -f '%U %S %M' -o "$work/time" \
        "$pelt" run "ws://127.0.0.1:$port/" --body hello "$@" -t 1 -d "${duration}s" -q --no-save \
        --format json > "$work/out.json"
    python3 - "$work/time" "$work/out.json" <<'PY'
import json, sys
u, s, m = open(sys.argv[1]).read().split()[-3:]
r = json.load(open(sys.argv[2]))["requests"]
print(float(u) + float(s), r["completed"], r["failed"], r["sent"])
PY
}

# CPU per message is per message the server received (the witness):
# Locust's own count leaves out exchanges cut off when its run stops.
row() { # name cpu messages failed server_received
    python3 -c "import sys; n,c,r,f,s=sys.argv[1:]; c=float(c); s=int(s or 0); print(f'| {n} | {int(r):,} | {f} | {s:,} | {c:.2f} | {c/max(s,1)*1e6:.1f} |')" "$@"
}

echo "| client | messages (client's count) | failed | server received | CPU s | CPU µs/message received |"
echo "|---|---|---|---|---|---|"
start_server
read -r c1 m1 f1 s1 < <(run_pelt -c 50)
stop_server
[ "$got" = "$s1" ] || echo "warning: pelt sent $s1 messages, the server received $got" >&2
row "pelt -c 50 (closed loop)" "$c1" "$m1" "$f1" "$got"

start_server
read -r c2 m2 f2 s2 < <(run_pelt -c 50 --rate "$rate")
stop_server
[ "$got" = "$s2" ] || echo "warning: pelt sent $s2 messages, the server received $got" >&2
row "pelt --rate $rate -c 50" "$c2" "$m2" "$f2" "$got"

if [ "$locust" = 1 ]; then
    venv="$HOME/.cache/pelt/locust"
    if ! "$venv/bin/python" -c 'import locust, websocket' 2>/dev/null; then
        echo "bench/websocket.sh: installing locust and websocket-client (PyPI) into $venv" >&2
        [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet locust websocket-client >&2
    fi
    start_server
    BENCH_WS="ws://127.0.0.1:$port/" BENCH_MESSAGE=hello taskset -c 1 \
        /usr/bin/time -f '%U %S %M' -o "$work/ltime" "$venv/bin/locust" -f bench/websocket/locustfile.py \
        --headless -u 50 -r 50 -t "${duration}s" --csv "$work/locust" --only-summary \
        > /dev/null 2> "$work/locust.err" || true
    stop_server
    read -r c3 m3 f3 < <(python3 - "$work/ltime" "$work/locust_stats.csv" <<'PY'
import csv, sys
u, s, m = open(sys.argv[1]).read().split()[-3:]
for row in csv.DictReader(open(sys.argv[2])):
    if row["Name"] == "Aggregated":
        print(float(u) + float(s), row["Request Count"], row["Failure Count"])
PY
)
    row "locust -u 50 (closed loop)" "$c3" "$m3" "$f3" "$got"
    python3 -c "
import sys
c1,m1,c3,m3=map(float,sys.argv[1:])
print(f'\npelt / locust CPU per echoed message (goal: at most 0.5x): {c1/m1/(c3/m3):.3f}x')
" "$c1" "$s1" "$c3" "$got"
fi
