//! Landlock mode's `connect()`: the command may reach only srt's proxy (or the existing
//! proxy the settings name, from the run's own address: see [`net::Route`]). The supervisor
//! never lets the command's own call proceed to an address it checked (the command could
//! change the sockaddr afterwards); it connects a socket itself, to an address it holds.
//!
//! Where `pidfd_getfd` is allowed, that socket is the command's own (taken with it), so
//! every option the command set stays. Container runtimes' default seccomp profiles
//! (containerd's and Docker's `RuntimeDefault`) refuse `pidfd_getfd` without
//! `CAP_SYS_PTRACE`; there the supervisor connects a socket of its own and installs it at
//! the command's descriptor number (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SETFD`, Linux >= 5.9),
//! carrying over `O_NONBLOCK`, close-on-exec and the options the command set with
//! `setsockopt` (trapped in landlock mode and recorded for this).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

use super::{sockets, Call, Outcome};
use crate::net::{self, Leave, Verdict};
use crate::seccomp::notify;

/// Largest option value remembered (struct linger, timevals, ints fit).
const MAX_OPTVAL: u64 = 256;
/// Sockets whose options are remembered at most.
const MAX_SOCKETS: usize = 4096;

use super::state::REFUSED_WITHOUT_GETFD;

impl Call<'_> {
    /// The socket address a connect or bind passed, read once.
    pub(super) fn sockaddr(&self, addr: u64, len: u64) -> Result<Vec<u8>, Outcome> {
        if addr == 0 || !(2..=128).contains(&len) {
            return Err(Outcome::Fail(libc::EINVAL));
        }
        self.t.read_bytes(addr, len as usize).map_err(Outcome::Fail)
    }

    pub(super) fn connect(&self, sockfd: i32, addr: u64, len: u64) -> Outcome {
        let Some(route) = self.sup.route else { return Outcome::Fail(libc::EACCES) };
        let sa = match self.sockaddr(addr, len) {
            Ok(sa) => sa,
            Err(o) => return o,
        };
        let (v6, port) = match net::judge(&route, &sa) {
            Verdict::Refuse(e) => return Outcome::Fail(e),
            Verdict::Kernel => {
                // a disconnect: what srt recorded of the socket's ends no longer holds
                if sa.len() >= 2 && i32::from(u16::from_ne_bytes([sa[0], sa[1]])) == libc::AF_UNSPEC {
                    self.forget_socket_record(sockfd);
                }
                if net::kernel_holds_any_address(&route) {
                    return Outcome::Continue;
                }
                return self.connect_as_judged(&route, sockfd, &sa);
            }
            Verdict::Proxy { v6, port } => (v6, port),
            Verdict::Transparent { v6, dest } => return self.transparent(&route, sockfd, v6, dest),
            Verdict::Local { v6, dest } => return self.connect_local(&route, sockfd, v6, dest),
            Verdict::Unix => return self.connect_unix(&route, sockfd, &sa, true),
        };
        let from = route.shared_proxy_from;
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                if let Some(from) = from {
                    let placed = match net::leave_for_proxy(from, v6, sockets::local_name(sock.as_fd())) {
                        Leave::AsIs => true,
                        // a failed bind (another thread bound it meanwhile): replaced too
                        Leave::Bind(at) => net::bind_source(&sock, &at) == 0,
                        Leave::Replace => false,
                    };
                    if !placed {
                        return self.replace_socket(sockfd, v6, port, None, Some(from));
                    }
                }
                match net::connect_to_proxy(&sock, port, v6) {
                    0 => Outcome::Value(0),
                    e => Outcome::Fail(e),
                }
            }
            Err(libc::EPERM | libc::ENOSYS) => self.replace_socket(sockfd, v6, port, None, from),
            Err(e) => Outcome::Fail(e),
        }
    }

    /// A connect the kernel may make, but only to the address srt judged: the kernel would
    /// read the address again from the command's memory, where another thread may have
    /// turned it into the path of a Unix socket allowUnixSockets does not list. The supervisor connects the
    /// command's socket itself, with the bytes it read. Where it cannot take the socket (no
    /// `pidfd_getfd`, in pods) the call is refused: nothing else would be safe.
    fn connect_as_judged(&self, route: &net::Route, sockfd: i32, sa: &[u8]) -> Outcome {
        // a Unix path is the command's to resolve (its working directory, its root)
        let family = i32::from(u16::from_ne_bytes([sa[0], sa[1]]));
        if family == libc::AF_UNIX && sa.get(2).is_some_and(|&b| b != 0) {
            return self.connect_unix(route, sockfd, sa, false);
        }
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                // SAFETY: connect with a buffer of ours of the given length, on a descriptor
                // we own; the kernel copies the address before using it.
                let r = unsafe { libc::connect(sock.as_raw_fd(), sa.as_ptr().cast(), sa.len() as libc::socklen_t) };
                if r < 0 {
                    Outcome::Fail(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
                } else {
                    Outcome::Value(0)
                }
            }
            Err(libc::EPERM | libc::ENOSYS) => {
                tracing::debug!(
                    sockfd,
                    "connect refused: with allowUnixSockets srt must make it, and cannot take the socket here"
                );
                Outcome::Fail(libc::EACCES)
            }
            Err(e) => Outcome::Fail(e),
        }
    }

    /// Transparent mode: the command's socket goes to the proxy, which reads `dest` from
    /// the preamble written before the command gets its socket back.
    fn transparent(&self, route: &net::Route, sockfd: i32, v6: bool, dest: std::net::SocketAddr) -> Outcome {
        let Some(key) = route.transparent else { return Outcome::Fail(libc::EACCES) };
        let preamble = srt_proxy::transparent::preamble(&key, dest);
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                if net::socket_option(&sock, libc::SO_TYPE) == libc::SOCK_DGRAM {
                    // only namespace mode has UDP sockets: DNS to any server reaches srt's
                    // on the namespace's loopback, nothing else leaves
                    if dest.port() != 53 {
                        return Outcome::Fail(libc::ENETUNREACH);
                    }
                    return match net::connect_to_proxy(&sock, crate::net::inside::DNS_PORT, v6) {
                        0 | libc::EINPROGRESS => Outcome::Value(0),
                        e => Outcome::Fail(e),
                    };
                }
                match net::connect_transparent(&sock, route.port, v6, &preamble) {
                    0 => Outcome::Value(0),
                    e => Outcome::Fail(e),
                }
            }
            // a socket of srt's own would be in srt's network namespace, not the command's
            Err(libc::EPERM | libc::ENOSYS) if route.namespaced => {
                REFUSED_WITHOUT_GETFD.store(true, Ordering::Relaxed);
                Outcome::Fail(libc::ENETUNREACH)
            }
            Err(libc::EPERM | libc::ENOSYS) => self.replace_socket(sockfd, v6, route.port, Some(&preamble), None),
            Err(e) => Outcome::Fail(e),
        }
    }

    /// Connects a socket of ours to the proxy (writing `preamble` first, in transparent
    /// mode; leaving from the run's address `from`, for a shared proxy) and puts it where
    /// the command's socket was. Where it cannot leave from `from` the connect fails: the
    /// proxy would count it as the pod's own client.
    fn replace_socket(
        &self,
        sockfd: i32,
        v6: bool,
        port: u16,
        preamble: Option<&[u8]>,
        from: Option<Ipv4Addr>,
    ) -> Outcome {
        let family = if v6 { libc::AF_INET6 } else { libc::AF_INET };
        // to loopback the connection is made at once, so blocking here costs nothing and a
        // non-blocking caller simply sees it completed (0), which POSIX allows
        self.replace_socket_with(sockfd, family, libc::SOCK_STREAM, |sock| {
            if let Some(from) = from {
                let ip = if v6 { IpAddr::V6(from.to_ipv6_mapped()) } else { IpAddr::V4(from) };
                match net::bind_source(sock, &SocketAddr::new(ip, 0)) {
                    0 => {}
                    e => {
                        tracing::debug!(%from, errno = e, "cannot leave from the run's address for the shared proxy");
                        return e;
                    }
                }
            }
            match preamble {
                Some(p) => net::connect_transparent(sock, port, v6, p),
                None => net::connect_to_proxy(sock, port, v6),
            }
        })
    }

    /// Makes a socket of ours (`domain`, `ty`) carrying the options the command set on its
    /// own, lets `act` connect or bind it (0 or an errno), and puts it where the command's
    /// socket was. Returns our socket too, still open (the caller may keep it).
    pub(super) fn replace_socket_keeping(
        &self,
        sockfd: i32,
        domain: i32,
        ty: i32,
        act: impl FnOnce(&OwnedFd) -> i32,
    ) -> Result<OwnedFd, Outcome> {
        let Some(info) = fd_info(self.req.pid, sockfd) else { return Err(Outcome::Fail(libc::EBADF)) };
        // SAFETY: plain syscall; the descriptor is owned below.
        let raw = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(Outcome::Fail(super::sys::last_errno()));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let sock = unsafe { OwnedFd::from_raw_fd(raw) };
        if let Some(opts) = self.sup.sockopts.lock().ok().and_then(|m| m.get(&info.ino).cloned()) {
            for (level, name, value) in opts.into_iter().filter(|(l, n, _)| net::sockopt::replayable(*l, *n)) {
                // options the supervisor may not set (privileged ones) fail here exactly
                // as they failed for the command, which ignored or saw that error then
                // SAFETY: the value buffer is live for the call.
                unsafe { libc::setsockopt(raw, level, name, value.as_ptr().cast(), value.len() as libc::socklen_t) };
            }
        }
        match act(&sock) {
            0 => {}
            e => return Err(Outcome::Fail(e)),
        }
        if info.flags & libc::O_NONBLOCK != 0 {
            super::sys::set_nonblocking(sock.as_fd(), true);
        }
        if !self.valid() {
            return Err(Outcome::Gone);
        }
        let cloexec = info.flags & libc::O_CLOEXEC != 0;
        if let Err(e) = notify::install_fd_at(self.listener, self.req.id, sock.as_fd(), sockfd, cloexec) {
            return Err(Outcome::Fail(e.raw_os_error().unwrap_or(libc::EIO)));
        }
        self.forget_socket(info.ino);
        Ok(sock)
    }

    /// As [`Self::replace_socket_keeping`], dropping our copy once the command has it.
    pub(super) fn replace_socket_with(
        &self,
        sockfd: i32,
        domain: i32,
        ty: i32,
        act: impl FnOnce(&OwnedFd) -> i32,
    ) -> Outcome {
        match self.replace_socket_keeping(sockfd, domain, ty, act) {
            Ok(_) => Outcome::Value(0),
            Err(o) => o,
        }
    }

    /// setsockopt(fd, level, name, value, len): remembered for [`Self::replace_socket`] where
    /// its value is plain data ([`net::sockopt::replayable`]), then done by the kernel as asked.
    pub(super) fn setsockopt(&self, fd: i32, level: i32, name: i32, value: u64, len: u64) -> Outcome {
        if let Some(e) = self.refused_option(level, name) {
            return Outcome::Fail(e);
        }
        if value != 0 && len <= MAX_OPTVAL && net::sockopt::replayable(level, name) {
            if let (Some(info), Ok(bytes)) = (fd_info(self.req.pid, fd), self.t.read_bytes(value, len as usize)) {
                if let Ok(mut m) = self.sup.sockopts.lock() {
                    if m.len() >= MAX_SOCKETS {
                        m.clear();
                    }
                    let opts = m.entry(info.ino).or_default();
                    opts.retain(|(l, n, _)| (*l, *n) != (level, name));
                    opts.push((level, name, bytes));
                }
            }
        }
        Outcome::Continue
    }

    fn forget_socket(&self, ino: u64) {
        if let Ok(mut m) = self.sup.sockopts.lock() {
            m.remove(&ino);
        }
    }
}

pub(super) struct FdInfo {
    pub flags: i32,
    pub ino: u64,
}

/// /proc/<pid>/fdinfo/<fd>: the open flags (octal) and the inode.
pub(super) fn fd_info(pid: u32, fd: i32) -> Option<FdInfo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).map(str::trim);
    Some(FdInfo { flags: i32::from_str_radix(field("flags:")?, 8).ok()?, ino: field("ino:")?.parse().ok()? })
}
