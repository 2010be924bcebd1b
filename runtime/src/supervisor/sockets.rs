//! Socket calls the supervisor makes on sockets it holds (the command's, taken with
//! `pidfd_getfd`, or its own replacements), with addresses it built itself. Errors are raw
//! errno values: they go back to the command as its syscall's result.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, BorrowedFd};

use super::sys::last_errno;

fn rc(r: libc::c_int) -> i32 {
    if r < 0 {
        last_errno()
    } else {
        0
    }
}

/// bind(2) to `addr`; 0 or the errno.
pub fn bind_to(sock: BorrowedFd<'_>, addr: &SocketAddr) -> i32 {
    let (st, len) = crate::net::sockaddr(addr);
    // SAFETY: bind with a sockaddr we built, of the length given.
    rc(unsafe { libc::bind(sock.as_raw_fd(), (&st as *const libc::sockaddr_storage).cast(), len) })
}

pub fn listen_on(sock: BorrowedFd<'_>, backlog: i32) -> i32 {
    // SAFETY: plain syscall on a descriptor we hold.
    rc(unsafe { libc::listen(sock.as_raw_fd(), backlog) })
}

/// The address a socket is bound to (`getsockname`), for IPv4 and IPv6 sockets.
pub fn local_name(sock: BorrowedFd<'_>) -> Option<SocketAddr> {
    name_of(sock, libc::getsockname)
}

/// The address a socket is connected to (`getpeername`), for IPv4 and IPv6 sockets.
pub fn peer_name(sock: BorrowedFd<'_>) -> Option<SocketAddr> {
    name_of(sock, libc::getpeername)
}

type NameCall = unsafe extern "C" fn(libc::c_int, *mut libc::sockaddr, *mut libc::socklen_t) -> libc::c_int;

fn name_of(sock: BorrowedFd<'_>, call: NameCall) -> Option<SocketAddr> {
    // SAFETY: an all-zero sockaddr_storage is a valid out-buffer.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: getsockname/getpeername into a buffer of the length given.
    if unsafe { call(sock.as_raw_fd(), (&mut st as *mut libc::sockaddr_storage).cast(), &mut len) } < 0 {
        return None;
    }
    // SAFETY: the family says which sockaddr the kernel wrote; both fit in the storage.
    unsafe {
        match i32::from(st.ss_family) {
            libc::AF_INET => {
                let a = &*(&st as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>();
                Some(SocketAddr::new(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)).into(), u16::from_be(a.sin_port)))
            }
            libc::AF_INET6 => {
                let a = &*(&st as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>();
                Some(SocketAddr::new(Ipv6Addr::from(a.sin6_addr.s6_addr).into(), u16::from_be(a.sin6_port)))
            }
            _ => None,
        }
    }
}

/// An integer socket option at `level` (`SO_DOMAIN`, `IPV6_V6ONLY`); `None` if unreadable.
pub fn int_option(sock: BorrowedFd<'_>, level: i32, name: i32) -> Option<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a local int of the given length.
    let r = unsafe { libc::getsockopt(sock.as_raw_fd(), level, name, (&mut v as *mut libc::c_int).cast(), &mut len) };
    (r == 0).then_some(v)
}

/// Sets an integer socket option; 0 or the errno.
pub fn set_int_option(sock: BorrowedFd<'_>, level: i32, name: i32, value: i32) -> i32 {
    // SAFETY: setsockopt with a local int of the size given.
    rc(unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
}

/// `SO_COOKIE`: the socket's identity for the boot (never reused), as `sock_diag` names it.
pub fn cookie(sock: BorrowedFd<'_>) -> Option<u64> {
    let mut v = 0u64;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: getsockopt into a local u64 of the given length.
    let r = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_COOKIE, (&mut v as *mut u64).cast(), &mut len)
    };
    (r == 0).then_some(v)
}

/// Connects to `addr` and waits (up to `limit_ms`) until the handshake is done, also for a
/// non-blocking socket: only then has the kernel picked the listener. 0 or the errno.
pub fn connect_settled(sock: BorrowedFd<'_>, addr: &SocketAddr, limit_ms: i32) -> i32 {
    match crate::net::connect_to(&sock, addr) {
        libc::EINPROGRESS => {
            let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
            // SAFETY: poll on one live descriptor.
            if unsafe { libc::poll(&mut p, 1, limit_ms) } != 1 {
                disconnect(sock);
                return libc::ETIMEDOUT;
            }
            crate::net::socket_option(&sock, libc::SO_ERROR)
        }
        r => r,
    }
}

/// Turns off TCP Fast Open's deferred connect (`TCP_FASTOPEN_CONNECT`), so that
/// `connect()` makes the handshake itself. Failing is harmless: [`handshake_done`] decides.
pub fn no_deferred_connect(sock: BorrowedFd<'_>) {
    set_int_option(sock, libc::IPPROTO_TCP, libc::TCP_FASTOPEN_CONNECT, 0);
}

/// Whether the kernel says the TCP handshake is done (`TCP_INFO`'s state is `ESTABLISHED`,
/// or `CLOSE_WAIT` when the server has already closed its end); `false` when it cannot be
/// asked.
pub fn handshake_done(sock: BorrowedFd<'_>) -> bool {
    /// include/net/tcp_states.h; `struct tcp_info` opens with the state byte.
    const TCP_ESTABLISHED: u8 = 1;
    const TCP_CLOSE_WAIT: u8 = 8;
    let mut info = [0u8; 8];
    let mut len = info.len() as libc::socklen_t;
    // SAFETY: getsockopt into a local buffer of the given length (the kernel copies at
    // most that much of its tcp_info).
    let r = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr().cast(), &mut len)
    };
    r == 0 && len >= 1 && matches!(info[0], TCP_ESTABLISHED | TCP_CLOSE_WAIT)
}

/// Undoes a connection (or an attempt still under way): `connect(AF_UNSPEC)`.
pub fn disconnect(sock: BorrowedFd<'_>) {
    // SAFETY: an all-zero sockaddr is AF_UNSPEC.
    let unspec: libc::sockaddr = unsafe { std::mem::zeroed() };
    // SAFETY: connect with a local sockaddr of the size given.
    unsafe {
        libc::connect(sock.as_raw_fd(), &unspec, std::mem::size_of::<libc::sockaddr>() as libc::socklen_t);
    }
}

/// A `sockaddr_un` naming `path`; `None` when it does not fit.
pub fn unix_addr(path: &[u8]) -> Option<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: an all-zero sockaddr_un is valid.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if path.len() > a.sun_path.len() {
        return None;
    }
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in a.sun_path.iter_mut().zip(path) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + path.len();
    Some((a, len as libc::socklen_t))
}

/// connect(2) to a `sockaddr_un`; 0 or the errno.
pub fn connect_unix(sock: BorrowedFd<'_>, addr: &(libc::sockaddr_un, libc::socklen_t)) -> i32 {
    // SAFETY: connect with a sockaddr_un we built, of the length given.
    rc(unsafe { libc::connect(sock.as_raw_fd(), (&addr.0 as *const libc::sockaddr_un).cast(), addr.1) })
}
