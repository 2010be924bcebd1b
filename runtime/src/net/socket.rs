//! What the supervisor does to a command's socket: takes a copy of it (`pidfd_getfd`) and
//! connects it to an address of srt's own, never to one read from the command's memory.

use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PIDFD_THREAD` (Linux 6.9): a pidfd for that very thread, whose descriptor table
/// `pidfd_getfd` then reads.
const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;

/// A copy of socket `fd` of thread `tid` (same open file description), taken from that
/// thread's own descriptor table: a thread made without `CLONE_FILES` has one apart from
/// its process leader's, where `fd` may be another socket.
pub fn take_socket(tid: u32, fd: i32) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_open and pidfd_getfd return fresh descriptors we own.
    unsafe {
        let mut pidfd = libc::syscall(libc::SYS_pidfd_open, tid as libc::pid_t, PIDFD_THREAD);
        let mut check = false;
        if pidfd < 0 && last_errno() == libc::EINVAL {
            // before 6.9 a pidfd names a process: the thread's own where it leads one, else
            // its leader's (looked up in /proc), whose table the copy is then checked against
            pidfd = libc::syscall(libc::SYS_pidfd_open, tid as libc::pid_t, 0);
            if pidfd < 0 {
                let tgid = std::fs::read_to_string(format!("/proc/{tid}/status"))
                    .ok()
                    .and_then(|s| {
                        s.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse::<i32>().ok())
                    })
                    .ok_or(libc::ESRCH)?;
                pidfd = libc::syscall(libc::SYS_pidfd_open, tgid, 0);
                check = true;
            }
        }
        if pidfd < 0 {
            return Err(last_errno());
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
        let sock = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        if sock < 0 {
            return Err(last_errno());
        }
        let sock = OwnedFd::from_raw_fd(sock as i32);
        if check && !same_file(&sock, tid, fd) {
            // the leader's descriptor `fd` is not the thread's: act on neither
            return Err(libc::EBADF);
        }
        Ok(sock)
    }
}

/// Whether `sock` is the file thread `tid` holds at descriptor `fd`.
fn same_file(sock: &OwnedFd, tid: u32, fd: i32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(theirs) = std::fs::metadata(format!("/proc/{tid}/fd/{fd}")) else { return false };
    // SAFETY: fstat into a zeroed stat, on a descriptor we own.
    let mine = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(sock.as_raw_fd(), &mut st) == 0).then_some((st.st_dev, st.st_ino))
    };
    mine == Some((theirs.dev(), theirs.ino()))
}

/// Connects `sock` to the proxy; returns 0 or the errno the command should see.
pub fn connect_to_proxy(sock: &OwnedFd, port: u16, v6: bool) -> i32 {
    let addr = if v6 {
        SocketAddr::new(Ipv4Addr::LOCALHOST.to_ipv6_mapped().into(), port)
    } else {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)
    };
    connect_to(sock, &addr)
}

/// Binds `sock` to `addr` (port 0), so that it leaves from that address, its port chosen
/// at connect as for an unbound socket (`IP_BIND_ADDRESS_NO_PORT`): a socket bound with
/// port 0 would otherwise hold an ephemeral port of its own whatever its destination, and
/// a run making many short connections would run out of them. Returns 0 or the errno.
pub fn bind_source(sock: &impl AsRawFd, addr: &SocketAddr) -> i32 {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with a local int. Best effort: without it only the port choice
    // differs, never the address.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    let (st, len) = sockaddr(addr);
    // SAFETY: bind with a sockaddr we built, of the length given.
    if unsafe { libc::bind(sock.as_raw_fd(), (&st as *const libc::sockaddr_storage).cast(), len) } < 0 {
        last_errno()
    } else {
        0
    }
}

/// Connects `sock` to `addr`, an address of srt's own; returns 0 or the errno.
pub fn connect_to(sock: &impl AsRawFd, addr: &SocketAddr) -> i32 {
    let (storage, len) = sockaddr(addr);
    // SAFETY: connect with a sockaddr we built, on a descriptor we own.
    let r = unsafe { libc::connect(sock.as_raw_fd(), (&storage as *const libc::sockaddr_storage).cast(), len) };
    if r < 0 {
        last_errno()
    } else {
        0
    }
}

pub fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; we fill one variant below.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from(*v4.ip()).to_be() },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin) };
            (st, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr { s6_addr: v6.ip().octets() },
                sin6_scope_id: 0,
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin6) };
            (st, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// Sockets bound (never listening) at each of `addrs`, so that no one else can bind there
/// while they are held; one that cannot be bound (a privileged port, someone already
/// there) is left out: whoever is there, or the same refusal, keeps the command off it too.
pub fn hold(addrs: &[SocketAddr]) -> Vec<OwnedFd> {
    let mut out = Vec::with_capacity(addrs.len());
    for a in addrs {
        let family = if a.is_ipv6() { libc::AF_INET6 } else { libc::AF_INET };
        // SAFETY: plain syscall; the descriptor is owned below.
        let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            continue;
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        let (st, len) = sockaddr(a);
        // SAFETY: bind with a sockaddr we built, of the length given.
        if unsafe { libc::bind(fd, (&st as *const libc::sockaddr_storage).cast(), len) } == 0 {
            out.push(sock);
        } else {
            tracing::debug!(%a, "not held: {}", std::io::Error::last_os_error());
        }
    }
    out
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// An integer SOL_SOCKET option (SO_TYPE, SO_ERROR); 0 if it cannot be read.
pub fn socket_option(sock: &impl AsRawFd, name: libc::c_int) -> libc::c_int {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a local int of the given length.
    unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, name, (&mut v as *mut libc::c_int).cast(), &mut len)
    };
    v
}

/// Connects `sock` to the proxy and writes the preamble naming `dest` before the command
/// gets the socket back; returns 0 or the errno the command should see.
pub fn connect_transparent(sock: &OwnedFd, port: u16, v6: bool, preamble: &[u8]) -> i32 {
    match connect_to_proxy(sock, port, v6) {
        0 => {}
        libc::EINPROGRESS => {
            // the command's socket is non-blocking: loopback completes at once
            let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
            // SAFETY: poll on one live descriptor.
            if unsafe { libc::poll(&mut p, 1, 2000) } != 1 {
                return libc::ETIMEDOUT;
            }
            let err = socket_option(sock, libc::SO_ERROR);
            if err != 0 {
                return err;
            }
        }
        e => return e,
    }
    // SAFETY: send from a live buffer on a connected socket with an empty send buffer.
    let n = unsafe { libc::send(sock.as_raw_fd(), preamble.as_ptr().cast(), preamble.len(), libc::MSG_NOSIGNAL) };
    if n == preamble.len() as isize {
        0
    } else {
        libc::EIO
    }
}
