#!/usr/bin/env bash
# Peers and origin for the proxy benchmark (cargo bench -p srt-proxy --bench proxy_bench).
set -euo pipefail
if command -v nginx >/dev/null && command -v tinyproxy >/dev/null; then exit 0; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light tinyproxy util-linux >/dev/null
# the packages start system services we do not want competing with the benchmark
$SUDO systemctl stop nginx tinyproxy 2>/dev/null || $SUDO pkill -x nginx || true
$SUDO pkill -x tinyproxy || true
