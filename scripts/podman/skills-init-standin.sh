#!/bin/bash
# A stand-in for kagent's skills-init image (scripts/podman-test.sh, part e): reads the config
# kagent's skills-init binary reads (/etc/kagent/skills-init/config.json) and clones each
# gitRefs entry as that binary does (git clone --depth 1 --branch REF -- URL DEST, then the
# subPath). The image carries the repository the test's skill comes from
# (file:///srv/skills.git): no network.
set -eu
cfg=/etc/kagent/skills-init/config.json
# podman removes a finished init container with its log: keep a copy where the test (through
# the agent) can read it; `ls` does not list it
exec > >(tee -a /skills/.skills-init.log) 2>&1
echo "skills-init uid=$(id -u)"
# one {...} per gitRefs entry (compact JSON, no nested objects inside an entry)
grep -o '"gitRefs":\[[^]]*\]' "$cfg" | grep -o '{[^{}]*}' | while read -r ref; do
  field() { grep -o "\"$1\":\"[^\"]*\"" <<<"$ref" | sed "s/^\"$1\":\"//; s/\"\$//"; }
  url=$(field url) branch=$(field ref) dest=$(field dest) sub=$(field subPath)
  echo "cloning $url (ref=$branch) into $dest"
  git clone --quiet --depth 1 --branch "$branch" -- "$url" "$dest"
  if [ -n "$sub" ]; then
    tmp=$(mktemp -d "$(dirname "$dest")/.skill-subpath-XXXXXX")
    cp -rL -- "$dest/$sub/." "$tmp"
    rm -rf "$dest"
    mv "$tmp" "$dest"
  fi
done
