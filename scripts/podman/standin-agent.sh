#!/bin/bash
# A stand-in for kagent's runtime image in scripts/podman-test.sh (part c). Its image
# (Containerfile.standin) sets its own PATH with /opt/agent/bin first and starts it as
# ENTRYPOINT ["standin-agent"], found through that PATH, the way kagent's `app` image starts
# its runtime from /.kagent/.venv/bin. srt-controller gives it kagent's arguments
# (--host 0.0.0.0 --port 8080 --filepath /config). It writes what it sees to
# /tmp/standin-report (the test reads it with podman exec) and stays up as the pod's agent.
filepath=
while [ $# -gt 0 ]; do
  case $1 in
    --filepath) filepath=$2; shift 2 ;;
    *) shift ;;
  esac
done
# the first string value of KEY in a compact JSON file (the base image's python3 has no json)
json() { grep -o "\"$2\":\"[^\"]*\"" "$1" | head -n 1 | sed "s/^\"$2\":\"//; s/\"\$//"; }
report=/tmp/standin-report
{
  echo "argv0=$0"
  echo "filepath=$filepath"
  echo "PATH=$PATH"
  echo "srt=$(command -v srt)"
  echo "KAGENT_URL=${KAGENT_URL:-}"
  echo "KAGENT_NAME=${KAGENT_NAME:-}"
  echo "service_account=${SRT_SERVICE_ACCOUNT_NAME:-}"
  echo "config_files=$(ls "$filepath" | sort | tr '\n' ' ')"
  echo "instruction=$(json "$filepath/config.json" instruction)"
  echo "card_name=$(json "$filepath/agent-card.json" name)"
  # how kagent's runtimes run a skill's command
  echo "srt_run=$(cd /tmp && srt --settings "${KAGENT_SRT_SETTINGS_PATH:-}" bash -c 'echo ran-in-srt' 2>&1 | tail -n 1)"
} > "$report.tmp" 2>&1
mv "$report.tmp" "$report"
while :; do sleep 3600; done
