#!/usr/bin/env bash
# Runs one fuzz target for a bounded time (docs/FUZZING.md):
#   fuzz/run.sh TARGET [SECONDS]
# New inputs go to fuzz/corpus/TARGET (not committed); the committed seeds
# in fuzz/seeds/TARGET are read too. Crashes land in fuzz/artifacts/TARGET.
#
# -a: debug assertions and overflow checks on (an overflow is a finding).
# -s none: no sanitizer. pelt forbids unsafe code, and AddressSanitizer's
# quarantine alone holds ~450 MB, which would hide a real memory blow-up
# under -rss_limit_mb.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
secs=${2:-300}
mkdir -p "corpus/$target" "seeds/$target"
exec cargo +nightly fuzz run -O -a -s none "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$secs" -jobs=1 -timeout=5 -rss_limit_mb=512 </dev/null
