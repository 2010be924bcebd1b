#!/usr/bin/env bash
# Installs the system tools the test suite drives (idempotent; needs root or sudo for apt).
set -euo pipefail
need=()
for tool in curl python3 setsid truncate ps git chattr go node musl-gcc strace; do
  command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
[ -x /usr/bin/python3 ] || need+=(python3)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing test dependencies (missing: ${need[*]})" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
# golang-go, nginx-light and nodejs: the server families the first-flight gate is tested
# against (proxy/tests/gate.rs); the packages' services are not wanted
# musl-tools: a dynamically linked musl program under the create preload
# (runtime/tests/native_create.rs)
# strace: its fault injection stands in for a kernel without Landlock TCP rules
# (runtime/tests/escape/connect_reread.rs)
$SUDO apt-get install -y -qq curl python3 util-linux coreutils procps git e2fsprogs golang-go nginx-light strace \
  musl-tools >/dev/null
command -v node >/dev/null 2>&1 || $SUDO apt-get install -y -qq nodejs >/dev/null
$SUDO systemctl stop nginx 2>/dev/null || true
$SUDO systemctl disable nginx 2>/dev/null || true
