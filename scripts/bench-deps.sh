#!/usr/bin/env bash
# Peers and origin for the proxy benchmark (cargo bench -p srt-proxy --bench proxy_bench).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# srt 0.0.83's proxy (createHttpProxyServer on Node), the baseline for the connection rate
deps="$(cd "$(dirname "$0")/.." && pwd)/target/bench-deps/srt-0.0.83"
if [ ! -e "$deps/node_modules/@anthropic-ai/sandbox-runtime" ]; then
  command -v node >/dev/null || { $SUDO apt-get update -qq; $SUDO apt-get install -y -qq nodejs npm >/dev/null; }
  mkdir -p "$deps"
  (cd "$deps" && npm install --no-audit --no-fund --silent @anthropic-ai/sandbox-runtime@0.0.83 >/dev/null)
fi
cat > "$deps/proxy.mjs" <<'EOF'
import { createHttpProxyServer } from "@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js";
const s = createHttpProxyServer({ filter: () => true });
s.listen(Number(process.argv[2]), "127.0.0.1");
EOF
# srt 0.0.83 itself (the start-up benchmark's SRT_BENCH_ANTHROPIC) runs bubblewrap, socat and ripgrep
ln -sf "$deps/node_modules/.bin/srt" "$deps/srt"
if command -v nginx >/dev/null && command -v tinyproxy >/dev/null && command -v bwrap >/dev/null \
    && command -v socat >/dev/null && command -v rg >/dev/null; then exit 0; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light tinyproxy util-linux bubblewrap socat ripgrep >/dev/null
# the packages start system services we do not want competing with the benchmark
$SUDO systemctl stop nginx tinyproxy 2>/dev/null || $SUDO pkill -x nginx || true
$SUDO pkill -x tinyproxy || true
