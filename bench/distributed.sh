#!/bin/bash
# docs/DISTRIBUTED.md's measurement: two shards (--shard 0/2, 1/2, one
# --start-at) against one nginx, next to one process at the same total
# rate. Usage: bench/distributed.sh [PELT] (default target/release/pelt).
set -euo pipefail
P=$(realpath "${1:-target/release/pelt}")
W=$(mktemp -d)
trap 'kill "$NGINX" 2>/dev/null || true; rm -rf "$W"' EXIT
mkdir -p "$W/logs"
cat > "$W/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $W/logs/error.log;
pid $W/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:28123;
        location = /ok { return 200 "ok\n"; }
    }
}
CONF
nginx -p "$W" -c "$W/nginx.conf" &
NGINX=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:28123/ok >/dev/null && break; sleep 0.1; done
export PELT_DATA_DIR="$W/data" PELT_NO_HISTORY=1
URL=http://127.0.0.1:28123/ok
ARGS=(--rate 8000 -d 10s -c 200 -t 1 --warmup 1s)
cd "$W"
"$P" "$URL" "${ARGS[@]}" -q -o single.pelt --format json > single.json
T=$(( $(date +%s) + 3 ))
"$P" "$URL" "${ARGS[@]}" --shard 0/2 --start-at $T -q -o s0.pelt --format json > s0.json &
"$P" "$URL" "${ARGS[@]}" --shard 1/2 --start-at $T -q -o s1.pelt --format json > s1.json &
wait %2 %3
"$P" report s0.pelt s1.pelt --merge --format json > merged.json
for f in single merged s0 s1; do
  python3 - "$f" <<'PY'
import json, sys
f = sys.argv[1]
d = json.load(open(f + '.json'))
rt = d['latency']['response_time']['percentiles_s']
lag = d['latency']['send_lag']['percentiles_s']
sh = [w for w in d['warnings'] if w['kind'] == 'sharded']
spread = ' start spread %.3f ms' % (sh[0]['start_spread_ns'] / 1e6) if sh else ''
print(f"{f:7s} requests {d['requests']['total']:6d}  sent {d['requests']['sent_rate']:7.1f}/s  "
      f"p50 {rt['p50']*1e3:6.3f} ms  p99 {rt['p99']*1e3:6.3f} ms  send lag p99 {lag['p99']*1e3:6.3f} ms{spread}")
PY
done
