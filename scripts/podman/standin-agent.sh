#!/bin/bash
# A stand-in for kagent's runtime image in scripts/podman-test.sh (parts c, d and e). Its image
# (Containerfile.standin) sets its own PATH with /opt/agent/bin first and starts it as
# ENTRYPOINT ["standin-agent"], found through that PATH, the way kagent's `app` image starts
# its runtime from /.kagent/.venv/bin. srt-controller gives it kagent's arguments
# (--host 0.0.0.0 --port 8080 --filepath /config). Like kagent's runtime it reads
# config.json at start: it refuses to start without a model (kagent's Python runtime reads
# model.api_key_passthrough at start-up), or without the API-key variable of the model's
# type, and lists the MCP tools. It writes what it sees to /tmp/standin-report (the test reads
# it with podman exec) and stays up as the pod's agent.
filepath=
while [ $# -gt 0 ]; do
  case $1 in
    --filepath) filepath=$2; shift 2 ;;
    *) shift ;;
  esac
done
# the first string value of KEY in a compact JSON file (the base image's python3 has no json)
json() { grep -o "\"$2\":\"[^\"]*\"" "$1" | head -n 1 | sed "s/^\"$2\":\"//; s/\"\$//"; }
config=$filepath/config.json
report=/tmp/standin-report
model_type=$(grep -o '"model":{[^}]*}' "$config" | grep -o '"type":"[^"]*"' | sed 's/"type":"//; s/"$//')
case $model_type in
  openai) key_var=OPENAI_API_KEY ;;
  anthropic) key_var=ANTHROPIC_API_KEY ;;
  *) key_var= ;;
esac
{
  echo "argv0=$0"
  echo "filepath=$filepath"
  echo "PATH=$PATH"
  echo "srt=$(command -v srt)"
  echo "KAGENT_URL=${KAGENT_URL:-}"
  echo "KAGENT_NAME=${KAGENT_NAME:-}"
  echo "service_account=${SRT_SERVICE_ACCOUNT_NAME:-}"
  echo "config_files=$(ls "$filepath" | sort | tr '\n' ' ')"
  echo "instruction=$(json "$config" instruction)"
  echo "card_name=$(json "$filepath/agent-card.json" name)"
  echo "model_type=$model_type"
  echo "api_key_var=${key_var:-none}"
  [ -n "$key_var" ] && echo "api_key_set=$([ -n "${!key_var:-}" ] && echo yes || echo no)"
  echo "tools=$(grep -o '"tools":\[[^]]*\]' "$config" | sed 's/"tools":\[//; s/\]$//; s/"//g' | tr '\n' ' ')"
  echo "skills_folder=${KAGENT_SKILLS_FOLDER:-}"
  [ -n "${KAGENT_SKILLS_FOLDER:-}" ] && {
    echo "skills=$(ls "$KAGENT_SKILLS_FOLDER" | sort | tr '\n' ' ')"
    echo "skill_md=$(head -n 1 "$KAGENT_SKILLS_FOLDER"/*/SKILL.md 2>&1)"
    echo "skills_writable=$(touch "$KAGENT_SKILLS_FOLDER/x" 2>/dev/null && echo yes || echo no)"
    cat "$KAGENT_SKILLS_FOLDER/.skills-init.log" 2>/dev/null | sed 's/^/skills_init_log: /'
  }
  # how kagent's runtimes run a skill's command
  echo "srt_run=$(cd /tmp && srt --settings "${KAGENT_SRT_SETTINGS_PATH:-}" bash -c 'echo ran-in-srt' 2>&1 | tail -n 1)"
} > "$report.tmp" 2>&1
# kagent's runtime does not start without a model and its key
if [ -z "$model_type" ] || { [ -n "$key_var" ] && [ -z "${!key_var:-}" ]; }; then
  echo "started=no" >> "$report.tmp"
  mv "$report.tmp" "$report"
  exit 1
fi
echo "started=yes" >> "$report.tmp"
mv "$report.tmp" "$report"
while :; do sleep 3600; done
