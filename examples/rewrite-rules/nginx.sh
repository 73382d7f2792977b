#!/bin/sh
# nginx with N regex rewrite rules that never match, so every request is
# checked against all of them (the seed's "819 rewrite rules").
#   nginx.sh start|stop RULES
set -eu
cd "$(dirname "$0")"
. ../lib/nginx.sh
action=$1 rules=$2
name="rules-$rules"
case $action in
start)
    server=$(nginx_dir "$name").server
    mkdir -p "$(nginx_dir "$name")"
    i=0
    : > "$server"
    while [ $i -lt "$rules" ]; do
        echo "        rewrite ^/old/page-$i/(.*)\$ /new/page-$i/\$1 permanent;" >> "$server"
        i=$((i + 1))
    done
    echo '        location / { default_type text/plain; return 200 "hello\n"; }' >> "$server"
    nginx_start "$name" 20080 "$server"
    ;;
stop) nginx_stop "$name" ;;
esac
