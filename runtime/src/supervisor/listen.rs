//! Landlock mode's local servers: `bind()` and `listen()`. Landlock lets no TCP bind through
//! by itself, so every TCP bind traps here; the supervisor binds a socket it holds to an
//! address it chose ([`crate::net::local_addr::bind_target`]: the run's own loopback address,
//! or what `allowLocalBinding` allows), and makes only sockets placed that way listen,
//! never an unbound one (whose `listen()` would bind it to the wildcard address). It
//! remembers every listener it made (by `SO_COOKIE`), so that connects can be let through
//! to those and nothing else ([`super::local`]).
//!
//! Where `pidfd_getfd` is refused (containerd's `RuntimeDefault`), the socket bound is one of
//! ours put in the command's place; srt keeps it until it listens, so that the listen too
//! acts on that object and not on whatever the descriptor number holds by then.

use std::os::fd::{AsFd, OwnedFd};

use super::connect::fd_info;
use super::sockets;
use super::state::Known;
use super::{Call, Outcome};
use crate::net::local_addr;
use crate::net::shown_addr::Asked;
use crate::net::{self, UnixRule};

/// Sockets srt bound in the command's place and keeps until they listen, at most.
const MAX_PENDING: usize = 256;

impl Call<'_> {
    pub(super) fn bind(&self, sockfd: i32, addr: u64, len: u64) -> Outcome {
        let Some(route) = self.sup.route else { return Outcome::Fail(libc::EACCES) };
        let sa = match self.sockaddr(addr, len) {
            Ok(sa) => sa,
            Err(o) => return o,
        };
        let family = i32::from(u16::from_ne_bytes([sa[0], sa[1]]));
        let asked = match family {
            // as short as the kernel takes them (sockaddr_in; RFC 2133's sockaddr_in6)
            libc::AF_INET if sa.len() < 16 => return Outcome::Fail(libc::EINVAL),
            libc::AF_INET6 if sa.len() < 24 => return Outcome::Fail(libc::EINVAL),
            libc::AF_INET | libc::AF_INET6 => match net::inet_addr(&sa) {
                Some(a) => a,
                None => return Outcome::Fail(libc::EINVAL),
            },
            // Landlock judges a Unix bind (and refuses every TCP bind, whatever the command
            // puts in the address meanwhile, where it has TCP rules: not so under
            // --allow-weaker before Linux 6.7, where the command serves on no Unix socket);
            // with only some Unix sockets allowed, the command serves none (a bind could
            // become an abstract name the host reaches)
            libc::AF_UNIX if route.unix == UnixRule::All && route.landlock_tcp => return Outcome::Continue,
            libc::AF_UNIX => return Outcome::Fail(libc::EACCES),
            _ => return Outcome::Fail(libc::EAFNOSUPPORT),
        };
        let place = |sock: &OwnedFd| -> i32 {
            let v6only = family == libc::AF_INET6
                && sockets::int_option(sock.as_fd(), libc::IPPROTO_IPV6, libc::IPV6_V6ONLY).unwrap_or(0) != 0;
            match local_addr::bind_target(&route.local, asked, v6only) {
                Ok(target) => {
                    if local_addr::clears_v6only(v6only, target) {
                        match sockets::set_int_option(sock.as_fd(), libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0) {
                            0 => {}
                            e => return e,
                        }
                    }
                    self.release_pending_port(target.port());
                    sockets::bind_to(sock.as_fd(), &target)
                }
                Err(e) => e,
            }
        };
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                match place(&sock) {
                    0 => {
                        self.remember_bind(&sock, asked);
                        Outcome::Value(0)
                    }
                    e => Outcome::Fail(e),
                }
            }
            Err(libc::EPERM | libc::ENOSYS) => {
                match self.replace_socket_keeping(sockfd, family, libc::SOCK_STREAM, place) {
                    Ok(sock) => {
                        self.remember_bind(&sock, asked);
                        self.keep_pending(sock);
                        Outcome::Value(0)
                    }
                    Err(o) => o,
                }
            }
            Err(e) => Outcome::Fail(e),
        }
    }

    pub(super) fn listen(&self, sockfd: i32, backlog: i32) -> Outcome {
        let Some(route) = self.sup.route else { return Outcome::Fail(libc::EACCES) };
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                match sockets::int_option(sock.as_fd(), libc::SOL_SOCKET, libc::SO_DOMAIN) {
                    // an unbound Unix socket cannot listen; a bound one got its name from
                    // the kernel under Landlock (allowAllUnixSockets) or from outside
                    Some(libc::AF_UNIX) if route.unix == UnixRule::All => {
                        match sockets::listen_on(sock.as_fd(), backlog) {
                            0 => Outcome::Value(0),
                            e => Outcome::Fail(e),
                        }
                    }
                    // with only listed sockets, the command serves on none: a client socket
                    // with SO_PASSCRED is bound to an abstract name of the host's by any
                    // connect, also one that fails, and could listen there
                    Some(libc::AF_UNIX) => Outcome::Fail(libc::EACCES),
                    Some(libc::AF_INET | libc::AF_INET6) => self.listen_placed(&route, &sock, backlog),
                    _ => Outcome::Fail(libc::EACCES),
                }
            }
            Err(libc::EPERM | libc::ENOSYS) => {
                let Some(info) = fd_info(self.req.pid, sockfd) else { return Outcome::Fail(libc::EBADF) };
                if let Some(sock) = self.take_pending(info.ino) {
                    return self.listen_placed(&route, &sock, backlog);
                }
                let already = self.sup.listeners.lock().is_ok_and(|l| l.own.values().any(|(ino, _)| *ino == info.ino));
                // a second listen() only changes the backlog; anything else is a socket srt
                // did not place, which it cannot make listen without taking it
                if already {
                    Outcome::Value(0)
                } else {
                    Outcome::Fail(libc::EACCES)
                }
            }
            Err(e) => Outcome::Fail(e),
        }
    }

    /// Listens on `sock` if it sits where srt places the command's servers.
    fn listen_placed(&self, route: &net::Route, sock: &OwnedFd, backlog: i32) -> Outcome {
        let Some(bound) = sockets::local_name(sock.as_fd()) else { return Outcome::Fail(libc::EINVAL) };
        if !local_addr::may_listen(&route.local, bound) {
            return Outcome::Fail(libc::EACCES);
        }
        match sockets::listen_on(sock.as_fd(), backlog) {
            0 => {}
            e => return Outcome::Fail(e),
        }
        let (Some(cookie), Ok(st)) = (sockets::cookie(sock.as_fd()), super::sys::fstat(sock.as_fd())) else {
            // unreachable in practice; then it is simply not reachable for the command
            return Outcome::Value(0);
        };
        if let Ok(mut l) = self.sup.listeners.lock() {
            l.add(cookie, st.st_ino, bound);
        }
        Outcome::Value(0)
    }

    /// Remembers what the command asked of a socket srt bound, for `getsockname`.
    fn remember_bind(&self, sock: &OwnedFd, asked: std::net::SocketAddr) {
        if let Ok(st) = super::sys::fstat(sock.as_fd()) {
            let own = sockets::local_name(sock.as_fd());
            self.remember(st.st_ino, Known { asked: Asked::Bound(asked), own, peer: None });
        }
    }

    fn keep_pending(&self, sock: OwnedFd) {
        let (Ok(st), Some(bound)) = (super::sys::fstat(sock.as_fd()), sockets::local_name(sock.as_fd())) else {
            return;
        };
        if let Ok(mut l) = self.sup.listeners.lock() {
            if l.pending.len() >= MAX_PENDING {
                l.pending.pop_front();
            }
            l.pending.push_back((st.st_ino, bound.port(), sock));
        }
    }

    fn take_pending(&self, ino: u64) -> Option<OwnedFd> {
        let mut l = self.sup.listeners.lock().ok()?;
        let i = l.pending.iter().position(|(i, _, _)| *i == ino)?;
        l.pending.remove(i).map(|(_, _, s)| s)
    }

    /// A new bind to `port`: srt lets go of sockets it kept on that port, so that one the
    /// command closed (a free-port probe: bind to port 0, read the port, close) does not
    /// hold the port against it. One the command still holds keeps it, as without srt.
    fn release_pending_port(&self, port: u16) {
        if port == 0 {
            return;
        }
        if let Ok(mut l) = self.sup.listeners.lock() {
            l.pending.retain(|(_, p, _)| *p != port);
        }
    }

    /// Socket options the command may not set: `SO_REUSEPORT` (and its BPF steering) would
    /// let a socket of the command's share a port with a host listener of the same user and
    /// take some of its connections. Landlock mode only: namespace mode's sockets are alone.
    pub(super) fn refused_option(&self, level: i32, name: i32) -> Option<i32> {
        const SO_ATTACH_REUSEPORT_CBPF: i32 = 51;
        const SO_ATTACH_REUSEPORT_EBPF: i32 = 52;
        let landlock = self.sup.route.is_some_and(|r| !r.namespaced);
        let reuseport = level == libc::SOL_SOCKET
            && matches!(name, libc::SO_REUSEPORT | SO_ATTACH_REUSEPORT_CBPF | SO_ATTACH_REUSEPORT_EBPF);
        (landlock && reuseport).then_some(libc::EPERM)
    }
}
