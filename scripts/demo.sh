#!/usr/bin/env bash
# Builds srt and runs a command under the embedded default policy (no settings file):
# it writes in its working directory, then tries to leave it and to reach the network.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# the demo's network attempt needs curl
command -v curl >/dev/null 2>&1 || bash "$root/scripts/deps.sh"
# only what the demo runs: srt, linked statically as users install it (cargo shows its
# progress; the first build takes a few minutes, later ones seconds)
echo "building srt (scripts/build.sh --only=srt)" >&2
bash "$root/scripts/build.sh" --only=srt
work="$(mktemp -d -t srt-demo.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "running in $work with the built-in default policy" >&2
HOME="$work" "$root/target/dist/srt" -c '
  echo "hello from the sandbox" > hello.txt && echo "wrote ./hello.txt: $(cat hello.txt)"
  { echo x > /etc/srt-demo; } 2>/dev/null && echo "wrote /etc (unexpected)" || echo "write to /etc refused"
  { echo x >> .bashrc; } 2>/dev/null && echo "wrote .bashrc (unexpected)" || echo "write to .bashrc refused (mandatory deny)"
  curl -sS --max-time 5 https://example.com/ -o /dev/null && echo "network reached (unexpected)" || echo "network refused by the proxy (example.com is not allowed)"
'
