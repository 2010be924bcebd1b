#!/usr/bin/env bash
# Builds the binaries to install into target/dist (target/dist-debug with --debug):
#   srt                  linked statically against musl (Rust's *-linux-musl target, which
#                        the script adds with rustup when it is missing): glibc's start-up
#                        probes the CPU's caches with ~40 cpuid instructions, each a VM exit
#                        (0.3 ms per `srt -c` on our 2-core VM); musl's probes nothing.
#                        Where that target cannot be had (or SRT_BUILD_GLIBC=1), against
#                        glibc's libc.a, and the script says so
#   srt-proxy            linked statically against glibc's libc.a
#   srt-controller       linked as cargo links it
# Static: no dynamic loader runs at start-up (about 1.5 ms less per `srt -c`), and a binary
# that runs in whatever image srt-controller copies it into. srt is linked at a fixed
# address, not as a static PIE (whose relocation at every start cost 0.75-0.9 ms);
# SRT_BUILD_PIE=1 builds a PIE. srt-proxy is always a PIE.
# Plain `cargo build --release` works too; its srt is dynamically linked and starts slower.
# Where no static libc can be had (libc.a missing: install glibc's static library, e.g.
# Fedora's glibc-static), srt and srt-proxy are linked dynamically, and the script says so.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
profile=release
out=target/dist
quiet=()
only=""
for arg in "$@"; do
  case "$arg" in
    --debug) profile=debug; out=target/dist-debug ;;
    --quiet) quiet=(--quiet) ;;
    --only=srt|--only-srt) only=srt ;;
    -h|--help)
      sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
      echo "usage: scripts/build.sh [--debug] [--quiet] [--only=srt]"
      echo "  --only=srt  build the launcher alone (what scripts/demo.sh runs)"
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
srt_from="$static"
musl="${host/-linux-gnu/-linux-musl}"
if [ "$musl" != "$host" ] && [ -z "${SRT_BUILD_GLIBC:-}" ] && command -v rustup >/dev/null 2>&1 &&
    { rustup target list --installed 2>/dev/null | grep -qx "$musl" ||
      { say "adding Rust's $musl target (rustup target add)"; rustup target add "$musl" >/dev/null 2>&1; }; }; then
  # a fixed-address executable: relocation-model=static (rustc then links crt1.o, not the
  # self-relocating rcrt1.o); SRT_BUILD_PIE keeps musl's static PIE
  fixed="-C relocation-model=static"
  [ -n "${SRT_BUILD_PIE:-}" ] && fixed=""
  say "srt, statically linked against musl ($profile, $musl)"
  if RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static $fixed" \
      cargo build "${quiet[@]}" "${flags[@]}" --target "$musl" -p srt-runtime --bin srt; then
    srt_from="target/$musl/$profile"
  else
    echo "scripts/build.sh: linking srt against musl failed; linking it against glibc" >&2
  fi
elif [ "$musl" != "$host" ] && [ -z "${SRT_BUILD_GLIBC:-}" ]; then
  echo "scripts/build.sh: Rust's $musl target is not installed and rustup could not add it;" \
    "srt is linked against glibc (its start-up costs about 0.3 ms more per command)" >&2
fi
if [ "$only" = srt ] && [ "$srt_from" != "$static" ]; then
  mkdir -p "$out"
  install -m 755 "$srt_from/srt" "$out/"
  say "done: $out/srt"
  exit 0
fi
pkgs=(-p srt-proxy)
names="srt-proxy"
[ "$srt_from" = "$static" ] && pkgs+=(-p srt-runtime) && names="srt and srt-proxy"
[ "$only" = srt ] && pkgs=(-p srt-runtime) && names="srt"
say "$names, statically linked against glibc ($profile, $host)"
if ! RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
    cargo build "${quiet[@]}" "${flags[@]}" --target "$host" "${pkgs[@]}"; then
  echo "scripts/build.sh: the static link failed (no static libc?); linking srt and srt-proxy dynamically" >&2
  [ "$srt_from" = "$static" ] && srt_from="target/$profile"
  static="target/$profile"
  cargo build "${quiet[@]}" "${flags[@]}" -p srt-runtime -p srt-proxy
fi
if [ "$only" = srt ]; then
  mkdir -p "$out"
  install -m 755 "$srt_from/srt" "$out/"
  say "done: $out/srt"
  exit 0
fi
say "srt-controller ($profile)"
# with the other two packages: the same features as their usual build, so nothing is built twice
cargo build "${quiet[@]}" "${flags[@]}" -p srt-runtime -p srt-proxy -p controller
mkdir -p "$out"
install -m 755 "$srt_from/srt" "$static/srt-proxy" "target/$profile/srt-controller" "$out/"
say "done: $out/srt, $out/srt-proxy, $out/srt-controller"
