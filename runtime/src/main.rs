//! Entered as a plain C `main`: std's runtime start-up would first parse /proc/self/maps
//! to place the main thread's stack guard, a fixed cost on every launch that a sandbox
//! launcher run for each agent tool call should not pay. A stack overflow still faults;
//! it just is not reported by name.
#![no_main]

#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    srt_runtime::cli::main()
}
