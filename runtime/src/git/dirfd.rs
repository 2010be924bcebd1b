//! Walking what the command made by directory descriptor: every lookup relative to an open
//! directory, symlinks never followed, a directory the command locked opened up by srt (its
//! owner) and given back.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

pub(crate) fn open_dir(at: BorrowedFd<'_>, name: &CStr) -> nix::Result<OwnedFd> {
    let how = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    nix::fcntl::openat(at, name, how, Mode::empty())
}

/// lstat: `Ok(None)` only when there is nothing by that name.
pub(crate) fn lstat_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<Option<libc::stat>, Errno> {
    // SAFETY: an all-zero stat is a valid value that fstatat overwrites.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, NUL-terminated name, pointer to a local.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    match r {
        0 => Ok(Some(st)),
        _ if Errno::last() == Errno::ENOENT => Ok(None),
        _ => Err(Errno::last()),
    }
}

pub(crate) fn fstat(fd: BorrowedFd<'_>) -> Option<libc::stat> {
    // SAFETY: an all-zero stat is valid; fstat overwrites it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, pointer to a local.
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some(st)
}

pub(crate) fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

pub(crate) fn mine(st: &libc::stat) -> bool {
    // SAFETY: geteuid cannot fail.
    st.st_uid == unsafe { libc::geteuid() }
}

/// Gives the owner of the directory `fd` full rights if it lacks some and srt is the owner;
/// returns the mode to give back.
pub(crate) fn open_up(fd: BorrowedFd<'_>) -> Option<libc::mode_t> {
    let st = fstat(fd)?;
    let mode = st.st_mode & 0o7777;
    if mode & 0o700 == 0o700 || !mine(&st) {
        return None;
    }
    // SAFETY: plain fchmod on a live descriptor.
    (unsafe { libc::fchmod(fd.as_raw_fd(), mode | 0o700) } == 0).then_some(mode)
}

pub(crate) fn give_back(fd: BorrowedFd<'_>, mode: Option<libc::mode_t>) {
    if let Some(m) = mode {
        // SAFETY: plain fchmod on a live descriptor.
        unsafe { libc::fchmod(fd.as_raw_fd(), m) };
    }
}

pub(crate) fn cname(s: &str) -> CString {
    // the names used here are literals without NUL bytes
    CString::new(s).unwrap_or_default()
}

pub(crate) fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// Filesystems that hold no files a command could write.
pub(crate) fn pseudo_fs(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: an all-zero statfs is valid; fstatfs overwrites it.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, pointer to a local.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut sf) } != 0 {
        return false;
    }
    // f_type's type and the constants' differ between architectures: compare as i64
    #[allow(clippy::unnecessary_cast)]
    let pseudo = [
        libc::PROC_SUPER_MAGIC as i64,
        libc::SYSFS_MAGIC as i64,
        libc::CGROUP2_SUPER_MAGIC as i64,
        libc::CGROUP_SUPER_MAGIC as i64,
        libc::DEVPTS_SUPER_MAGIC as i64,
    ];
    #[allow(clippy::unnecessary_cast)]
    let t = sf.f_type as i64;
    pseudo.contains(&t)
}

pub(crate) fn libc_cwd() -> BorrowedFd<'static> {
    // SAFETY: AT_FDCWD is a constant every *at call accepts; it is never closed.
    unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) }
}

/// A file's first bytes, at most what git reads of it.
pub(crate) fn read_capped(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let how = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let fd = nix::fcntl::openat(dir, name, how, Mode::empty())?;
    let mut text = Vec::new();
    std::fs::File::from(fd).take(crate::git::config::MAX_LEN as u64 + 1).read_to_end(&mut text)?;
    Ok(text)
}
