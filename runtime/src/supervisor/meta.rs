//! Metadata syscalls (chmod, chown, timestamps, xattrs) in landlock mode. Landlock does
//! not cover them and no mount makes them fail, so letting one proceed would be a grant:
//! every call is performed by the supervisor on an object it opened itself, or refused.
//! (In namespace mode they are not trapped at all: everything outside `allowWrite` and
//! every protected path is a read-only mount there, and the kernel refuses them.)
//!
//! Fail closed: an object without an ordinary path the policy knows (a pipe, a socket, a
//! memfd, a file reached through procfs, a deleted file that still has another name) is
//! refused. The supervisor runs without capabilities as the command's uid, so it can do no
//! more than the command could.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use super::resolve::{self, Why};
use super::sys;
use super::tracee::Base;
use super::{Call, Outcome};

/// The object a metadata call names.
enum Names {
    /// `dirfd` + path; `follow` unless a NOFOLLOW flag was given; an empty path with
    /// `AT_EMPTY_PATH` means `dirfd` itself.
    Path {
        dirfd: i32,
        path: u64,
        follow: bool,
        empty_is_fd: bool,
    },
    Fd(i32),
}

enum Op {
    Chmod(u32),
    Chown(u32, u32),
    Times(Option<[libc::timespec; 2]>),
    SetXattr(CString, Vec<u8>, i32),
    RemoveXattr(CString),
}

type Step<T> = Result<T, Outcome>;

fn eperm() -> Outcome {
    Outcome::Fail(libc::EPERM)
}

impl Call<'_> {
    pub(super) fn metadata(&self, name: &str) -> Outcome {
        self.metadata_inner(name).unwrap_or_else(|o| o)
    }

    fn metadata_inner(&self, name: &str) -> Step<Outcome> {
        let a = self.args();
        let fd = |x: u64| x as i32;
        let cwd = libc::AT_FDCWD;
        let follow = |flags: u64| flags as i32 & libc::AT_SYMLINK_NOFOLLOW == 0;
        let empty = |flags: u64| flags as i32 & libc::AT_EMPTY_PATH != 0;
        let path = |dirfd, p, follow, empty_is_fd| Names::Path { dirfd, path: p, follow, empty_is_fd };
        let bytes = |addr, len| self.t.read_bytes(addr, len).map_err(Outcome::Fail);
        let string = |addr| self.t.read_path(addr).map_err(Outcome::Fail);
        let (names, op) = match name {
            "chmod" => (path(cwd, a[0], true, false), Op::Chmod(a[1] as u32)),
            "fchmod" => (Names::Fd(fd(a[0])), Op::Chmod(a[1] as u32)),
            "fchmodat" => (path(fd(a[0]), a[1], true, false), Op::Chmod(a[2] as u32)),
            "fchmodat2" => (path(fd(a[0]), a[1], follow(a[3]), empty(a[3])), Op::Chmod(a[2] as u32)),
            "chown" => (path(cwd, a[0], true, false), Op::Chown(a[1] as u32, a[2] as u32)),
            "lchown" => (path(cwd, a[0], false, false), Op::Chown(a[1] as u32, a[2] as u32)),
            "fchown" => (Names::Fd(fd(a[0])), Op::Chown(a[1] as u32, a[2] as u32)),
            "fchownat" => (path(fd(a[0]), a[1], follow(a[4]), empty(a[4])), Op::Chown(a[2] as u32, a[3] as u32)),
            "utime" => (path(cwd, a[0], true, false), Op::Times(times(&bytes, a[1], Unit::Utimbuf)?)),
            "utimes" => (path(cwd, a[0], true, false), Op::Times(times(&bytes, a[1], Unit::Timeval)?)),
            "futimesat" => (path(fd(a[0]), a[1], true, false), Op::Times(times(&bytes, a[2], Unit::Timeval)?)),
            "utimensat" if a[1] == 0 => (Names::Fd(fd(a[0])), Op::Times(times(&bytes, a[2], Unit::Timespec)?)),
            "utimensat" => {
                (path(fd(a[0]), a[1], follow(a[3]), empty(a[3])), Op::Times(times(&bytes, a[2], Unit::Timespec)?))
            }
            "setxattr" | "lsetxattr" => (
                path(cwd, a[0], name == "setxattr", false),
                Op::SetXattr(string(a[1])?, xattr_value(&bytes, a[2], a[3])?, a[4] as i32),
            ),
            "fsetxattr" => {
                (Names::Fd(fd(a[0])), Op::SetXattr(string(a[1])?, xattr_value(&bytes, a[2], a[3])?, a[4] as i32))
            }
            "removexattr" | "lremovexattr" => {
                (path(cwd, a[0], name == "removexattr", false), Op::RemoveXattr(string(a[1])?))
            }
            "fremovexattr" => (Names::Fd(fd(a[0])), Op::RemoveXattr(string(a[1])?)),
            // a trapped call this table does not know: refused, never continued
            _ => return Err(Outcome::Fail(libc::ENOSYS)),
        };
        let obj = self.object(names)?;
        if !self.valid() {
            return Err(Outcome::Gone);
        }
        self.judge_metadata(&obj)?;
        Ok(op.apply(&obj))
    }

    fn object(&self, names: Names) -> Step<OwnedFd> {
        let r = match names {
            Names::Fd(fd) => self.t.open_fd_object(fd).map_err(Why::Errno),
            Names::Path { dirfd, path, follow, empty_is_fd } => {
                let raw = self.t.read_path(path).map_err(Outcome::Fail)?;
                match (raw.to_bytes().is_empty(), empty_is_fd) {
                    (true, true) => self.t.open_fd_object(dirfd).map_err(Why::Errno),
                    (true, false) => Err(Why::Errno(libc::ENOENT)),
                    (false, _) => {
                        let base = if dirfd == libc::AT_FDCWD { Base::Cwd } else { Base::Fd(dirfd) };
                        resolve::object(&self.t, base, raw.to_bytes(), follow)
                    }
                }
            }
        };
        r.map_err(|w| match w {
            Why::Unresolvable => eperm(),
            Why::Errno(e) => Outcome::Fail(e),
        })
    }

    /// May the command change the metadata of `obj`? Only a file, directory, symlink or
    /// FIFO at a place the policy lets it write, or an object this run made itself.
    fn judge_metadata(&self, obj: &OwnedFd) -> Step<()> {
        let st = sys::fstat(obj.as_fd()).map_err(Outcome::Fail)?;
        let kind = sys::file_type(&st);
        if !matches!(kind, libc::S_IFREG | libc::S_IFDIR | libc::S_IFLNK | libc::S_IFIFO) {
            return Err(eperm());
        }
        let key = (st.st_dev, st.st_ino);
        if self.sup.protected.contains(&key) {
            return Err(eperm());
        }
        let linked = self.sup.linked.lock().is_ok_and(|l| l.contains(&key));
        if kind == libc::S_IFREG && st.st_nlink > 1 && !linked {
            // another name may sit somewhere protected
            return Err(eperm());
        }
        // judged before and nothing renamed, linked or removed since: the same answer
        if self.sup.meta_ok.lock().is_ok_and(|m| m.contains(&key)) {
            return Ok(());
        }
        let path = sys::fd_path(obj.as_fd()).map_err(Outcome::Fail)?;
        if !path.as_os_str().as_encoded_bytes().starts_with(b"/") {
            return Err(eperm());
        }
        if sys::is_deleted(&path) {
            // an unlinked file with no other name affects nothing anyone else can reach
            if kind == libc::S_IFREG && st.st_nlink == 0 {
                return Ok(());
            }
            return Err(eperm());
        }
        let b = path.as_os_str().as_encoded_bytes();
        if b == b"/proc" || b.starts_with(b"/proc/") {
            return Err(eperm());
        }
        if self.sup.policy.can_write(&path) || (self.sup.policy.in_write_tree(&path) && self.made_by_run(&st)) {
            self.note(&path, "allowed");
            if let Ok(mut m) = self.sup.meta_ok.lock() {
                if m.len() >= 100_000 {
                    m.clear();
                }
                m.insert(key);
            }
            return Ok(());
        }
        self.note(&path, "not writable by the policy");
        Err(eperm())
    }
}

impl Op {
    fn apply(self, obj: &OwnedFd) -> Outcome {
        let is_symlink = sys::fstat(obj.as_fd()).is_ok_and(|st| sys::file_type(&st) == libc::S_IFLNK);
        // Only chown can act on a symlink itself through an O_PATH fd (AT_EMPTY_PATH); the
        // others would go through the link, so refuse them as Linux mostly does.
        if is_symlink && !matches!(self, Op::Chown(..)) {
            return Outcome::Fail(libc::EOPNOTSUPP);
        }
        let at = sys::proc_self(obj.as_fd());
        let fd = obj.as_raw_fd();
        // SAFETY (all arms): plain syscalls on descriptors and buffers owned here.
        let r = unsafe {
            match &self {
                Op::Chmod(mode) => {
                    // fchmodat2 (6.6) acts on the O_PATH descriptor directly; older kernels
                    // go through its /proc/self/fd link
                    let r = libc::syscall(FCHMODAT2, fd, c"".as_ptr(), *mode & 0o7777, libc::AT_EMPTY_PATH);
                    if r < 0 && matches!(sys::last_errno(), libc::ENOSYS | libc::EINVAL) {
                        libc::fchmodat(libc::AT_FDCWD, at.as_ptr(), *mode & 0o7777, 0) as libc::c_long
                    } else {
                        r
                    }
                }
                Op::Chown(u, g) => libc::fchownat(fd, c"".as_ptr(), *u, *g, libc::AT_EMPTY_PATH) as libc::c_long,
                Op::Times(t) => {
                    let ptr = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                    let r = libc::utimensat(fd, c"".as_ptr(), ptr, libc::AT_EMPTY_PATH) as libc::c_long;
                    if r < 0 && matches!(sys::last_errno(), libc::EINVAL | libc::EBADF) {
                        libc::utimensat(libc::AT_FDCWD, at.as_ptr(), ptr, 0) as libc::c_long
                    } else {
                        r
                    }
                }
                Op::SetXattr(n, v, f) => {
                    libc::setxattr(at.as_ptr(), n.as_ptr(), v.as_ptr().cast(), v.len(), *f) as libc::c_long
                }
                Op::RemoveXattr(n) => libc::removexattr(at.as_ptr(), n.as_ptr()) as libc::c_long,
            }
        };
        match sys::result(r) {
            Ok(v) => Outcome::Value(v),
            Err(e) => Outcome::Fail(e),
        }
    }
}

/// fchmodat2(2), the same number on every architecture (newer than the libc crate's tables).
const FCHMODAT2: libc::c_long = 452;

enum Unit {
    Timespec,
    Timeval,
    Utimbuf,
}

/// The two timestamps a call passes (NULL: now).
fn times(
    read: &dyn Fn(u64, usize) -> Result<Vec<u8>, Outcome>,
    addr: u64,
    unit: Unit,
) -> Result<Option<[libc::timespec; 2]>, Outcome> {
    if addr == 0 {
        return Ok(None);
    }
    let n = if matches!(unit, Unit::Utimbuf) { 2 } else { 4 };
    let b = read(addr, n * 8)?;
    let v: Vec<i64> =
        b.chunks_exact(8).map(|c| i64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect();
    let ts = |sec: i64, nsec: i64| libc::timespec { tv_sec: sec, tv_nsec: nsec };
    Ok(Some(match unit {
        Unit::Timespec => [ts(v[0], v[1]), ts(v[2], v[3])],
        Unit::Timeval => [ts(v[0], v[1].saturating_mul(1000)), ts(v[2], v[3].saturating_mul(1000))],
        Unit::Utimbuf => [ts(v[0], 0), ts(v[1], 0)],
    }))
}

/// An xattr value (at most 64 KiB, as the kernel allows).
fn xattr_value(read: &dyn Fn(u64, usize) -> Result<Vec<u8>, Outcome>, addr: u64, len: u64) -> Result<Vec<u8>, Outcome> {
    if len > 65536 {
        return Err(Outcome::Fail(libc::E2BIG));
    }
    if len == 0 {
        return Ok(Vec::new());
    }
    read(addr, len as usize)
}
