//! `allowUnixSockets` (issue 20, item 5): a listed socket is reachable, nothing else is,
//! whatever the path the command spells (symlinks, `/proc/self/fd/N`, relative paths,
//! descriptors passed with SCM_RIGHTS, an address rewritten while srt reads it), and no
//! datagram reaches another path. Each host socket but the listed one must stay quiet.

use std::io::{ErrorKind, Write};
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::harness::{Env, Scenario};
use super::pod::{python, without_pidfd_getfd};
use super::probes::{register, Probe};
use super::review_channels::dgram_sink;
use crate::escapes;

/// A host Unix stream socket, owned by the scenario's user. `serve`: answers each
/// connection with `HELLO-<name>`; otherwise any connection is a failure.
struct HostSocket {
    name: &'static str,
    serve: bool,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    listener: Arc<UnixListener>,
}

impl Probe for HostSocket {
    fn quiet(&self) -> Result<(), String> {
        // a connection still in the backlog, not yet taken by the thread, counts too
        while self.listener.accept().is_ok() {
            self.hits.fetch_add(1, Ordering::SeqCst);
        }
        match self.hits.load(Ordering::SeqCst) {
            n if n > 0 && !self.serve => Err(format!("{n} connections reached the unlisted {}", self.name)),
            _ => Ok(()),
        }
    }
}

impl Drop for HostSocket {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

pub(super) fn host_socket(e: &Env, name: &'static str, serve: bool) {
    host_socket_at(e, &e.o(name), name, serve);
}

pub(super) fn host_socket_at(e: &Env, path: &std::path::Path, name: &'static str, serve: bool) {
    let listener = Arc::new(UnixListener::bind(path).unwrap());
    listener.set_nonblocking(true).unwrap();
    e.own(path);
    let (hits, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let (h, s, l) = (hits.clone(), stop.clone(), listener.clone());
    std::thread::spawn(move || {
        while !s.load(Ordering::SeqCst) {
            match l.accept() {
                Ok((mut c, _)) => {
                    h.fetch_add(1, Ordering::SeqCst);
                    if serve {
                        // one write, so that one recv() gets the whole greeting
                        let _ = c.write_all(format!("HELLO-{name}\n").as_bytes());
                    }
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                Err(_) => return,
            }
        }
    });
    register(Box::new(HostSocket { name, serve, hits, stop, listener }));
}

/// O/a.sock (listed, answers) and O/b.sock (not listed, must stay quiet).
fn a_and_b(e: &Env) {
    host_socket(e, "a.sock", true);
    host_socket(e, "b.sock", false);
}

/// `tryc(label, path)`: connects, prints what the server says or why it was refused. The
/// scripts beside it in O import it.
const TRY_CONNECT: &str = r#"
import os, socket
def tryc(label, p):
    s = socket.socket(socket.AF_UNIX); s.settimeout(3)
    try:
        s.connect(p); print(label, "->", s.recv(100).decode().strip(), flush=True)
    except OSError as e:
        print(label, "refused:", e, flush=True)
def sym(target, name):
    try:
        os.symlink(target, name)
    except OSError as e:
        print("link", name, "refused:", e, flush=True)
"#;

/// `script` (importing [`TRY_CONNECT`]) run by the command with O as its argument.
fn tries(name: &'static str, script: &'static str) -> Scenario {
    python(name, script, r#""$O""#).setup(|e| e.file(&e.o("try_connect.py"), TRY_CONNECT))
}

/// The listed socket, then every spelling of the unlisted one.
const SPELLINGS: &str = r#"
import os, socket, sys
o = sys.argv[1]
from try_connect import tryc
tryc("listed", o + "/a.sock")
tryc("unlisted", o + "/b.sock")
tryc("symlink", "lnk")
tryc("dir symlink", "dirlnk/b.sock")
fd = os.open(o + "/b.sock", os.O_PATH); tryc("proc-self-fd", "/proc/self/fd/%d" % fd)
tryc("dev-fd", "/dev/fd/%d" % fd)
tryc("proc-pid-fd", "/proc/%d/fd/%d" % (os.getpid(), fd))
tryc("proc-self-root", "/proc/self/root" + o + "/b.sock")
tryc("dotdot", o + "/../" + os.path.basename(o) + "/b.sock")
os.chdir(o); tryc("relative", "b.sock")
# an O_PATH descriptor passed to another process, which connects through it
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    msg, anc, flags, addr = b.recvmsg(1, socket.CMSG_SPACE(4))
    got = int.from_bytes(anc[0][2][:4], "little")
    tryc("passed-fd", "/proc/self/fd/%d" % got); os._exit(0)
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd.to_bytes(4, "little"))])
os.waitpid(pid, 0)
"#;

/// Datagrams to an unlisted path: no datagram socket can be made, and stream sockets
/// (free, connected to the listed one, or a socketpair end) cannot address a path.
const DATAGRAMS: &str = r#"
import socket, sys
o = sys.argv[1]
d = o + "/dgram.sock"
for t, name in [(socket.SOCK_DGRAM, "dgram"), (socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, "dgram-nb")]:
    try:
        socket.socket(socket.AF_UNIX, t); print("MADE", name)
    except OSError as e:
        print(name, "refused:", e)
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print("MADE dgram pair")
except OSError as e:
    print("dgram pair refused:", e)
c = socket.socket(socket.AF_UNIX); c.connect(o + "/a.sock")
free = socket.socket(socket.AF_UNIX)
sp, _ = socket.socketpair()
seq = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
for name, s in [("connected", c), ("free", free), ("pair", sp), ("seqpacket", seq)]:
    try:
        s.sendto(b"leak", d); print("SENT sendto", name)
    except OSError as e:
        print("sendto", name, "refused:", e)
    try:
        s.sendmsg([b"leak"], [], 0, d); print("SENT sendmsg", name)
    except OSError as e:
        print("sendmsg", name, "refused:", e)
"#;

/// Connects 300 times while another thread rewrites the path between the listed socket
/// and the unlisted one.
const PATH_RACE: &str = r#"
import ctypes, socket, sys, threading
o = sys.argv[1].encode()
libc = ctypes.CDLL(None, use_errno=True)
def sun(p): return (1).to_bytes(2, "little") + p + b"\0" * (108 - len(p))
good, bad = sun(o + b"/a.sock"), sun(o + b"/b.sock")
buf = ctypes.create_string_buffer(good, 110)
stop = False
def flip():
    i = 0
    while not stop:
        ctypes.memmove(buf, bad if i % 2 else good, 110); i += 1
t = threading.Thread(target=flip); t.start()
ok = 0
for i in range(300):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), buf, 110) == 0:
        ok += 1
    s.close()
stop = True; t.join()
print("connected", ok, "times")
"#;

/// The listed path is inside the working directory (writable): the command replaces it
/// with a symlink to the unlisted socket.
const REPLACE_LISTED: &str = r#"
import os, socket, sys
o = sys.argv[1]
from try_connect import tryc, sym
tryc("listed before", "a.sock")
os.rename("a.sock", "gone.sock")
sym(o + "/b.sock", "a.sock"); tryc("listed path now a symlink", "a.sock")
"#;

/// A listed directory: sockets beneath it are reached, by any spelling; others are not.
const DIRECTORY: &str = r#"
import os, socket, sys
o = sys.argv[1]
from try_connect import tryc
tryc("beneath", o + "/socks/a.sock")
tryc("symlink into it", "lnk")
tryc("beside", o + "/b.sock")
tryc("dotdot out of it", o + "/socks/../b.sock")
tryc("symlink out of it", "lnk2")
"#;

/// Abstract names: the host's (landlock mode: refused; namespace mode: not in the
/// sandbox's namespace), and one of the command's own.
const ABSTRACT: &str = r#"
import socket, sys
name = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.settimeout(3)
try:
    s.connect("\0" + name); print("HOST-ABSTRACT-REACHED", s.recv(100))
except OSError as e:
    print("host abstract refused:", e)
try:
    l = socket.socket(socket.AF_UNIX); l.bind("\0own-" + name); l.listen()
    c = socket.socket(socket.AF_UNIX); c.connect("\0own-" + name); print("own abstract server reached")
except OSError as e:
    print("own abstract server:", e)
"#;

struct Abstract {
    l: UnixListener,
}
impl Probe for Abstract {
    fn quiet(&self) -> Result<(), String> {
        match self.l.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a connection reached the host's abstract socket: {other:?}")),
        }
    }
}

/// A host listener on an abstract name, written to O/abstract.
fn host_abstract(e: &Env) {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("srt-escape-{}-{}", std::process::id(), e.root.file_name().unwrap().to_string_lossy());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let l = UnixListener::bind_addr(&addr).unwrap();
    l.set_nonblocking(true).unwrap();
    e.file(&e.o("abstract"), &name);
    register(Box::new(Abstract { l }));
}

pub(super) fn listed(s: Scenario) -> Scenario {
    s.with("network.allowUnixSockets", json!(["{O}/a.sock"]))
}

/// Links the host made in W before the run (the command's own links to places it may not
/// write are refused as they are made: see `links_as_writes`), each `(name, target in O)`.
fn host_links(links: &'static [(&'static str, &'static str)]) -> impl Fn(&Env) {
    move |e: &Env| {
        for (name, target) in links {
            std::os::unix::fs::symlink(e.o(target), e.w(name)).unwrap();
            e.own_tree(&e.w(name));
        }
    }
}

fn spellings() -> Scenario {
    listed(tries("spell.py", SPELLINGS))
        .setup(a_and_b)
        .setup(host_links(&[("lnk", "b.sock"), ("dirlnk", "")]))
        .prints("listed -> HELLO-a.sock")
        .lacks("HELLO-b.sock")
        .check(|_, o| {
            let refused = o.text.matches(" refused:").count();
            if refused == 10 {
                Ok(())
            } else {
                Err(format!("expected 10 refused spellings, got {refused}: {}", o.text))
            }
        })
}

escapes! {
    // the listed socket answers; the unlisted one by every spelling stays quiet
    unix_listed_socket_only => spellings();
    unix_listed_socket_only_pod => without_pidfd_getfd(spellings());
    // datagrams to an unlisted path: sendto/sendmsg from every socket the command can make
    unix_datagram_to_unlisted_path => listed(python("dgram.py", DATAGRAMS, r#""$O""#))
        .setup(a_and_b).setup(dgram_sink).lacks("SENT").lacks("MADE");
    // the connect address rewritten between the listed and an unlisted path while srt reads it
    unix_connect_path_race => listed(python("race.py", PATH_RACE, r#""$O""#)).setup(a_and_b).prints("connected");
    unix_connect_path_race_pod => without_pidfd_getfd(listed(python("race.py", PATH_RACE, r#""$O""#)).setup(a_and_b).prints("connected"));
    // a listed path the command may write, replaced by a symlink to an unlisted socket
    unix_listed_path_replaced => tries("replace.py", REPLACE_LISTED)
        .with("network.allowUnixSockets", json!(["{W}/a.sock"]))
        .setup(|e| {
            host_socket(e, "b.sock", false);
            host_socket_at(e, &e.w("a.sock"), "listed", true);
        })
        .prints("listed before -> HELLO-listed").prints("listed path now a symlink refused");
    // a listed directory covers the sockets beneath it, and only those
    unix_listed_directory => tries("dir.py", DIRECTORY)
        .with("network.allowUnixSockets", json!(["{O}/socks"]))
        .setup(|e| {
            e.dir(&e.o("socks"));
            host_socket_at(e, &e.o("socks/a.sock"), "in-dir", true);
            host_socket(e, "b.sock", false);
        })
        .setup(host_links(&[("lnk", "socks/a.sock"), ("lnk2", "b.sock")]))
        .prints("beneath -> HELLO-in-dir").prints("symlink into it -> HELLO-in-dir")
        .prints("beside refused").prints("dotdot out of it refused").prints("symlink out of it refused");
    // abstract names: the host's stay out of reach
    unix_abstract_names => listed(python("abstract.py", ABSTRACT, r#""$(cat "$O/abstract")""#))
        .setup(host_abstract).lacks("HOST-ABSTRACT-REACHED").prints("host abstract refused");
}
