#!/bin/sh
# nginx serving a 1 KB static file.
#   nginx.sh start|stop
set -eu
cd "$(dirname "$0")"
. ../lib/nginx.sh
name=static
dir=$(nginx_dir "$name")
case $1 in
start)
    mkdir -p "$dir/html"
    head -c 1024 /dev/zero | tr '\0' 'a' > "$dir/html/1k.txt"
    echo "        location / { root \"$dir/html\"; }" > "$dir.server"
    nginx_start "$name" 20085 "$dir.server"
    ;;
stop) nginx_stop "$name" ;;
esac
