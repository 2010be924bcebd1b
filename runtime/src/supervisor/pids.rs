//! The pid judge (landlock mode). The command shares the host's PID namespace there, and
//! a few calls change another process of the same uid by pid with no check Landlock can
//! add: `prlimit64` (a CPU limit of one second on srt kills it), `setpriority`,
//! `sched_setaffinity`, `sched_setscheduler`/`setparam`/`setattr` and `ioprio_set`
//! ([`crate::seccomp::sysno::PID_TARGETED`]). The filter lets through those that name the caller
//! itself; the rest come here, and pass only when they name one of the command's own
//! processes: a descendant of the run's auditor, which is the command's parent and a
//! subreaper, so that every process the command starts stays below it (neither the
//! auditor itself, nor srt, nor any other process is one). A process group passes when it
//! is the caller's own or is led by one of the command's processes (a group holds only
//! processes of its leader's session, and the command's sessions hold only its own). A
//! whole uid (`PRIO_USER`, `IOPRIO_WHO_USER`) never passes. Ptrace-like access (`kcmp`,
//! `process_madvise`, `pidfd_getfd`, `move_pages`, `migrate_pages`, `get_robust_list`) is
//! Landlock's: its scoping confines it to the command's domain, and so it does signals
//! from Landlock ABI 6 on. On older kernels signals come here too ([`Call::signal_call`]).
//!
//! A pid names a process only while that process lives: the target is pinned with a
//! pidfd before its ancestry is read, each step up is checked to lead to an older process
//! (a pid reused by a newer process cannot pose as a parent), and the pidfd must still
//! show the target alive at the end. Anything that cannot be read is a refusal. The call
//! then proceeds as the command made it (`CONTINUE`; its arguments are plain integers,
//! nothing to swap); what stays is the moment between the answer and the kernel's lookup,
//! in which the target would have to exit, be reaped and have its pid handed to a new
//! process, which takes a full cycle of the pid space first.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{Call, Outcome};

/// What a call names.
enum Target {
    Pid(libc::pid_t),
    Group(libc::pid_t),
    /// Every process of a uid, or nothing we can judge.
    Refused,
}

/// How far up a chain of parents is followed before giving up (refusing).
const MAX_DEPTH: usize = 4096;

impl Call<'_> {
    pub(super) fn pid_call(&self, name: &str) -> Outcome {
        let a = self.args();
        let Some(auditor) = self.sup.auditor else { return Outcome::Fail(libc::EPERM) };
        let who = a[1] as i32;
        let target = match name {
            "prlimit64" | "sched_setaffinity" | "sched_setscheduler" | "sched_setparam" | "sched_setattr" => {
                Target::Pid(a[0] as i32)
            }
            // (glibc types PRIO_* unsigned, musl signed)
            "setpriority" => match a[0] as i64 {
                w if w == libc::PRIO_PROCESS as i64 => Target::Pid(who),
                w if w == libc::PRIO_PGRP as i64 => Target::Group(who),
                _ => Target::Refused,
            },
            // linux/ioprio.h: IOPRIO_WHO_PROCESS 1, IOPRIO_WHO_PGRP 2, IOPRIO_WHO_USER 3
            "ioprio_set" => match a[0] as i32 {
                1 => Target::Pid(who),
                2 => Target::Group(who),
                _ => Target::Refused,
            },
            _ => Target::Refused,
        };
        let verdict = match target {
            Target::Pid(0) | Target::Group(0) => Ok(()),
            Target::Pid(pid) if pid > 0 => commands_process(pid, auditor),
            Target::Group(g) if g > 0 => self.commands_group(g, auditor),
            _ => Err(libc::EPERM),
        };
        match verdict {
            Ok(()) if self.valid() => Outcome::Continue,
            Ok(()) => Outcome::Gone,
            Err(e) => Outcome::Fail(e),
        }
    }

    /// Where Landlock cannot scope signals (ABI < 6): signals may go only to the command's
    /// own processes and groups, as may SIGIO and SIGURG (a file's owner).
    pub(super) fn signal_call(&self, name: &str) -> Outcome {
        let a = self.args();
        let Some(auditor) = self.sup.auditor else { return Outcome::Fail(libc::EPERM) };
        let pid_or_group = |v: i32| match v {
            0 => Ok(()),
            -1 => Err(libc::EPERM),
            v if v > 0 => commands_process(v, auditor),
            v => self.commands_group(v.checked_neg().ok_or(libc::EPERM)?, auditor),
        };
        let verdict = match name {
            "kill" => pid_or_group(a[0] as i32),
            "tkill" | "rt_sigqueueinfo" => commands_process(a[0] as i32, auditor),
            "tgkill" | "rt_tgsigqueueinfo" => commands_process(a[1] as i32, auditor),
            "fcntl" if a[1] as i32 == libc::F_SETOWN => pid_or_group(a[2] as i32),
            // F_SETOWN_EX names its owner through a pointer the command could change after
            // the check: refused (F_SETOWN does the same with a plain number)
            "fcntl" => Err(libc::EPERM),
            "pidfd_send_signal" => return self.pidfd_signal(auditor),
            _ => Err(libc::EPERM),
        };
        match verdict {
            Ok(()) if self.valid() => Outcome::Continue,
            Ok(()) => Outcome::Gone,
            Err(e) => Outcome::Fail(e),
        }
    }

    /// `pidfd_send_signal(pidfd, sig, info, flags)`: judged and sent on srt's own copy of
    /// the pidfd, so the descriptor cannot be swapped after the check. With a `siginfo`
    /// (which the kernel would read from the command's memory afterwards) it is refused.
    fn pidfd_signal(&self, auditor: libc::pid_t) -> Outcome {
        let a = self.args();
        if a[2] != 0 {
            return Outcome::Fail(libc::EPERM);
        }
        let fd = match crate::net::take_socket(self.req.pid, a[0] as i32) {
            Ok(fd) => fd,
            Err(e) => return Outcome::Fail(if e == libc::ENOSYS { libc::EPERM } else { e }),
        };
        let Some(pid) = pidfd_pid(&fd) else { return Outcome::Fail(libc::EBADF) };
        if let Err(e) = commands_process(pid, auditor) {
            return Outcome::Fail(e);
        }
        if !self.valid() {
            return Outcome::Gone;
        }
        // SAFETY: pidfd_send_signal on our own descriptor with integer arguments.
        let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), a[1] as i32, 0usize, a[3] as u32) };
        if r < 0 {
            Outcome::Fail(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EPERM))
        } else {
            Outcome::Value(0)
        }
    }

    /// The caller's own process group, or one led by one of the command's processes.
    fn commands_group(&self, g: libc::pid_t, auditor: libc::pid_t) -> Result<(), i32> {
        let own = stat(self.req.pid as libc::pid_t).ok_or(libc::EPERM)?.pgrp;
        if own == g {
            return Ok(());
        }
        commands_process(g, auditor)?;
        match stat(g) {
            Some(s) if s.pgrp == g => Ok(()),
            _ => Err(libc::EPERM),
        }
    }
}

/// `Ok` when `pid` is one of the command's processes (a descendant of the auditor);
/// `ESRCH` when there is no such process, `EPERM` otherwise.
fn commands_process(pid: libc::pid_t, auditor: libc::pid_t) -> Result<(), i32> {
    // SAFETY: pidfd_open with integer arguments; the descriptor is owned below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let pin = if fd >= 0 {
        // SAFETY: a fresh descriptor nobody else owns.
        Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    } else {
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => return Err(libc::ESRCH),
            // refused by a container's seccomp profile: the start times below still tell
            // a reused pid from its first owner
            _ => None,
        }
    };
    let first = stat(pid).ok_or(libc::ESRCH)?;
    let mut cur = first;
    let mut ours = false;
    for _ in 0..MAX_DEPTH {
        if cur.ppid == auditor {
            ours = true;
            break;
        }
        if cur.ppid <= 1 {
            break;
        }
        let parent = stat(cur.ppid).ok_or(libc::EPERM)?;
        // a parent is never younger than its child; a younger one took a freed pid
        if parent.start > cur.start {
            return Err(libc::EPERM);
        }
        cur = parent;
    }
    if !ours {
        return Err(libc::EPERM);
    }
    // the target still lives (what was read was about it), or, without a pidfd, its pid
    // still names the process that was read first
    let alive = match &pin {
        Some(fd) => {
            let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: poll on one live descriptor, without waiting.
            unsafe { libc::poll(&mut pfd, 1, 0) == 0 }
        }
        None => stat(pid).is_some_and(|s| s.start == first.start),
    };
    if alive {
        Ok(())
    } else {
        Err(libc::ESRCH)
    }
}

/// The process a pidfd of ours refers to (`Pid:` in its fdinfo; -1 once it exited).
fn pidfd_pid(fd: &OwnedFd) -> Option<libc::pid_t> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    let pid: libc::pid_t = info.lines().find_map(|l| l.strip_prefix("Pid:"))?.trim().parse().ok()?;
    (pid > 0).then_some(pid)
}

#[derive(Clone, Copy)]
struct Stat {
    ppid: libc::pid_t,
    pgrp: libc::pid_t,
    /// Clock ticks since boot at which the process started.
    start: u64,
}

/// Fields 4 (ppid), 5 (pgrp) and 22 (starttime) of `/proc/<pid>/stat`.
fn stat(pid: libc::pid_t) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) may hold spaces and parentheses: count after its last ')'
    let rest: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    Some(Stat {
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        start: rest.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_of_the_auditor_and_nothing_else() {
        // this test process plays the auditor: a child and a grandchild are "the command's"
        // SAFETY: getpid/getppid cannot fail.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        let grandchild: libc::pid_t = line.trim().parse().unwrap();
        assert_eq!(commands_process(child.id() as i32, me), Ok(()));
        assert_eq!(commands_process(grandchild, me), Ok(()));
        assert_eq!(commands_process(me, me), Err(libc::EPERM), "the auditor itself");
        assert_eq!(commands_process(parent, me), Err(libc::EPERM), "srt");
        assert_eq!(commands_process(1, me), Err(libc::EPERM));
        // SAFETY: signalling our own child's child and our own child.
        unsafe { libc::kill(grandchild, libc::SIGKILL) };
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(commands_process(child.id() as i32, me).is_err(), "gone");
    }
}
