//! Making sure nothing the command started outlives the run. The process that waits for
//! the command (srt's auditor, [`crate::process::auditor`]) is a child subreaper, so every orphaned
//! descendant is re-parented to it; once the command is done it kills its children round
//! by round (a killed process's children come to it next) until the kernel says none is
//! left.
//!
//! Two rules keep this honest. The end is decided by `waitpid` alone: `ECHILD` means no
//! child at all, alive or zombie, and a process's own children are re-parented before it
//! becomes reapable, so nothing can be in flight. And what cannot be read is "unknown",
//! never "none": a list of children that cannot be read is read again, never taken as
//! empty. The list is read through descriptors opened before the command started, into a
//! buffer on the stack, so neither a lowered `RLIMIT_NOFILE` nor a lowered `RLIMIT_AS`
//! can make the reading fail when it matters.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Where this process's children are listed: `/proc/self/task/<tid>/children` of each of
/// its threads (an orphan is re-parented to any live thread of the subreaper), opened
/// once. Without those files (a kernel built without `CONFIG_PROC_CHILDREN`), `/proc` is
/// scanned for processes whose parent is this one.
pub struct Children {
    lists: Vec<OwnedFd>,
}

impl Children {
    /// Opens the lists of every current thread. A thread started later is not covered:
    /// the caller is single-threaded, or calls this again ([`kill_all_descendants`] with
    /// `rescan_threads`).
    pub fn open() -> Children {
        let mut lists = Vec::new();
        let tasks = std::fs::read_dir("/proc/self/task").map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
        for t in tasks {
            let path = t.path().join("children");
            let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())) else {
                continue;
            };
            // SAFETY: NUL-terminated path; the descriptor is owned below.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd >= 0 {
                // SAFETY: a fresh descriptor nobody else owns.
                lists.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
        Children { lists }
    }

    /// Calls `f` with each child's pid. `Err` when a list could not be read: the caller
    /// must not conclude that there are no children.
    fn each(&self, f: &mut dyn FnMut(libc::pid_t)) -> Result<usize, ()> {
        if self.lists.is_empty() {
            return scan_proc(f);
        }
        let mut seen = 0;
        for fd in &self.lists {
            seen += read_pids(fd.as_raw_fd(), f)?;
        }
        Ok(seen)
    }
}

/// Reads one `children` list from its start (a seq file: each read from offset 0 is a
/// fresh listing), in chunks, without allocating.
fn read_pids(fd: libc::c_int, f: &mut dyn FnMut(libc::pid_t)) -> Result<usize, ()> {
    let mut buf = [0u8; 1024];
    let mut off: libc::off_t = 0;
    let mut pid: Option<libc::pid_t> = None;
    let mut seen = 0;
    loop {
        // SAFETY: reading into a stack buffer of the given length.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(());
        }
        if n == 0 {
            break;
        }
        off += n as libc::off_t;
        for &b in &buf[..n as usize] {
            if b.is_ascii_digit() {
                pid = Some(pid.unwrap_or(0).saturating_mul(10).saturating_add(libc::pid_t::from(b - b'0')));
            } else if let Some(p) = pid.take() {
                f(p);
                seen += 1;
            }
        }
    }
    if let Some(p) = pid {
        f(p);
        seen += 1;
    }
    Ok(seen)
}

/// The fallback: every process in `/proc` whose parent (field 4 of `stat`) is this one.
fn scan_proc(f: &mut dyn FnMut(libc::pid_t)) -> Result<usize, ()> {
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    let dir = std::fs::read_dir("/proc").map_err(|_| ())?;
    let mut seen = 0;
    for e in dir {
        let e = e.map_err(|_| ())?;
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        let parent = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().nth(1)?.parse::<libc::pid_t>().ok());
        if parent == Some(me) {
            f(pid);
            seen += 1;
        }
    }
    Ok(seen)
}

/// What one non-blocking round of reaping found.
enum Reaped {
    /// No child at all: the kernel's word.
    None,
    /// Children remain and none of them has exited.
    Alive,
}

/// Reaps whatever has exited, without blocking; `on_exit` sees each pid and status.
fn reap_exited(on_exit: &mut dyn FnMut(libc::pid_t, libc::c_int)) -> Reaped {
    loop {
        let mut status = 0;
        // SAFETY: plain waitpid writing into a local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            0 => return Reaped::Alive,
            p if p > 0 => on_exit(p, status),
            _ => match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::ECHILD) => return Reaped::None,
                Some(libc::EINTR) => {}
                // not a state of our children: look at them again rather than conclude
                _ => return Reaped::Alive,
            },
        }
    }
}

/// Reaps exited children without blocking; their statuses are not needed.
pub fn reap_exited_quietly() {
    let _ = reap_exited(&mut |_, _| {});
}

/// SIGKILLs every remaining descendant and reaps it; returns how many kills were sent.
/// `rescan_threads`: the caller has threads that may have started since `children` was
/// opened (srt's main process, with its supervisor and proxy threads).
///
/// Never gives up: a descendant left alive would run on outside any supervision. Each
/// round signals every child without waiting for any one of them, so processes that keep
/// forking and exiting to change their pid (each hop is re-parented to us) are outpaced:
/// a kill takes microseconds, a fork and exit far longer. Between rounds it waits for a
/// child to exit, not for a clock.
pub fn kill_all_descendants(children: &Children, rescan_threads: bool) -> usize {
    let started = Instant::now();
    let mut warned = Duration::ZERO;
    let mut killed = 0;
    let rescanned;
    let children = if rescan_threads {
        rescanned = Children::open();
        &rescanned
    } else {
        children
    };
    loop {
        if let Reaped::None = reap_exited(&mut |_, _| {}) {
            return killed;
        }
        let listed = children.each(&mut |pid| {
            // SAFETY: signalling a child of ours; at worst it is already a zombie.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed += 1;
        });
        match listed {
            Ok(n) if n > 0 => {
                // a child we just killed will exit: wait for that, then look again
                let mut status = 0;
                // SAFETY: plain waitpid writing into a local. It returns as soon as any
                // child exits; signals are blocked, so it is not interrupted.
                unsafe { libc::waitpid(-1, &mut status, 0) };
            }
            // Children exist (waitpid says so) but none could be named: unknown, not none.
            // Look again shortly; the kernel lists a re-parented child at once, so this
            // only lasts while the lists themselves cannot be read.
            _ => std::thread::sleep(Duration::from_micros(200)),
        }
        let waited = started.elapsed();
        if waited > warned + Duration::from_secs(5) {
            warned = waited;
            crate::warn!("still killing processes the command left behind ({} s)", waited.as_secs());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_parsed_across_chunk_boundaries() {
        // a memfd stands in for the children file: a long list crosses the 1 KiB chunks
        let list: String = (1000..1400).map(|p| format!("{p} ")).collect();
        // SAFETY: memfd_create with a NUL-terminated name; the descriptor is owned below.
        let fd = unsafe { libc::memfd_create(c"children".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: fresh descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        std::io::Write::write_all(&mut std::fs::File::from(fd.try_clone().unwrap()), list.as_bytes()).unwrap();
        let mut got = Vec::new();
        assert_eq!(read_pids(fd.as_raw_fd(), &mut |p| got.push(p)), Ok(400));
        assert_eq!(got, (1000..1400).collect::<Vec<_>>());
    }

    #[test]
    fn an_unreadable_list_is_an_error_not_an_empty_list() {
        // SAFETY: a pipe's write end cannot be read from.
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: fresh descriptors.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        assert_eq!(read_pids(w.as_raw_fd(), &mut |_| {}), Err(()));
        drop(r);
    }
}
