//! The preload srt gives the command's dynamically linked programs (`LD_PRELOAD`): it lets
//! the kernel make files where Landlock allows it, without a supervisor round trip.
//!
//! The seccomp filter sends every `open(O_CREAT)` to srt's supervisor, because it cannot
//! see the path: in a directory that existed at launch the supervisor makes the file
//! itself (so that the journal hears of it). Below a directory made for the run, it only
//! answers "let the kernel do it". The filter lets an open through untrapped when it
//! carries [`NATIVE`], a bit the kernel ignores in `open`/`openat` flags; so this first
//! asks with the bit, and on `EACCES` or `EROFS` asks again without it, and the supervisor
//! decides as before (Landlock grants making files only below the run's own directories;
//! in namespace mode a read-only mount may answer before Landlock does).
//!
//! A command that sets the bit itself gains nothing: the kernel then judges under the
//! command's Landlock domain, which never allows more than the policy.
//!
//! `mkdir` is asked the same way: below the directories srt hands out from its pool
//! Landlock lets the kernel make directories too (the check after the run walks those
//! trees whole). It also saves round trips on the metadata of directories the program
//! made itself ([`metadata`]): `tar x` sets the owner and times of every directory it
//! makes by path, and in landlock mode the filter sends each such call to the supervisor.
//!
//! Built by `runtime/build.rs` on its own (no_std, no libc link: `syscall` and
//! `__errno_location` are found in the program's C library, glibc or musl), embedded in
//! srt, and written once into srt's state directory.
#![no_std]

mod metadata;

use core::ffi::{c_char, c_int, c_long, c_uint};

#[cfg(target_arch = "x86_64")]
const SYS_OPENAT: c_long = 257;
#[cfg(target_arch = "aarch64")]
const SYS_OPENAT: c_long = 56;

const AT_FDCWD: c_int = -100;
const O_WRONLY: c_int = 0o1;
const O_CREAT: c_int = 0o100;
const O_TRUNC: c_int = 0o1000;
/// `__O_TMPFILE`: such opens stay with the supervisor.
const TMPFILE: c_int = 0o20000000;
const EACCES: c_int = 13;
/// Namespace mode: a read-only mount answers before Landlock does.
const EROFS: c_int = 30;
/// The flag the filter lets through (srt's `seccomp::rules::NATIVE_CREATE`).
const NATIVE: c_int = 1 << 30;

extern "C" {
    fn syscall(n: c_long, ...) -> c_long;
    fn __errno_location() -> *mut c_int;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // nothing here can panic (no indexing, no arithmetic that overflows); required by no_std
    loop {}
}

/// `openat` with the native bit first where a file may be made, then without it.
unsafe fn open_at(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    let call = |flags: c_int| {
        // SAFETY: the raw openat syscall with the caller's own arguments, as libc would make it.
        unsafe { syscall(SYS_OPENAT, dirfd as c_long, path, flags as c_long, mode as c_long) as c_int }
    };
    if flags & O_CREAT == 0 || flags & TMPFILE != 0 {
        return call(flags);
    }
    // SAFETY: the calling thread's errno, which the C library keeps valid.
    let errno = unsafe { __errno_location() };
    // SAFETY: as above.
    let saved = unsafe { *errno };
    let fd = call(flags | NATIVE);
    // SAFETY: as above.
    let refused = unsafe { *errno };
    if fd >= 0 || (refused != EACCES && refused != EROFS) {
        return fd;
    }
    // SAFETY: as above; a retry that succeeds leaves errno as the caller had it.
    unsafe { *errno = saved };
    call(flags)
}

/// AddressSanitizer's dynamic runtime (gcc's default) aborts a program when a preloaded
/// library comes before it. srt sets `verify_asan_link_order=0` in the command's
/// `ASAN_OPTIONS`, but a command that sets the variable itself (a test runner, a Makefile,
/// `ASAN_OPTIONS=detect_leaks=0 ./t`) replaces srt's value; these defaults stay under
/// whatever it names (an explicit `verify_asan_link_order=1` still wins). The runtime looks
/// this weak symbol up in the global scope, where a preloaded library comes before it; a
/// program that defines its own keeps it, and a static runtime (clang's default) makes no
/// such check.
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const c_char {
    b"verify_asan_link_order=0\0".as_ptr().cast()
}

// The C declarations are variadic (`open(const char *, int, ...)`). On x86_64 and aarch64
// Linux a variadic integer argument travels in the same register as a named one, so the
// mode is read where the caller put it; without O_CREAT it is never used.

/// # Safety
/// As C's `openat`.
#[no_mangle]
pub unsafe extern "C" fn openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(dirfd, path, flags, mode) }
}

/// # Safety
/// As C's `openat64`.
#[no_mangle]
pub unsafe extern "C" fn openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(dirfd, path, flags, mode) }
}

/// # Safety
/// As C's `open`.
#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(AT_FDCWD, path, flags, mode) }
}

/// # Safety
/// As C's `open64`.
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(AT_FDCWD, path, flags, mode) }
}

/// # Safety
/// As C's `creat`.
#[no_mangle]
pub unsafe extern "C" fn creat(path: *const c_char, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode) }
}

/// # Safety
/// As C's `creat64`.
#[no_mangle]
pub unsafe extern "C" fn creat64(path: *const c_char, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode) }
}

/// # Safety
/// As C's `mkdir`.
#[no_mangle]
pub unsafe extern "C" fn mkdir(path: *const c_char, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::mkdir_at(AT_FDCWD, path, mode) }
}

/// # Safety
/// As C's `mkdirat`.
#[no_mangle]
pub unsafe extern "C" fn mkdirat(dirfd: c_int, path: *const c_char, mode: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::mkdir_at(dirfd, path, mode) }
}

/// # Safety
/// As C's `chown`.
#[no_mangle]
pub unsafe extern "C" fn chown(path: *const c_char, uid: c_uint, gid: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::chown_at(AT_FDCWD, path, uid, gid, 0) }
}

/// # Safety
/// As C's `lchown`.
#[no_mangle]
pub unsafe extern "C" fn lchown(path: *const c_char, uid: c_uint, gid: c_uint) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::chown_at(AT_FDCWD, path, uid, gid, metadata::AT_SYMLINK_NOFOLLOW) }
}

/// # Safety
/// As C's `fchownat`.
#[no_mangle]
pub unsafe extern "C" fn fchownat(dirfd: c_int, path: *const c_char, uid: c_uint, gid: c_uint, flags: c_int) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::chown_at(dirfd, path, uid, gid, flags) }
}

/// # Safety
/// As C's `utimensat`.
#[no_mangle]
pub unsafe extern "C" fn utimensat(dirfd: c_int, path: *const c_char, times: *const u8, flags: c_int) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { metadata::utimens_at(dirfd, path, times, flags) }
}
