#!/usr/bin/env bash
# Measures pelt against peer HTTP load generators (wrk, ab, hey, vegeta,
# bombardier, oha; siege for a connection per request) on this machine, against a private nginx on loopback; and
# pelt's HTTP/3 against its own HTTP/2 and oha's http3 build, on a private
# Caddy (the h3 test).
#
#   bench/peers.sh                     install what is missing, build pelt, full run
#   bench/peers.sh --quick             1 round, 2 s runs: for development and the test
#   bench/peers.sh --tools pelt,wrk    only these tools (nginx is always used)
#   bench/peers.sh --skip-install      use what is installed; report the rest as missing
#   bench/peers.sh --pelt PATH         use this pelt binary instead of building one
#   bench/peers.sh --install-only      install the tools, run nothing
#
# Everything else is passed to the harness, the bench/peers package (see --help:
# --rounds, --duration, --seed, --out-dir, ...). See bench/README.md.
#
# Installing is idempotent: a tool that is already there is not touched, and a
# tool that fails to install is reported and skipped by the harness, never
# fatal. Installs use the machine's registries only: Debian packages, the Go
# module proxy (hey, vegeta, bombardier) and crates.io (oha).
set -euo pipefail
cd "$(dirname "$0")/.."

# The command line as the report shows it: plain words bare, others quoted.
shell_words() {
    local arg
    for arg in "$@"; do
        if [[ "$arg" =~ ^[A-Za-z0-9_@%+=:,./-]+$ ]]; then
            printf ' %s' "$arg"
        else
            printf " '%s'" "${arg//\'/\'\\\'\'}"
        fi
    done
}
COMMAND_LINE="bench/peers.sh$(shell_words "$@")"
ALL_TOOLS="wrk,ab,hey,vegeta,bombardier,oha,pelt,h2load,oha-h3,siege"

# Versions of the Go tools built from their module source (see PEERS.md: `go
# install` of these fails on a deprecation lookup after downloading).
VEGETA_MODULE=github.com/tsenart/vegeta/v12
VEGETA_VERSION=v12.12.0
BOMBARDIER_MODULE=github.com/codesenberg/bombardier
BOMBARDIER_VERSION=v1.2.6

skip_install=0
install_only=0
tools="$ALL_TOOLS"
pelt_bin=""
passthrough=()
while [ $# -gt 0 ]; do
    case "$1" in
    --skip-install) skip_install=1 ;;
    --install-only) install_only=1 ;;
    --tools)
        [ $# -ge 2 ] || { echo "error: --tools needs a list, like --tools pelt,wrk" >&2; exit 2; }
        tools="$2"
        shift
        ;;
    --tools=*) tools="${1#--tools=}" ;;
    --pelt)
        [ $# -ge 2 ] || { echo "error: --pelt needs a path to a pelt binary" >&2; exit 2; }
        pelt_bin="$2"
        shift
        ;;
    --pelt=*) pelt_bin="${1#--pelt=}" ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exec python3 -m bench.peers --help
        ;;
    *) passthrough+=("$1") ;;
    esac
    shift
done

log() { echo "peers.sh: $*" >&2; }

# Go and cargo install into these; Debian's nginx lives in /usr/sbin, which a
# non-root PATH often lacks.
if command -v go >/dev/null 2>&1; then
    GOBIN_DIR="$(go env GOPATH)/bin"
    export PATH="$PATH:$GOBIN_DIR"
fi
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin:/usr/sbin:/usr/local/go/bin"

wants() { [[ ",$tools," == *",$1,"* ]]; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        sudo "$@"
    fi
}

# Debian packages: nginx (the server), wrk, apache2-utils (ab), siege,
# nghttp2-client (h2load), openssl (the h2 test's certificate), time
# (/usr/bin/time), util-linux (taskset) and tcpdump (the ceiling's send lag
# on the wire).
install_debian() {
    local packages=()
    command -v nginx >/dev/null 2>&1 || packages+=(nginx)
    if wants wrk && ! command -v wrk >/dev/null 2>&1; then packages+=(wrk); fi
    if wants ab && ! command -v ab >/dev/null 2>&1; then packages+=(apache2-utils); fi
    if wants h2load && ! command -v h2load >/dev/null 2>&1; then packages+=(nghttp2-client); fi
    if wants siege && ! command -v siege >/dev/null 2>&1; then packages+=(siege); fi
    # The h3 test's server (Debian's nginx 1.22 has no HTTP/3).
    command -v caddy >/dev/null 2>&1 || packages+=(caddy)
    command -v openssl >/dev/null 2>&1 || packages+=(openssl)
    [ -x /usr/bin/time ] || packages+=(time)
    command -v taskset >/dev/null 2>&1 || packages+=(util-linux)
    command -v tcpdump >/dev/null 2>&1 || [ -x /usr/bin/tcpdump ] || packages+=(tcpdump)
    [ ${#packages[@]} -gt 0 ] || return 0
    log "installing Debian packages: ${packages[*]}"
    # Debian's nginx postinst starts the system service on port 80; we never
    # use it, so forbid service starts during the install (policy-rc.d exit
    # 101 is "action not allowed"), unless the machine already has a policy.
    local policy=/usr/sbin/policy-rc.d
    local added_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
        as_root chmod 755 "$policy"
        added_policy=1
    fi
    local status=0
    {
        as_root apt-get update &&
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}" </dev/null
    } || status=$?
    if [ "$added_policy" -eq 1 ]; then
        as_root rm -f "$policy"
    fi
    [ "$status" -eq 0 ] || log "warning: apt-get install failed (exit $status); missing tools will be skipped"
}

# Builds a Go command from its module source in the module cache.
# $1 binary name, $2 module, $3 version, $4 ldflags.
go_build_from_module() {
    local name="$1" module="$2" version="$3" ldflags="$4"
    if command -v "$name" >/dev/null 2>&1; then return 0; fi
    if ! command -v go >/dev/null 2>&1; then
        log "warning: go is not installed, cannot build $name; it will be skipped"
        return 0
    fi
    log "building $name $version from its module source"
    # Downloads the source; the install itself fails on a deprecation lookup.
    go install "$module@$version" >/dev/null 2>&1 || true
    local dir
    dir="$(go env GOMODCACHE)/$module@$version"
    if [ ! -d "$dir" ]; then
        go mod download "$module@$version" >/dev/null 2>&1 || true
    fi
    if [ -d "$dir" ]; then
        (cd "$dir" && GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$GOBIN_DIR/$name" .) ||
            log "warning: building $name failed; it will be skipped"
    else
        log "warning: could not download $module@$version; $name will be skipped"
    fi
}

install_go_tools() {
    if wants hey && ! command -v hey >/dev/null 2>&1; then
        if command -v go >/dev/null 2>&1; then
            log "installing hey (go install)"
            go install github.com/rakyll/hey@latest || log "warning: installing hey failed; it will be skipped"
        else
            log "warning: go is not installed, cannot install hey; it will be skipped"
        fi
    fi
    if wants vegeta; then
        go_build_from_module vegeta "$VEGETA_MODULE" "$VEGETA_VERSION" "-X main.Version=$VEGETA_VERSION"
    fi
    if wants bombardier; then
        go_build_from_module bombardier "$BOMBARDIER_MODULE" "$BOMBARDIER_VERSION" "-X main.version=$BOMBARDIER_VERSION"
    fi
}

install_oha() {
    if wants oha && ! command -v oha >/dev/null 2>&1; then
        # --locked: without it a dependency wants a newer rustc than ours.
        log "installing oha (cargo install oha --locked; takes several minutes)"
        cargo install oha --locked || log "warning: installing oha failed; it will be skipped"
    fi
}

# oha with its experimental `http3` feature, apart from the plain oha (the
# HTTP/1.1 rows): the h3 test's peer.
OHA_H3_ROOT="$HOME/.cache/pelt/oha-h3"
install_oha_h3() {
    if wants oha-h3 && [ ! -x "$OHA_H3_ROOT/bin/oha" ]; then
        log "installing oha with http3 (cargo install oha --features http3 --locked --root $OHA_H3_ROOT; several minutes)"
        cargo install oha --features http3 --locked --root "$OHA_H3_ROOT" ||
            log "warning: installing oha with http3 failed; oha-h3 will be skipped"
    fi
}

if [ "$skip_install" -eq 0 ]; then
    install_debian
    install_go_tools
    install_oha
    install_oha_h3
fi
if [ "$install_only" -eq 1 ]; then
    exit 0
fi

if wants pelt && [ -z "$pelt_bin" ]; then
    log "building pelt (cargo build --release -p pelt)"
    cargo build --release -p pelt
    target_dir="$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    pelt_bin="$target_dir/release/pelt"
fi

# The scale test's 10,000 connections need as many descriptors: as many as
# the hard limit allows.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

args=(--tools "$tools" --command-line "$COMMAND_LINE")
[ -z "$pelt_bin" ] || args+=(--pelt "$pelt_bin")
exec python3 -m bench.peers "${args[@]}" ${passthrough[@]+"${passthrough[@]}"}
