//! srt's own resource limits and signal dispositions, apart from the command's.
//!
//! srt inherits the limits and dispositions it was started with, and those are meant for
//! the command. srt itself must not be stopped by them before the run is checked: a soft
//! `RLIMIT_AS` or `RLIMIT_DATA` that makes an allocation in the check fail (srt aborts), a
//! `RLIMIT_FSIZE` that turns srt's own write to a log file into `SIGXFSZ`, a small
//! `RLIMIT_STACK`, or `SIGTTOU` stopping srt when it writes to a terminal the command
//! set to `tostop`; and a `SIGCHLD` ignored by whoever started srt, which makes the kernel
//! reap srt's children unseen (srt would wait for the command forever). So srt raises its
//! soft limits to the hard ones, ignores those signals and takes `SIGCHLD` back, and the
//! command gets exactly what srt was given ([`Given::restore`], between fork and exec). The hard limits stay: srt cannot, and does not, raise them.

use std::sync::OnceLock;

/// The soft limits srt raises for itself.
/// `RLIMIT_NOFILE` too: srt's proxy holds two descriptors per tunnel, so under a soft
/// limit of 1024 a command with ~500 idle tunnels would make every new connect fail.
/// glibc and musl type the resource argument differently.
#[cfg(target_env = "gnu")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type Resource = libc::c_int;

const RAISED: [Resource; 6] =
    [libc::RLIMIT_AS, libc::RLIMIT_DATA, libc::RLIMIT_STACK, libc::RLIMIT_FSIZE, libc::RLIMIT_CPU, libc::RLIMIT_NOFILE];

/// The signals srt ignores for itself: a write past `RLIMIT_FSIZE`, a write to a closed
/// pipe, a background write to a `tostop` terminal (each then fails with an error instead).
const IGNORED: [libc::c_int; 3] = [libc::SIGXFSZ, libc::SIGPIPE, libc::SIGTTOU];

/// The signals srt needs at their default: `SIGCHLD` ignored means children are reaped by
/// the kernel, with their exit status, before srt can wait for them.
const DEFAULTED: [libc::c_int; 1] = [libc::SIGCHLD];

/// The limits and dispositions srt was started with: the command's.
#[derive(Clone, Copy)]
pub struct Given {
    limits: [(Resource, libc::rlimit); RAISED.len()],
    /// Per [`IGNORED`] signal: whether it was ignored (else default) when srt started.
    ignored: [bool; IGNORED.len()],
    /// Per [`DEFAULTED`] signal: likewise.
    defaulted_was_ignored: [bool; DEFAULTED.len()],
}

static GIVEN: OnceLock<Given> = OnceLock::new();

/// Records what srt was given, then raises its soft limits and ignores [`IGNORED`] for
/// itself. Idempotent: the first call's record is kept.
pub fn take_own() -> Given {
    *GIVEN.get_or_init(|| {
        let mut g = current();
        for (res, r) in g.limits {
            if r.rlim_cur != r.rlim_max {
                let raised = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
                // SAFETY: setrlimit from a local; raising the soft limit to the hard one
                // needs no privilege.
                unsafe { libc::setrlimit(res, &raised) };
            }
        }
        for (was, sig) in g.ignored.iter_mut().zip(IGNORED) {
            // SAFETY: signal() installs a disposition and returns the old one.
            let old = unsafe { libc::signal(sig, libc::SIG_IGN) };
            *was = old == libc::SIG_IGN;
        }
        for (was, sig) in g.defaulted_was_ignored.iter_mut().zip(DEFAULTED) {
            // SAFETY: as above.
            let old = unsafe { libc::signal(sig, libc::SIG_DFL) };
            *was = old == libc::SIG_IGN;
        }
        g
    })
}

/// Raises srt's soft limits again after [`Given::restore`] in srt itself (a restart that
/// failed).
pub fn raise_again() {
    for (res, r) in given().limits {
        let raised = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
        // SAFETY: setrlimit from a local; raising the soft limit to the hard one needs no
        // privilege.
        unsafe { libc::setrlimit(res, &raised) };
    }
}

/// What srt was given (its current limits when [`take_own`] was never called).
pub fn given() -> Given {
    GIVEN.get().copied().unwrap_or_else(current)
}

/// The current limits (an unreadable one as unlimited: restoring it changes nothing), and
/// the signals as not ignored.
fn current() -> Given {
    let unlimited = libc::rlimit { rlim_cur: libc::RLIM_INFINITY, rlim_max: libc::RLIM_INFINITY };
    let mut g = Given {
        limits: [(0, unlimited); RAISED.len()],
        ignored: [false; IGNORED.len()],
        defaulted_was_ignored: [false; DEFAULTED.len()],
    };
    for (slot, res) in g.limits.iter_mut().zip(RAISED) {
        let mut r = unlimited;
        // SAFETY: getrlimit writes into a local.
        if unsafe { libc::getrlimit(res, &mut r) } != 0 {
            r = unlimited;
        }
        *slot = (res, r);
    }
    g
}

impl Given {
    /// Gives the calling process the limits and dispositions srt was started with.
    /// Async-signal-safe (only syscalls on data in `self`): used between fork and exec.
    pub fn restore(&self) {
        for (res, r) in &self.limits {
            // SAFETY: setrlimit from a value we own; lowering the soft limit back to what it
            // was never needs privilege, and a failure leaves the higher limit (only ours).
            unsafe { libc::setrlimit(*res, r) };
        }
        for (sig, ignored) in IGNORED.iter().zip(self.ignored).chain(DEFAULTED.iter().zip(self.defaulted_was_ignored)) {
            // SAFETY: installing a plain disposition.
            unsafe { libc::signal(*sig, if ignored { libc::SIG_IGN } else { libc::SIG_DFL }) };
        }
    }
}
