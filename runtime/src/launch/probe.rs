//! Which network mode a run would really get, found by trying it (`srt explain`).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

use settings_schema::Settings;

use super::options::{NetworkMode, Options};
use super::run_in;
use crate::error::LaunchError;

/// The mode a run with `mode` will really use, found by doing what a run does: setting up
/// namespace mode for `true` (user, network, mount, PID and IPC namespaces, the mount view,
/// /proc, devpts, loopback). A container may allow the namespaces and still refuse a step
/// (podman: mounting a private /proc), and a run then falls back to landlock mode.
/// For landlock mode, the reason namespace mode is unavailable comes along. Runs the probe
/// in a child process, so this process keeps its capabilities and signal mask.
pub fn probe_mode(mode: NetworkMode, settings: &Settings, settings_files: &[PathBuf]) -> (NetworkMode, Option<String>) {
    if mode != NetworkMode::Auto {
        return (mode, None);
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return (NetworkMode::Landlock, Some(format!("cannot probe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: fresh descriptors owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: `srt explain` is single-threaded here; the child runs the ordinary launch
    // code for `true` (allocation is fine after fork in a single-threaded process) and
    // leaves with _exit, never returning into the parent's code.
    match unsafe { libc::fork() } {
        0 => {
            drop(r);
            let opts = Options {
                settings: settings.clone(),
                argv: vec![OsString::from("true")],
                allow_weaker: true,
                debug: false,
                mode: NetworkMode::Namespace,
                resolve: Vec::new(),
                settings_files: settings_files.to_vec(),
                control_fd: None,
                network_hints: false,
                // the probe runs `true`: no file to make
                preload: false,
            };
            let reason = match run_in(&opts, NetworkMode::Namespace) {
                Ok(_) => String::new(),
                Err(LaunchError::Namespaces(e)) => e.to_string(),
                // not about namespaces: a run would stop with the same error in either mode
                Err(_) => String::new(),
            };
            // SAFETY: writing a buffer we own to our end of the pipe, then leaving.
            unsafe {
                libc::write(w.as_raw_fd(), reason.as_ptr().cast(), reason.len());
                libc::_exit(0)
            }
        }
        -1 => (NetworkMode::Landlock, Some(format!("cannot probe: {}", std::io::Error::last_os_error()))),
        pid => {
            drop(w);
            let mut reason = String::new();
            let _ = std::io::Read::read_to_string(&mut std::fs::File::from(r), &mut reason);
            let mut status = 0;
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            if reason.is_empty() {
                (NetworkMode::Namespace, None)
            } else {
                (NetworkMode::Landlock, Some(reason))
            }
        }
    }
}
