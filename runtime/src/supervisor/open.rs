//! Opens: for writing, with `O_CREAT` or `O_TMPFILE`, and of FIFOs. Each reads its path
//! once, resolves it to descriptors of ours ([`super::resolve`]), asks
//! [`crate::fs::name_rules`] and opens what is allowed on those descriptors; what it does
//! not grant, the kernel judges (`CONTINUE`) or is refused.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

use super::names::*;
use super::native::Native;
use super::resolve::{self, Target};
use super::sys::{self};
use super::{Call, Outcome};
use crate::fs::name_rules::{self, Kind, Verdict};

impl Call<'_> {
    pub(super) fn open(&self, dirfd: i32, addr: u64, flags: i32, mode: u32) -> Outcome {
        // the filter's native bit (an O_TMPFILE open still comes here with it): the kernel
        // ignores it, and openat2, with which the supervisor opens, would refuse it
        let flags = flags & !(crate::seccomp::NATIVE_CREATE as i32);
        self.open_inner(dirfd, addr, flags, mode).unwrap_or_else(|o| o)
    }

    fn open_inner(&self, dirfd: i32, addr: u64, flags: i32, mode: u32) -> Step<Outcome> {
        if flags & libc::O_PATH != 0 {
            return Ok(Outcome::Continue);
        }
        let raw = self.path_arg(addr)?;
        // reopening one of its own descriptors: the kernel judges the object it reaches
        if resolve::descriptor_alias(raw.to_bytes()).is_some() {
            return Ok(Outcome::Continue);
        }
        if flags & libc::O_TMPFILE == libc::O_TMPFILE {
            return self.open_tmpfile(dirfd, &raw, flags, mode);
        }
        // below a write rule that does not let the kernel make files: made here, then opened
        // by the kernel
        let mut below_write_rule = false;
        if !self.sup.native_rules.is_empty() {
            match self.native_parent_entry(base(dirfd), raw.to_bytes()) {
                Some((Native::Files, _, _)) => return Ok(Outcome::Continue),
                // the kernel opens what is there; a file missing now is made here (one
                // that goes missing meanwhile the kernel may not make: EACCES)
                Some((Native::Write, dir, name)) => {
                    let missing = flags & libc::O_CREAT != 0
                        && sys::cstr(name).is_ok_and(|n| sys::lstat_at(dir.as_fd(), &n) == Err(libc::ENOENT));
                    if !missing {
                        return Ok(Outcome::Continue);
                    }
                    below_write_rule = true;
                }
                _ => {}
            }
        }
        let t = self.target(dirfd, &raw)?;
        if self.in_host_shm(&t) {
            return self.open_shm(&t, flags, mode);
        }
        let accmode = flags & libc::O_ACCMODE;
        let reads = accmode == libc::O_RDWR || accmode == libc::O_RDONLY;
        match sys::lstat_at(t.parent.as_fd(), &t.name) {
            Ok(st) => match sys::file_type(&st) {
                libc::S_IFREG => {
                    if flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL {
                        return Err(fail(libc::EEXIST));
                    }
                    let writes = accmode != libc::O_RDONLY || flags & libc::O_TRUNC != 0;
                    if writes && !self.sup.policy.can_write(&t.path) {
                        return Ok(self.refuse(&t, "not writable by the policy"));
                    }
                    if reads && !self.sup.policy.can_read(&t.path) {
                        return Ok(self.refuse(&t, "denyRead"));
                    }
                    self.open_existing(&t, flags)
                }
                libc::S_IFIFO => self.open_fifo(&t, flags),
                libc::S_IFCHR if self.sup.mediate_ptys => Ok(self.open_pty(&t, flags)),
                // the kernel follows symlinks and judges the target; directories, devices
                // and sockets it answers itself (and devices may block: not in here)
                _ => Ok(Outcome::Continue),
            },
            Err(libc::ENOENT) if flags & libc::O_CREAT != 0 => {
                match name_rules::create(&self.sup.policy, &t.path, Kind::File) {
                    Verdict::Allow => {}
                    Verdict::Refuse(r) => return Ok(self.refuse(&t, r)),
                    Verdict::InstallGitConfig => {
                        return Ok(self.refuse(&t, "a git config is only installed whole, by rename"))
                    }
                }
                if reads && !self.sup.policy.can_read(&t.path) {
                    return Ok(self.refuse(&t, "denyRead"));
                }
                self.git_name_made(&t)?;
                let how = (flags & !libc::O_TRUNC) | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
                match sys::open_entry(t.parent.as_fd(), &t.name, how, u64::from(self.mode(mode))) {
                    Ok(file) => {
                        if let Ok(st) = sys::fstat(file.as_fd()) {
                            self.made(&st);
                        }
                        if below_write_rule && flags & libc::O_EXCL == 0 {
                            // the file is there now: the kernel opens it with the command's
                            // flags under its rules (a write rule covers it), which spares
                            // handing a descriptor over (a wake-up across CPUs on a VM).
                            // Whatever the command puts there meanwhile the kernel judges,
                            // and cannot make a file in its place.
                            self.note(&t.path, "created, opened by the kernel");
                            return Ok(Outcome::Continue);
                        }
                        self.note(&t.path, "created");
                        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
                    }
                    // something appeared there meanwhile (the command's own doing): the
                    // kernel sorts it out
                    Err(libc::EEXIST | libc::ELOOP) if flags & libc::O_EXCL == 0 => Ok(Outcome::Continue),
                    Err(e) => Err(fail(e)),
                }
            }
            Err(e) => Err(fail(e)),
        }
    }

    fn open_existing(&self, t: &Target, flags: i32) -> Step<Outcome> {
        let how = (flags & !(libc::O_TRUNC | libc::O_CREAT | libc::O_EXCL)) | libc::O_NOFOLLOW;
        let file = match sys::open_entry(t.parent.as_fd(), &t.name, how, 0) {
            Ok(f) => f,
            Err(libc::ELOOP) => return Ok(Outcome::Continue),
            Err(e) => return Err(fail(e)),
        };
        let st = sys::fstat(file.as_fd()).map_err(fail)?;
        self.check_single_name(&st)?;
        if flags & libc::O_TRUNC != 0 && sys::file_type(&st) == libc::S_IFREG {
            // SAFETY: plain syscall on a descriptor we own.
            if unsafe { libc::ftruncate(file.as_raw_fd(), 0) } < 0 {
                return Err(fail(sys::last_errno()));
            }
        }
        self.note(&t.path, "opened");
        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
    }

    /// A FIFO is opened without blocking a worker: a write-only open with no reader yet is
    /// retried until one appears or the command stops waiting, as the kernel would block it.
    fn open_fifo(&self, t: &Target, flags: i32) -> Step<Outcome> {
        let accmode = flags & libc::O_ACCMODE;
        if accmode != libc::O_RDONLY && !self.sup.policy.can_write(&t.path) {
            return Ok(Outcome::Continue);
        }
        // the supervisor opens it with its own rights, which Landlock does not limit
        if accmode != libc::O_WRONLY && !self.sup.policy.can_read(&t.path) {
            return Ok(self.refuse(t, "denyRead"));
        }
        let how = (flags & !(libc::O_TRUNC | libc::O_CREAT | libc::O_EXCL)) | libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let started = Instant::now();
        loop {
            match sys::open_entry(t.parent.as_fd(), &t.name, how, 0) {
                Ok(f) => {
                    if flags & libc::O_NONBLOCK == 0 {
                        sys::set_nonblocking(f.as_fd(), false);
                    }
                    self.note(&t.path, "fifo opened");
                    return Ok(Outcome::Fd { fd: f, cloexec: flags & libc::O_CLOEXEC != 0 });
                }
                Err(libc::ENXIO) if flags & libc::O_NONBLOCK == 0 => {
                    if !self.valid() {
                        return Err(Outcome::Gone);
                    }
                    let waited = started.elapsed();
                    std::thread::sleep(if waited < Duration::from_millis(50) {
                        Duration::from_millis(1)
                    } else {
                        Duration::from_millis(20)
                    });
                }
                Err(e) => return Err(fail(e)),
            }
        }
    }

    fn open_tmpfile(&self, dirfd: i32, raw: &CStr, flags: i32, mode: u32) -> Step<Outcome> {
        let (dir, path) = resolve::directory(&self.t, base(dirfd), raw.to_bytes()).map_err(why)?;
        if !self.valid() {
            return Err(Outcome::Gone);
        }
        if self.native_dir(dir.as_fd()) >= Native::Write {
            return Ok(Outcome::Continue);
        }
        // an unnamed file: it gets a name only through linkat, which comes back here
        if !self.sup.policy.can_write(&path.join("#tmpfile")) {
            return Ok(Outcome::Continue);
        }
        let file = sys::openat2(Some(dir.as_fd()), c".", flags, u64::from(self.mode(mode)), sys::RESOLVE_BENEATH)
            .map_err(fail)?;
        Ok(Outcome::Fd { fd: file, cloexec: flags & libc::O_CLOEXEC != 0 })
    }
}
