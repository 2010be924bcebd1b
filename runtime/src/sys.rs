//! System calls that not every libc srt links against wraps: the musl that Rust's
//! `*-linux-musl` targets bundle has no `renameat2`.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `renameat2(.., RENAME_NOREPLACE)`: moves `from` (in `from_dir`) to `to` (in `to_dir`)
/// unless `to` exists. Returns the call's result (0, or -1 with `errno` set).
pub fn rename_noreplace(from_dir: BorrowedFd<'_>, from: &CStr, to_dir: BorrowedFd<'_>, to: &CStr) -> libc::c_int {
    // SAFETY: live descriptors and NUL-terminated names, read by the kernel for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    r as libc::c_int
}
