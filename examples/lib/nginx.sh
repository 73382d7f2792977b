# Starts and stops private nginx instances for the examples: each with its
# own folder under $PELT_EXPERIMENT_DIR (config, pid, logs), one worker,
# never touching /etc/nginx or the system service.
#
#   . lib/nginx.sh
#   nginx_start NAME PORT SERVER_FILE [HTTP_FILE]  # SERVER_FILE: lines for the server block
#   nginx_stop NAME

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
    echo "nginx is not installed: apt-get install nginx (or run scripts/test, which installs it)" >&2
    exit 1
fi

nginx_dir() {
    echo "${PELT_EXPERIMENT_DIR:?run this from pelt experiment}/nginx-$1"
}

nginx_start() {
    name=$1 port=$2 server_file=$3 http_file=${4:-/dev/null}
    dir=$(nginx_dir "$name")
    mkdir -p "$dir/tmp" "$dir/cache"
    user=""
    [ "$(id -u)" = 0 ] && user="user root;"
    {
        echo "$user"
        echo "worker_processes 1;"
        echo "pid \"$dir/nginx.pid\";"
        echo "error_log \"$dir/error.log\" warn;"
        echo "events { worker_connections 4096; }"
        echo "http {"
        echo "    access_log off;"
        echo "    keepalive_requests 100000;"
        for t in client_body proxy fastcgi uwsgi scgi; do
            echo "    ${t}_temp_path \"$dir/tmp/$t\";"
        done
        cat "$http_file"
        echo "    server {"
        echo "        listen 127.0.0.1:$port;"
        cat "$server_file"
        echo "    }"
        echo "}"
    } > "$dir/nginx.conf"
    # Pinned to the second core when there is one, away from pelt on the first.
    pin=""
    [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null && pin="taskset -c 1"
    $pin "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log"
}

nginx_stop() {
    dir=$(nginx_dir "$1")
    [ -e "$dir/nginx.pid" ] || return 0
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -s quit
    # Bounded wait for the old master to exit, so the next variant can bind.
    i=0
    while [ -e "$dir/nginx.pid" ] && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}
