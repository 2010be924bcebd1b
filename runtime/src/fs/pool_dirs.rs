//! The pool's directory calls (open, list, stat by descriptor) and the stamps by which
//! the check after the run knows a shelf directory unchanged ([`crate::fs::pool`]): one
//! empty when the run took it (its stamp settled then, and the auditor found it empty with
//! that same stamp while the command ran) and whose stamp has not moved since goes back
//! on the shelf without being opened again.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Mutex;

/// What `fstat` says of a shelf directory that only a change to it moves: a new entry, a
/// removed or renamed one, a mode, owner, ACL or other extended attribute all set its
/// ctime (which no call can set back; only a clock set back could repeat it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
    mode: u32,
    uid: u32,
    nlink: u64,
}

impl Stamp {
    pub(crate) fn of(st: &libc::stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            ctime: (st.st_ctime, st.st_ctime_nsec),
            mtime: (st.st_mtime, st.st_mtime_nsec),
            mode: st.st_mode,
            uid: st.st_uid,
            #[allow(clippy::unnecessary_cast)] // nlink_t is u32 on some architectures
            nlink: st.st_nlink as u64,
        }
    }
}

/// A directory whose ctime is at least this old when a run takes it has a ctime that any
/// change during the run moves: timestamps come from a clock that ticks at least every
/// 10 ms (the coarse clock), so only one changed within the same tick as the last change
/// could keep it.
pub(crate) const SETTLED_SECS: i64 = 2;

/// A shelf directory whose stamp had settled when the run took it.
#[derive(Debug, Clone)]
pub(crate) struct Settled {
    pub name: CString,
    pub stamp: Stamp,
    /// Found empty, with that same stamp, after the run took it ([`verify_claimed`]): so it
    /// was empty then, and holds nothing whose content could change without its stamp.
    pub empty: bool,
}

/// The shelf this process took ([`crate::fs::pool::Pool::claim`]) and its settled
/// directories: the check after the run (in the auditor, a fork that shares this memory)
/// puts back one found empty whose stamp has not moved without opening it again
/// (`pool::shelve`). A check done by srt itself (its auditor died) or by another srt (both
/// were killed) has no verified ones, and opens each.
pub(crate) static CLAIMED: Mutex<Vec<(PathBuf, Vec<Settled>)>> = Mutex::new(Vec::new());

/// In the auditor, while the command runs (off the path between the command's end and
/// srt's): each settled directory of the shelf is opened, and marked empty if it still has
/// its stamp and holds no entry. A directory the command changes in the meantime has
/// another stamp by the end of the run, and is checked in full then.
pub(crate) fn verify_claimed() {
    let Ok(mut claimed) = CLAIMED.lock() else { return };
    for (parent, dirs) in claimed.iter_mut() {
        let Ok(c) = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(parent.as_os_str())) else { continue };
        let Ok(shelf) = open_dir_at(None, &c) else { continue };
        for d in dirs.iter_mut() {
            d.empty = open_dir_at(Some(std::os::fd::AsFd::as_fd(&shelf)), &d.name).is_ok_and(|fd| {
                let fd = std::os::fd::AsFd::as_fd(&fd);
                sys_fstat(fd).is_ok_and(|st| Stamp::of(&st) == d.stamp) && names(fd).is_ok_and(|n| n.is_empty())
            });
        }
    }
}

pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

pub(crate) fn open_dir_at(at: Option<BorrowedFd<'_>>, name: &std::ffi::CStr) -> std::io::Result<OwnedFd> {
    let how = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let base = at.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a live descriptor (or AT_FDCWD) and a NUL-terminated name.
    let fd = unsafe { libc::openat(base, name.as_ptr(), how) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just opened and own.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

pub(crate) fn fstat_at(dir: BorrowedFd<'_>, name: &std::ffi::CStr) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, NUL-terminated name, pointer to a local.
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The names in a directory we hold open (but `.` and `..`).
pub(crate) fn names(dir: BorrowedFd<'_>) -> std::io::Result<Vec<CString>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        // SAFETY: getdents64 writes at most the buffer's length into it.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(out);
        }
        for r in crate::fs::dirents::records(&buf[..n as usize]) {
            let (name, _) = r.map_err(|()| std::io::Error::from_raw_os_error(libc::EIO))?;
            if let Ok(c) = CString::new(name) {
                out.push(c);
            }
        }
    }
}

pub(crate) fn sys_fstat(fd: BorrowedFd<'_>) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, pointer to a local.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}
