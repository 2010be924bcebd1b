#!/usr/bin/env bash
# The real-container-runtime test (issue 10, items 3 and 4): builds the srt and
# srt-controller images from this workspace's release binaries and runs srt in podman
# containers the way Kubernetes runs sandbox pods: uid 1001, every capability dropped,
# no_new_privs, no network but loopback, under (i) podman's default seccomp profile and
# (ii) containerd's RuntimeDefault (derived from podman's by scripts/podman/seccomp-runtime-default.py).
#   a. podman run: filesystem, network and UDP checks, `srt -c true` wall time
#   b. podman kube play of the pod srt-controller renders for a SandboxAgent: srt copied
#      by the init container, settings from the ConfigMap, allowed 200 / denied 403
#   c. the same for a Declarative agent run by a stand-in for kagent's runtime image (its
#      own PATH, an entrypoint found through it): it starts, finds srt on its PATH, sees
#      KAGENT_URL, its ServiceAccount name and kagent's /config files; config.json has the
#      ModelConfig's model, the key comes from its Secret, the MCP tools are listed
#   d. credentials: a Declarative agent whose ModelConfig's key (OPENAI_API_KEY) and a spec
#      variable (ACME_LICENSE) come from a Secret, with a Secret volume and a stand-in kagent
#      token; the agent has them, commands run through srt do not
#   e. a skills agent: a stand-in skills-init clones a git skill from a repository in its
#      image (no network) into /skills, read-only for the agent
# Prints "PASS name" / "FAIL name: detail" per check and "podman: N passed, M failed";
# exits 1 on any failure. Where podman cannot run (not root, no apt, podman info fails)
# it prints "skipped: podman real-runtime test: <reason>", appends "podman-test<TAB>reason"
# to $SRT_TEST_SKIP_LOG when set, and exits 0; with SRT_PODMAN_REQUIRED=1 (scripts/test.sh
# as root, as CI runs it) that is a failure instead. Containers run under runc.
# Needs root; installs podman, runc, mmdebstrap and python3-yaml with apt-get when missing;
# the Debian base is built with mmdebstrap (network to the Debian mirror) once and kept.
# Images it builds stay (localhost/srt-base:bookworm, the two tags below and
# localhost/srt-standin-agent:test); containers, pods and temporary files are removed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$(date +%s)

skip() {
  # where the suite must run (scripts/test.sh as root: CI), not running it is a failure
  if [ -n "${SRT_PODMAN_REQUIRED:-}" ]; then
    echo "FAIL podman real-runtime test could not run here: $1"
    echo "podman: 0 passed, 1 failed"
    exit 1
  fi
  echo "skipped: podman real-runtime test: $1"
  [ -n "${SRT_TEST_SKIP_LOG:-}" ] && printf 'podman-test\t%s\n' "$1" >> "$SRT_TEST_SKIP_LOG"
  exit 0
}
log() { echo "== podman-test: $*" >&2; }

# the names srt-controller and its Deployment use, so the test runs exactly those tags
SRT_IMAGE=$(sed -n 's/^pub const DEFAULT_SRT_IMAGE: &str = "\(.*\)";/\1/p' controller/src/options.rs)
SRT_IMAGE_PATH=$(sed -n 's/^pub const DEFAULT_SRT_IMAGE_PATH: &str = "\(.*\)";/\1/p' controller/src/options.rs)
CONTROLLER_IMAGE=$(sed -n 's/^ *image: \(.*srt-controller:.*\)$/\1/p' controller/deploy/deployment.yaml)
BASE_IMAGE=localhost/srt-base:bookworm
if [ -z "$SRT_IMAGE" ] || [ -z "$CONTROLLER_IMAGE" ] || [ "$SRT_IMAGE_PATH" != /usr/local/bin/srt ]; then
  echo "FAIL image names: cannot read them from controller/src/options.rs and controller/deploy/deployment.yaml"
  echo "podman: 0 passed, 1 failed"
  exit 1
fi
if ! grep -q "value: $SRT_IMAGE\$" controller/deploy/deployment.yaml; then
  echo "FAIL image names: deployment.yaml's SRT_CONTROLLER_SRT_IMAGE differs from $SRT_IMAGE"
  echo "podman: 0 passed, 1 failed"
  exit 1
fi

[ "$(id -u)" -eq 0 ] || skip "not root (podman as root is what this test drives)"
need=()
for tool in podman runc mmdebstrap; do command -v "$tool" >/dev/null 2>&1 || need+=("$tool"); done
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || skip "no apt-get to install ${need[*]}"
  log "installing ${need[*]}"
  timeout 300 apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq podman runc mmdebstrap python3-yaml \
    >/dev/null 2>&1 || skip "apt-get install podman runc mmdebstrap python3-yaml failed"
fi
info=$(timeout 60 podman info 2>&1) || skip "podman info failed: $(tail -n 1 <<<"$info")"
grep -q 'graphDriverName:' <<<"$info" || skip "podman info names no storage driver"
packages_done=$(date +%s)

tmp=$(mktemp -d /tmp/srt-podman-test.XXXXXX)
chmod 755 "$tmp"
prefix=srt-podman-test-$$
pods=()
pod_rm() { # podman 4.3 sometimes needs a second try ("container state improper: stopped")
  for _ in 1 2 3; do
    timeout 60 podman pod rm -f -t 0 "$1" >/dev/null 2>&1
    podman pod exists "$1" || return 0
    sleep 1
  done
  return 1
}
# podman 4.3 can race with a "once" init container that exits in a few ms ("failed to
# remove once init container ...: as it is running", containers/podman#18477); seen here
# while it also restarted the init container (fixed by restartPolicy, pod-from-render.py),
# not since; up to 3 attempts all the same. kube_play POD CONFIGMAP YAML [ARG...] sets
# $out (the last attempt's output) and $attempt
kube_play() {
  local pod=$1 cm=$2 yaml=$3
  shift 3
  for attempt in 1 2 3; do
    out=$(timeout 120 podman kube play --network none --configmap "$cm" "$@" "$yaml" 2>&1) && return 0
    pod_rm "$pod"
  done
  return 1
}
secrets=()
cleanup() {
  for pod in "${pods[@]}"; do pod_rm "$pod"; done
  for secret in "${secrets[@]}"; do timeout 60 podman secret rm "$secret" >/dev/null 2>&1; done
  timeout 60 podman ps -a --format '{{.Names}}' 2>/dev/null | grep "^$prefix" \
    | xargs -r timeout 60 podman rm -f >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

passed=0 failed=0
record() { # lines "PASS name" / "FAIL name: detail", suffixed with where they ran
  local where=$1 line
  while IFS= read -r line; do
    case $line in
      PASS*) passed=$((passed + 1)); echo "PASS [$where] ${line#PASS }" ;;
      FAIL*) failed=$((failed + 1)); echo "FAIL [$where] ${line#FAIL }" ;;
      TIME*) echo "TIME [$where] ${line#TIME }" ;;
      *) [ -n "$line" ] && echo "     [$where] $line" ;;
    esac
  done
}
check() { # check NAME CMD...: one line for a command that must succeed
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then echo "PASS $name"; else echo "FAIL $name: $(tail -n 3 <<<"$out" | tr '\n' ' ')"; fi
}
finish() {
  echo "images kept: $BASE_IMAGE $SRT_IMAGE $CONTROLLER_IMAGE localhost/srt-standin-agent:test" \
    "localhost/srt-git-base:bookworm localhost/srt-skills-init-standin:test (podman rmi to remove)"
  local now
  now=$(date +%s)
  echo "podman-test took $((now - started)) s ($((now - packages_done)) s after packages)"
  echo "podman: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

# 1. the binaries, the Debian base, the two images. The binaries are scripts/build.sh's
# (srt and srt-proxy linked statically), in target/dist; SRT_PODMAN_BIN_DIR=target/dist-debug
# packages its debug build (scripts/test.sh does, to spare CI a release build with fat LTO;
# its timings are then a debug build's), any other directory is packaged as it is
BIN_DIR=${SRT_PODMAN_BIN_DIR:-target/dist}
case "$BIN_DIR" in
  target/dist)
    log "scripts/build.sh"
    record build < <(check "scripts/build.sh (release)" timeout 1800 bash scripts/build.sh --quiet) ;;
  target/dist-debug)
    log "scripts/build.sh --debug"
    record build < <(check "scripts/build.sh --debug" timeout 1800 bash scripts/build.sh --debug --quiet) ;;
esac
[ -x "$BIN_DIR/srt" ] && [ -x "$BIN_DIR/srt-controller" ] || finish
# scripts/build.sh links srt statically: no program interpreter (ld.so) to run at every start,
# and nothing it needs from the image it is copied into
case "$BIN_DIR" in
  target/dist|target/dist-debug)
    record build < <(check "srt and srt-proxy are linked statically (no program interpreter)" \
      bash -c "! readelf -l '$BIN_DIR/srt' '$BIN_DIR/srt-proxy' | grep -q 'program interpreter'") ;;
esac

if ! podman image exists "$BASE_IMAGE"; then
  log "mmdebstrap bookworm (minbase + bash, curl, coreutils, python3-minimal)"
  if ! timeout 600 mmdebstrap --quiet --variant=minbase \
      --include=bash,curl,ca-certificates,coreutils,python3-minimal bookworm "$tmp/rootfs.tar" \
      >"$tmp/mmdebstrap.log" 2>&1; then
    skip "mmdebstrap could not build the Debian base (no Debian mirror?): $(tail -n 1 "$tmp/mmdebstrap.log")"
  fi
  record build < <(check "podman import the Debian base as $BASE_IMAGE" \
    timeout 300 podman import "$tmp/rootfs.tar" "$BASE_IMAGE")
  rm -f "$tmp/rootfs.tar"
fi

# podman gives rootful containers RLIMIT_NOFILE 1048576 and a large RLIMIT_NPROC, which runc
# cannot set where root lacks CAP_SYS_RESOURCE (this VM: "error setting rlimit type 7",
# then type 6: conmon runs with a lower RLIMIT_NPROC than the shell); use the current
# limits, lowering nproc until a container starts
lim() { local v; v=$(ulimit "$1"); [ "$v" = unlimited ] && v=-1; echo "$v"; }
started_one=
# runc, always: Debian's podman may default to crun, which refuses hosts whose cgroups are
# in hybrid mode ("crun: cgroups in hybrid mode not supported"); runc runs there
for nproc in "$(lim -Hu)" 65536 32768 16384 4096; do
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
    "$(lim -Sn)" "$(lim -Hn)" "$nproc" "$nproc" > "$tmp/containers.conf"
  if start_err=$(CONTAINERS_CONF=$tmp/containers.conf timeout 60 podman run --rm --network=none "$BASE_IMAGE" true 2>&1); then
    started_one=1
    break
  fi
done
# not even the plain Debian base starts: the host cannot run containers (nothing of ours
# is involved yet), which is a skip, not a failure
[ -n "$started_one" ] || skip "no container starts here under runc: $(tail -n 1 <<<"$start_err") (check 'podman info' and that runc is installed: apt-get install runc)"

export CONTAINERS_CONF=$tmp/containers.conf
for spec in "deploy/Containerfile.srt $SRT_IMAGE" "deploy/Containerfile.controller $CONTROLLER_IMAGE"; do
  read -r file tag <<<"$spec"
  log "podman build -f $file -t $tag"
  record build < <(check "podman build -f $file -t $tag" timeout 300 podman build --quiet --pull=never --network=none \
    --build-arg BASE="$BASE_IMAGE" --build-arg BIN="$BIN_DIR" -f "$file" -t "$tag" .)
done
podman image exists "$SRT_IMAGE" || finish
record build < <(check "srt image: $SRT_IMAGE_PATH, cp, bash, curl" timeout 60 podman run --rm --network=none \
  --name "$prefix-tools" "$SRT_IMAGE" bash -c "test -x $SRT_IMAGE_PATH && command -v cp bash curl")
record build < <(check "controller image: srt-controller --version" timeout 60 podman run --rm --network=none \
  --name "$prefix-ctl" "$CONTROLLER_IMAGE" --version)

# 2. the two seccomp profiles
mkdir -p "$tmp/seccomp" "$tmp/in"
python3 scripts/podman/seccomp-runtime-default.py > "$tmp/seccomp/runtime-default.json"
chmod 644 "$tmp/seccomp/runtime-default.json"
profiles=(podman-default containerd-runtime-default)
secopt() { [ "$1" = podman-default ] || echo "--security-opt=seccomp=$tmp/seccomp/runtime-default.json"; }

# a. podman run, as a pod's container would run
cp scripts/podman/checks.sh scripts/podman/time-srt.sh scripts/podman/origin.py "$tmp/in/"
cat > "$tmp/in/settings.json" <<'EOF'
{"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":["allowed.test"],"deniedDomains":[]}}
EOF
chmod -R a+rX "$tmp/in"
for profile in "${profiles[@]}"; do
  log "podman run ($profile)"
  # shellcheck disable=SC2046
  out=$(timeout 240 podman run --rm --name "$prefix-run" --network=none --user 1001:1001 \
    --cap-drop=ALL --security-opt=no-new-privileges $(secopt "$profile") \
    --tmpfs /work:rw,mode=1777 -w /work -v "$tmp/in:/srt-test:ro" "$SRT_IMAGE" bash -c '
      bash /srt-test/checks.sh "$1" /srt-test/settings.json id fs net
      echo "TIME srt -c true: $(bash /srt-test/time-srt.sh 20 srt -s /srt-test/settings.json -c true)"
      echo "TIME true (no srt): $(bash /srt-test/time-srt.sh 20 true)"' run "$profile" 2>&1)
  status=$?
  grep -q '^PASS\|^FAIL' <<<"$out" || out="FAIL podman run: exit $status: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
  record "run $profile" <<<"$out"
done
# the same timing on the host, in a fresh directory like the container's (in a git checkout
# srt also audits the repository's git files, which costs ~20 ms more)
mkdir -m 755 "$tmp/w"
host_mode=$(cd "$tmp/w" && "$root/$BIN_DIR/srt" explain -s "$tmp/in/settings.json" 2>&1 | grep -m1 '^ *mode:' | sed 's/^ *//')
for args in "" "--network-mode landlock"; do
  # shellcheck disable=SC2086
  echo "TIME [host${args:+ $args}] srt -c true: $(cd "$tmp/w" && bash "$root/scripts/podman/time-srt.sh" 20 \
    "$root/$BIN_DIR/srt" $args -s "$tmp/in/settings.json" -c true)"
done
echo "TIME [host] true (no srt): $(bash scripts/podman/time-srt.sh 20 true)"
echo "     [host] srt explain: $host_mode"

# b. podman kube play of the pod srt-controller renders: a BYO agent whose main process
# is the HTTP origin (origin.py) on the pod's loopback, in the srt image itself
cat > "$tmp/agent.yaml" <<EOF
apiVersion: kagent.dev/v1alpha2
kind: SandboxAgent
metadata:
  name: podman-probe
  namespace: default
spec:
  type: BYO
  sandbox:
    network:
      allowedDomains:
      - allowed.test
  byo:
    deployment:
      image: $SRT_IMAGE
      imagePullPolicy: Never
      cmd: python3
      args:
      - -c
      - |
$(sed 's/^/        /' scripts/podman/origin.py)
EOF
record kube < <(check "srt-controller render -f agent.yaml" \
  bash -c "$BIN_DIR/srt-controller render -f '$tmp/agent.yaml' > '$tmp/rendered.yaml'")
for profile in "${profiles[@]}"; do
  pod=podman-probe-${profile%%-*}
  where="kube $profile"
  if [ "$profile" = podman-default ]; then
    python3 scripts/podman/pod-from-render.py "$tmp/rendered.yaml" "$pod" "$tmp/pod-$profile.yaml" "$tmp/cm.yaml"
    extra=()
  else
    python3 scripts/podman/pod-from-render.py "$tmp/rendered.yaml" "$pod" "$tmp/pod-$profile.yaml" "$tmp/cm.yaml" \
      runtime-default.json
    extra=(--seccomp-profile-root "$tmp/seccomp")
  fi
  log "podman kube play ($profile)"
  pods+=("$pod")
  if ! kube_play "$pod" "$tmp/cm.yaml" "$tmp/pod-$profile.yaml" "${extra[@]}"; then
    record "$where" <<<"FAIL podman kube play (3 attempts): $(tail -n 3 <<<"$out" | tr '\n' ' ')"
    continue
  fi
  [ "$attempt" -gt 1 ] && echo "     [$where] podman kube play started the pod on attempt $attempt (init-container race)"
  ctr=$pod-kagent
  for _ in $(seq 100); do
    timeout 10 podman exec "$ctr" curl -s --noproxy '*' -o /dev/null http://127.0.0.1:8000/ 2>/dev/null && break
    sleep 0.3
  done
  record "$where" < <({
    check "init container copied srt to /usr/local/sbin, found first on the image's PATH" \
      timeout 30 podman exec "$ctr" bash -c '[ "$(command -v srt)" = /usr/local/sbin/srt ]'
    check "settings from the ConfigMap at \$SRT_SETTINGS_PATH allow allowed.test" \
      timeout 30 podman exec "$ctr" bash -c 'grep -q "\"allowedDomains\":\[\"allowed.test\"\]" "$SRT_SETTINGS_PATH"'
    check "srt -c cannot change the mounted settings" \
      timeout 30 podman exec -w /tmp "$ctr" bash -c '! srt -c "echo {} > $SRT_SETTINGS_PATH" 2>/dev/null'
    check "pid 1 (the agent) runs as uid 1001" \
      timeout 30 podman exec "$ctr" bash -c '[ "$(awk "/^Uid:/ {print \$2}" /proc/1/status)" = 1001 ]'
    timeout 120 podman exec -w /tmp "$ctr" bash -c "$(cat scripts/podman/checks.sh)" checks \
      "$profile" /config/srt-settings.json id net
  } 2>&1)
  pod_rm "$pod"
done

# read_report CONTAINER: waits for the stand-in agent's report (/tmp/standin-report) and sets
# $report; has LINE then checks the report holds exactly that line
read_report() {
  for _ in $(seq 100); do
    timeout 10 podman exec "$1" test -f /tmp/standin-report 2>/dev/null && break
    sleep 0.3
  done
  report=$(timeout 30 podman exec "$1" cat /tmp/standin-report 2>&1)
}
has() { grep -qxF -- "$1" <<<"$report" || { echo "report: $(tr '\n' ' ' <<<"$report")"; return 1; }; }

# c. a Declarative agent on a stand-in for kagent's runtime image (scripts/podman/
# Containerfile.standin: PATH=/opt/agent/bin:..., ENTRYPOINT ["standin-agent"]), given to
# srt-controller as --runtime-image like kagent's app image; podman's default profile
STANDIN_IMAGE=localhost/srt-standin-agent:test
log "podman build the stand-in agent image"
record build < <(check "podman build -f scripts/podman/Containerfile.standin -t $STANDIN_IMAGE" \
  timeout 300 podman build --quiet --pull=never --network=none --build-arg BASE="$BASE_IMAGE" \
  -f scripts/podman/Containerfile.standin -t "$STANDIN_IMAGE" scripts/podman)
cat > "$tmp/standin.yaml" <<'EOF'
apiVersion: kagent.dev/v1alpha2
kind: SandboxAgent
metadata:
  name: standin-agent
  namespace: default
spec:
  description: A stand-in for kagent's runtime.
  declarative:
    modelConfig: default-model-config
    systemMessage: You are the stand-in agent.
    tools:
    - type: McpServer
      mcpServer: {name: kagent-tools, kind: RemoteMCPServer, toolNames: [k8s_get_resources, k8s_get_pod_logs]}
    deployment:
      imagePullPolicy: Never
---
apiVersion: kagent.dev/v1alpha2
kind: ModelConfig
metadata: {name: default-model-config, namespace: default}
spec: {provider: OpenAI, model: gpt-4.1-mini, apiKeySecret: kagent-openai, apiKeySecretKey: OPENAI_API_KEY}
---
apiVersion: kagent.dev/v1alpha2
kind: RemoteMCPServer
metadata: {name: kagent-tools, namespace: default}
spec: {description: kagent's tools, url: "http://kagent-tools.kagent:8084/mcp"}
EOF
# the model's key: render references it (secretKeyRef), podman fills it in (pod-from-render.py)
cat > "$tmp/secrets.yaml" <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: kagent-openai, namespace: default}
stringData: {OPENAI_API_KEY: sk-standin}
EOF
where="kube standin"
pod=standin-agent-pod
if podman image exists "$STANDIN_IMAGE" \
  && "$BIN_DIR/srt-controller" render --runtime-image "$STANDIN_IMAGE" -f "$tmp/standin.yaml" \
    > "$tmp/standin-rendered.yaml" \
  && SECRETS="$tmp/secrets.yaml" python3 scripts/podman/pod-from-render.py "$tmp/standin-rendered.yaml" "$pod" \
    "$tmp/standin-pod.yaml" "$tmp/standin-cm.yaml"; then
  pods+=("$pod")
  if ! kube_play "$pod" "$tmp/standin-cm.yaml" "$tmp/standin-pod.yaml"; then
    record "$where" <<<"FAIL podman kube play (3 attempts): $(tail -n 3 <<<"$out" | tr '\n' ' ')"
  else
    read_report "$pod-kagent"
    record "$where" < <({
      check "started by its ENTRYPOINT through the image's own PATH" has "argv0=/opt/agent/bin/standin-agent"
      check "the image's PATH is kept (not replaced)" \
        has "PATH=/opt/agent/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
      check "srt found on that PATH at /usr/local/sbin/srt" has "srt=/usr/local/sbin/srt"
      check "KAGENT_URL is kagent's in-cluster URL" has "KAGENT_URL=http://kagent-controller.kagent:8083"
      check "its ServiceAccount name (serviceAccountName, as SRT_SERVICE_ACCOUNT_NAME)" \
        has "service_account=standin-agent"
      check "kagent's arguments: --filepath /config" has "filepath=/config"
      check "/config holds agent-card.json, config.json, srt-settings.json" \
        has "config_files=agent-card.json agent-spec.json config.json srt-settings.json "
      check "config.json carries the system message" has "instruction=You are the stand-in agent."
      check "config.json's model is the ModelConfig's (type openai)" has "model_type=openai"
      check "the model's API key is in OPENAI_API_KEY (from its Secret)" has "api_key_set=yes"
      check "config.json lists the MCP server's tools" has "tools=k8s_get_resources,k8s_get_pod_logs "
      check "the agent started (a model and its key, as kagent's runtime needs)" has "started=yes"
      check "the rendered pod takes the key from the Secret, never a copy" \
        grep -q "secretKeyRef" "$tmp/standin-rendered.yaml"
      check "agent-card.json names the agent" has "card_name=standin_agent"
      check "srt --settings \$KAGENT_SRT_SETTINGS_PATH bash -c runs from the agent" has "srt_run=ran-in-srt"
      check "the rendered pod runs as ServiceAccount standin-agent" \
        grep -q "serviceAccountName: standin-agent" "$tmp/standin-pod.yaml"
    } 2>&1)
  fi
  pod_rm "$pod"
else
  record "$where" <<<"FAIL render or pod-from-render for the stand-in agent"
fi

# d. credentials (issue 21): a Declarative agent on the stand-in image whose ModelConfig takes
# its API key from a Secret (rendered as OPENAI_API_KEY with a secretKeyRef, as kagent's
# translator does), whose spec adds ACME_LICENSE (no credential rule knows that name: only the
# exclusion by name keeps it out) from the same Secret and a Secret volume under /data, and
# kagent's token as a stand-in Secret at /var/run/secrets/tokens (podman mints no tokens).
# podman 4.3.1 reads a secretKeyRef's podman secret as JSON {key: base64} and a Secret
# volume's as a Secret's `data` (written out as given, base64 or not), hence two forms
where="kube credentials"
pod=creds-agent-pod
key="sk-proj-CANARY-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
b64() { printf '%s' "$1" | base64 -w0; }
license="license-CANARY-$key"
printf '{"api-key":"%s","license":"%s"}' "$(b64 "$key")" "$(b64 "$license")" > "$tmp/model-secret.json"
printf '{"data":{"token":"%s"}}' "$(b64 "file-CANARY-$key")" > "$tmp/files-secret.json"
printf '{"data":{"kagent-token":"%s"}}' "$(b64 "token-CANARY-$key")" > "$tmp/token-secret.json"
made=1
for s in model files token; do
  if timeout 60 podman secret create "$prefix-$s" "$tmp/$s-secret.json" >/dev/null 2>&1; then
    secrets+=("$prefix-$s")
  else
    made=
  fi
done
cat > "$tmp/creds.yaml" <<EOF
apiVersion: kagent.dev/v1alpha2
kind: SandboxAgent
metadata:
  name: creds-agent
  namespace: default
spec:
  declarative:
    modelConfig: creds-model
    systemMessage: You hold credentials.
    deployment:
      imagePullPolicy: Never
      env:
      - name: ACME_LICENSE
        valueFrom:
          secretKeyRef: {name: $prefix-model, key: license}
      volumes:
      - name: creds
        secret: {secretName: $prefix-files}
      volumeMounts:
      - name: creds
        mountPath: /data/creds
        readOnly: true
---
apiVersion: kagent.dev/v1alpha2
kind: ModelConfig
metadata: {name: creds-model, namespace: default}
spec: {provider: OpenAI, model: gpt-4.1-mini, apiKeySecret: $prefix-model, apiKeySecretKey: api-key}
EOF
settings_protect() { # the rendered settings exclude both variables and deny both credential mounts (and /config, the agent's spec and tool headers)
  python3 -c 'import json, sys, yaml
s = json.loads(yaml.safe_load(open(sys.argv[1]))["data"]["srt-settings.json"])
assert s["environment"]["exclude"] == ["ACME_LICENSE", "OPENAI_API_KEY"], s
assert s["filesystem"]["denyRead"] == ["/config", "/data/creds", "/var/run/secrets"], s' "$1"
}
model_key_ref() { # the agent container's OPENAI_API_KEY is the ModelConfig's Secret key, by reference
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
sandbox = next(d for d in docs if d["kind"] == "Sandbox")
c = next(c for c in sandbox["spec"]["podTemplate"]["spec"]["containers"] if c["name"] == "kagent")
env = [e for e in c["env"] if e["name"] == "OPENAI_API_KEY"]
assert len(env) == 1 and env[0]["valueFrom"]["secretKeyRef"] == {"name": sys.argv[2], "key": "api-key"}, env
config = next(d for d in docs if d["kind"] == "Secret")["stringData"]["config.json"]  # the config Secret
assert "\"type\":\"openai\"" in config, config' "$1" "$2"
}
if [ -n "$made" ] && podman image exists "$STANDIN_IMAGE" \
  && "$BIN_DIR/srt-controller" render --runtime-image "$STANDIN_IMAGE" -f "$tmp/creds.yaml" > "$tmp/creds-rendered.yaml" \
  && python3 scripts/podman/pod-from-render.py --token-secret "$prefix-token" "$tmp/creds-rendered.yaml" "$pod" \
    "$tmp/creds-pod.yaml" "$tmp/creds-cm.yaml"; then
  pods+=("$pod")
  if ! kube_play "$pod" "$tmp/creds-cm.yaml" "$tmp/creds-pod.yaml"; then
    record "$where" <<<"FAIL podman kube play (3 attempts): $(tail -n 3 <<<"$out" | tr '\n' ' ')"
  else
    ctr=$pod-kagent
    read_report "$ctr"
    record "$where" < <({
      check "the rendered pod takes OPENAI_API_KEY from the ModelConfig's Secret (secretKeyRef)" \
        model_key_ref "$tmp/creds-rendered.yaml" "$prefix-model"
      check "the rendered settings exclude ACME_LICENSE, OPENAI_API_KEY, deny /config, /data/creds, /var/run/secrets" \
        settings_protect "$tmp/creds-cm.yaml"
      check "the agent started with its ModelConfig's model and key" has "started=yes"
      timeout 120 podman exec "$ctr" bash -c "$(cat scripts/podman/credentials.sh)" credentials \
        /data/creds/token "$key" "$license"
    } 2>&1)
  fi
  pod_rm "$pod"
else
  record "$where" <<<"FAIL podman secret create, render or pod-from-render for the credentials agent"
fi

# e. a skills agent: kagent's skills-init played by a stand-in (scripts/podman/
# Containerfile.skills-init-standin) that clones a git skill from a repository inside its
# image (file:///srv/skills.git, no network) into /skills, which the agent reads read-only
GIT_BASE=localhost/srt-git-base:bookworm
SKILLS_INIT_IMAGE=localhost/srt-skills-init-standin:test
if ! podman image exists "$GIT_BASE"; then
  log "mmdebstrap bookworm (minbase + bash, coreutils, git)"
  if timeout 600 mmdebstrap --quiet --variant=minbase --include=bash,coreutils,ca-certificates,git bookworm \
      "$tmp/git-rootfs.tar" >"$tmp/mmdebstrap-git.log" 2>&1; then
    record build < <(check "podman import the Debian base with git as $GIT_BASE" \
      timeout 300 podman import "$tmp/git-rootfs.tar" "$GIT_BASE")
  else
    record build <<<"FAIL mmdebstrap of the git base: $(tail -n 1 "$tmp/mmdebstrap-git.log")"
  fi
  rm -f "$tmp/git-rootfs.tar"
fi
record build < <(check "podman build -f scripts/podman/Containerfile.skills-init-standin -t $SKILLS_INIT_IMAGE" \
  timeout 300 podman build --quiet --pull=never --network=none --build-arg BASE="$GIT_BASE" \
  -f scripts/podman/Containerfile.skills-init-standin -t "$SKILLS_INIT_IMAGE" scripts/podman)
python3 - "$tmp/standin.yaml" "$tmp/skills.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
docs[0]["metadata"]["name"] = "skills-agent"
docs[0]["spec"]["skills"] = {"gitRefs": [{"url": "file:///srv/skills.git", "ref": "main", "path": "skills/hello-skill"}]}
yaml.safe_dump_all(docs, open(sys.argv[2], "w"), sort_keys=False)
PY
where="kube skills"
pod=skills-agent-pod
if podman image exists "$SKILLS_INIT_IMAGE" \
  && "$BIN_DIR/srt-controller" render --runtime-image "$STANDIN_IMAGE" --skills-init-image "$SKILLS_INIT_IMAGE" \
    -f "$tmp/skills.yaml" > "$tmp/skills-rendered.yaml" \
  && SECRETS="$tmp/secrets.yaml" python3 scripts/podman/pod-from-render.py "$tmp/skills-rendered.yaml" "$pod" \
    "$tmp/skills-pod.yaml" "$tmp/skills-cm.yaml"; then
  pods+=("$pod")
  # the skills-init config's own ConfigMap (pod-from-render.py: podman ignores `items`)
  if ! kube_play "$pod" "$tmp/skills-cm.yaml,$tmp/skills-cm-items.yaml" "$tmp/skills-pod.yaml"; then
    record "$where" <<<"FAIL podman kube play (3 attempts): $(tail -n 3 <<<"$out" | tr '\n' ' ')"
  else
    read_report "$pod-kagent"
    record "$where" < <({
      check "skills-init cloned the git skill into /skills/hello-skill (its subPath)" has "skills=hello-skill "
      check "the agent reads the skill" has "skill_md=# hello-skill"
      check "KAGENT_SKILLS_FOLDER is /skills" has "skills_folder=/skills"
      check "/skills is read-only for the agent" has "skills_writable=no"
      check "the agent started" has "started=yes"
      check "skills-init cloned from the repository in its image" \
        has "skills_init_log: cloning file:///srv/skills.git (ref=main) into /skills/hello-skill"
      check "skills-init ran as uid 1001" has "skills_init_log: skills-init uid=1001"
    } 2>&1)
  fi
  pod_rm "$pod"
else
  record "$where" <<<"FAIL render or pod-from-render for the skills agent"
fi
finish
