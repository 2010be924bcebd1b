//! Outside review, findings 4, 5, 9 and 10: channels between the command and the host
//! that are not the network rules' sockets. Unix datagrams from a `socketpair` socket to
//! a host socket path, and a bound one the host can send to (4); a TCP server made by
//! `listen()` without `bind()`, which auto-binds 0.0.0.0 in landlock mode (5); other
//! terminals under /dev/pts (9); SysV IPC objects, shared with the host when there is no
//! IPC namespace (10).

use std::io::ErrorKind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixDatagram;

use super::harness::{Env, Scenario};
use super::probes::{register, Probe};
use crate::escapes;

// ---- finding 4 ----------------------------------------------------------------------

pub(super) struct Dgram(UnixDatagram);
impl Probe for Dgram {
    fn quiet(&self) -> Result<(), String> {
        let mut buf = [0u8; 64];
        match self.0.recv(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            other => Err(format!("a datagram reached the host socket: {other:?}")),
        }
    }
}

/// A host datagram socket at O/dgram.sock, owned by the scenario's user.
pub(super) fn dgram_sink(e: &Env) {
    let s = UnixDatagram::bind(e.o("dgram.sock")).unwrap();
    s.set_nonblocking(true).unwrap();
    e.own(&e.o("dgram.sock"));
    register(Box::new(Dgram(s)));
}

/// From one end of a datagram socketpair (allowed without allowAllUnixSockets), a
/// datagram addressed to the host's socket.
const DGRAM_SEND: &str = r#"
import socket, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    a.sendto(b"leak", sys.argv[1])
except OSError as e:
    print("sendto refused:", e); sys.exit(1)
print("SENT")
"#;

/// Disconnects a datagram socketpair end (connect AF_UNSPEC), binds it in W (or W/sub),
/// and waits 4 s for a datagram from the host.
const DGRAM_BIND: &str = r#"
import ctypes, socket, sys
l = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
unspec = ctypes.create_string_buffer(16)
print("disconnect", l.connect(b.fileno(), unspec, 16), ctypes.get_errno())
bound = None
for p in ["rx.sock", "sub/rx.sock"]:
    try:
        b.bind(p); bound = p; break
    except OSError as e:
        print("bind", p, "refused:", e)
if bound is None:
    sys.exit(1)
print("BOUND", bound, flush=True)
b.settimeout(4)
try:
    print("GOT", b.recv(100))
except OSError as e:
    print("nothing received:", e)
"#;

/// Host side for DGRAM_BIND: once a socket appears in W or W/sub, send it a datagram.
const HOST_SEND: &str = r#"
import os, socket, sys, time
w = sys.argv[1]
for i in range(50):
    for p in [w + "/rx.sock", w + "/sub/rx.sock"]:
        if os.path.exists(p):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                s.sendto(b"FROM-HOST", p); print("host sent to", p)
            except OSError as e:
                print("host could not send:", e)
            sys.exit(0)
    time.sleep(0.1)
"#;

// ---- finding 5 ----------------------------------------------------------------------

/// listen() without bind(): the port (auto-bound) goes to W/port; accepts for 3 s.
const LISTEN: &str = r#"
import os, socket
s = socket.socket()
s.listen()
print("listening on", s.getsockname(), flush=True)
open("port.tmp", "w").write(str(s.getsockname()[1]))
os.rename("port.tmp", "port")
s.settimeout(3)
try:
    c, a = s.accept(); print("ACCEPTED", a)
except OSError as e:
    print("no connection:", e)
"#;

// ---- finding 9 ----------------------------------------------------------------------

/// A pseudo-terminal of the host's (say, the user's other shell), its slave owned by the
/// scenario's user, with `TYPED-SECRET` typed into it. Asked afterwards whether anything
/// was written to it.
struct Pty {
    master: OwnedFd,
    _slave: OwnedFd,
}
impl Probe for Pty {
    fn quiet(&self) -> Result<(), String> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        for _ in 0..64 {
            // SAFETY: reading into a local buffer from a non-blocking descriptor we own.
            let n = unsafe { libc::read(self.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n as usize]);
        }
        let seen = String::from_utf8_lossy(&seen);
        if seen.contains("INJECTED") {
            Err(format!("the command wrote to the host's terminal: {seen:?}"))
        } else {
            Ok(())
        }
    }
}

fn host_terminal(e: &Env) {
    let (mut m, mut s) = (0, 0);
    // SAFETY: openpty writes two fresh descriptors; the rest is plain fcntl/write on them.
    let (master, slave) = unsafe {
        assert_eq!(
            libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()),
            0,
            "openpty"
        );
        for fd in [m, s] {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        libc::fcntl(m, libc::F_SETFL, libc::fcntl(m, libc::F_GETFL) | libc::O_NONBLOCK);
        (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s))
    };
    let name = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).unwrap();
    e.own(&name);
    let typed = b"TYPED-SECRET\n";
    // SAFETY: writing a local buffer to the master we own.
    assert_eq!(unsafe { libc::write(master.as_raw_fd(), typed.as_ptr().cast(), typed.len()) }, typed.len() as isize);
    e.file(&e.o("pts"), name.to_str().unwrap());
    register(Box::new(Pty { master, _slave: slave }));
}

// ---- finding 10 ---------------------------------------------------------------------

/// A key no other scenario (or process, probably) uses.
fn ipc_key() -> libc::key_t {
    static N: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    0x5e_0000 ^ ((std::process::id() as i32 & 0xffff) << 8) ^ n
}

/// A host message queue (mode 0666) that must never receive a message; removed when the
/// next scenario starts.
struct MsgQueue(i32);
impl Probe for MsgQueue {
    fn quiet(&self) -> Result<(), String> {
        let mut msg = [0u8; 128];
        // SAFETY: msgrcv into a local buffer large enough for mtype + 64 bytes.
        let n = unsafe { libc::msgrcv(self.0, msg.as_mut_ptr().cast(), 64, 0, libc::IPC_NOWAIT) };
        if n >= 0 {
            Err(format!("a message reached the host's queue: {:?}", String::from_utf8_lossy(&msg[8..8 + n as usize])))
        } else {
            Ok(())
        }
    }
}
impl Drop for MsgQueue {
    fn drop(&mut self) {
        // SAFETY: removing the queue we created.
        unsafe { libc::msgctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

fn host_queue(e: &Env) {
    let key = ipc_key();
    // SAFETY: plain syscall.
    let id = unsafe { libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | 0o666) };
    assert!(id >= 0, "msgget: {}", std::io::Error::last_os_error());
    register(Box::new(MsgQueue(id)));
    e.file(&e.o("ipc.key"), &key.to_string());
}

/// msgget(key, 0) + msgsnd, non-blocking.
const MSGSND: &str = r#"
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
key = int(open(sys.argv[1]).read())
q = l.msgget(key, 0)
print("msgget", q, "errno", ctypes.get_errno())
if q < 0: sys.exit(1)
class Msg(ctypes.Structure): _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 8)]
m = Msg(1, b"leak")
r = l.msgsnd(q, ctypes.byref(m), 4, 0o4000)
print("msgsnd", r, "errno", ctypes.get_errno())
sys.exit(0 if r == 0 else 1)
"#;

/// A host shared-memory segment holding a secret; removed when the next scenario starts.
struct Shm(i32);
impl Probe for Shm {
    fn quiet(&self) -> Result<(), String> {
        Ok(())
    }
}
impl Drop for Shm {
    fn drop(&mut self) {
        // SAFETY: removing the segment we created.
        unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

fn host_shm(e: &Env) {
    let key = ipc_key();
    // SAFETY: plain syscalls; the mapping is written within its 4096 bytes, then detached.
    let id = unsafe {
        let id = libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
        assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
        let p = libc::shmat(id, std::ptr::null(), 0);
        assert_ne!(p as isize, -1, "shmat: {}", std::io::Error::last_os_error());
        let secret = b"SHMSECRET\0";
        std::ptr::copy_nonoverlapping(secret.as_ptr(), p.cast::<u8>(), secret.len());
        libc::shmdt(p);
        id
    };
    register(Box::new(Shm(id)));
    e.file(&e.o("ipc.key"), &key.to_string());
}

/// shmget(key, 0, 0) + shmat + print what the segment holds.
const SHMREAD: &str = r#"
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
l.shmat.restype = ctypes.c_void_p
key = int(open(sys.argv[1]).read())
i = l.shmget(key, 0, 0)
print("shmget", i, "errno", ctypes.get_errno())
if i < 0: sys.exit(1)
p = l.shmat(i, None, 0o10000)
if p is None or p == ctypes.c_void_p(-1).value:
    print("shmat errno", ctypes.get_errno()); sys.exit(1)
print(ctypes.string_at(p, 9))
"#;

fn python(script: &'static str, args: &str) -> Scenario {
    Scenario::new(&format!(r#"/usr/bin/python3 "$O/script.py" {args}"#))
        .setup(move |e| e.file(&e.o("script.py"), script))
}

escapes! {
    // finding 4: a datagram from a socketpair end to a host socket path
    unix_dgram_sendto_host_socket => python(DGRAM_SEND, r#""$O/dgram.sock""#)
        .setup(dgram_sink).fails().lacks("SENT");
    // finding 4: a socketpair end disconnected and bound where the host can reach it
    unix_dgram_bound_for_the_host => python(DGRAM_BIND, "")
        .setup(|e| { e.dir(&e.w("sub")); e.file(&e.o("host_send.py"), HOST_SEND) })
        .wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            /usr/bin/python3 "$O/host_send.py" "$W"
            wait $pid"#)
        .fails().lacks("BOUND").lacks("FROM-HOST");

    // finding 5: listen() auto-binds 0.0.0.0 without a bind() for Landlock to refuse
    tcp_listen_reachable_from_host => python(LISTEN, "")
        .wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
            for i in $(seq 50); do [ -e "$W/port" ] && break; sleep 0.1; done
            if [ -e "$W/port" ] && /usr/bin/python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)' "$(cat "$W/port")"; then
              echo HOSTCONNECTED
            fi
            wait $pid"#)
        .lacks("HOSTCONNECTED").lacks("ACCEPTED");

    // finding 9: another terminal of the host's: write to it (output), read from it (input)
    other_terminal_write_and_read => Scenario::new(
        r#"p=$(cat "$O/pts"); (printf INJECTED > "$p" && echo WROTE); timeout 2 head -c 13 < "$p""#)
        .setup(host_terminal).fails().lacks("WROTE").lacks("TYPED-SECRET");

    // finding 10: a host message queue (landlock mode has no IPC namespace)
    sysv_msg_queue_of_the_host => python(MSGSND, r#""$O/ipc.key""#).setup(host_queue).fails();
    // finding 10: a host shared-memory segment
    sysv_shm_of_the_host => python(SHMREAD, r#""$O/ipc.key""#).setup(host_shm).fails().lacks("SHMSECRET");
}
