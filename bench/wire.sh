#!/usr/bin/env bash
# pelt's service time against tcpdump's view of the wire (see bench/wire.py).
set -euo pipefail
exec python3 "$(dirname "$0")/wire.py" "$@"
