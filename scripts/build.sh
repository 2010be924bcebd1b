#!/usr/bin/env bash
# Builds the binaries to install into target/dist (target/dist-debug with --debug):
#   srt, srt-proxy       linked statically (glibc's libc.a): no dynamic loader runs at start-up,
#                        about 1.5 ms less per `srt -c` on our 2-core VM, and a binary that
#                        runs in whatever image srt-controller copies it into
#   srt-controller       linked as cargo links it
#   srt is linked at a fixed address, not as a static PIE (whose relocation at every start
#   cost 0.75-0.9 ms); SRT_BUILD_PIE=1 builds a PIE. srt-proxy is always a PIE.
# Plain `cargo build --release` works too; its srt is dynamically linked and starts slower.
# Where no static libc can be had (libc.a missing: install glibc's static library, e.g.
# Fedora's glibc-static), srt and srt-proxy are linked dynamically, and the script says so.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
profile=release
out=target/dist
quiet=()
for arg in "$@"; do
  case "$arg" in
    --debug) profile=debug; out=target/dist-debug ;;
    --quiet) quiet=(--quiet) ;;
    -h|--help)
      sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
      echo "usage: scripts/build.sh [--debug] [--quiet]"
      exit 0 ;;
    *) echo "scripts/build.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
say() { [ ${#quiet[@]} -gt 0 ] || echo "build.sh: $*" >&2; }
flags=()
[ "$profile" = release ] && flags=(--release)
host=$(rustc -vV | sed -n 's/^host: //p')
if [ -z "$host" ]; then
  echo "scripts/build.sh: rustc -vV names no host target; is Rust installed?" >&2
  exit 1
fi
# --target keeps the static flag off build scripts and proc macros (which must be dynamic)
# and puts these artifacts in target/$host/$profile, apart from cargo's usual ones
static="target/$host/$profile"
say "srt and srt-proxy, statically linked ($profile, $host)"
if ! RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
    cargo build "${quiet[@]}" "${flags[@]}" --target "$host" -p srt-runtime -p srt-proxy; then
  echo "scripts/build.sh: the static link failed (no static libc?); linking srt and srt-proxy dynamically" >&2
  static="target/$profile"
  cargo build "${quiet[@]}" "${flags[@]}" -p srt-runtime -p srt-proxy
fi
say "srt-controller ($profile)"
# with the other two packages: the same features as their usual build, so nothing is built twice
cargo build "${quiet[@]}" "${flags[@]}" -p srt-runtime -p srt-proxy -p controller
mkdir -p "$out"
install -m 755 "$static/srt" "$static/srt-proxy" "target/$profile/srt-controller" "$out/"
say "done: $out/srt, $out/srt-proxy, $out/srt-controller"
