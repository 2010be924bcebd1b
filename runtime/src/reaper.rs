//! Making sure nothing the command started outlives `srt`. `srt` is a child subreaper, so
//! every orphaned descendant is re-parented to it; after the command exits we kill our
//! children layer by layer (a killed process's children come to us next) until none is left.

use std::time::{Duration, Instant};

pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Our direct children. srt is single-threaded while it reaps, so its own task's list is all.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id();
    std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
        .map(|s| s.split_whitespace().filter_map(|p| p.parse().ok()).collect())
        .unwrap_or_default()
}

/// Reaps whatever has exited without blocking.
pub fn reap_exited() {
    loop {
        let mut status = 0;
        // SAFETY: plain waitpid writing into a local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

/// SIGKILLs every remaining descendant and reaps it. Returns how many were killed.
///
/// Never gives up: a descendant left alive would run on outside any supervision. Each
/// round signals every child without waiting for any one of them, so processes that keep
/// forking and exiting to change their pid (each hop is re-parented to us) are outpaced:
/// a kill takes microseconds, a fork and exit far longer.
pub fn kill_all_descendants() -> usize {
    let started = Instant::now();
    let mut warned = Duration::ZERO;
    let mut killed = 0;
    let mut quiet_rounds = 0;
    loop {
        reap_exited();
        let kids = children();
        if kids.is_empty() {
            // a child may be exiting right now with children of its own still to be
            // re-parented to us: look again before believing it
            quiet_rounds += 1;
            if quiet_rounds >= 3 {
                return killed;
            }
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        quiet_rounds = 0;
        for pid in kids {
            // SAFETY: signalling a child of ours; at worst it is already a zombie.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed += 1;
        }
        let waited = started.elapsed();
        if waited > warned + Duration::from_secs(5) {
            warned = waited;
            crate::warn!("still killing processes the command left behind ({} s)", waited.as_secs());
        }
        std::thread::yield_now();
    }
}
