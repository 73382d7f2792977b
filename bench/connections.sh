#!/usr/bin/env bash
# Holds N keep-alive connections from one machine against a private nginx
# (issue 27): pelt opens them from several loopback source addresses
# (--source-addresses; one address has ~28,000 ports per destination),
# holds them for a few seconds sending a request on each every --delay,
# then closes them. Checks the counts against nginx's log (requests, and
# connections by worker and serial number) and prints peak RSS.
#
#   bench/connections.sh                          100,000 connections, 8 s
#   bench/connections.sh -c 20000 -d 6s           smaller
#   bench/connections.sh --pelt target/release/pelt --sources 127.0.0.2-127.0.0.17
#
# Every process needs a file descriptor per connection. The script raises
# `ulimit -n` as far as the hard limit allows (root can raise the hard
# limit too); when one process cannot hold every connection, pelt runs as
# several processes, each a `--shard I/N` of the same run (connection j goes
# to shard j mod N), and nginx gets enough workers. Why this is a script
# and not a CI test: 100,000 connections need ~200,000 sockets on the
# machine (both ends), ~1.5 GB of memory in all (kernel socket buffers,
# nginx, pelt), descriptor limits above the usual 1,024 or 20,000, and
# tens of seconds on two cores; a CI runner has none of that to spare.
# crates/pelt/tests/connections.rs holds 10,000 the same way, in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

connections=100000
duration=8s
delay=2s
sources=127.0.0.2-127.0.0.9
threads=2
connect_rate=0
pelt_bin=""
while [ $# -gt 0 ]; do
    case "$1" in
    -c) connections="$2"; shift ;;
    -d) duration="$2"; shift ;;
    --delay) delay="$2"; shift ;;
    --sources) sources="$2"; shift ;;
    -t) threads="$2"; shift ;;
    --connect-rate) connect_rate="$2"; shift ;;
    --pelt) pelt_bin="$2"; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1'; see bench/connections.sh --help" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "connections.sh: $*" >&2; }
export PATH="$PATH:/usr/sbin"
command -v nginx >/dev/null || { echo "error: nginx is not installed; apt-get install nginx" >&2; exit 1; }
if [ -z "$pelt_bin" ]; then
    log "building pelt (cargo build --release -p pelt)"
    cargo build --release -p pelt
    pelt_bin="$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/pelt"
fi

# As many descriptors as the system lets this shell have.
hard=$(ulimit -Hn)
want=$((connections + 1000))
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then
    ulimit -Hn "$want" 2>/dev/null || true
    hard=$(ulimit -Hn)
fi
ulimit -n "$hard"
limit=$(ulimit -n)
[ "$limit" = unlimited ] && limit=$want
per_process=$((limit - 200))
shards=$(((connections + per_process - 1) / per_process))
workers=$(((connections + per_process - 1) / per_process + 1))
log "open-file limit $limit: pelt as $shards process(es), nginx with $workers workers"
log "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

work=$(mktemp -d /tmp/pelt-connections-XXXXXX)
cleanup() {
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/logs" "$work/tmp"
port=$((20000 + RANDOM % 10000))
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
cat >"$work/nginx.conf" <<EOF
$user
worker_processes $workers;
worker_rlimit_nofile $limit;
daemon off;
master_process on;
pid "$work/nginx.pid";
error_log "$work/logs/error.log" warn;
events { worker_connections $per_process; multi_accept on; }
http {
    access_log off;
    client_body_temp_path "$work/tmp/cb";
    proxy_temp_path "$work/tmp/p";
    fastcgi_temp_path "$work/tmp/f";
    uwsgi_temp_path "$work/tmp/u";
    scgi_temp_path "$work/tmp/s";
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    log_format conn '\$pid \$connection \$remote_addr';
    server {
        listen 127.0.0.1:$port backlog=65535 reuseport;
        location = /ok {
            access_log "$work/logs/access.log" conn;
            default_type text/plain;
            return 200 "ok\n";
        }
    }
}
EOF
/usr/bin/time -f "%M" -o "$work/nginx.rss" nginx -p "$work" -c "$work/nginx.conf" >"$work/logs/out.log" 2>&1 &
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done

url="http://127.0.0.1:$port/ok"
log "pelt $url -c $connections --source-addresses $sources --delay $delay -d $duration (--connect-rate $connect_rate; 0: none)"
start=$(date +%s.%N)
pids=()
for i in $(seq 0 $((shards - 1))); do
    shard=()
    [ "$shards" -gt 1 ] && shard=(--shard "$i/$shards")
    [ "$connect_rate" = 0 ] || shard+=(--connect-rate "$connect_rate")
    PELT_NO_HISTORY=1 /usr/bin/time -f "%M" -o "$work/pelt-$i.rss" \
        "$pelt_bin" run "$url" -c "$connections" -t "$threads" -d "$duration" --delay "$delay" \
        --source-addresses "$sources" --timeout 30s \
        --no-save --format json "${shard[@]}" >"$work/pelt-$i.json" 2>"$work/pelt-$i.err" &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=$?; done
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
[ "$status" -eq 0 ] || { log "pelt failed (exit $status):"; cat "$work"/pelt-*.err >&2; exit 1; }
sleep 1 # nginx logs a request after sending its response
nginx_rss_now=$(ps -o rss= --ppid "$(cat "$work/nginx.pid")" | awk '{s += $1} END {print s}')

python3 - "$work" "$shards" "$connections" "$elapsed" "$nginx_rss_now" <<'PY'
import json, sys, collections
work, shards, want, elapsed, nginx_rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
requests = successes = opened = 0
rss = []
for i in range(shards):
    r = json.load(open(f"{work}/pelt-{i}.json"))
    requests += r["requests"]["total"]
    successes += r["requests"]["successes"]
    opened += r["connections"]["opened"]
    rss.append(int(open(f"{work}/pelt-{i}.rss").read().split()[-1]))
lines = open(f"{work}/logs/access.log").read().splitlines()
conns = {tuple(l.split()[:2]) for l in lines}
by_addr = collections.Counter(l.split()[2] for l in lines)
print(f"connections asked {want:,}, opened {opened:,}; nginx saw {len(conns):,} connections, "
      f"{len(lines):,} requests from {len(by_addr)} addresses")
print(f"pelt: {requests:,} requests, {successes:,} ok, in {elapsed:.1f} s (processes: {shards})")
print(f"peak RSS: pelt {sum(rss) / 1024:.0f} MB in all ({', '.join(f'{m / 1024:.0f}' for m in rss)}), "
      f"{sum(rss) * 1024 / max(opened, 1) / 1024:.1f} KB per connection; nginx workers {int(nginx_rss) / 1024:.0f} MB at the end")
ok = requests == len(lines) == successes and opened == len(conns) == want
print("counts exact: " + ("yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
