//! The run's auditor: a small process between srt and the command (srt → auditor →
//! command), which ends every run, whatever happens to srt.
//!
//! srt forks it before anything of the command starts. It is a child subreaper, so every
//! process the command starts stays below it, and it is the command's parent: it starts
//! the command (landlock mode) or the namespace's init (namespace mode), forwards the
//! signals srt passes on, and when the command has exited it kills every process left,
//! removes the private TMPDIR, runs the check after the run, and exits with the command's
//! status, which srt then exits with.
//!
//! If srt dies (SIGKILL, the OOM killer), the auditor sees its lifeline close (a pipe whose
//! write end only srt holds) and does the same at once. The command cannot reach it: it is
//! outside the command's Landlock domain (no signals, no ptrace, no `/proc/<pid>/mem`),
//! outside its PID namespace in namespace mode, and the supervisor refuses the calls that
//! could lower its limits or priority ([`crate::supervisor`]). It runs in its own process
//! group, so a terminal's ^C reaches srt alone, which passes it on exactly once. It holds
//! the run's journal (the same open file, so the journal stays locked while either lives);
//! if both die, the next srt run finishes the journal ([`crate::check::journal::stale`]).
//!
//! It is forked from single-threaded srt and stays single-threaded; it allocates little
//! after the command starts, and its ending (the kill loop) allocates nothing.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::process::child::{self, ChildSpec, Stage};
use crate::process::namespace::InitSpec;
use crate::process::reaper;

/// Grace period between passing on SIGTERM/SIGINT/SIGHUP and killing the whole tree.
const TERM_GRACE: Duration = Duration::from_secs(5);

/// How the auditor starts the command.
pub enum Start {
    /// Landlock mode: the command itself.
    Direct(ChildSpec),
    /// Namespace mode: the namespace's init (PID 1), which starts the command, and both
    /// ends of the pipe it waits on until its id maps are written.
    Namespaced { init: InitSpec, go_r: OwnedFd, go_w: OwnedFd },
}

/// srt's side of a running auditor.
pub struct Auditor {
    pub pid: libc::pid_t,
    /// The lifeline's write end: closed when srt exits, however it exits.
    _lifeline: OwnedFd,
}

/// Stages the auditor itself reports (before anything of the command ran).
pub fn nothing_started(stage: Stage) -> bool {
    matches!(stage, Stage::Spawn | Stage::Namespaces | Stage::IdMaps)
}

/// Forks the auditor. In srt, returns it. In the auditor, starts the command, waits for
/// it, ends it, calls `finish` (TMPDIR and check) and exits with the command's status;
/// never returns. `setup` is the command's end of the setup socket (failures go there);
/// `close` are srt's descriptors the auditor must not keep; `sigfd` the signalfd for the
/// signals srt blocked.
pub fn fork(
    start: Start,
    setup: RawFd,
    sigfd: RawFd,
    close: &[RawFd],
    finish: &mut dyn FnMut(),
) -> std::io::Result<Auditor> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors owned by nobody else.
    let (life_r, life_w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: srt is single-threaded here (the proxy and the supervisor start later), so
    // the child may allocate; it leaves with _exit and never returns into srt's code.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            drop(life_w);
            for fd in close {
                // SAFETY: closing our copies of srt's descriptors.
                unsafe { libc::close(*fd) };
            }
            run(start, setup, sigfd, life_r, finish)
        }
        pid => {
            drop(life_r);
            // the auditor's copies of everything in `start` are its own; ours go here
            drop(start);
            Ok(Auditor { pid, _lifeline: life_w })
        }
    }
}

/// The auditor's whole life.
fn run(start: Start, setup: RawFd, sigfd: RawFd, lifeline: OwnedFd, finish: &mut dyn FnMut()) -> ! {
    // SAFETY: plain syscalls on our own process.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_NAME, c"srt-auditor".as_ptr() as libc::c_ulong, 0, 0, 0);
    }
    if let Err(e) = reaper::become_subreaper() {
        child::report_failure(setup, Stage::Spawn, e.raw_os_error().unwrap_or(libc::EIO));
    }
    let (cmd, target) = match start {
        Start::Direct(mut spec) => {
            // SAFETY: getpid cannot fail.
            spec.parent_pid = unsafe { libc::getpid() };
            match child::spawn(spec) {
                // the command leads its own process group (setsid)
                Ok(pid) => (pid, -pid),
                Err(e) => child::report_failure(setup, Stage::Spawn, e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        Start::Namespaced { init, go_r, go_w } => match start_namespaced(init, go_r, go_w) {
            // the init passes signals on to the command's process group
            Ok(pid) => (pid, pid),
            Err((stage, errno)) => child::report_failure(setup, stage, errno),
        },
    };
    // Opened while the command starts rather than before (0.1 ms of /proc on the way to
    // its exec): nothing it does can lower this process's limits first, as the supervisor
    // refuses a prlimit on any pid but the command's own, and namespace mode's cannot name
    // this one.
    let children = reaper::Children::open();
    // SAFETY: closing our copy: srt sees the end of the setup socket once the command's
    // own copies are gone (at exec, or with the namespace's init).
    unsafe { libc::close(setup) };
    // Whatever the auditor does for the command (the check after the run renames in the
    // user's trees) it does with no more privilege than the command has.
    let _ = child::drop_own_capabilities();
    // while the command runs, not after it: which shelf directories the check may put back
    // unopened
    crate::fs::pool_dirs::verify_claimed();
    let code = wait(cmd, target, sigfd, &lifeline);
    reaper::kill_all_descendants(&children, false);
    finish();
    // SAFETY: leaving without running srt's destructors (srt owns those objects).
    unsafe { libc::_exit(code) }
}

/// Starts the namespaced init and maps our ids into its user namespace.
fn start_namespaced(spec: InitSpec, go_r: OwnedFd, go: OwnedFd) -> Result<libc::pid_t, (Stage, i32)> {
    let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    let pid = crate::process::namespace::spawn(spec).map_err(|e| (Stage::Namespaces, errno(&e)))?;
    drop(go_r);
    if let Err(e) = crate::process::namespace::write_id_maps(pid) {
        // SAFETY: killing and reaping the init we just started; it waits on `go`.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        return Err((Stage::IdMaps, errno(&e)));
    }
    // SAFETY: one byte to a pipe we own.
    unsafe { libc::write(go.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    Ok(pid)
}

/// Waits for the command (or the init) to exit, passing signals on; returns its exit code
/// as srt reports it. When srt is gone, kills the command and returns at once.
fn wait(cmd: libc::pid_t, target: libc::pid_t, sigfd: RawFd, lifeline: &OwnedFd) -> i32 {
    let mut kill_at: Option<Instant> = None;
    loop {
        let mut fds = [
            libc::pollfd { fd: sigfd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: lifeline.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let timeout = kill_at.map_or(-1, |t| t.saturating_duration_since(Instant::now()).as_millis() as i32);
        // SAFETY: `fds` is a live array of two pollfd.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            // SAFETY: signalling the command (its group, or its init: which ends its namespace).
            unsafe { libc::kill(target, libc::SIGKILL) };
            kill_at = None;
        }
        if fds[1].revents != 0 {
            // srt is gone (its end closed): nobody is left to pass the command's status to
            // SAFETY: as above.
            unsafe { libc::kill(target, libc::SIGKILL) };
            return 128 + libc::SIGKILL;
        }
        if fds[0].revents & libc::POLLIN == 0 {
            continue;
        }
        for sig in read_signals(sigfd) {
            if sig == libc::SIGCHLD {
                if let Some(code) = reap(cmd) {
                    return code;
                }
            } else {
                // SAFETY: passing the signal on to the command.
                unsafe { libc::kill(target, sig) };
                if sig != libc::SIGQUIT {
                    // a second request means now; the first gets a grace period
                    kill_at = Some(match kill_at {
                        None => Instant::now() + TERM_GRACE,
                        Some(_) => Instant::now(),
                    });
                }
            }
        }
    }
}

/// Reaps exited children (orphans too); the command's exit code once it has exited.
fn reap(cmd: libc::pid_t) -> Option<i32> {
    let mut code = None;
    loop {
        let mut status = 0;
        // SAFETY: plain waitpid writing into a local.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r <= 0 {
            return code;
        }
        if r == cmd {
            code = Some(exit_code(status));
        }
    }
}

/// A wait status as srt reports it: the exit code, or 128 + the signal.
pub fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// The signals waiting on a signalfd.
pub fn read_signals(fd: RawFd) -> Vec<libc::c_int> {
    let mut out = Vec::new();
    loop {
        // SAFETY: zeroed siginfo is a valid buffer for read.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: reading one siginfo into a local of that size.
        let n = unsafe { libc::read(fd, (&mut info as *mut libc::signalfd_siginfo).cast(), size) };
        if n as usize != size {
            return out;
        }
        out.push(info.ssi_signo as libc::c_int);
    }
}
