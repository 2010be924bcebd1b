//! Entered as a plain C `main`: std's runtime start-up would first parse /proc/self/maps
//! to place the main thread's stack guard, a fixed cost on every launch that a sandbox
//! launcher run for each agent tool call should not pay. A stack overflow still faults;
//! it just is not reported by name.
#![no_main]

use std::ffi::{c_char, c_int, CStr, OsString};
use std::os::unix::ffi::OsStringExt;

#[global_allocator]
static ALLOCATOR: srt_runtime::arena::Arena = srt_runtime::arena::Arena::new();

/// # Safety
/// Called by the C runtime only, with C's `main` contract: `argv` holds `argc` pointers to
/// NUL-terminated strings that live as long as the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // before any other frame: a small RLIMIT_STACK meant for the command (with the kernel's
    // random offset of the stack's top taking up to 8 KiB of it) must not stop srt itself
    srt_runtime::limits::take_own();
    // before anything opens a file: a closed 0, 1 or 2 would be the number of the first one
    // srt keeps, and its messages would go there (std's start-up does this; srt skips it)
    if let Err(e) = srt_runtime::stdio::fill_closed() {
        srt_runtime::stdio::refuse(&e);
        return 1;
    }
    // The arguments are taken from here rather than `std::env::args_os()`, which is empty
    // without std's start-up on musl (glibc hands them to std separately; musl does not).
    let args = (0..usize::try_from(argc).unwrap_or(0))
        // SAFETY: the contract above: argv holds argc pointers.
        .map(|i| unsafe { *argv.add(i) })
        .take_while(|p| !p.is_null())
        // SAFETY: as above, a NUL-terminated string.
        .map(|p| OsString::from_vec(unsafe { CStr::from_ptr(p) }.to_bytes().to_vec()))
        .collect();
    srt_runtime::cli::main(args)
}
