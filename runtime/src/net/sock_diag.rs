//! Asks the kernel which TCP listener a connection to an address would reach
//! (`NETLINK_SOCK_DIAG`, an exact `inet_diag` lookup: the same listener lookup an incoming
//! SYN gets, wildcard listeners included), and the type of a Unix socket by its inode.
//! Unprivileged, and allowed by container runtimes' default seccomp profiles.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const TCP_LISTEN: u8 = 10;
/// `lo` has this index in every network namespace; an incoming loopback SYN carries it.
const LOOPBACK_IFINDEX: u32 = 1;
const NO_COOKIE: u32 = u32::MAX;

/// A TCP listener as the kernel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// `SO_COOKIE`: unique for the boot, never reused.
    pub cookie: u64,
    pub inode: u32,
}

/// The listener a TCP connection to `to` would reach now, if any.
pub fn tcp_listener(to: SocketAddr) -> io::Result<Option<Listener>> {
    // struct inet_diag_req_v2 { u8 family, protocol, ext, pad; u32 states; inet_diag_sockid }
    // struct inet_diag_sockid { be16 sport, dport; be32 src[4], dst[4]; u32 if; u32 cookie[2] }
    let (family, src) = match to.ip() {
        IpAddr::V4(a) => {
            let mut s = [0u8; 16];
            s[..4].copy_from_slice(&a.octets());
            (libc::AF_INET as u8, s)
        }
        IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets()),
    };
    let mut req = Vec::with_capacity(56);
    req.extend([family, libc::IPPROTO_TCP as u8, 0, 0]);
    req.extend(u32::MAX.to_ne_bytes());
    req.extend(to.port().to_be_bytes());
    req.extend(0u16.to_be_bytes());
    req.extend(src);
    req.extend([0u8; 16]);
    req.extend(LOOPBACK_IFINDEX.to_ne_bytes());
    req.extend(NO_COOKIE.to_ne_bytes());
    req.extend(NO_COOKIE.to_ne_bytes());
    let Some(body) = ask(&req)? else { return Ok(None) };
    // struct inet_diag_msg { u8 family, state, timer, retrans; sockid (48); u32 expires,
    // rqueue, wqueue, uid, inode }
    if body.len() < 72 || body[1] != TCP_LISTEN {
        return Ok(None);
    }
    let u32_at = |i: usize| u32::from_ne_bytes([body[i], body[i + 1], body[i + 2], body[i + 3]]);
    let cookie = u64::from(u32_at(4 + 40)) | u64::from(u32_at(4 + 44)) << 32;
    Ok(Some(Listener { cookie, inode: u32_at(68) }))
}

/// The local and peer addresses of the TCP socket with inode `ino` in srt's network
/// namespace (the command's, in landlock mode), found by a dump of the TCP sockets there
/// (those in `TIME_WAIT` left out: they have no inode). `None`: no such socket, or one the
/// dump does not list (bound, not listening or connected).
pub fn tcp_by_inode(ino: u64) -> io::Result<Option<(SocketAddr, SocketAddr)>> {
    const TIME_WAIT: u32 = 6;
    let Ok(ino) = u32::try_from(ino) else { return Ok(None) };
    for family in [libc::AF_INET, libc::AF_INET6] {
        let mut req = Vec::with_capacity(56);
        req.extend([family as u8, libc::IPPROTO_TCP as u8, 0, 0]);
        req.extend((!(1u32 << TIME_WAIT)).to_ne_bytes());
        req.extend([0u8; 48]);
        let mut found = None;
        dump(&req, &mut |body| {
            if found.is_none() && body.len() >= 72 && u32_at(body, 68) == ino {
                found = Some((addr_at(body, 8, 4), addr_at(body, 24, 6)));
            }
        })?;
        if let Some(f) = found {
            return Ok(Some(f));
        }
    }
    Ok(None)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// The address at `at` (16 bytes) with the big-endian port at `port_at` of an
/// `inet_diag_msg` whose family byte comes first.
fn addr_at(body: &[u8], at: usize, port_at: usize) -> SocketAddr {
    let port = u16::from_be_bytes([body[port_at], body[port_at + 1]]);
    let mut ip = [0u8; 16];
    ip.copy_from_slice(&body[at..at + 16]);
    if i32::from(body[0]) == libc::AF_INET {
        SocketAddr::new(IpAddr::from([ip[0], ip[1], ip[2], ip[3]]), port)
    } else {
        SocketAddr::new(IpAddr::from(ip), port)
    }
}

/// Sends a dump request on a socket of its own and hands each answer's payload to `each`.
fn dump(req: &[u8], each: &mut dyn FnMut(&[u8])) -> io::Result<()> {
    const NLM_F_DUMP: u16 = 0x300;
    const NLMSG_DONE: u16 = 3;
    let mut conn = open_conn()?;
    conn.seq = 1;
    send(&conn, req, NLM_F_REQUEST | NLM_F_DUMP)?;
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: recv into a live buffer of the given length.
        let n = unsafe { libc::recv(conn.sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut rest = &buf[..n as usize];
        while rest.len() >= 16 {
            let len = u32_at(rest, 0) as usize;
            if len < 16 || len > rest.len() {
                return Err(io::Error::other("malformed sock_diag dump"));
            }
            match u16::from_ne_bytes([rest[4], rest[5]]) {
                NLMSG_DONE => return Ok(()),
                NLMSG_ERROR => {
                    let e = rest.get(16..20).map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                    return Err(io::Error::from_raw_os_error(-e));
                }
                _ => each(&rest[16..len]),
            }
            // messages are 4-byte aligned
            rest = &rest[len.next_multiple_of(4).min(rest.len())..];
        }
        if n == 0 {
            return Ok(());
        }
    }
}

/// A netlink socket of the calling thread's, kept for its lookups (the supervisor asks
/// twice per local connect), with the sequence number of its last request.
struct Conn {
    sock: OwnedFd,
    seq: u32,
}

thread_local! {
    static CONN: std::cell::RefCell<Option<Conn>> = const { std::cell::RefCell::new(None) };
}

fn open_conn() -> io::Result<Conn> {
    // SAFETY: plain syscall; the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, NETLINK_SOCK_DIAG) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // a lookup answers at once; never let a lost reply hold the caller
    let tv = libc::timeval { tv_sec: 1, tv_usec: 0 };
    // SAFETY: setsockopt with a timeval of the size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    Ok(Conn { sock, seq: 0 })
}

/// Sends one exact-lookup request; the reply's payload, or `None` when the kernel found
/// no such socket. A failed exchange drops the thread's socket, so a late reply to it can
/// never be taken for the answer to a later request.
fn ask(req: &[u8]) -> io::Result<Option<Vec<u8>>> {
    CONN.with(|cell| {
        let mut slot = cell.borrow_mut();
        let conn = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(open_conn()?),
        };
        let r = exchange(conn, req);
        if r.is_err() {
            *slot = None;
        }
        r
    })
}

fn exchange(conn: &mut Conn, req: &[u8]) -> io::Result<Option<Vec<u8>>> {
    conn.seq = conn.seq.wrapping_add(1);
    send(conn, req, NLM_F_REQUEST)?;
    let mut buf = vec![0u8; 8192];
    // SAFETY: recv into a live buffer of the given length.
    let n = unsafe { libc::recv(conn.sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 16 {
        return Err(if n < 0 { io::Error::last_os_error() } else { io::Error::other("short sock_diag reply") });
    }
    buf.truncate(n as usize);
    if u32::from_ne_bytes([buf[8], buf[9], buf[10], buf[11]]) != conn.seq {
        return Err(io::Error::other("sock_diag reply to another request"));
    }
    let kind = u16::from_ne_bytes([buf[4], buf[5]]);
    if kind == NLMSG_ERROR {
        let err = buf.get(16..20).map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
        return match -err {
            libc::ENOENT => Ok(None),
            e => Err(io::Error::from_raw_os_error(e)),
        };
    }
    Ok(Some(buf.split_off(16)))
}

/// Sends one `SOCK_DIAG_BY_FAMILY` request to the kernel with the connection's sequence
/// number.
fn send(conn: &Conn, req: &[u8], flags: u16) -> io::Result<()> {
    let mut msg = Vec::with_capacity(16 + req.len());
    msg.extend(((16 + req.len()) as u32).to_ne_bytes());
    msg.extend(SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    msg.extend(flags.to_ne_bytes());
    msg.extend(conn.seq.to_ne_bytes());
    msg.extend(0u32.to_ne_bytes()); // port id: the kernel
    msg.extend_from_slice(req);
    // SAFETY: an all-zero sockaddr_nl addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: sendto from a live buffer to a sockaddr of the size given.
    let sent = unsafe {
        libc::sendto(
            conn.sock.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent != msg.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The type (`SOCK_STREAM`, `SOCK_DGRAM`, `SOCK_SEQPACKET`) of the Unix socket with inode
/// `ino` in process `pid`'s network namespace, from `/proc/<pid>/net/unix` (which, unlike
/// a netlink socket of ours, sees the command's namespace in namespace mode).
pub fn unix_type(pid: u32, ino: u64) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/net/unix")).ok()?;
    // Num RefCount Protocol Flags Type St Inode [Path]
    text.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.get(6)?.parse::<u64>().ok()? != ino {
            return None;
        }
        i32::from_str_radix(f.get(4)?, 16).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::os::fd::AsFd;

    fn cookie(l: &impl AsFd) -> u64 {
        let mut v = 0u64;
        let mut len = 8 as libc::socklen_t;
        // SAFETY: getsockopt into a local u64 of the given length.
        let r = unsafe {
            libc::getsockopt(
                l.as_fd().as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_COOKIE,
                (&mut v as *mut u64).cast(),
                &mut len,
            )
        };
        assert_eq!(r, 0);
        v
    }

    #[test]
    fn finds_the_listener_a_connect_would_reach() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let found = tcp_listener(l.local_addr().unwrap()).unwrap().unwrap();
        assert_eq!(found.cookie, cookie(&l));
        // another loopback address on that port reaches nothing
        assert_eq!(tcp_listener(SocketAddr::from(([127, 0, 0, 2], port))).unwrap(), None);
        // a wildcard listener is what 127.0.0.1 reaches
        let w = TcpListener::bind("0.0.0.0:0").unwrap();
        let wport = w.local_addr().unwrap().port();
        let found = tcp_listener(SocketAddr::from(([127, 0, 0, 1], wport))).unwrap().unwrap();
        assert_eq!(found.cookie, cookie(&w));
        drop(w);
        assert_eq!(tcp_listener(SocketAddr::from(([127, 0, 0, 1], wport))).unwrap(), None, "closed");
    }

    #[test]
    fn finds_ipv6_listeners() {
        let Ok(l) = TcpListener::bind("[::1]:0") else { return }; // no IPv6 here
        let found = tcp_listener(l.local_addr().unwrap()).unwrap().unwrap();
        assert_eq!(found.cookie, cookie(&l));
    }

    #[test]
    fn finds_a_connected_socket_by_its_inode() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (a, _) = l.accept().unwrap();
        let ino = |s: &dyn AsRawFd| {
            // SAFETY: fstat into a zeroed stat.
            unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                libc::fstat(s.as_raw_fd(), &mut st);
                st.st_ino
            }
        };
        let want = (c.local_addr().unwrap(), c.peer_addr().unwrap());
        assert_eq!(tcp_by_inode(ino(&c)).unwrap(), Some(want));
        assert_eq!(tcp_by_inode(ino(&a)).unwrap(), Some((want.1, want.0)));
        assert_eq!(tcp_by_inode(ino(&l)).unwrap().map(|f| f.0), Some(l.local_addr().unwrap()));
        assert_eq!(tcp_by_inode(u64::from(u32::MAX) + 1).unwrap(), None);
    }

    #[test]
    fn unix_socket_types() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        // SAFETY: fstat into a zeroed stat.
        let ino = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(a.as_raw_fd(), &mut st);
            st.st_ino
        };
        assert_eq!(unix_type(std::process::id(), ino), Some(libc::SOCK_STREAM));
        assert_eq!(unix_type(std::process::id(), u64::MAX), None);
    }
}
