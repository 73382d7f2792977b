#!/usr/bin/env bash
# Runs one fuzz target for a bounded time (docs/FUZZING.md):
#   fuzz/run.sh TARGET [SECONDS]
# New inputs go to fuzz/corpus/TARGET (not committed); the committed seeds
# in fuzz/seeds/TARGET are read too. Crashes land in fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
secs=${2:-300}
mkdir -p "corpus/$target" "seeds/$target"
exec cargo +nightly fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$secs" -jobs=1 -timeout=5 -rss_limit_mb=512 </dev/null
