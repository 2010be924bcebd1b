#!/usr/bin/env bash
# Run inside the srt image by scripts/podman-test.sh (podman run --network=none --user 1001
# --cap-drop=ALL --security-opt=no-new-privileges, cwd a fresh writable dir), or through
# `podman exec` in the pod `podman kube play` made from srt-controller's render.
# Usage: checks.sh PROFILE SETTINGS [id] [fs] [net]   (origin.py beside it, for net)
# One line per check: "PASS name" or "FAIL name: detail".
set -u
profile=$1 settings=$2
shift 2
parts=" $* "
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $(printf '%s' "$2" | tail -n 4 | tr '\n' ' ' | cut -c1-300)"; }
srt_() { timeout 30 srt -s "$settings" "$@"; }

if [[ $parts == *" id "* ]]; then
  status=$(cat /proc/self/status)
  want="Uid:1001 CapEff:0000000000000000 NoNewPrivs:1 Seccomp:2"
  got="Uid:$(awk '/^Uid:/ {print $2}' <<<"$status") CapEff:$(awk '/^CapEff:/ {print $2}' <<<"$status") NoNewPrivs:$(awk '/^NoNewPrivs:/ {print $2}' <<<"$status") Seccomp:$(awk '/^Seccomp:/ {print $2}' <<<"$status")"
  [ "$got" = "$want" ] && pass "identity ($got)" || fail identity "want $want, got $got"

  # the profile itself: containerd's RuntimeDefault refuses unshare and pidfd_getfd
  # (EPERM), podman's default allows pidfd_getfd; perl-base is in every Debian image
  case $(uname -m) in aarch64) nr_unshare=97 ;; *) nr_unshare=272 ;; esac
  unshare_errno=$(perl -e '$r = syscall('"$nr_unshare"', 0x10000000); print $r < 0 ? $! + 0 : 0')
  getfd_errno=$(perl -e '$p = syscall(434, $$ + 0, 0); $r = syscall(438, $p, 2, 0); print $r < 0 ? $! + 0 : 0')
  if [ "$profile" = containerd-runtime-default ]; then
    [ "$unshare_errno" = 1 ] && pass "profile refuses unshare(CLONE_NEWUSER) with EPERM" \
      || fail "profile refuses unshare(CLONE_NEWUSER) with EPERM" "errno $unshare_errno"
    [ "$getfd_errno" = 1 ] && pass "profile refuses pidfd_getfd with EPERM" \
      || fail "profile refuses pidfd_getfd with EPERM" "errno $getfd_errno"
  else
    [ "$getfd_errno" = 0 ] && pass "profile allows pidfd_getfd (unshare: errno $unshare_errno)" \
      || fail "profile allows pidfd_getfd" "errno $getfd_errno"
  fi

  out=$(timeout 30 srt explain -s "$settings" 2>&1)
  mode=$(grep -m1 '^ *mode:' <<<"$out" | sed 's/^ *//')
  if grep -q 'mode: landlock (chosen by auto: namespace mode is unavailable here' <<<"$out"; then
    pass "srt explain: $mode"
  else
    fail "srt explain names landlock mode and why" "${mode:-$out}"
  fi
fi

if [[ $parts == *" fs "* ]]; then
  out=$(srt_ -c 'echo inside > inside.txt' 2>&1)
  [ "$(cat inside.txt 2>/dev/null)" = inside ] && pass "write in the working directory" \
    || fail "write in the working directory" "$out"

  # /tmp is writable for uid 1001 without srt (the control); the settings allow only "."
  rm -f /tmp/srt-outside-control /tmp/srt-outside.txt
  if echo control > /tmp/srt-outside-control && rm /tmp/srt-outside-control; then
    out=$(srt_ -c 'echo x > /tmp/srt-outside.txt' 2>&1)
    [ $? -ne 0 ] && [ ! -e /tmp/srt-outside.txt ] && pass "write outside the allowed paths refused (/tmp)" \
      || fail "write outside the allowed paths refused (/tmp)" "$out"
  else
    fail "write outside the allowed paths refused (/tmp)" "control: /tmp not writable without srt"
  fi
  out=$(srt_ -c 'echo x > /etc/srt-x' 2>&1)
  [ $? -ne 0 ] && [ ! -e /etc/srt-x ] && pass "write in /etc refused" || fail "write in /etc refused" "$out"

  echo '# original' > .bashrc
  out=$(srt_ -c 'echo x >> .bashrc' 2>&1)
  [ $? -ne 0 ] && [ "$(cat .bashrc)" = '# original' ] && pass "echo x >> .bashrc refused" \
    || fail "echo x >> .bashrc refused" "$out"

  # UDP: works without srt (the control), refused inside
  if bash -c 'echo > /dev/udp/127.0.0.1/53' 2>/dev/null; then
    out=$(srt_ -c 'echo > /dev/udp/127.0.0.1/53' 2>&1)
    [ $? -ne 0 ] && pass "UDP refused (/dev/udp/127.0.0.1/53)" || fail "UDP refused" "$out"
  else
    fail "UDP refused" "control: UDP send fails without srt"
  fi
  # raw sockets: no capability here even without srt, and seccomp refuses them inside
  raw="import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print('RAW-OPENED')"
  out=$(srt_ -c "python3 -c \"$raw\"" 2>&1)
  [ $? -ne 0 ] && [[ $out != *RAW-OPENED* ]] && pass "raw socket refused" || fail "raw socket refused" "$out"
fi

if [[ $parts == *" net "* ]]; then
  # the origin: an HTTP server on the container's loopback (--network=none), outside srt;
  # a pod's main process may already serve one on port 8000
  origin_pid=
  if ! timeout 2 curl -s --noproxy '*' -o /dev/null http://127.0.0.1:8000/; then
    python3 "$(dirname "$0")/origin.py" >/dev/null 2>&1 &
    origin_pid=$!
    for _ in $(seq 50); do
      timeout 2 curl -s --noproxy '*' -o /dev/null http://127.0.0.1:8000/ && break
      sleep 0.1
    done
  fi
  resolve=(--resolve allowed.test:8000:127.0.0.1 --resolve denied.test:8000:127.0.0.1)
  code=$(srt_ "${resolve[@]}" -c 'curl -sS -o /dev/null -w "%{http_code}" http://allowed.test:8000/' 2>&1)
  [ "$code" = 200 ] && pass "allowed host through the proxy: 200" || fail "allowed host through the proxy: 200" "$code"
  code=$(srt_ "${resolve[@]}" -c 'curl -sS -p -o /dev/null -w "%{http_code}" http://allowed.test:8000/' 2>&1)
  [ "$code" = 200 ] && pass "allowed host through a CONNECT tunnel: 200" || fail "allowed host through a CONNECT tunnel: 200" "$code"
  out=$(srt_ "${resolve[@]}" -c 'curl -sS -p -o /dev/null http://denied.test:8000/' 2>&1)
  grep -q 'CONNECT tunnel failed, response 403' <<<"$out" && pass "denied host: CONNECT tunnel failed, response 403" \
    || fail "denied host: CONNECT tunnel failed, response 403" "$out"
  # transparent mode, no proxy variables: srt's DNS names the host, the supervisor takes the
  # connect to the proxy (pidfd_getfd; under RuntimeDefault, which refuses it, a replaced fd)
  code=$(srt_ "${resolve[@]}" -c 'curl -sS --max-time 5 --noproxy "*" -o /dev/null -w "%{http_code}" http://allowed.test:8000/' 2>&1)
  [ "$code" = 200 ] && pass "transparent: allowed name without proxy variables: 200" \
    || fail "transparent: allowed name without proxy variables: 200" "$code"
  out=$(srt_ "${resolve[@]}" -c 'curl -sS --max-time 5 --noproxy "*" -o /dev/null -w "%{http_code}" http://denied.test:8000/' 2>&1)
  [ $? -ne 0 ] && [[ $out != *200* ]] && grep -q 'refused name denied.test' <<<"$out" \
    && pass "transparent: denied name refused and named at exit" \
    || fail "transparent: denied name refused and named at exit" "$out"
  out=$(srt_ -c 'curl -sS --max-time 5 --noproxy "*" -o /dev/null http://127.0.0.1:8000/' 2>&1)
  [ $? -ne 0 ] && pass "direct connection bypassing the proxy refused" \
    || fail "direct connection bypassing the proxy refused" "$out"
  # local servers (landlock mode here): the command serves port 8000 too, on a loopback
  # address of the run's own, and its curl to localhost:8000 reaches its server, not the
  # origin outside srt on 127.0.0.1:8000
  # (python3-minimal has no http.server: a socket server answering like one)
  cat > own-server.py <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 8000)); s.listen()
while True:
    c, _ = s.accept(); c.recv(4096)
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 11\r\n\r\nown-server\n"); c.close()
PY
  out=$(srt_ -c 'python3 own-server.py & p=$!
    for i in $(seq 50); do curl -s -o /dev/null http://localhost:8000/ && break; sleep 0.1; done
    curl -sS http://localhost:8000/; kill $p' 2>&1)
  [ "$(tail -n1 <<<"$out")" = own-server ] && pass "local server on the origin's port: curl localhost reaches the command's own" \
    || fail "local server on the origin's port: curl localhost reaches the command's own" "$out"
  rm -f own-server.py
  [ -n "$origin_pid" ] && kill "$origin_pid" 2>/dev/null
fi
exit 0
