#!/bin/sh
# A private Caddy (Debian's `caddy`) on 127.0.0.1:20095 speaking HTTP/1.1,
# HTTP/2 and HTTP/3 (TCP and UDP) with a self-signed certificate made here,
# one core (GOMAXPROCS=1, pinned to CPU 1 as the nginx examples are): the one
# server every variant of the plan loads.
#   caddy.sh start|stop
set -eu
cd "$(dirname "$0")"
dir="${PELT_EXPERIMENT_DIR:?run this from pelt experiment}/caddy"
case $1 in
start)
    mkdir -p "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1
    body=$(head -c 4096 /dev/zero | tr '\0' x)
    cat > "$dir/caddy.json" <<JSON
{
  "admin": {"disabled": true, "config": {"persist": false}},
  "storage": {"module": "file_system", "root": "$dir/data"},
  "logging": {"logs": {"default": {"level": "ERROR"}}},
  "apps": {
    "http": {
      "http_port": 0,
      "https_port": 20095,
      "servers": {"example": {
        "listen": ["127.0.0.1:20095"],
        "protocols": ["h1", "h2", "h3"],
        "routes": [{"handle": [{"handler": "static_response", "status_code": 200, "body": "$body"}]}],
        "tls_connection_policies": [{}],
        "automatic_https": {"disable": true}
      }}
    },
    "tls": {"certificates": {"load_files": [{"certificate": "$dir/cert.pem", "key": "$dir/key.pem"}]}}
  }
}
JSON
    pin=""
    if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then pin="taskset -c 1"; fi
    HOME="$dir" XDG_DATA_HOME="$dir/data" XDG_CONFIG_HOME="$dir/config" GOMAXPROCS=1 \
        $pin caddy run --config "$dir/caddy.json" > "$dir/caddy.log" 2>&1 &
    echo $! > "$dir/caddy.pid"
    ;;
stop)
    if [ -e "$dir/caddy.pid" ]; then
        kill "$(cat "$dir/caddy.pid")" 2>/dev/null || true
        rm -f "$dir/caddy.pid"
    fi
    ;;
esac
