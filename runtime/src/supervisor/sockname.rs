//! Landlock mode's `getsockname` and `getpeername`: the command sees the addresses it asked
//! for, not the run's own loopback address where srt placed its servers
//! ([`crate::net::shown_addr`]). The answer only describes the command's own socket, so
//! nothing is granted here: where the address needs no change, or the socket cannot be
//! found, the kernel answers (`CONTINUE`).
//!
//! The real address comes from the socket itself where `pidfd_getfd` is allowed, else (in
//! pods) from a `sock_diag` dump, found by the socket's inode, or, for a socket bound but
//! not yet listening (which no dump lists), from what srt recorded when it bound it.

use std::os::fd::AsFd;

use super::connect::fd_info;
use super::sockets;
use super::{Call, Outcome};
use crate::net::shown_addr::{self, Asked, End};
use crate::net::sock_diag;

impl Call<'_> {
    pub(super) fn sock_name(&self, fd: i32, addr: u64, len_at: u64, end: End) -> Outcome {
        let Some(route) = self.sup.route.filter(|r| !r.namespaced) else { return Outcome::Continue };
        let (ino, real) = match crate::net::take_socket(self.req.pid, fd) {
            Ok(sock) => {
                let Ok(st) = super::sys::fstat(sock.as_fd()) else { return Outcome::Continue };
                let real = match end {
                    End::Own => sockets::local_name(sock.as_fd()),
                    End::Peer => sockets::peer_name(sock.as_fd()),
                };
                (st.st_ino, real)
            }
            Err(libc::EPERM | libc::ENOSYS) => {
                let Some(info) = fd_info(self.req.pid, fd) else { return Outcome::Continue };
                let real = match sock_diag::tcp_by_inode(info.ino) {
                    Ok(Some((own, peer))) => Some(if end == End::Own { own } else { peer }),
                    // bound, not listening: where srt bound it (its peer: none, ENOTCONN)
                    Ok(None) if end == End::Own => self.asked(info.ino).and_then(|(_, real)| real),
                    _ => None,
                };
                (info.ino, real)
            }
            Err(_) => return Outcome::Continue,
        };
        let Some(real) = real else { return Outcome::Continue };
        let shown = shown_addr::shown(&route.local, real, end, self.asked(ino).map(|(a, _)| a));
        if shown == real {
            return Outcome::Continue;
        }
        if !self.valid() {
            return Outcome::Gone;
        }
        self.note(std::path::Path::new(&shown.to_string()), "the address the command asked for");
        match self.write_sockaddr(addr, len_at, shown) {
            Ok(()) => Outcome::Value(0),
            Err(e) => Outcome::Fail(e),
        }
    }

    /// What the command asked of the socket with inode `ino`, if srt remembers.
    pub(super) fn asked(&self, ino: u64) -> Option<(Asked, Option<std::net::SocketAddr>)> {
        self.sup.asked.lock().ok()?.get(ino)
    }

    pub(super) fn remember(&self, ino: u64, asked: Asked, real: Option<std::net::SocketAddr>) {
        if let Ok(mut t) = self.sup.asked.lock() {
            t.note(ino, asked, real);
        }
    }

    /// Fills a `getsockname`-style out-argument as the kernel does: at most `*len_at`
    /// bytes of the address, then its full length in `*len_at`.
    fn write_sockaddr(&self, addr: u64, len_at: u64, shown: std::net::SocketAddr) -> Result<(), i32> {
        let room = self.t.read_bytes(len_at, 4)?;
        let room = i32::from_ne_bytes([room[0], room[1], room[2], room[3]]);
        let room = usize::try_from(room).map_err(|_| libc::EINVAL)?;
        let (st, full) = crate::net::sockaddr(&shown);
        // SAFETY: `st` is a plain struct of at least `full` bytes, read as bytes.
        let bytes =
            unsafe { std::slice::from_raw_parts((&st as *const libc::sockaddr_storage).cast::<u8>(), full as usize) };
        let n = room.min(full as usize);
        if n > 0 {
            self.t.write_bytes(addr, &bytes[..n])?;
        }
        self.t.write_bytes(len_at, &full.to_ne_bytes())
    }
}
