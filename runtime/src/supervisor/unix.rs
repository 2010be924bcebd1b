//! `allowUnixSockets`: connects to `AF_UNIX` paths, let through only to the sockets the
//! settings list. The path is resolved the way the kernel would for the command (from its
//! working directory, inside its root, symlinks followed, `/proc/self/fd/N` as its own
//! descriptor; other magic links are refused), and the object reached is compared by
//! device and inode with what each listed path names now. The supervisor then connects a
//! socket itself, through `/proc/self/fd/N` of its own descriptor of that very object, so
//! nothing the command renames or rewrites meanwhile changes where it lands.
//!
//! Only stream and seqpacket sockets exist under this rule (seccomp): a datagram socket
//! could `sendto()`/`sendmsg()` any path without a connect to judge. Abstract names are
//! per network namespace: namespace mode's are the sandbox's own and reached on the
//! command's own socket; landlock mode's are the host's and refused.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use super::connect::fd_info;
use super::resolve::{self, Why};
use super::sockets;
use super::sys;
use super::tracee::Base;
use super::{Call, Outcome};
use crate::net::{self, Route};

impl Call<'_> {
    /// `listed_only`: the socket reached must be one `allowUnixSockets` lists; without, any
    /// (`allowAllUnixSockets` where srt makes the connect itself: the path is still resolved
    /// as the command would, from its working directory, not srt's).
    pub(super) fn connect_unix(&self, route: &Route, sockfd: i32, sa: &[u8], listed_only: bool) -> Outcome {
        // sockaddr_un: the family, then sun_path, not necessarily NUL-terminated
        let max = std::mem::size_of::<libc::sockaddr_un>();
        let Some(path) = sa.get(2..).filter(|p| !p.is_empty() && sa.len() <= max) else {
            return Outcome::Fail(libc::EINVAL);
        };
        if path[0] == 0 {
            return if route.namespaced { self.connect_abstract(sockfd, path) } else { Outcome::Fail(libc::EACCES) };
        }
        let path = &path[..path.iter().position(|&b| b == 0).unwrap_or(path.len())];
        let target = match resolve::object(&self.t, Base::Cwd, path, true) {
            Ok(fd) => fd,
            Err(Why::Errno(e)) => return Outcome::Fail(e),
            Err(Why::Unresolvable) => return Outcome::Fail(libc::EACCES),
        };
        let st = match sys::fstat(target.as_fd()) {
            Ok(st) => st,
            Err(e) => return Outcome::Fail(e),
        };
        if sys::file_type(&st) != libc::S_IFSOCK {
            return Outcome::Fail(libc::ECONNREFUSED);
        }
        let p = std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path));
        if listed_only {
            if !self.listed(&st, &target) {
                self.note(p, "not in allowUnixSockets");
                return Outcome::Fail(libc::EACCES);
            }
            self.note(p, "allowUnixSockets");
        }
        let Some(via) = sockets::unix_addr(sys::proc_self(target.as_fd()).as_bytes()) else {
            return Outcome::Fail(libc::ENAMETOOLONG);
        };
        self.connect_unix_to(sockfd, &via, &target)
    }

    /// Whether `st` (reached through `target`) is the socket a listed path names now (the
    /// listed socket may have been made again since the run started: ssh-agent, a database
    /// restarting), or lies beneath a listed directory (as srt's macOS profile treats
    /// entries). The listed paths were resolved when srt started; no symlink is followed
    /// now, so one the command put there since (a listed path inside a tree it may write)
    /// leads nowhere.
    fn listed(&self, st: &libc::stat, target: &OwnedFd) -> bool {
        let flags = sys::RESOLVE_NO_SYMLINKS | sys::RESOLVE_NO_MAGICLINKS;
        let here = sys::fd_path(target.as_fd()).ok().filter(|p| p.is_absolute() && !sys::is_deleted(p));
        self.sup.unix_paths.iter().any(|p| {
            let listed = sys::cstr(p.as_os_str().as_bytes())
                .and_then(|c| sys::openat2(None, &c, libc::O_PATH | libc::O_NOFOLLOW, 0, flags))
                .and_then(|fd| sys::fstat(fd.as_fd()));
            match listed {
                Ok(m) if sys::file_type(&m) == libc::S_IFDIR => {
                    here.as_ref().is_some_and(|h| h.starts_with(p) && h != p)
                }
                Ok(m) => (m.st_dev, m.st_ino) == (st.st_dev, st.st_ino),
                Err(_) => false,
            }
        })
    }

    /// Namespace mode: an abstract name, looked up in the network namespace of the socket
    /// that connects, which must therefore be the command's own.
    fn connect_abstract(&self, sockfd: i32, name: &[u8]) -> Outcome {
        let Some(addr) = sockets::unix_addr(name) else { return Outcome::Fail(libc::EINVAL) };
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                match sockets::connect_unix(sock.as_fd(), &addr) {
                    0 => Outcome::Value(0),
                    e => Outcome::Fail(e),
                }
            }
            // a socket of srt's own would look the name up in the host's namespace
            Err(libc::EPERM | libc::ENOSYS) => Outcome::Fail(libc::EACCES),
            Err(e) => Outcome::Fail(e),
        }
    }

    /// Connects the command's socket (or one of ours of the same type in its place) to
    /// `via`, a path naming `_target`, which stays open until then.
    fn connect_unix_to(&self, sockfd: i32, via: &(libc::sockaddr_un, libc::socklen_t), _target: &OwnedFd) -> Outcome {
        match net::take_socket(self.req.pid, sockfd) {
            Ok(sock) => {
                if !self.valid() {
                    return Outcome::Gone;
                }
                match sockets::connect_unix(sock.as_fd(), via) {
                    0 => Outcome::Value(0),
                    e => Outcome::Fail(e),
                }
            }
            Err(libc::EPERM | libc::ENOSYS) => {
                let ty =
                    fd_info(self.req.pid, sockfd).and_then(|i| crate::net::sock_diag::unix_type(self.req.pid, i.ino));
                let Some(ty) = ty else { return Outcome::Fail(libc::EINVAL) };
                self.replace_socket_with(sockfd, libc::AF_UNIX, ty, |s| sockets::connect_unix(s.as_fd(), via))
            }
            Err(e) => Outcome::Fail(e),
        }
    }
}
