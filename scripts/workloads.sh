#!/usr/bin/env bash
# Real projects' test suites under srt beside a bare run (scripts/workloads.py --help).
#
# As root it first installs what the workloads drive and is missing, with apt: chromium
# (about 350 MB), git, nodejs and npm, python3-venv. The first run downloads the pinned
# sources (workloads/sources.json) and their dependencies from the registries into
# /var/tmp/srt-workloads (about 700 MB with a Rust toolchain copy); later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
[ -x /usr/bin/chromium ] || need+=(chromium)
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "workloads: missing ${need[*]}; run as root to install them, or install them yourself" >&2
  else
    echo "workloads: installing ${need[*]} with apt (a minute or two)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi
exec python3 scripts/workloads.py "$@"
