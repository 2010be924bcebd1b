#!/usr/bin/env bash
# Run by scripts/podman-test.sh (part d) through `podman exec` in the pod of an agent whose
# container gets OPENAI_API_KEY (its ModelConfig's key) and ACME_LICENSE (a name no
# credential rule catches: only srt-controller's exclusion by name keeps it out) from a
# Secret (secretKeyRef), mounts a Secret volume and holds a stand-in for kagent's token at
# /var/run/secrets/tokens/kagent-token.
# The agent (pid 1) has all of them; a command it runs through srt (with the settings
# srt-controller rendered, $KAGENT_SRT_SETTINGS_PATH) sees none, and still lists / and keeps
# PATH, HOME and the proxy variables.
# Usage: credentials.sh SECRET_FILE KEY_VALUE LICENSE_VALUE
# One line per check: "PASS name" / "FAIL name: detail".
set -u
secret_file=$1 key=$2 license=$3
token=/var/run/secrets/tokens/kagent-token
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $(printf '%s' "$2" | tail -n 4 | tr '\n' ' ' | cut -c1-300)"; }
srt_() { (cd /tmp && timeout 30 srt --settings "$KAGENT_SRT_SETTINGS_PATH" "$@") 2>&1; }

# the agent holds them
agent_env=$(tr '\0' '\n' < /proc/1/environ)
if grep -qxF "OPENAI_API_KEY=$key" <<<"$agent_env" && grep -qxF "ACME_LICENSE=$license" <<<"$agent_env"; then
  pass "the agent (pid 1) has OPENAI_API_KEY and ACME_LICENSE from the Secret"
else
  fail "the agent (pid 1) has OPENAI_API_KEY and ACME_LICENSE from the Secret" "$(tr '\n' ' ' <<<"$agent_env")"
fi
file_content=$(cat "$secret_file" 2>&1)
[ -r "$secret_file" ] && [ -n "$file_content" ] && pass "the agent reads the Secret volume ($secret_file)" \
  || fail "the agent reads the Secret volume" "$file_content"
token_content=$(cat "$token" 2>&1)
[ -r "$token" ] && [ -n "$token_content" ] && pass "the agent reads kagent's token ($token)" \
  || fail "the agent reads kagent's token" "$token_content"

# a command run through srt does not
out=$(srt_ bash -c env)
if grep -qx 'SANDBOX_RUNTIME=1' <<<"$out" && ! grep -q "OPENAI_API_KEY\|ACME_LICENSE" <<<"$out" \
  && ! grep -qF "$key" <<<"$out" && ! grep -qF "$license" <<<"$out"; then
  pass "srt bash -c env: no OPENAI_API_KEY, no ACME_LICENSE"
else
  fail "srt bash -c env: no OPENAI_API_KEY, no ACME_LICENSE" "$out"
fi
missing=
for v in PATH HOME HTTPS_PROXY HTTP_PROXY NO_PROXY; do grep -q "^$v=" <<<"$out" || missing+=" $v"; done
[ -z "$missing" ] && pass "srt bash -c env keeps PATH, HOME and the proxy variables" \
  || fail "srt bash -c env keeps PATH, HOME and the proxy variables" "missing$missing: $out"
out=$(srt_ bash -c 'echo "key=${OPENAI_API_KEY-unset}"')
[ "$out" = key=unset ] && pass "the variable reads as unset in the command" || fail "the variable reads as unset" "$out"
for f in "$secret_file" "$token"; do
  content=$(cat "$f")
  out=$(srt_ bash -c "cat '$f'")
  if [ $? -ne 0 ] && ! grep -qF "$content" <<<"$out"; then
    pass "srt bash -c 'cat $f' is refused"
  else
    fail "srt bash -c 'cat $f' is refused" "$out"
  fi
done
out=$(srt_ bash -c 'for p in /proc/[0-9]*/environ; do tr "\0" "\n" < "$p"; done 2>/dev/null; echo scanned')
if grep -qx scanned <<<"$out" && ! grep -qF "$key" <<<"$out"; then
  pass "no /proc/*/environ the command can read holds the key (the agent's included)"
else
  fail "no /proc/*/environ the command can read holds the key" "$out"
fi
out=$(srt_ bash -c "ls / >/dev/null && ls /var/run/secrets/tokens \"$(dirname "$secret_file")\"")
if grep -qx kagent-token <<<"$out"; then
  pass "ls / still works and the token directory's names are listable"
else
  fail "ls / still works and the token directory's names are listable" "$out"
fi
out=$(cd /tmp && timeout 30 srt explain --settings "$KAGENT_SRT_SETTINGS_PATH" 2>&1)
if grep -q 'OPENAI_API_KEY' <<<"$out" && ! grep -qF "$key" <<<"$out"; then
  pass "srt explain names OPENAI_API_KEY as dropped, never its value"
else
  fail "srt explain names OPENAI_API_KEY as dropped, never its value" "$(grep -A8 '^environment' <<<"$out")"
fi
