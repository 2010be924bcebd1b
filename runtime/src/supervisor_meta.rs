//! Metadata syscalls (chmod, chown, timestamps, xattrs). Landlock does not cover them, so
//! letting one proceed would be a grant: every call naming a filesystem object is either
//! performed by the supervisor on the object it resolved itself, or refused. The
//! supervisor runs without capabilities, so it can do no more than the command could.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use crate::notify::{self, Notif};
use crate::supervisor::{last_errno, open_path_dir, read_path, result, Outcome, Supervisor};

/// The object a metadata call names.
enum Names {
    /// `dirfd` + path; `follow` unless a NOFOLLOW flag was given; an empty path with
    /// `AT_EMPTY_PATH` (or NULL, for utimensat) means `dirfd` itself.
    Path {
        dirfd: i32,
        path: u64,
        follow: bool,
        empty_is_fd: bool,
    },
    Fd(i32),
}

struct Object {
    fd: OwnedFd,
    path: PathBuf,
    is_symlink: bool,
}

const AT_FDCWD: i32 = libc::AT_FDCWD;

impl Supervisor {
    pub(crate) fn metadata(&self, l: BorrowedFd<'_>, req: &Notif, name: &str) -> Result<Outcome, Outcome> {
        let a = req.data.args;
        let fd = |x: u64| x as i32;
        let nofollow = |flags: u64| flags as i32 & libc::AT_SYMLINK_NOFOLLOW == 0;
        let empty = |flags: u64| flags as i32 & libc::AT_EMPTY_PATH != 0;
        let path = |dirfd, p, follow, empty_is_fd| Names::Path { dirfd, path: p, follow, empty_is_fd };
        let (names, op) = match name {
            "chmod" => (path(AT_FDCWD, a[0], true, false), Op::Chmod(a[1] as u32)),
            "fchmod" => (Names::Fd(fd(a[0])), Op::Chmod(a[1] as u32)),
            "fchmodat" => (path(fd(a[0]), a[1], true, false), Op::Chmod(a[2] as u32)),
            "fchmodat2" => (path(fd(a[0]), a[1], nofollow(a[3]), empty(a[3])), Op::Chmod(a[2] as u32)),
            "chown" => (path(AT_FDCWD, a[0], true, false), Op::Chown(a[1] as u32, a[2] as u32)),
            "lchown" => (path(AT_FDCWD, a[0], false, false), Op::Chown(a[1] as u32, a[2] as u32)),
            "fchown" => (Names::Fd(fd(a[0])), Op::Chown(a[1] as u32, a[2] as u32)),
            "fchownat" => (path(fd(a[0]), a[1], nofollow(a[4]), empty(a[4])), Op::Chown(a[2] as u32, a[3] as u32)),
            "utime" => (path(AT_FDCWD, a[0], true, false), Op::Times(read_utimbuf(req.pid, a[1])?)),
            "utimes" => (path(AT_FDCWD, a[0], true, false), Op::Times(read_timevals(req.pid, a[1])?)),
            "futimesat" => (path(fd(a[0]), a[1], true, false), Op::Times(read_timevals(req.pid, a[2])?)),
            "utimensat" if a[1] == 0 => (Names::Fd(fd(a[0])), Op::Times(read_timespecs(req.pid, a[2])?)),
            "utimensat" => {
                (path(fd(a[0]), a[1], nofollow(a[3]), empty(a[3])), Op::Times(read_timespecs(req.pid, a[2])?))
            }
            "setxattr" | "lsetxattr" => {
                let n = read_path(req.pid, a[1])?;
                (
                    path(AT_FDCWD, a[0], name == "setxattr", false),
                    Op::SetXattr(n, read_bytes(req.pid, a[2], a[3])?, a[4] as i32),
                )
            }
            "fsetxattr" => {
                let n = read_path(req.pid, a[1])?;
                (Names::Fd(fd(a[0])), Op::SetXattr(n, read_bytes(req.pid, a[2], a[3])?, a[4] as i32))
            }
            "removexattr" | "lremovexattr" => {
                (path(AT_FDCWD, a[0], name == "removexattr", false), Op::RemoveXattr(read_path(req.pid, a[1])?))
            }
            "fremovexattr" => (Names::Fd(fd(a[0])), Op::RemoveXattr(read_path(req.pid, a[1])?)),
            _ => return Err(Outcome::Fail(libc::ENOSYS)),
        };
        let Some(obj) = self.open_object(l, req, names)? else {
            // not a filesystem object (a pipe, a socket): nothing Landlock would guard
            return Err(Outcome::Continue);
        };
        if !self.policy.can_write(&obj.path) {
            return Err(Outcome::Fail(libc::EPERM));
        }
        Ok(op.apply(&obj))
    }

    fn open_object(&self, l: BorrowedFd<'_>, req: &Notif, names: Names) -> Result<Option<Object>, Outcome> {
        let (base, rel, follow) = match names {
            Names::Fd(fd) => (format!("/proc/{}/fd/{fd}", req.pid), b".".to_vec(), true),
            Names::Path { dirfd, path, follow, empty_is_fd } => {
                let raw = read_path(req.pid, path)?;
                let bytes = raw.to_bytes();
                if bytes.is_empty() {
                    if !empty_is_fd {
                        return Err(Outcome::Fail(libc::ENOENT));
                    }
                    (format!("/proc/{}/fd/{dirfd}", req.pid), b".".to_vec(), true)
                } else if bytes[0] == b'/' {
                    (format!("/proc/{}/root", req.pid), bytes.to_vec(), follow)
                } else if dirfd == AT_FDCWD {
                    (format!("/proc/{}/cwd", req.pid), bytes.to_vec(), follow)
                } else {
                    (format!("/proc/{}/fd/{dirfd}", req.pid), bytes.to_vec(), follow)
                }
            }
        };
        // The fd form may name a pipe or socket; open the magic link itself then.
        let fd = if rel == b"." {
            open_at(None, base.as_bytes(), true)
        } else {
            let dir = open_path_dir(None, base.as_bytes()).map_err(Outcome::Fail)?;
            let rel: Vec<u8> = rel.iter().skip_while(|&&b| b == b'/').copied().collect();
            let rel = if rel.is_empty() { b".".to_vec() } else { rel };
            open_at(Some(std::os::fd::AsFd::as_fd(&dir)), &rel, follow)
        }
        .map_err(Outcome::Fail)?;
        if !notify::id_valid(l, req.id) {
            return Err(Outcome::Gone);
        }
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|e| Outcome::Fail(e.raw_os_error().unwrap_or(libc::EIO)))?;
        let lb = std::os::unix::ffi::OsStrExt::as_bytes(link.as_os_str());
        if !lb.starts_with(b"/") || lb.ends_with(b" (deleted)") {
            return Ok(None);
        }
        let mut st: libc::stat = unsafe_zeroed_stat();
        // SAFETY: fstat on an O_PATH descriptor we own, writing into a local.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
            return Err(Outcome::Fail(last_errno()));
        }
        Ok(Some(Object { fd, path: link, is_symlink: st.st_mode & libc::S_IFMT == libc::S_IFLNK }))
    }
}

enum Op {
    Chmod(u32),
    Chown(u32, u32),
    Times(Option<[libc::timespec; 2]>),
    SetXattr(CString, Vec<u8>, i32),
    RemoveXattr(CString),
}

impl Op {
    fn apply(self, obj: &Object) -> Outcome {
        let proc_path = CString::new(format!("/proc/self/fd/{}", obj.fd.as_raw_fd())).unwrap_or_default();
        // Only chown can act on a symlink itself through an O_PATH fd (AT_EMPTY_PATH);
        // the others would go through the link, so refuse them as Linux mostly does.
        if obj.is_symlink && !matches!(self, Op::Chown(..)) {
            return Outcome::Fail(libc::EOPNOTSUPP);
        }
        // SAFETY (all arms): plain syscalls on descriptors and buffers owned here.
        let r = unsafe {
            match &self {
                Op::Chmod(mode) => libc::fchmodat(libc::AT_FDCWD, proc_path.as_ptr(), *mode & 0o7777, 0) as i64,
                Op::Chown(u, g) => libc::fchownat(obj.fd.as_raw_fd(), c"".as_ptr(), *u, *g, libc::AT_EMPTY_PATH) as i64,
                Op::Times(t) => {
                    let ptr = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                    libc::utimensat(libc::AT_FDCWD, proc_path.as_ptr(), ptr, 0) as i64
                }
                Op::SetXattr(n, v, f) => {
                    libc::setxattr(proc_path.as_ptr(), n.as_ptr(), v.as_ptr().cast(), v.len(), *f) as i64
                }
                Op::RemoveXattr(n) => libc::removexattr(proc_path.as_ptr(), n.as_ptr()) as i64,
            }
        };
        result(r)
    }
}

fn open_at(dir: Option<BorrowedFd<'_>>, path: &[u8], follow: bool) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    let dirfd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    let flags = libc::O_PATH | libc::O_CLOEXEC | if follow { 0 } else { libc::O_NOFOLLOW };
    // SAFETY: plain syscall with a NUL-terminated path; ownership taken below.
    let fd = unsafe { libc::openat(dirfd, c.as_ptr(), flags) };
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: a fresh descriptor nobody else owns.
        Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
    }
}

fn unsafe_zeroed_stat() -> libc::stat {
    // SAFETY: libc::stat is plain old data; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

/// Copies `len` bytes from the target (xattr values are at most 64 KiB).
pub(crate) fn read_bytes(pid: u32, addr: u64, len: u64) -> Result<Vec<u8>, Outcome> {
    if len > 65536 {
        return Err(Outcome::Fail(libc::E2BIG));
    }
    let mut buf = vec![0u8; len as usize];
    if len == 0 {
        return Ok(buf);
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: the local iovec covers `buf`; the kernel validates the remote one.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n as usize != buf.len() {
        return Err(Outcome::Fail(libc::EFAULT));
    }
    Ok(buf)
}

fn read_i64s<const N: usize>(pid: u32, addr: u64) -> Result<Option<[i64; N]>, Outcome> {
    if addr == 0 {
        return Ok(None);
    }
    let b = read_bytes(pid, addr, (N * 8) as u64)?;
    let mut out = [0i64; N];
    for (i, c) in b.chunks_exact(8).enumerate() {
        out[i] = i64::from_ne_bytes(c.try_into().map_err(|_| Outcome::Fail(libc::EFAULT))?);
    }
    Ok(Some(out))
}

fn ts(sec: i64, nsec: i64) -> libc::timespec {
    libc::timespec { tv_sec: sec, tv_nsec: nsec }
}

fn read_timespecs(pid: u32, addr: u64) -> Result<Option<[libc::timespec; 2]>, Outcome> {
    Ok(read_i64s::<4>(pid, addr)?.map(|v| [ts(v[0], v[1]), ts(v[2], v[3])]))
}

fn read_timevals(pid: u32, addr: u64) -> Result<Option<[libc::timespec; 2]>, Outcome> {
    Ok(read_i64s::<4>(pid, addr)?.map(|v| [ts(v[0], v[1] * 1000), ts(v[2], v[3] * 1000)]))
}

fn read_utimbuf(pid: u32, addr: u64) -> Result<Option<[libc::timespec; 2]>, Outcome> {
    Ok(read_i64s::<2>(pid, addr)?.map(|v| [ts(v[0], 0), ts(v[1], 0)]))
}
