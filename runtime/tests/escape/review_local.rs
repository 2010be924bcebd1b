//! The adversarial review of local servers and `allowUnixSockets` (issue 20, items 4 and
//! 5). Each scenario is one finding against the first implementation:
//!
//! 1. a loopback connect let through with TCP Fast Open's deferred connect: srt's check
//!    saw the command's own listener, but the SYN left at the first write, to whoever had
//!    the port by then (a host wildcard listener);
//! 2. an IPv6-only server on `::1` (the host's one IPv6 loopback address) answered host
//!    clients of `localhost`, which try `::1` before `127.0.0.1`: the command stood in for
//!    a host service listening on `127.0.0.1` only;
//! 3. a Unix client socket with `SO_PASSCRED`, autobound to an abstract name by a connect
//!    to a listed path that failed, could then `listen()` there: in landlock mode a server
//!    in the host's abstract namespace.

use serde_json::json;

use super::harness::{tcp_probe, Env, Scenario};
use super::pod::{python, without_pidfd_getfd};
use crate::escapes;

/// The command: its own listener, a client socket with TCP Fast Open's deferred connect
/// (`TCP_FASTOPEN_NO_COOKIE` + `TCP_FASTOPEN_CONNECT`) connected to it, the listener
/// closed; once the host has taken the port, the client writes.
const DEFERRED: &str = concat!(
    crate::real_addr_py!(),
    r#"
import os, socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 0)); l.listen(); a, p = real(l)
c = socket.socket()
try:
    c.setsockopt(socket.IPPROTO_TCP, 34, 1)  # TCP_FASTOPEN_NO_COOKIE
    c.setsockopt(socket.IPPROTO_TCP, 30, 1)  # TCP_FASTOPEN_CONNECT
    print("fast open set", flush=True)
except OSError as e:
    print("fast open refused:", e, flush=True)
try:
    c.connect(("127.0.0.1", p)); print("connect ok", flush=True)
except OSError as e:
    print("connect refused:", e, flush=True)
l.close()
open("closed.tmp", "w").write("%s %d" % (a, p)); os.rename("closed.tmp", "closed")
for i in range(100):
    if os.path.exists("hostready"): break
    time.sleep(0.05)
c.settimeout(3)
try:
    c.sendall(b"from-the-sandbox\n"); print("reply:", c.recv(100), flush=True)
except OSError as e:
    print("write failed:", e, flush=True)
"#
);

/// The host: once the command's listener is closed, a wildcard listener on its port
/// (`[::]`, dual-stack: what a host service on `0.0.0.0` or `::` is).
const HOST_WILDCARD_TAKES_PORT: &str = r#"
import os, select, socket, sys
w = sys.argv[1]
import time
for i in range(200):
    if os.path.exists(w + "/closed"): break
    time.sleep(0.05)
a, p = open(w + "/closed").read().split(); p = int(p)
l = socket.socket(socket.AF_INET6); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    l.bind(("::", p)); l.listen()
except OSError as e:
    print("host could not bind", p, e)
open(w + "/hostready", "w").close()
r, _, _ = select.select([l], [], [], 4)
if r:
    c, x = l.accept(); print("HOST-ACCEPTED", x, flush=True); c.sendall(b"host-service\n")
"#;

fn deferred_connect() -> Scenario {
    python("deferred.py", DEFERRED, "")
        .setup(|e| e.file(&e.o("host.py"), HOST_WILDCARD_TAKES_PORT))
        .wrap(
            r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/host.py" "$W"
            wait $pid"#,
        )
        .lacks("HOST-ACCEPTED")
        .lacks("host-service")
}

/// The command: an IPv6-only server on `[::1]` at the port a host service has on
/// `127.0.0.1`; after the host client has tried it, whether anyone came, then whether the
/// command's own client reaches its server by `::1`.
const V6ONLY_SERVER: &str = r#"
import os, select, socket, sys, time
p = int(open(sys.argv[1]).read())
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
try:
    s.bind(("::1", p)); s.listen(); print("bound", s.getsockname()[:2], flush=True)
except OSError as e:
    print("bind refused:", e, flush=True)
open("ready", "w").close()
for i in range(100):
    if os.path.exists("hostdone"): break
    time.sleep(0.05)
r, _, _ = select.select([s], [], [], 0.2)
if r:
    c, a = s.accept(); print("STOOD-IN for the host service:", c.recv(100), flush=True)
try:
    c = socket.create_connection(("::1", p), timeout=3); s.settimeout(3); s.accept()
    print("own client reached its IPv6-only server", flush=True)
except OSError as e:
    print("own client:", e, flush=True)
"#;

/// The host: a client of `localhost` on that port, which tries `::1` first.
const HOST_LOCALHOST_CLIENT: &str = r#"
import os, socket, sys, time
w, o = sys.argv[1], sys.argv[2]
for i in range(200):
    if os.path.exists(w + "/ready"): break
    time.sleep(0.05)
p = int(open(o + "/port").read())
try:
    c = socket.create_connection(("::1", p), timeout=2); c.sendall(b"password=hunter2\n")
    print("HOST-CLIENT-REACHED-THE-COMMAND", flush=True)
except OSError as e:
    print("host client of ::1:", e, flush=True)
open(w + "/hostdone", "w").close()
"#;

fn v6only_stand_in() -> Scenario {
    python("v6only.py", V6ONLY_SERVER, r#""$O/port""#)
        .setup(|e| {
            tcp_probe(e, "127.0.0.1:0");
            e.file(&e.o("client.py"), HOST_LOCALHOST_CLIENT);
        })
        .wrap(
            r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/client.py" "$W" "$O"
            wait $pid"#,
        )
        .lacks("HOST-CLIENT-REACHED-THE-COMMAND")
        .lacks("STOOD-IN")
        .prints("own client reached its IPv6-only server")
}

/// The command: a Unix client socket with `SO_PASSCRED` connects to a listed path whose
/// server is gone (the kernel autobinds it to an abstract name first), then listens.
const AUTOBOUND: &str = r#"
import select, socket, sys
o = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
try:
    s.connect(o + "/stale.sock"); print("connected to a stale socket?", flush=True)
except OSError as e:
    print("connect:", e, flush=True)
try:
    s.listen(); print("listening at", s.getsockname(), flush=True)
    open("abs.tmp", "wb").write(s.getsockname()); __import__("os").rename("abs.tmp", "abs")
    r, _, _ = select.select([s], [], [], 3)
    if r:
        c, _ = s.accept(); print("SERVED", c.recv(100), flush=True)
except OSError as e:
    print("listen refused:", e, flush=True)
"#;

/// The host: connects to the abstract name the command listens at, if any.
const HOST_ABSTRACT_CLIENT: &str = r#"
import os, socket, sys, time
w = sys.argv[1]
for i in range(60):
    if os.path.exists(w + "/abs"): break
    time.sleep(0.05)
else:
    sys.exit(0)
name = open(w + "/abs", "rb").read()
c = socket.socket(socket.AF_UNIX)
try:
    c.connect(name); c.sendall(b"host"); print("HOST-REACHED-THE-COMMAND", name, flush=True)
except OSError as e:
    print("host client:", e, flush=True)
"#;

/// O/stale.sock: a socket file whose server is gone (ssh-agent after it died).
fn stale_socket(e: &Env) {
    drop(std::os::unix::net::UnixListener::bind(e.o("stale.sock")).unwrap());
    e.own(&e.o("stale.sock"));
    e.file(&e.o("host.py"), HOST_ABSTRACT_CLIENT);
}

fn autobound_listen() -> Scenario {
    python("auto.py", AUTOBOUND, r#""$O""#)
        .with("network.allowUnixSockets", json!(["{O}/stale.sock"]))
        .setup(stale_socket)
        .wrap(
            r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/host.py" "$W"
            wait $pid"#,
        )
        .lacks("HOST-REACHED-THE-COMMAND")
        .lacks("SERVED")
}

escapes! {
    // 1: TCP Fast Open's deferred connect to the command's own listener, whose port a host
    // wildcard listener takes before the first write
    deferred_connect_reaches_a_later_host_listener => deferred_connect();
    deferred_connect_reaches_a_later_host_listener_pod => without_pidfd_getfd(deferred_connect());
    // 2: an IPv6-only server on ::1 standing in for a host service on 127.0.0.1
    ipv6_only_server_stands_in_for_localhost => v6only_stand_in();
    ipv6_only_server_stands_in_for_localhost_pod => without_pidfd_getfd(v6only_stand_in());
    // 3: a Unix client autobound to an abstract name serves there
    unix_autobound_client_listens => autobound_listen();
}
