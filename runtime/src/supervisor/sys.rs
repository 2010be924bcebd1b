//! Thin wrappers over the syscalls the supervisor performs on its own descriptors. Errors are
//! raw errno values: they go straight back to the command as its syscall's result.

use std::ffi::{CStr, CString, OsString};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

pub type Errno = i32;

pub fn last_errno() -> Errno {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

fn owned(fd: libc::c_long) -> Result<OwnedFd, Errno> {
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: a descriptor the kernel just returned to us, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }
}

pub fn cstr(b: &[u8]) -> Result<CString, Errno> {
    CString::new(b).map_err(|_| libc::EINVAL)
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
pub const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
pub const RESOLVE_NO_SYMLINKS: u64 = 0x04;
pub const RESOLVE_BENEATH: u64 = 0x08;
pub const RESOLVE_IN_ROOT: u64 = 0x10;

/// openat2(2). `dir` None means AT_FDCWD.
pub fn openat2(
    dir: Option<BorrowedFd<'_>>,
    path: &CStr,
    flags: i32,
    mode: u64,
    resolve: u64,
) -> Result<OwnedFd, Errno> {
    let how = OpenHow { flags: flags as u32 as u64 | libc::O_CLOEXEC as u64, mode, resolve };
    let dirfd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `how` and `path` are live for the call; the result is owned by `owned`.
    let fd = unsafe {
        libc::syscall(libc::SYS_openat2, dirfd, path.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>())
    };
    owned(fd)
}

/// Opens exactly the entry `name` of `dir`, never through a symlink or out of `dir`.
pub fn open_entry(dir: BorrowedFd<'_>, name: &CStr, flags: i32, mode: u64) -> Result<OwnedFd, Errno> {
    openat2(Some(dir), name, flags, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH)
}

pub fn fstat(fd: BorrowedFd<'_>) -> Result<libc::stat, Errno> {
    // SAFETY: an all-zero stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall writing into `st`.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

pub fn lstat_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<libc::stat, Errno> {
    // SAFETY: an all-zero stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall writing into `st`.
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

/// The contents of the symlink `name` in `dir` (at most `PATH_MAX` bytes, as the kernel's).
pub fn readlink_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: plain syscall; the kernel writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::readlinkat(dir.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let n = result(n as libc::c_long)? as usize;
    buf.truncate(n);
    Ok(buf)
}

pub fn file_type(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

/// Where `fd` really is, as the kernel names it (`/proc/self/fd/N`).
pub fn fd_path(fd: BorrowedFd<'_>) -> Result<PathBuf, Errno> {
    let link = format!("/proc/self/fd/{}\0", fd.as_raw_fd());
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 32];
    // SAFETY: NUL-terminated path and a buffer of the given length.
    let n = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(last_errno());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

/// A path the kernel gave for an fd names a filesystem object only when it is absolute;
/// pipes, sockets and anonymous inodes read `pipe:[123]` and the like.
pub fn is_deleted(p: &std::path::Path) -> bool {
    p.as_os_str().as_encoded_bytes().ends_with(b" (deleted)")
}

/// `/proc/self/fd/N` for one of our descriptors, for calls that only take paths.
pub fn proc_self(fd: BorrowedFd<'_>) -> CString {
    // a decimal number: never contains NUL
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default()
}

/// Whether `fd` lies on a read-only mount (`fstatvfs`'s `ST_RDONLY`); `false` if unknown.
pub fn read_only_mount(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: an all-zero statvfs is a valid out-buffer.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatvfs on a live descriptor into a local.
    unsafe { libc::fstatvfs(fd.as_raw_fd(), &mut st) == 0 && st.f_flag & libc::ST_RDONLY != 0 }
}

pub fn result(r: libc::c_long) -> Result<i64, Errno> {
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(r)
    }
}

pub fn set_nonblocking(fd: BorrowedFd<'_>, on: bool) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        let fl = if on { fl | libc::O_NONBLOCK } else { fl & !libc::O_NONBLOCK };
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl);
    }
}
