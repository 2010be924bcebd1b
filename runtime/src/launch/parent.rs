//! srt's side of a run once its auditor is started ([`crate::process::auditor`]): the setup socket
//! (the seccomp listener, the namespace's sockets, setup failures), the signals srt passes
//! on, and the end of the run when the auditor could not end it itself. Also what a run
//! does first: finish earlier runs that died before their check.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::error::LaunchError;
use crate::fs::tmpdir::TmpDir;
use crate::launch::finish::check_run;
use crate::process::child::Stage;
use crate::process::reaper;
use crate::supervisor::Supervisor;

/// A run whose auditor is started: what srt needs to end it when the auditor cannot.
pub(crate) struct Run {
    pub auditor: crate::process::auditor::Auditor,
    pub tmp: TmpDir,
    pub journal: Option<std::sync::Arc<crate::check::journal::Journal>>,
}

impl Run {
    /// The auditor exited with `status`: it ended the run itself, unless it was killed (then
    /// srt does: kills what is left, removes the TMPDIR, runs the check) or reported that
    /// nothing was started (then there is nothing to check).
    pub fn end(self, status: libc::c_int, setup_error: Option<(Stage, i32)>) -> Result<i32, LaunchError> {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            crate::warn!(
                "srt's auditor (pid {}) was killed by signal {sig}; srt ends the command and checks the run itself",
                self.auditor.pid
            );
            self.clean_up(status, setup_error);
            return match setup_error {
                Some((stage, errno)) => Err(child_error(stage, errno)),
                None => Ok(128 + sig),
            };
        }
        self.clean_up(status, setup_error);
        match setup_error {
            Some((stage, errno)) => Err(child_error(stage, errno)),
            None => Ok(crate::process::auditor::exit_code(status)),
        }
    }

    /// Ends a run that failed before the command was released: `kill` the auditor (srt
    /// gave up on it) or wait for it to end the run by itself; returns `e` either way.
    /// `reported`: the failure the setup socket carried, if any.
    pub fn end_early(self, kill: bool, e: LaunchError, reported: Option<(Stage, i32)>) -> LaunchError {
        if kill {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(self.auditor.pid, libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(self.auditor.pid, &mut status, 0) };
        self.clean_up(status, reported);
        e
    }

    /// What is left to do once the auditor exited with `status`: nothing when it ended the
    /// run; the whole end (kill what is left, TMPDIR, check) when it was killed before it
    /// could; only dropping the journal and the TMPDIR when it started nothing.
    fn clean_up(mut self, status: libc::c_int, reported: Option<(Stage, i32)>) {
        if libc::WIFSIGNALED(status) {
            reaper::kill_all_descendants(&reaper::Children::open(), true);
            finish_run(&self.tmp, self.journal.take(), false);
            std::mem::forget(self.tmp);
        } else if reported.is_some_and(|(stage, _)| crate::process::auditor::nothing_started(stage)) {
            if let Some(j) = self.journal.take() {
                let _ = j.finish();
            }
            // the TMPDIR goes with `self`
        } else {
            std::mem::forget(self.tmp); // the auditor removed it
        }
    }
}

fn child_error(stage: Stage, errno: i32) -> LaunchError {
    LaunchError::Child { stage: stage.describe(), errno: nix::errno::Errno::from_raw(errno) }
}

/// The end of a run, once every process of the command is gone (in the auditor, or in srt
/// when the auditor died): the TMPDIR goes first (if something of it stays, the check
/// looks at it too), then the check after the run.
/// `all_gone`: every process of the command is known to have ended (the auditor's own end),
/// so that the emptied TMPDIR may be kept for a later run.
pub(crate) fn finish_run(
    tmp: &TmpDir,
    journal: Option<std::sync::Arc<crate::check::journal::Journal>>,
    all_gone: bool,
) {
    let removed = if all_gone { tmp.remove_or_shelve() } else { tmp.remove() };
    if let Err(e) = removed {
        crate::warn!("could not remove {}: {e}", tmp.0.display());
    }
    if let Some(j) = journal {
        check_run(&j, true);
    }
}

pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), LaunchError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Earlier runs that ended before their check (srt and its auditor both killed: their
/// journals are no longer locked) are finished first: their TMPDIR removed and the check
/// done, before this run's command can start.
pub(crate) fn finish_stale_runs() {
    let stale =
        crate::check::journal::state_dir_candidates().into_iter().flat_map(|d| crate::check::journal::stale(&d));
    for (path, file) in stale {
        let header = match crate::check::journal::read(&path) {
            Ok((h, _)) => h,
            Err(e) => {
                // not one this srt can read (another version's, or damaged): said once, and
                // kept aside for the user rather than reported again by every later run
                let aside = path.with_extension("journal.unreadable");
                let _ = std::fs::rename(&path, &aside);
                crate::say::line(&format!(
                    "srt: error: an earlier run ended before its check, and its journal cannot be read ({e}); \
                     its changes were not checked: look at the writable trees it names before running git there \
                     (kept as {})",
                    aside.display()
                ));
                continue;
            }
        };
        crate::say::line(&format!(
            "srt: an earlier run ended before its check (srt was killed); checking what it changed now ({})",
            path.display()
        ));
        if is_own_tmpdir(&header.tmpdir) {
            if let Err(e) = crate::fs::tmpdir::remove_tree(&header.tmpdir) {
                crate::warn!("could not remove {}: {e}", header.tmpdir.display());
            }
        }
        check_run(&crate::check::journal::adopt(file.into(), path), false);
    }
}

/// A private TMPDIR srt made: named exactly `srt-<pid>-<hex>`, a directory of ours that
/// only we may enter (mode 0700), not a symlink. A stale journal's header is only as
/// trustworthy as the place it was found, so what it may have removed is held to the
/// shape srt gives its own TMPDIRs, never "any directory of ours called srt-*".
fn is_own_tmpdir(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let named = p.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("srt-")).is_some_and(|rest| {
        rest.split_once('-').is_some_and(|(pid, hex)| {
            !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && !hex.is_empty()
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
        })
    });
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    named && p.symlink_metadata().is_ok_and(|m| m.is_dir() && m.uid() == me && m.mode() & 0o7777 == 0o700)
}

/// Namespace mode: the sockets the namespace's init opened inside its network namespace
/// (which the auditor started).
pub(crate) fn wait_for_bridge(ours: &OwnedFd) -> Result<Vec<OwnedFd>, BridgeFailed> {
    let ns = |why: String| LaunchError::Namespaces(std::io::Error::other(why));
    let mut pfd = libc::pollfd { fd: ours.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: poll on one live descriptor.
    if unsafe { libc::poll(&mut pfd, 1, 10_000) } <= 0 {
        return Err(BridgeFailed {
            error: ns("the namespace did not come up within 10 s".into()),
            stop: true,
            reported: None,
        });
    }
    match read_setup(ours.as_raw_fd()) {
        SetupMsg::Bridge(inside) => Ok(inside),
        SetupMsg::Failed(stage, errno) => Err(BridgeFailed {
            error: ns(format!("{}: {}", stage.describe(), nix::errno::Errno::from_raw(errno))),
            stop: false,
            reported: Some((stage, errno)),
        }),
        _ => Err(BridgeFailed {
            error: ns("the namespace's init exited during setup".into()),
            stop: false,
            reported: None,
        }),
    }
}

/// Why namespace mode did not come up.
pub(crate) struct BridgeFailed {
    pub error: LaunchError,
    /// The auditor must be stopped (after a time-out); after a failure it ends by itself.
    pub stop: bool,
    /// The failure the setup socket carried.
    pub reported: Option<(Stage, i32)>,
}

/// srt's loop while the command runs: hands the seccomp listener to the supervisor and
/// passes signals on to the auditor (which passes them to the command, and kills it when
/// a second one comes or the first is ignored). Returns the auditor's wait status once it
/// exited, and the setup failure reported, if any.
pub(crate) fn supervise(
    auditor: libc::pid_t,
    sock: OwnedFd,
    sigfd: std::os::fd::BorrowedFd<'_>,
    sup: Supervisor,
    mut proxy: Option<&mut crate::net::proxy::Proxy>,
) -> (libc::c_int, Option<(Stage, i32)>) {
    let mut sup = Some(sup);
    let mut sock = Some(sock);
    let mut parked: Option<OwnedFd> = None;
    let mut setup_error: Option<(Stage, i32)> = None;
    let mut watchdog: Option<crate::supervisor::Watchdog> = None;
    loop {
        let mut fds = vec![libc::pollfd { fd: sigfd.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        if let Some(s) = &sock {
            fds.push(libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        }
        // the proxy's listeners until a client first reaches one: then its thread starts
        let proxy_at = fds.len();
        for fd in proxy.as_ref().map(|p| p.wake_fds()).unwrap_or_default() {
            fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
        }
        // rounded up: a wake-up a little early would only sleep again
        let timeout = watchdog.as_ref().map_or(-1, |w| w.due_in().as_millis() as libc::c_int + 1);
        // SAFETY: `fds` is a live array of pollfd of the given length.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if let Some(w) = &mut watchdog {
            w.tick();
        }
        if fds[proxy_at..].iter().any(|f| f.revents != 0) {
            if let Some(p) = proxy.as_deref_mut() {
                p.serve();
            }
        }
        if proxy_at > 1 && fds[1].revents != 0 {
            let fd = fds[1].fd;
            match read_setup(fd) {
                SetupMsg::Listener(fd) => {
                    // the supervisor answers from its own threads from here on, so
                    // nothing the command does can keep this loop from signals
                    if let Some(s) = sup.take() {
                        match s.serve(fd) {
                            Ok(w) => watchdog = Some(w),
                            Err(e) => {
                                crate::warn!("could not start the supervisor ({e}); stopping the command");
                                // the command's mediated calls would otherwise wait for an
                                // answer forever
                                stop_now(auditor);
                            }
                        }
                    }
                    // Only an exec failure can follow; read it after the auditor exits
                    // rather than wake up again for the end-of-file that exec causes.
                    parked = sock.take();
                }
                SetupMsg::Failed(stage, errno) => setup_error = Some((stage, errno)),
                SetupMsg::LostListener => {
                    crate::warn!(
                        "could not receive the command's seccomp listener (srt is out of file descriptors); stopping the command"
                    );
                    stop_now(auditor);
                    sock = None;
                }
                SetupMsg::Closed | SetupMsg::Bridge(_) => sock = None,
            }
        }
        if fds[0].revents & libc::POLLIN == 0 {
            continue;
        }
        for sig in crate::process::auditor::read_signals(sigfd.as_raw_fd()) {
            if sig == libc::SIGCHLD {
                let mut status = 0;
                // SAFETY: plain waitpid for our own child, writing into a local.
                if unsafe { libc::waitpid(auditor, &mut status, libc::WNOHANG) } == auditor {
                    if let Some(p) = parked.take().or(sock.take()) {
                        set_nonblocking(p.as_raw_fd());
                        while let SetupMsg::Failed(stage, errno) = read_setup(p.as_raw_fd()) {
                            setup_error = Some((stage, errno));
                        }
                    }
                    return (status, setup_error);
                }
                // anything else that exited was the command's, left to srt by a dead auditor
                reaper::reap_exited_quietly();
            } else {
                tracing::debug!(sig, "passing the signal on");
                // SAFETY: signalling our own child.
                unsafe { libc::kill(auditor, sig) };
            }
        }
    }
}

/// Has the auditor kill the command at once (and then end the run as always): two
/// different signals, which it takes as "the second request" (two of the same kind could
/// merge into one while pending).
fn stop_now(auditor: libc::pid_t) {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(auditor, libc::SIGTERM);
        libc::kill(auditor, libc::SIGINT);
    }
}

enum SetupMsg {
    Listener(OwnedFd),
    Bridge(Vec<OwnedFd>),
    Failed(Stage, i32),
    /// The listener was sent but could not be received (no descriptor left for it).
    LostListener,
    Closed,
}

fn read_setup(fd: RawFd) -> SetupMsg {
    let mut buf = [0u8; 8];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut cbuf = [0u64; 8];
    // SAFETY: msghdr, iovec and control buffer live on this frame for the call.
    let (n, passed) = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        let n = libc::recvmsg(fd, &mut msg, libc::MSG_CMSG_CLOEXEC);
        let mut passed: Vec<OwnedFd> = Vec::new();
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n > 0 && !cmsg.is_null() && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
            let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
            let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
            for i in 0..count {
                // the kernel just installed these descriptors for us
                passed.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
            }
        }
        (n, passed)
    };
    match (n, buf[0]) {
        (n, b'L') if n > 0 && passed.is_empty() => SetupMsg::LostListener,
        (n, b'L') if n > 0 && passed.len() == 1 => {
            SetupMsg::Listener(passed.into_iter().next().unwrap_or_else(|| unreachable!()))
        }
        (n, b'B') if n > 0 && !passed.is_empty() => SetupMsg::Bridge(passed),
        (n, b'E') if n >= 6 => {
            let errno = i32::from_ne_bytes([buf[2], buf[3], buf[4], buf[5]]);
            SetupMsg::Failed(Stage::from_u8(buf[1]).unwrap_or(Stage::Exec), errno)
        }
        _ => SetupMsg::Closed,
    }
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

pub(crate) fn seqpacket_pair() -> Result<(OwnedFd, OwnedFd), LaunchError> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

const FORWARDED: [libc::c_int; 5] = [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

pub(crate) fn block_signals() -> Result<(libc::sigset_t, OwnedFd), LaunchError> {
    // SAFETY: sigset manipulation on locals, then sigprocmask/signalfd syscalls.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok((old, OwnedFd::from_raw_fd(fd)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_tmpdir_of_srts_shape_is_removed_for_a_stale_journal() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("srt-parent-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let mk = |name: &str, mode: u32| {
            let p = base.join(name);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        };
        assert!(is_own_tmpdir(&mk("srt-123-9abc", 0o700)));
        assert!(!is_own_tmpdir(&mk("srt-victim", 0o700)), "any srt-* of the user's");
        assert!(!is_own_tmpdir(&mk("srt-12-xyz", 0o700)), "not hex");
        assert!(!is_own_tmpdir(&mk("srt-124-9abc", 0o755)), "not private");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
