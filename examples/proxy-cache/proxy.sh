#!/bin/sh
# A slow backend (pelt serve, 20 ms per response) behind nginx as a reverse
# proxy, with or without its cache.
#   proxy.sh backend start|stop       the backend, once for all variants
#   proxy.sh start|stop cache|nocache a variant's proxy
set -eu
cd "$(dirname "$0")"
. ../lib/nginx.sh
action=$1 mode=$2
if [ "$action" = backend ]; then
    dir="${PELT_EXPERIMENT_DIR:?run this from pelt experiment}/backend"
    case $mode in
    start)
        mkdir -p "$dir"
        "${PELT:-pelt}" serve --port 20091 -t 1 > "$dir/backend.log" 2>&1 &
        echo $! > "$dir/backend.pid"
        ;;
    stop)
        if [ -e "$dir/backend.pid" ]; then
            kill "$(cat "$dir/backend.pid")" 2>/dev/null || true
            rm -f "$dir/backend.pid"
        fi
        ;;
    esac
    exit 0
fi
name="proxy-$mode"
dir=$(nginx_dir "$name")
case $action in
start)
    mkdir -p "$dir"
    echo "    proxy_cache_path \"$dir/cache\" keys_zone=pelt:10m;" > "$dir.http"
    {
        echo "        location / {"
        echo "            proxy_pass http://127.0.0.1:20091;"
        echo "            proxy_http_version 1.1;"
        echo '            proxy_set_header Connection "";'
        if [ "$mode" = cache ]; then
            echo "            proxy_cache pelt;"
            echo "            proxy_cache_valid 200 10m;"
            echo "            proxy_cache_lock on;"
        fi
        echo "        }"
    } > "$dir.server"
    nginx_start "$name" 20090 "$dir.server" "$dir.http"
    ;;
stop)
    nginx_stop "$name"
    ;;
esac
