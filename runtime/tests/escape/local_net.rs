//! Local servers (issue 20, item 4): the command may serve on loopback and reach its own
//! listeners; everything here tries to use that to reach something else, or to be reached.
//! Landlock mode places its servers on a loopback address of the run's own (`127.A.B.C`)
//! and lets loopback connects through only to listeners srt made for the run; namespace
//! mode has a loopback of its own. The scenarios marked "pod" run again where
//! `pidfd_getfd` is refused (containerd's RuntimeDefault), where srt binds sockets of its own
//! in the command's place.

use serde_json::json;

use super::harness::{tcp_probe, Env, Scenario};
use super::pod::{python, without_pidfd_getfd};
use super::probes::{register, TcpProbe};
use crate::escapes;

/// Setup: a dual-stack host listener on every address (`[::]`), its port in O/port: what
/// every loopback spelling of that port reaches on the host.
fn host_wildcard(e: &Env) {
    let l = std::net::TcpListener::bind("[::]:0").unwrap();
    l.set_nonblocking(true).unwrap();
    e.file(&e.o("port"), &l.local_addr().unwrap().port().to_string());
    register(Box::new(TcpProbe(l)));
}

/// Every spelling of a host listener's port, then the same port bound by the command.
const SPELLINGS: &str = concat!(
    crate::real_addr_py!(),
    r#"
import socket, sys
p = int(open(sys.argv[1]).read())
def run_addr():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); a = real(s)[0]; s.close(); return a
A4, A6 = socket.AF_INET, socket.AF_INET6
for fam, addr in [(A4, ("127.0.0.1", p)), (A4, ("127.0.0.2", p)), (A4, ("0.0.0.0", p)), (A4, (run_addr(), p)),
                  (A6, ("::ffff:127.0.0.1", p)), (A6, ("::ffff:0.0.0.0", p)), (A6, ("::1", p)), (A6, ("::", p)),
                  (A4, ("localhost", p))]:
    s = socket.socket(fam); s.settimeout(3)
    try:
        s.connect(addr); print("CONNECTED", addr)
    except OSError as e:
        print("refused", addr, e)
try:
    l = socket.socket(); l.bind(("127.0.0.1", p)); l.listen()
    c = socket.create_connection(("127.0.0.1", p), timeout=3); l.settimeout(3); l.accept(); print("OWN LISTENER")
except OSError as e:
    print("own listener on that port:", e)
"#
);

/// The command serves on a port a host listener has on 127.0.0.1 and connects to it by
/// every spelling: its own listener answers, never the host's.
const SHADOW: &str = r#"
import socket, sys, threading
p = int(open(sys.argv[1]).read())
l = socket.socket(); l.bind(("127.0.0.1", p)); l.listen(16)
def serve():
    while True:
        c, _ = l.accept(); c.sendall(b"OWN\n"); c.close()
threading.Thread(target=serve, daemon=True).start()
A4, A6 = socket.AF_INET, socket.AF_INET6
for fam, addr in [(A4, ("127.0.0.1", p)), (A4, ("0.0.0.0", p)), (A6, ("::ffff:127.0.0.1", p)), (A4, ("localhost", p)), (A6, ("::1", p))]:
    s = socket.socket(fam); s.settimeout(3)
    try:
        s.connect(addr); print(addr, s.recv(10).decode().strip())
    except OSError as e:
        print(addr, "refused:", e)
"#;

/// Servers on the wildcard addresses; their ports go to W/ports; accepts for 3 s.
const WILDCARD_SERVER: &str = r#"
import os, select, socket
socks = []
for fam, addr in [(socket.AF_INET, ("0.0.0.0", 0)), (socket.AF_INET6, ("::", 0))]:
    s = socket.socket(fam); s.bind(addr); s.listen(); socks.append(s); print("listening", s.getsockname(), flush=True)
open("ports.tmp", "w").write(" ".join(str(s.getsockname()[1]) for s in socks)); os.rename("ports.tmp", "ports")
r, _, _ = select.select(socks, [], [], 3)
for s in r:
    c, a = s.accept(); print("ACCEPTED", a)
"#;

/// Host side: connects to W/ports on loopback and on the host's own addresses.
const HOST_DIAL: &str = r#"
import os, socket, subprocess, sys, time
w = sys.argv[1]
for i in range(100):
    if os.path.exists(w + "/ports"): break
    time.sleep(0.05)
ports = [int(x) for x in open(w + "/ports").read().split()]
try:
    mine = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
except OSError:
    mine = []
for p in ports:
    for a in ["127.0.0.1", "::1"] + mine:
        try:
            socket.create_connection((a, p), timeout=1); print("HOSTCONNECTED", a, p)
        except OSError:
            pass
"#;

/// Host side, the same user: a listener on 127.0.0.1 in a SO_REUSEPORT group; once the
/// command says it is ready, 20 connections to it, which must all reach this listener.
const HOST_REUSEPORT: &str = r#"
import os, socket, sys, time
w = sys.argv[1]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
l.bind(("127.0.0.1", 0)); l.listen(64)
open(w + "/port.tmp", "w").write(str(l.getsockname()[1])); os.rename(w + "/port.tmp", w + "/port")
for i in range(200):
    if os.path.exists(w + "/ready"): break
    time.sleep(0.05)
clients = [socket.create_connection(("127.0.0.1", l.getsockname()[1]), timeout=2) for _ in range(20)]
l.settimeout(1); got = 0
try:
    while got < 20:
        l.accept(); got += 1
except OSError:
    pass
print("HOST-GOT", got)
"#;

/// The command joins the host listener's port with SO_REUSEPORT (allowLocalBinding: binds
/// go where asked).
const JOIN_REUSEPORT: &str = r#"
import os, socket, time
for i in range(100):
    if os.path.exists("port"): break
    time.sleep(0.05)
p = int(open("port").read())
s = socket.socket()
try:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); print("reuseport set")
except OSError as e:
    print("reuseport refused:", e)
try:
    s.bind(("127.0.0.1", p)); s.listen(); print("bound", s.getsockname())
except OSError as e:
    print("bind refused:", e)
open("ready", "w").close()
s.settimeout(3)
try:
    c, a = s.accept(); print("HIJACKED", a)
except OSError as e:
    print("nothing taken:", e)
"#;

/// The command's listener closes; a host listener takes the port (on 127.0.0.1 and on the
/// address the command's listener had); the command connects to it.
const REUSE_AFTER_CLOSE: &str = r#"
import os, socket, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(); a, p = l.getsockname(); l.close()
open("closed.tmp", "w").write("%s %d" % (a, p)); os.rename("closed.tmp", "closed")
for i in range(100):
    if os.path.exists("hostready"): break
    time.sleep(0.05)
A4, A6 = socket.AF_INET, socket.AF_INET6
for fam, addr in [(A4, ("127.0.0.1", p)), (A4, (a, p)), (A4, ("0.0.0.0", p)), (A6, ("::1", p))]:
    s = socket.socket(fam); s.settimeout(2)
    try:
        s.connect(addr); print("CONNECTED", addr)
    except OSError as e:
        print("refused", addr, e)
"#;

const HOST_TAKES_PORT: &str = r#"
import os, select, socket, sys, time
w = sys.argv[1]
for i in range(100):
    if os.path.exists(w + "/closed"): break
    time.sleep(0.05)
a, p = open(w + "/closed").read().split(); p = int(p)
ls = []
for fam, addr in [(socket.AF_INET, ("127.0.0.1", p)), (socket.AF_INET, (a, p)), (socket.AF_INET6, ("::1", p))]:
    try:
        l = socket.socket(fam); l.bind(addr); l.listen(); ls.append(l)
    except OSError as e:
        print("host could not bind", addr, e)
open(w + "/hostready", "w").close()
end = time.time() + 4
while time.time() < end:
    r, _, _ = select.select(ls, [], [], 0.2)
    for l in r:
        c, x = l.accept(); print("HOST-ACCEPTED", x)
"#;

/// Run A: a listener; its address and port go to W/a-listener; accepts for 5 s.
const RUN_A: &str = concat!(
    crate::real_addr_py!(),
    r#"
import os, socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
open("a.tmp", "w").write("%s %d" % real(l)); os.rename("a.tmp", "a-listener")
l.settimeout(5)
try:
    c, x = l.accept(); print("A-ACCEPTED", x)
except OSError:
    print("run A: nobody came")
"#
);

/// Run B: connects to run A's listener by its address and by 127.0.0.1.
const RUN_B: &str = r#"
import socket, sys
a, p = open(sys.argv[1]).read().split(); p = int(p)
for addr in [(a, p), ("127.0.0.1", p)]:
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(addr); print("CONNECTED", addr)
    except OSError as e:
        print("run B refused", addr, e)
"#;

/// Binds while another thread rewrites the address between a loopback one and others;
/// landlock mode must only ever place the socket on the run's own address.
const BIND_RACE: &str = concat!(
    crate::real_addr_py!(),
    r#"
import ctypes, os, socket, struct, threading
ns = os.environ["HTTP_PROXY"].endswith(":3128")
libc = ctypes.CDLL(None, use_errno=True)
def sin(ip): return struct.pack("=H", socket.AF_INET) + struct.pack("!H", 0) + socket.inet_aton(ip) + b"\0" * 8
good, bad = sin("127.0.0.1"), [sin("0.0.0.0"), sin("192.0.2.2"), sin("10.11.12.13")]
buf = ctypes.create_string_buffer(good, 16)
stop = False
def flip():
    i = 0
    while not stop:
        ctypes.memmove(buf, bad[i % 3] if i % 2 else good, 16); i += 1
t = threading.Thread(target=flip); t.start()
seen = set()
for i in range(300):
    s = socket.socket()
    if libc.bind(s.fileno(), buf, 16) == 0:
        s.listen(1); seen.add(real(s)[0])
    s.close()
stop = True; t.join()
wrong = sorted(a for a in seen if not a.startswith("127.") or a == "127.0.0.1")
print("bound at", sorted(seen))
print("WRONG" if wrong and not ns else "RACE-OK", wrong)
"#
);

/// listen() on a descriptor another thread swaps between a placed socket and one never
/// bound (whose listen() would bind it to 0.0.0.0).
const LISTEN_SWAP: &str = r#"
import ctypes, os, socket, threading
ns = os.environ["HTTP_PROXY"].endswith(":3128")
libc = ctypes.CDLL(None, use_errno=True)
bound = socket.socket(); bound.bind(("127.0.0.1", 0))
free = socket.socket()
x = socket.socket(); X = x.fileno()
stop = False
def swap():
    i = 0
    while not stop:
        libc.dup2(free.fileno() if i % 2 else bound.fileno(), X); i += 1
t = threading.Thread(target=swap); t.start()
ok = sum(1 for i in range(300) if libc.listen(X, 8) == 0)
stop = True; t.join()
acc = free.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
print("listens", ok, "never-bound socket:", free.getsockname(), "listening:", acc)
print("WILDCARD-LISTENER" if acc and not ns else "SWAP-OK")
"#;

fn spellings() -> Scenario {
    python("spellings.py", SPELLINGS, r#""$O/port""#).setup(host_wildcard).lacks("CONNECTED")
}

fn reuse_after_close() -> Scenario {
    python("reuse.py", REUSE_AFTER_CLOSE, "")
        .setup(|e| e.file(&e.o("host.py"), HOST_TAKES_PORT))
        .wrap(
            r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/host.py" "$W"
            wait $pid"#,
        )
        .lacks("CONNECTED")
        .lacks("HOST-ACCEPTED")
}

fn listen_swap() -> Scenario {
    python("swap.py", LISTEN_SWAP, "").prints("SWAP-OK")
}

escapes! {
    // a host listener, by every loopback spelling (v4, v4-mapped, v6, wildcard, the run's
    // own address), then the same port bound by the command
    host_listener_by_every_spelling => spellings();
    host_listener_by_every_spelling_pod => without_pidfd_getfd(spellings());
    // the command serves on the port a host listener has on 127.0.0.1: its connects reach
    // its own listener, never the host's
    own_port_shadows_the_host_listener => python("shadow.py", SHADOW, r#""$O/port""#)
        .setup(|e| tcp_probe(e, "127.0.0.1:0"))
        .check(|_, o| {
            let own = o.text.matches("OWN").count();
            if own >= 4 { Ok(()) } else { Err(format!("only {own} connects reached the command's own listener: {}", o.text)) }
        });
    // servers bound to 0.0.0.0 and :: are not reachable from the host, on loopback or on
    // the host's own addresses
    wildcard_server_unreachable_from_the_host => python("wild.py", WILDCARD_SERVER, "")
        .setup(|e| e.file(&e.o("dial.py"), HOST_DIAL))
        .wrap(r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/dial.py" "$W"
            wait $pid"#)
        .lacks("HOSTCONNECTED").lacks("ACCEPTED").prints("listening");
    // SO_REUSEPORT to join a host listener's port (allowLocalBinding: binds go where asked)
    reuseport_hijack_of_a_host_listener => python("join.py", JOIN_REUSEPORT, "")
        .with("network.allowLocalBinding", json!(true))
        .setup(|e| e.file(&e.o("host.py"), HOST_REUSEPORT))
        .wrap(r#"/usr/bin/python3 "$O/host.py" "$W" & host=$!
            $WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD"
            wait $host"#)
        .lacks("HIJACKED").prints("HOST-GOT 20");
    // the command's listener closes and a host listener takes its port: refused
    port_reuse_after_the_listener_closes => reuse_after_close();
    port_reuse_after_the_listener_closes_pod => without_pidfd_getfd(reuse_after_close());
    // another srt run's listener
    another_runs_listener => python("a.py", RUN_A, "")
        .setup(|e| e.file(&e.o("b.py"), RUN_B))
        .wrap(r#"$WRAP "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & a=$!
            for i in $(seq 100); do [ -e "$W/a-listener" ] && break; sleep 0.05; done
            $WRAP "$SRT" "$MODE" -s "$SETTINGS" -c '/usr/bin/python3 "$O/b.py" "$W/a-listener"'
            wait $a"#)
        .lacks("CONNECTED").lacks("A-ACCEPTED").prints("run B refused");
    // the bind address rewritten while srt reads it
    bind_address_race => python("race.py", BIND_RACE, "").prints("RACE-OK");
    // listen() on a descriptor swapped to a never-bound socket
    listen_descriptor_swap_race => listen_swap();
    listen_descriptor_swap_race_pod => without_pidfd_getfd(listen_swap());
}
