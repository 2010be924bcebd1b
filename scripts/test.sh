#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, integration and escape tests, and the
# srt 0.0.83 conformance cases (runtime/tests/conformance.rs). Run as root to also run
# every escape test as uid 65534.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test" >&2
mkdir -p target
skips="$PWD/target/test-skipped.txt"
: > "$skips"
SRT_TEST_SKIP_LOG="$skips" cargo test --workspace --quiet 2>&1 | tee target/test-output.txt
# tests that could not do what their name says here (not root, no second uid, ...) are
# counted as skipped, not passed, with the reasons
if [ -s "$skips" ]; then
  echo "skipped, by reason:" >&2
  cut -f2 "$skips" | sort | uniq -c | sed 's/^/  /' >&2
fi
# a single closing line for CI readers: the totals over every test binary
awk -v skipped="$(sort -u "$skips" | wc -l)" \
  '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "%d passed, %d skipped, %d failed\n", p - skipped, skipped, f; exit (f > 0) }' target/test-output.txt
