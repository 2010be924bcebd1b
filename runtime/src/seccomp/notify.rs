//! The seccomp user-notification ABI (include/uapi/linux/seccomp.h), declared here because
//! the libc crate does not carry the ioctls.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub instruction_pointer: u64,
    pub args: [u64; 6],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Notif {
    pub id: u64,
    pub pid: u32,
    pub flags: u32,
    pub data: SeccompData,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct NotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct NotifAddfd {
    id: u64,
    flags: u32,
    srcfd: u32,
    newfd: u32,
    newfd_flags: u32,
}

const fn iowr(nr: u64, size: usize) -> u64 {
    (3 << 30) | ((size as u64) << 16) | (0x21 << 8) | nr
}
const fn iow(nr: u64, size: usize) -> u64 {
    (1 << 30) | ((size as u64) << 16) | (0x21 << 8) | nr
}
const NOTIF_RECV: u64 = iowr(0, std::mem::size_of::<Notif>());
const NOTIF_SEND: u64 = iowr(1, std::mem::size_of::<NotifResp>());
const NOTIF_ID_VALID: u64 = iow(2, std::mem::size_of::<u64>());
const NOTIF_ADDFD: u64 = iow(3, std::mem::size_of::<NotifAddfd>());
const NOTIF_SET_FLAGS: u64 = iow(4, std::mem::size_of::<u64>());
const USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const USER_NOTIF_FD_SYNC_WAKE_UP: libc::c_ulong = 1;
const ADDFD_FLAG_SETFD: u32 = 1;
const ADDFD_FLAG_SEND: u32 = 1 << 1;

fn ioctl<T>(fd: BorrowedFd<'_>, req: u64, arg: &mut T) -> io::Result<libc::c_int> {
    // SAFETY: `arg` is a live, exclusively borrowed value of the type the request expects.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg as *mut T) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Receives the next notification. `ENOENT` means its target went away first.
pub fn recv(fd: BorrowedFd<'_>) -> io::Result<Notif> {
    let mut n = Notif::default();
    ioctl(fd, NOTIF_RECV, &mut n)?;
    Ok(n)
}

/// Asks the kernel (>= 6.6) to wake the command on the answering CPU. Returns whether it
/// took the flag; older kernels refuse it and only lose speed.
pub fn set_sync_wakeup(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: this ioctl takes its flags by value, not through a pointer.
    unsafe { libc::ioctl(fd.as_raw_fd(), NOTIF_SET_FLAGS as _, USER_NOTIF_FD_SYNC_WAKE_UP) == 0 }
}

/// Whether the notification's target is still blocked in that syscall, i.e. the pid we
/// resolved `/proc` paths through still belongs to it.
pub fn id_valid(fd: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    ioctl(fd, NOTIF_ID_VALID, &mut id).is_ok()
}

/// The kernel runs the syscall as issued. Only for requests the supervisor grants
/// nothing to: the command's own Landlock domain still judges it.
pub fn send_continue(fd: BorrowedFd<'_>, id: u64) -> io::Result<()> {
    let mut r = NotifResp { id, flags: USER_NOTIF_FLAG_CONTINUE, ..Default::default() };
    ioctl(fd, NOTIF_SEND, &mut r).map(drop)
}

/// The syscall returns `val`, or fails with `errno` when it is non-zero.
pub fn send_result(fd: BorrowedFd<'_>, id: u64, val: i64, errno: i32) -> io::Result<()> {
    let mut r = NotifResp { id, val, error: -errno, flags: 0 };
    ioctl(fd, NOTIF_SEND, &mut r).map(drop)
}

/// Installs `src` in the target as its syscall's result (atomically, so the target
/// cannot observe the fd before the syscall returns it).
pub fn send_fd(fd: BorrowedFd<'_>, id: u64, src: BorrowedFd<'_>, cloexec: bool) -> io::Result<()> {
    let mut a = NotifAddfd {
        id,
        flags: ADDFD_FLAG_SEND,
        srcfd: src.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    ioctl(fd, NOTIF_ADDFD, &mut a).map(drop)
}

/// Installs `src` in the target at descriptor number `at`, replacing what is there (Linux
/// >= 5.9), without answering the syscall: the caller sends the result it wants.
pub fn install_fd_at(fd: BorrowedFd<'_>, id: u64, src: BorrowedFd<'_>, at: i32, cloexec: bool) -> io::Result<()> {
    let mut a = NotifAddfd {
        id,
        flags: ADDFD_FLAG_SETFD,
        srcfd: src.as_raw_fd() as u32,
        newfd: at as u32,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    ioctl(fd, NOTIF_ADDFD, &mut a).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes_match_the_kernel_headers() {
        assert_eq!(std::mem::size_of::<Notif>(), 80);
        assert_eq!(std::mem::size_of::<NotifResp>(), 24);
        assert_eq!(std::mem::size_of::<NotifAddfd>(), 24);
        assert_eq!(NOTIF_RECV, 0xC050_2100);
        assert_eq!(NOTIF_SEND, 0xC018_2101);
        assert_eq!(NOTIF_ADDFD, 0x4018_2103);
    }
}
