//! The filesystem supervisor. The command's Landlock domain is the floor: it can never
//! write where the plan gave no right. Where the plan had to split rights (a writable
//! directory holding a protected name, such as the working directory and its `.bashrc`),
//! the supervisor performs the permitted operation itself and hands back the result.
//!
//! It never grants by letting the command's own syscall proceed (`CONTINUE`), because the
//! command could change the path in memory after the check. It reads the path once,
//! resolves the parent directory itself, judges the real location by the policy, and
//! acts on its own file descriptors with symlinks refused in the last component. Requests
//! it does not grant are continued, so the kernel gives its natural answer under Landlock.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::notify::{self, Notif};
use crate::policy::FsPolicy;
use crate::sysno::Arch;

/// What the mediated syscall gets.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Let the kernel run it as issued, under the command's Landlock domain.
    Continue,
    Fail(i32),
    Value(i64),
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// The target vanished; nothing to answer.
    Gone,
}

pub struct Supervisor {
    pub(crate) policy: FsPolicy,
    /// (dev, ino) of existing write-denied files, so a second name cannot reach them.
    pub(crate) protected: HashSet<(u64, u64)>,
    /// Files that got extra names from us, every one of them in a writable place.
    linked: RefCell<HashSet<(u64, u64)>>,
    arch: Arch,
    /// Where connects may go (the embedded proxy); `None`: nowhere.
    route: Option<crate::net::Route>,
}

struct Target {
    parent: OwnedFd,
    name: CString,
    path: PathBuf,
}

const AT_FDCWD: i32 = libc::AT_FDCWD;

impl Supervisor {
    pub fn new(policy: FsPolicy, arch: Arch, route: Option<crate::net::Route>) -> Self {
        let protected = policy
            .deny_write
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            })
            .collect();
        Supervisor { policy, protected, linked: RefCell::default(), arch, route }
    }

    /// Answers one pending notification on `listener`.
    pub fn handle_one(&self, listener: BorrowedFd<'_>) -> std::io::Result<()> {
        let req = match notify::recv(listener) {
            Ok(r) => r,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::EINTR)) => return Ok(()),
            Err(e) => return Err(e),
        };
        let name = self.arch.name(i64::from(req.data.nr)).unwrap_or("?");
        let outcome = self.decide(listener, &req, name);
        tracing::debug!(syscall = name, pid = req.pid, ?outcome, "mediated");
        let sent = match outcome {
            Outcome::Continue => notify::send_continue(listener, req.id),
            Outcome::Fail(e) => notify::send_result(listener, req.id, 0, e),
            Outcome::Value(v) => notify::send_result(listener, req.id, v, 0),
            Outcome::Fd { fd, cloexec } => notify::send_fd(listener, req.id, fd.as_fd(), cloexec),
            Outcome::Gone => Ok(()),
        };
        match sent {
            // the target was killed or interrupted while we worked: nothing to do
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            other => other,
        }
    }

    fn decide(&self, listener: BorrowedFd<'_>, req: &Notif, name: &str) -> Outcome {
        let a = req.data.args;
        let fd = |x: u64| x as i32;
        let r = match name {
            "open" => self.open(listener, req, AT_FDCWD, a[0], a[1] as i32, a[2] as u32),
            "openat" => self.open(listener, req, fd(a[0]), a[1], a[2] as i32, a[3] as u32),
            "creat" => {
                self.open(listener, req, AT_FDCWD, a[0], libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, a[1] as u32)
            }
            "mkdir" => self.mkdir(listener, req, AT_FDCWD, a[0], a[1] as u32),
            "mkdirat" => self.mkdir(listener, req, fd(a[0]), a[1], a[2] as u32),
            "mknod" => self.mknod(listener, req, AT_FDCWD, a[0], a[1] as u32),
            "mknodat" => self.mknod(listener, req, fd(a[0]), a[1], a[2] as u32),
            "symlink" => self.symlink(listener, req, a[0], AT_FDCWD, a[1]),
            "symlinkat" => self.symlink(listener, req, a[0], fd(a[1]), a[2]),
            "link" => self.link(listener, req, [AT_FDCWD, AT_FDCWD], [a[0], a[1]], 0),
            "linkat" => self.link(listener, req, [fd(a[0]), fd(a[2])], [a[1], a[3]], a[4] as i32),
            "rename" => self.rename(listener, req, [AT_FDCWD, AT_FDCWD], [a[0], a[1]], 0),
            "renameat" => self.rename(listener, req, [fd(a[0]), fd(a[2])], [a[1], a[3]], 0),
            "renameat2" => self.rename(listener, req, [fd(a[0]), fd(a[2])], [a[1], a[3]], a[4] as u32),
            "unlink" => self.unlink(listener, req, AT_FDCWD, a[0], 0),
            "unlinkat" => self.unlink(listener, req, fd(a[0]), a[1], a[2] as i32),
            "rmdir" => self.unlink(listener, req, AT_FDCWD, a[0], libc::AT_REMOVEDIR),
            "truncate" => self.truncate(listener, req, a[0], a[1] as i64),
            "connect" => self.connect(listener, req, fd(a[0]), a[1], a[2]),
            other => self.metadata(listener, req, other),
        };
        match r {
            Ok(o) | Err(o) => o,
        }
    }

    fn open(
        &self,
        l: BorrowedFd<'_>,
        req: &Notif,
        dirfd: i32,
        path: u64,
        flags: i32,
        mode: u32,
    ) -> Result<Outcome, Outcome> {
        if flags & libc::O_PATH != 0 {
            return Err(Outcome::Continue);
        }
        let raw = read_path(req.pid, path)?;
        if raw.to_bytes().ends_with(b"/") {
            return Err(Outcome::Continue);
        }
        let t = self.resolve(l, req, dirfd, &raw)?;
        if !self.policy.can_write(&t.path) {
            return Err(Outcome::Continue);
        }
        let creating = flags & (libc::O_CREAT | libc::O_TMPFILE) != 0;
        let mode = if creating { u64::from(mode & 0o7777 & !umask(req.pid)) } else { 0 };
        let how_flags = (flags & !libc::O_TRUNC) | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let file = match openat2(t.parent.as_fd(), &t.name, how_flags, mode) {
            Ok(f) => f,
            // a symlink: the kernel follows it for the command and Landlock judges the target
            Err(libc::ELOOP) if flags & libc::O_NOFOLLOW == 0 => return Err(Outcome::Continue),
            Err(e) => return Err(Outcome::Fail(e)),
        };
        self.check_single_name(file.as_fd())?;
        if flags & libc::O_TRUNC != 0 && is_regular(file.as_fd()) {
            // SAFETY: plain syscall on a descriptor we own.
            if unsafe { libc::ftruncate(file.as_raw_fd(), 0) } < 0 {
                return Err(Outcome::Fail(last_errno()));
            }
        }
        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
    }

    /// A regular file with several names may be reachable from somewhere the policy
    /// protects; only the kernel's path-based Landlock check may decide for it.
    fn check_single_name(&self, fd: BorrowedFd<'_>) -> Result<(), Outcome> {
        let st = fstat(fd).map_err(Outcome::Fail)?;
        if self.protected.contains(&(st.st_dev, st.st_ino)) {
            return Err(Outcome::Fail(libc::EACCES));
        }
        let key = (st.st_dev, st.st_ino);
        if st.st_mode & libc::S_IFMT == libc::S_IFREG && st.st_nlink > 1 && !self.linked.borrow().contains(&key) {
            return Err(Outcome::Continue);
        }
        Ok(())
    }

    fn mkdir(&self, l: BorrowedFd<'_>, req: &Notif, dirfd: i32, path: u64, mode: u32) -> Result<Outcome, Outcome> {
        let raw = read_path(req.pid, path)?;
        let t = self.resolve(l, req, dirfd, &raw)?;
        if !self.policy.can_write(&t.path) {
            return Err(Outcome::Continue);
        }
        let mode = mode & 0o7777 & !umask(req.pid);
        // SAFETY: plain syscall with a live fd and NUL-terminated name.
        let r = unsafe { libc::mkdirat(t.parent.as_raw_fd(), t.name.as_ptr(), mode) };
        Ok(result(r as i64))
    }

    fn mknod(&self, l: BorrowedFd<'_>, req: &Notif, dirfd: i32, path: u64, mode: u32) -> Result<Outcome, Outcome> {
        let kind = mode & libc::S_IFMT;
        if !(kind == 0 || kind == libc::S_IFREG || kind == libc::S_IFIFO) {
            return Err(Outcome::Continue);
        }
        let raw = read_path(req.pid, path)?;
        let t = self.resolve(l, req, dirfd, &raw)?;
        if !self.policy.can_write(&t.path) {
            return Err(Outcome::Continue);
        }
        let mode = kind | (mode & 0o7777 & !umask(req.pid));
        // SAFETY: plain syscall with a live fd and NUL-terminated name.
        let r = unsafe { libc::mknodat(t.parent.as_raw_fd(), t.name.as_ptr(), mode, 0) };
        Ok(result(r as i64))
    }

    fn symlink(&self, l: BorrowedFd<'_>, req: &Notif, target: u64, dirfd: i32, path: u64) -> Result<Outcome, Outcome> {
        let target = read_path(req.pid, target)?;
        let raw = read_path(req.pid, path)?;
        let t = self.resolve(l, req, dirfd, &raw)?;
        if !self.policy.can_write(&t.path) {
            return Err(Outcome::Continue);
        }
        // SAFETY: plain syscall with live fd and NUL-terminated strings.
        let r = unsafe { libc::symlinkat(target.as_ptr(), t.parent.as_raw_fd(), t.name.as_ptr()) };
        Ok(result(r as i64))
    }

    fn link(
        &self,
        l: BorrowedFd<'_>,
        req: &Notif,
        dirfds: [i32; 2],
        paths: [u64; 2],
        flags: i32,
    ) -> Result<Outcome, Outcome> {
        if flags & (libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) != 0 {
            return Err(Outcome::Continue);
        }
        let (old, new) = (read_path(req.pid, paths[0])?, read_path(req.pid, paths[1])?);
        let src = self.resolve(l, req, dirfds[0], &old)?;
        let dst = self.resolve(l, req, dirfds[1], &new)?;
        if !self.policy.can_write(&dst.path) || !self.policy.can_replace(&src.path) {
            return Err(Outcome::Continue);
        }
        // A second name for a file is only handed out when the file has no other name:
        // otherwise the new name would let a protected or read-only inode be written.
        let st = fstatat_nofollow(src.parent.as_fd(), &src.name).map_err(Outcome::Fail)?;
        let key = (st.st_dev, st.st_ino);
        if st.st_mode & libc::S_IFMT == libc::S_IFREG
            && ((st.st_nlink > 1 && !self.linked.borrow().contains(&key)) || self.protected.contains(&key))
        {
            return Err(Outcome::Continue);
        }
        // SAFETY: plain syscall with live fds and NUL-terminated names.
        let r = unsafe {
            libc::linkat(src.parent.as_raw_fd(), src.name.as_ptr(), dst.parent.as_raw_fd(), dst.name.as_ptr(), 0)
        };
        if r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            self.linked.borrow_mut().insert(key);
        }
        Ok(result(r as i64))
    }

    fn rename(
        &self,
        l: BorrowedFd<'_>,
        req: &Notif,
        dirfds: [i32; 2],
        paths: [u64; 2],
        flags: u32,
    ) -> Result<Outcome, Outcome> {
        if flags & libc::RENAME_WHITEOUT != 0 {
            return Err(Outcome::Continue);
        }
        let (old, new) = (read_path(req.pid, paths[0])?, read_path(req.pid, paths[1])?);
        let src = self.resolve(l, req, dirfds[0], &old)?;
        let dst = self.resolve(l, req, dirfds[1], &new)?;
        if !self.policy.can_replace(&src.path) || !self.policy.can_replace(&dst.path) {
            return Err(Outcome::Continue);
        }
        for t in [&src, &dst] {
            if let Ok(st) = fstatat_nofollow(t.parent.as_fd(), &t.name) {
                if self.protected.contains(&(st.st_dev, st.st_ino)) {
                    return Err(Outcome::Continue);
                }
            }
        }
        // SAFETY: plain syscall with live fds and NUL-terminated names.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                src.parent.as_raw_fd(),
                src.name.as_ptr(),
                dst.parent.as_raw_fd(),
                dst.name.as_ptr(),
                flags,
            )
        };
        Ok(result(r))
    }

    fn unlink(&self, l: BorrowedFd<'_>, req: &Notif, dirfd: i32, path: u64, flags: i32) -> Result<Outcome, Outcome> {
        let raw = read_path(req.pid, path)?;
        let t = self.resolve(l, req, dirfd, &raw)?;
        if !self.policy.can_replace(&t.path) {
            return Err(Outcome::Continue);
        }
        // SAFETY: plain syscall with a live fd and NUL-terminated name.
        let r = unsafe { libc::unlinkat(t.parent.as_raw_fd(), t.name.as_ptr(), flags & libc::AT_REMOVEDIR) };
        Ok(result(r as i64))
    }

    fn truncate(&self, l: BorrowedFd<'_>, req: &Notif, path: u64, len: i64) -> Result<Outcome, Outcome> {
        let raw = read_path(req.pid, path)?;
        let t = self.resolve(l, req, AT_FDCWD, &raw)?;
        if !self.policy.can_write(&t.path) {
            return Err(Outcome::Continue);
        }
        let file = match openat2(t.parent.as_fd(), &t.name, libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0) {
            Ok(f) => f,
            Err(libc::ELOOP) => return Err(Outcome::Continue),
            Err(e) => return Err(Outcome::Fail(e)),
        };
        self.check_single_name(file.as_fd())?;
        // SAFETY: plain syscall on a descriptor we own.
        let r = unsafe { libc::ftruncate(file.as_raw_fd(), len) };
        Ok(result(r as i64))
    }

    /// Routes a connect: to the proxy (performed here on the command's own socket, at an
    /// address we hold, so changing the sockaddr in memory afterwards gains nothing), or
    /// refused.
    fn connect(&self, l: BorrowedFd<'_>, req: &Notif, sockfd: i32, addr: u64, len: u64) -> Result<Outcome, Outcome> {
        use crate::net::{self, Verdict};
        let Some(route) = self.route else { return Err(Outcome::Fail(libc::EACCES)) };
        if addr == 0 || !(2..=128).contains(&len) {
            return Err(Outcome::Fail(libc::EINVAL));
        }
        let sa = crate::supervisor_meta::read_bytes(req.pid, addr, len)?;
        match net::judge(&route, &sa) {
            Verdict::Refuse(e) => Err(Outcome::Fail(e)),
            Verdict::Kernel => Err(Outcome::Continue),
            Verdict::Proxy { v6, port } => {
                let sock = net::take_socket(req.pid, sockfd).map_err(Outcome::Fail)?;
                if !notify::id_valid(l, req.id) {
                    return Err(Outcome::Gone);
                }
                match net::connect_to_proxy(&sock, port, v6) {
                    0 => Ok(Outcome::Value(0)),
                    e => Err(Outcome::Fail(e)),
                }
            }
        }
    }

    /// Opens the parent directory of `raw` as the command would see it and names the
    /// real location. Anything odd is left to the kernel (`Continue`).
    fn resolve(&self, l: BorrowedFd<'_>, req: &Notif, dirfd: i32, raw: &CStr) -> Result<Target, Outcome> {
        let bytes = raw.to_bytes();
        if bytes.is_empty() {
            return Err(Outcome::Continue);
        }
        let absolute = bytes[0] == b'/';
        let trimmed = trim_end(bytes, b'/');
        let (dir, name) = match trimmed.iter().rposition(|&b| b == b'/') {
            Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
            None => (&b""[..], trimmed),
        };
        if name.is_empty() || name == b"." || name == b".." {
            return Err(Outcome::Continue);
        }
        let dir = trim_start(dir, b'/');
        let dir = if dir.is_empty() { &b"."[..] } else { dir };
        let base = if absolute {
            format!("/proc/{}/root", req.pid)
        } else if dirfd == AT_FDCWD {
            format!("/proc/{}/cwd", req.pid)
        } else {
            format!("/proc/{}/fd/{}", req.pid, dirfd)
        };
        let base = open_path_dir(None, base.as_bytes()).map_err(|_| Outcome::Continue)?;
        // The /proc lookups above named the right process only if it is still waiting.
        if !notify::id_valid(l, req.id) {
            return Err(Outcome::Gone);
        }
        let parent = open_path_dir(Some(base.as_fd()), dir).map_err(|_| Outcome::Continue)?;
        let link =
            std::fs::read_link(format!("/proc/self/fd/{}", parent.as_raw_fd())).map_err(|_| Outcome::Continue)?;
        let lb = link.as_os_str().as_bytes();
        if !lb.starts_with(b"/") || lb.ends_with(b" (deleted)") {
            return Err(Outcome::Continue);
        }
        let name_os = std::ffi::OsStr::from_bytes(name);
        let name = CString::new(name).map_err(|_| Outcome::Continue)?;
        Ok(Target { path: link.join(name_os), parent, name })
    }
}

fn trim_end(mut b: &[u8], c: u8) -> &[u8] {
    while b.len() > 1 && b.last() == Some(&c) {
        b = &b[..b.len() - 1];
    }
    b
}

fn trim_start(mut b: &[u8], c: u8) -> &[u8] {
    while b.first() == Some(&c) {
        b = &b[1..];
    }
    b
}

pub(crate) fn result(r: i64) -> Outcome {
    if r < 0 {
        Outcome::Fail(last_errno())
    } else {
        Outcome::Value(r)
    }
}

pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Reads a NUL-terminated path from the target's memory, page by page.
pub(crate) fn read_path(pid: u32, addr: u64) -> Result<CString, Outcome> {
    const MAX: usize = libc::PATH_MAX as usize;
    if addr == 0 {
        return Err(Outcome::Fail(libc::EFAULT));
    }
    let mut buf = Vec::with_capacity(256);
    let mut at = addr;
    while buf.len() < MAX {
        let page_left = 4096 - (at as usize % 4096);
        let mut chunk = vec![0u8; page_left.min(MAX - buf.len())];
        let local = libc::iovec { iov_base: chunk.as_mut_ptr().cast(), iov_len: chunk.len() };
        let remote = libc::iovec { iov_base: at as *mut libc::c_void, iov_len: chunk.len() };
        // SAFETY: the local iovec covers `chunk`, which outlives the call; the remote one
        // is only read by the kernel, which checks it against the target's mappings.
        let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            return Err(Outcome::Fail(libc::EFAULT));
        }
        let got = &chunk[..n as usize];
        if let Some(end) = got.iter().position(|&b| b == 0) {
            buf.extend_from_slice(&got[..end]);
            return CString::new(buf).map_err(|_| Outcome::Fail(libc::EINVAL));
        }
        buf.extend_from_slice(got);
        at += n as u64;
    }
    Err(Outcome::Fail(libc::ENAMETOOLONG))
}

pub(crate) fn umask(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Umask:")).and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

pub(crate) fn open_path_dir(base: Option<BorrowedFd<'_>>, path: &[u8]) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    let dirfd = base.map_or(libc::AT_FDCWD, |b| b.as_raw_fd());
    // SAFETY: plain syscall with a NUL-terminated path; the result is owned below.
    let fd = unsafe { libc::openat(dirfd, c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: a fresh descriptor nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;

/// Opens one name directly in `dir`, never following a symlink.
fn openat2(dir: BorrowedFd<'_>, name: &CStr, flags: i32, mode: u64) -> Result<OwnedFd, i32> {
    let how = OpenHow {
        flags: flags as u32 as u64,
        mode,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
    };
    // SAFETY: `how` and `name` are live for the call; the result is owned below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: a fresh descriptor nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }
}

pub(crate) fn fstat(fd: BorrowedFd<'_>) -> Result<libc::stat, i32> {
    // SAFETY: zeroed stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall writing into `st`.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

pub(crate) fn fstatat_nofollow(dir: BorrowedFd<'_>, name: &CStr) -> Result<libc::stat, i32> {
    // SAFETY: zeroed stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall writing into `st`.
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

fn is_regular(fd: BorrowedFd<'_>) -> bool {
    fstat(fd).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
}
