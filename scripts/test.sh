#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit, integration and escape tests, and the
# srt 0.0.83 conformance cases (runtime/tests/conformance.rs). Run as root to also run
# every escape test as uid 65534.
set -euo pipefail
cd "$(dirname "$0")/.."
cat >&2 <<'EOF'
scripts/test.sh: the whole suite; about 20 minutes on a 2-core machine the first time.
  As root it installs with apt what is missing: curl python3 git e2fsprogs procps golang-go
  nginx-light musl-tools nodejs strace (servers and clients the tests drive), podman runc mmdebstrap
  python3-yaml (the container suite), chromium python3-venv (the real-projects corpus), and
  downloads the corpus's pinned projects from Debian's archive, PyPI and the npm registry.
  Then: cargo fmt --check, cargo clippy, cargo test --workspace, scripts/podman-test.sh,
  scripts/workloads.sh --ci, and one closing line: N passed, M skipped, F failed.
EOF
started=$(date +%s)
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
# the real container runtime (podman, runc): images built from this workspace, srt in
# unprivileged containers and in the pod srt-controller renders. Skips (recorded in
# $skips) where podman cannot run; its checks count in the totals below
# it packages scripts/build.sh's debug binaries (srt linked statically; the debug build
# spares CI a release build with fat LTO), which it builds itself as its first check
echo "== scripts/podman-test.sh" >&2
required=""
[ "$(id -u)" -eq 0 ] && required=1
SRT_PODMAN_REQUIRED=$required SRT_PODMAN_BIN_DIR=target/dist-debug SRT_TEST_SKIP_LOG="$skips" timeout 3600 bash scripts/podman-test.sh 2>&1 | tee target/podman-test-output.txt || true
# real projects' suites under srt beside a bare run (scripts/workloads.py): the part that
# fits CI's time (express, werkzeug, git, Chromium, npm from a loopback registry), both
# modes, root and uid 65534, with the debug srt; each srt run counts as one check
echo "== scripts/workloads.sh --ci" >&2
timeout 2400 bash scripts/workloads.sh --ci --srt target/debug/srt 2>&1 | tee target/workloads-output.txt || true
# tests that could not do what their name says here (not root, no second uid, ...) are
# counted as skipped, not passed, with the reasons
if [ -s "$skips" ]; then
  echo "skipped, by reason:" >&2
  cut -f2 "$skips" | sort | uniq -c | sed 's/^/  /' >&2
fi
echo "scripts/test.sh: took $(( ($(date +%s) - started) / 60 )) min" >&2
# a single closing line for CI readers: the totals over every test binary
# (a skipped podman test is one skip that no "test result:" line counted as passed; a
# podman run that ended without its "podman: N passed, M failed" line is one failure, and
# so is a workloads run without its "workloads: N passed, M failed" line)
podman_skipped=$(grep -c '^podman-test	' "$skips" || true)
awk -v skipped="$(sort -u "$skips" | wc -l)" -v podman_skipped="$podman_skipped" \
  'FNR == 1 { file++ }
   file == 1 && /^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
   file == 2 && /^podman: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4; podman_done = 1 }
   file == 2 && /^skipped: podman real-runtime test:/ { podman_done = 1 }
   file == 3 && /^workloads: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4; workloads_done = 1 }
   END { if (!podman_done) f++
         if (!workloads_done) f++
         printf "%d passed, %d skipped, %d failed\n", p - (skipped - podman_skipped), skipped, f; exit (f > 0) }' \
  target/test-output.txt target/podman-test-output.txt target/workloads-output.txt
