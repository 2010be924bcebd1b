//! Landlock mode's `getsockname` and `getpeername`: the command sees the addresses it asked
//! for, not the run's own loopback address where srt placed its servers
//! ([`crate::net::shown_addr`]). The answer only describes the command's own socket, so
//! nothing is granted here: where the address needs no change, or the socket cannot be
//! looked at, the kernel answers (`CONTINUE`).
//!
//! A socket srt bound or connected for the command is answered from what srt recorded then
//! (by inode): no second look at the socket. Another one (an accepted connection) is looked
//! at through `pidfd_getfd` where that is allowed; in pods, where it is not, it is found by
//! a `sock_diag` dump of the TCP sockets (the kernel walks its whole socket hash for that,
//! about 2 ms on a busy host: only that case pays it).

use std::os::fd::AsFd;

use super::connect::fd_info;
use super::sockets;
use super::state::Known;
use super::{Call, Outcome};
use crate::net::shown_addr::{self, End};
use crate::net::sock_diag;

impl Call<'_> {
    pub(super) fn sock_name(&self, fd: i32, addr: u64, len_at: u64, end: End) -> Outcome {
        let Some(route) = self.sup.route.filter(|r| !r.namespaced) else { return Outcome::Continue };
        let Some(info) = fd_info(self.req.pid, fd) else { return Outcome::Continue };
        let known = self.known(info.ino);
        let real = match (known, end) {
            (Some(k), End::Own) if k.own.is_some() => k.own,
            (Some(k), End::Peer) if k.peer.is_some() => k.peer,
            // a listener has no peer: the kernel says ENOTCONN
            (Some(k), End::Peer) if matches!(k.asked, shown_addr::Asked::Bound(_)) => return Outcome::Continue,
            _ => match crate::net::take_socket(self.req.pid, fd) {
                Ok(sock) => match end {
                    End::Own => sockets::local_name(sock.as_fd()),
                    End::Peer => sockets::peer_name(sock.as_fd()),
                },
                Err(libc::EPERM | libc::ENOSYS) => match sock_diag::tcp_by_inode(info.ino) {
                    Ok(Some((own, peer))) => Some(if end == End::Own { own } else { peer }),
                    _ => None,
                },
                Err(_) => return Outcome::Continue,
            },
        };
        let Some(real) = real else { return Outcome::Continue };
        let shown = shown_addr::shown(&route.local, real, end, known.map(|k| k.asked));
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

    /// What srt recorded of the socket with inode `ino`, if anything.
    pub(super) fn known(&self, ino: u64) -> Option<Known> {
        self.sup.asked.lock().ok()?.get(ino)
    }

    pub(super) fn remember(&self, ino: u64, known: Known) {
        if let Ok(mut t) = self.sup.asked.lock() {
            t.note(ino, known);
        }
    }

    /// A socket disconnected (`connect(AF_UNSPEC)`): what srt recorded of it no longer holds.
    pub(super) fn forget_socket_record(&self, fd: i32) {
        if let (Some(info), Ok(mut t)) = (fd_info(self.req.pid, fd), self.sup.asked.lock()) {
            t.forget(info.ino);
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
