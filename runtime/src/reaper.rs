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
pub fn kill_all_descendants() -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut killed = 0;
    loop {
        reap_exited();
        let kids = children();
        if kids.is_empty() || Instant::now() > deadline {
            return killed;
        }
        for pid in kids {
            // SAFETY: signalling a child of ours; at worst it is already a zombie.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let mut status = 0;
            // SAFETY: blocking wait for that child, which SIGKILL ends promptly.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            killed += 1;
        }
    }
}
