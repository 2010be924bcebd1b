//! Opens for writing, and every call that makes, removes or moves a name. Each reads its
//! path arguments once, resolves them to descriptors of ours ([`super::resolve`]), asks
//! [`crate::fs::name_rules`] about the real locations and performs what is allowed on those
//! descriptors. What it does not grant, the kernel judges (`CONTINUE`) or is refused.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::native::Native;
use super::resolve::{self, Target, Why};
use super::sys::{self, Errno};
use super::tracee::Base;
use super::{Call, Outcome};
use crate::check::journal::Entry;
use crate::fs::name_rules::{self, Existing, Kind, Verdict};

fn base(dirfd: i32) -> Base {
    if dirfd == libc::AT_FDCWD {
        Base::Cwd
    } else {
        Base::Fd(dirfd)
    }
}

fn kind_of(st: &libc::stat) -> Kind {
    match sys::file_type(st) {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Symlink,
        libc::S_IFREG => Kind::File,
        _ => Kind::Special,
    }
}

/// `Err` carries the finished outcome: an error for the command, or CONTINUE where only the
/// kernel can judge.
type Step<T> = Result<T, Outcome>;

fn why(w: Why) -> Outcome {
    match w {
        Why::Unresolvable => Outcome::Continue,
        Why::Errno(e) => Outcome::Fail(e),
    }
}

fn fail(e: Errno) -> Outcome {
    Outcome::Fail(e)
}

impl Call<'_> {
    fn path_arg(&self, addr: u64) -> Step<CString> {
        self.t.read_path(addr).map_err(fail)
    }

    /// Resolves the parent of a path argument; the notification must still be pending.
    fn target(&self, dirfd: i32, raw: &CStr) -> Step<Target> {
        let t = resolve::parent(&self.t, base(dirfd), raw.to_bytes()).map_err(why)?;
        if !self.valid() {
            return Err(Outcome::Gone);
        }
        Ok(t)
    }

    fn refuse(&self, t: &Target, rule: &'static str) -> Outcome {
        self.note(&t.path, rule);
        Outcome::Fail(libc::EACCES)
    }

    fn mode(&self, mode: u32) -> u32 {
        mode & 0o7777 & !self.umask()
    }

    pub(super) fn open(&self, dirfd: i32, addr: u64, flags: i32, mode: u32) -> Outcome {
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

    /// A regular file with several names may be reachable from somewhere the policy
    /// protects; only the kernel's path-based Landlock check may decide for it.
    fn check_single_name(&self, st: &libc::stat) -> Step<()> {
        let key = (st.st_dev, st.st_ino);
        if self.sup.protected.contains(&key) {
            return Err(fail(libc::EACCES));
        }
        let linked = self.sup.linked.lock().is_ok_and(|l| l.contains(&key));
        if sys::file_type(st) == libc::S_IFREG && st.st_nlink > 1 && !linked {
            return Err(Outcome::Continue);
        }
        Ok(())
    }

    /// The kernel may link or move a file from `old` to `new` by itself: the source's
    /// directory is below a write rule, and the destination's lets it make files there
    /// (both, for an exchange). Anywhere else the supervisor gives the file its new name,
    /// so that the journal hears of names git reads.
    fn both_native(&self, dirfds: [i32; 2], old: &CStr, new: &CStr, exchange: bool) -> bool {
        let need = if exchange { Native::Files } else { Native::Write };
        self.native_parent(base(dirfds[0]), old.to_bytes()).is_some_and(|n| n >= need)
            && self.native_parent(base(dirfds[1]), new.to_bytes()) == Some(Native::Files)
    }

    /// For `CONTINUE`: whether a rename moves a directory, a symlink or a FIFO (either way,
    /// with `RENAME_EXCHANGE`), as far as a look now tells. Only a hint: the kernel refuses
    /// one that appears there meanwhile, since no rule lets it make those.
    fn moves_directory(&self, dirfds: [i32; 2], old: &CStr, new: &CStr, flags: u32) -> bool {
        let mediated = |fd: i32, raw: &CStr| match self.native_parent_entry(base(fd), raw.to_bytes()) {
            Some((_, dir, name)) => match sys::cstr(name) {
                Ok(n) => sys::lstat_at(dir.as_fd(), &n)
                    .is_ok_and(|st| matches!(sys::file_type(&st), libc::S_IFDIR | libc::S_IFLNK | libc::S_IFIFO)),
                Err(_) => true,
            },
            None => true,
        };
        mediated(dirfds[0], old) || (flags & libc::RENAME_EXCHANGE != 0 && mediated(dirfds[1], new))
    }

    /// A directory named as a protected project entry (`.vscode`, `.claude`, `.husky`, ...),
    /// or a symlink by that name (it stands for a directory the command filled), may not be
    /// made, linked or moved in anywhere: below the top of a tree the rules protect such
    /// names only where they existed at launch, but an editor or agent that trusts a parent
    /// folder runs what a new one holds. Directories are always made here, so this costs
    /// nothing elsewhere (files of those names are judged where they are protected).
    fn no_project_dir(&self, t: &Target) -> Step<()> {
        let name = std::ffi::OsStr::from_bytes(t.name.to_bytes());
        let single = |e: &&crate::fs::protected_names::Entry| !e.path.contains('/');
        if crate::fs::protected_names::PROJECT
            .iter()
            .filter(single)
            .any(|e| crate::fs::protected_names::covers(e.path, Path::new(name)))
        {
            return Err(self.refuse(t, "a protected project directory name (editor, agent or hook configuration)"));
        }
        Ok(())
    }

    /// Links, FIFOs and sockets may not be made inside a git directory: host git opens its
    /// files by name (appending to `logs/HEAD` follows a symlink to `~/.bashrc`; a FIFO
    /// blocks it). Known git directories come from the policy; one the command made itself
    /// is recognised by its name or its `HEAD`. The check after the run looks again.
    fn outside_git_dirs(&self, t: &Target) -> Step<()> {
        if crate::git::shape::inside_git_dir(&self.sup.policy.git_dirs, &t.path) {
            return Err(self.refuse(t, "no links or special files inside a git directory"));
        }
        Ok(())
    }

    /// An entry whose name matters to git made here (the kernel makes files only in
    /// directories made during the run, which are in the journal anyway): its directory
    /// goes to the journal, for the check to see whether it became a git directory. git's
    /// discovery (`is_git_directory` in setup.c) takes a `HEAD` beside `objects` and `refs`
    /// of any kind it may enter (an executable file does), or beside a `commondir`; a
    /// `.git` file names one; `config` and `config.worktree` are what the check reads.
    fn git_name_made(&self, t: &Target) -> Step<()> {
        const GIT_NAMES: &[&[u8]] =
            &[b"HEAD", b"objects", b"refs", b"commondir", b"config", b"config.worktree", b".git"];
        match t.path.parent() {
            Some(dir) if GIT_NAMES.contains(&t.name.to_bytes()) => self.journal(Entry::Wrote(dir.to_path_buf())),
            _ => Ok(()),
        }
    }

    /// A directory made where the kernel may not make files (a split directory, or one
    /// that existed at launch): one of the pool's is moved there instead, so that what is
    /// written below it is judged by the kernel. Only where nothing below could be
    /// protected or read-denied. `Ok(false)`: make it.
    fn take_from_pool(&self, t: &Target, mode: u32) -> Step<bool> {
        let Some(pool) = &self.sup.pool else { return Ok(false) };
        let pol = &self.sup.policy;
        // the pool's rules grant writing only: reading there is what it would be anyway
        let plain = pol.can_write(&t.path) && !pol.guards_below(&t.path) && !pol.read_denied_below(&t.path);
        if !plain || self.native_dir(t.parent.as_fd()) == Native::Files {
            tracing::debug!(plain, path = %t.path.display(), "no pool directory: not needed here");
            return Ok(false);
        }
        if !pool.hand_out(t.parent.as_fd(), &t.name).map_err(fail)? {
            // namespace mode: the command's directory is on a mount of its own view, and a
            // rename from srt's mount of the pool to it crosses mounts. The same directory
            // on srt's side, checked to be the same inode, takes it.
            let ours = (pool.any_left()).then(|| same_dir_here(t)).flatten();
            if !ours.is_some_and(|d| pool.hand_out(d.as_fd(), &t.name).unwrap_or(false)) {
                tracing::debug!(path = %t.path.display(), "no pool directory left for this filesystem");
                return Ok(false);
            }
        }
        // SAFETY: plain syscall with a live fd and a NUL-terminated name; a directory, so
        // nothing is followed.
        unsafe { libc::fchmodat(t.parent.as_raw_fd(), t.name.as_ptr(), self.mode(mode), 0) };
        Ok(true)
    }

    /// Runs a name rule; the target must not exist yet.
    fn creating(&self, t: &Target, kind: Kind) -> Step<()> {
        match sys::lstat_at(t.parent.as_fd(), &t.name) {
            Ok(_) => return Err(fail(libc::EEXIST)),
            Err(libc::ENOENT) => {}
            Err(e) => return Err(fail(e)),
        }
        match name_rules::create(&self.sup.policy, &t.path, kind) {
            Verdict::Allow => Ok(()),
            Verdict::Refuse(r) => Err(self.refuse(t, r)),
            Verdict::InstallGitConfig => Err(self.refuse(t, "a git config is only installed whole, by rename")),
        }
    }

    fn record_made(&self, t: &Target) {
        if let Ok(st) = sys::lstat_at(t.parent.as_fd(), &t.name) {
            self.made(&st);
        }
    }

    /// Directories are always made here, never by the kernel on the command's behalf (no
    /// Landlock rule grants making one), so that each new one is in the run's journal:
    /// the check after the run looks at exactly these, not at every directory there is.
    pub(super) fn mkdir(&self, dirfd: i32, addr: u64, mode: u32) -> Outcome {
        let run = || -> Step<Outcome> {
            let raw = self.path_arg(addr)?;
            let t = self.target(dirfd, &raw)?;
            self.creating(&t, Kind::Dir)?;
            self.no_project_dir(&t)?;
            self.journal(Entry::Dir(t.path.clone()))?;
            if !self.take_from_pool(&t, mode)? {
                // SAFETY: plain syscall with a live fd and a NUL-terminated name.
                let r = unsafe { libc::mkdirat(t.parent.as_raw_fd(), t.name.as_ptr(), self.mode(mode)) };
                sys::result(r.into()).map_err(fail)?;
            }
            self.record_made(&t);
            self.note(&t.path, "created");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    pub(super) fn mknod(&self, dirfd: i32, addr: u64, mode: u32) -> Outcome {
        let run = || -> Step<Outcome> {
            let kind = match mode & libc::S_IFMT {
                0 | libc::S_IFREG => Kind::File,
                libc::S_IFIFO | libc::S_IFSOCK => Kind::Special,
                // devices: refused by Landlock (no MakeChar/MakeBlock right) and by DAC
                _ => return Ok(Outcome::Continue),
            };
            let raw = self.path_arg(addr)?;
            // FIFOs and sockets are made here only (no Landlock rule grants them), so that
            // none can appear inside a git directory, whose files host git opens
            if kind == Kind::File && self.native_parent(base(dirfd), raw.to_bytes()) == Some(Native::Files) {
                return Ok(Outcome::Continue);
            }
            let t = self.target(dirfd, &raw)?;
            self.creating(&t, kind)?;
            if kind == Kind::Special {
                self.outside_git_dirs(&t)?;
                self.journal(Entry::Special(t.path.clone()))?;
            }
            self.git_name_made(&t)?;
            let m = (mode & libc::S_IFMT) | self.mode(mode);
            // SAFETY: plain syscall with a live fd and a NUL-terminated name.
            let r = unsafe { libc::mknodat(t.parent.as_raw_fd(), t.name.as_ptr(), m, 0) };
            sys::result(r.into()).map_err(fail)?;
            self.record_made(&t);
            self.note(&t.path, "created");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    pub(super) fn symlink(&self, target_addr: u64, dirfd: i32, addr: u64) -> Outcome {
        let run = || -> Step<Outcome> {
            let target = self.path_arg(target_addr)?;
            let raw = self.path_arg(addr)?;
            let t = self.target(dirfd, &raw)?;
            self.creating(&t, Kind::Symlink)?;
            self.no_project_dir(&t)?;
            self.outside_git_dirs(&t)?;
            self.journal(Entry::Special(t.path.clone()))?;
            self.git_name_made(&t)?;
            // SAFETY: plain syscall with a live fd and NUL-terminated strings.
            let r = unsafe { libc::symlinkat(target.as_ptr(), t.parent.as_raw_fd(), t.name.as_ptr()) };
            sys::result(r.into()).map_err(fail)?;
            self.record_made(&t);
            self.note(&t.path, "created");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    pub(super) fn link(&self, dirfds: [i32; 2], addrs: [u64; 2], flags: i32) -> Outcome {
        let run = || -> Step<Outcome> {
            // the source is a descriptor or a followed symlink (O_TMPFILE publishing): the
            // kernel judges where that object may get a name
            if flags & (libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) != 0 {
                return Ok(Outcome::Continue);
            }
            let (old, new) = (self.path_arg(addrs[0])?, self.path_arg(addrs[1])?);
            self.names_changed();
            if self.both_native(dirfds, &old, &new, false) {
                return Ok(Outcome::Continue);
            }
            let src = self.target(dirfds[0], &old)?;
            let dst = self.target(dirfds[1], &new)?;
            let st = sys::lstat_at(src.parent.as_fd(), &src.name).map_err(fail)?;
            if sys::file_type(&st) == libc::S_IFDIR {
                return Err(fail(libc::EPERM));
            }
            self.check_single_name(&st)?;
            if kind_of(&st) == Kind::Symlink {
                self.no_project_dir(&dst)?;
            }
            match sys::lstat_at(dst.parent.as_fd(), &dst.name) {
                Ok(_) => return Err(fail(libc::EEXIST)),
                Err(libc::ENOENT) => {}
                Err(e) => return Err(fail(e)),
            }
            if let Verdict::Refuse(r) = name_rules::link(&self.sup.policy, &src.path, &dst.path) {
                return Ok(self.refuse(&dst, r));
            }
            self.git_name_made(&dst)?;
            // SAFETY: plain syscall with live fds and NUL-terminated names.
            let r = unsafe {
                libc::linkat(src.parent.as_raw_fd(), src.name.as_ptr(), dst.parent.as_raw_fd(), dst.name.as_ptr(), 0)
            };
            sys::result(r.into()).map_err(fail)?;
            if sys::file_type(&st) == libc::S_IFREG {
                if let Ok(mut l) = self.sup.linked.lock() {
                    l.insert((st.st_dev, st.st_ino));
                }
            }
            self.note(&dst.path, "linked");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    pub(super) fn rename(&self, dirfds: [i32; 2], addrs: [u64; 2], flags: u32) -> Outcome {
        let run = || -> Step<Outcome> {
            if flags & libc::RENAME_WHITEOUT != 0 {
                return Ok(Outcome::Continue);
            }
            let (old, new) = (self.path_arg(addrs[0])?, self.path_arg(addrs[1])?);
            self.directories_moved();
            // files move natively below write rules; a directory never does (no rule grants
            // making one), so that each one moved is in the run's journal
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            if self.both_native(dirfds, &old, &new, exchange) && !self.moves_directory(dirfds, &old, &new, flags) {
                return Ok(Outcome::Continue);
            }
            let src = self.target(dirfds[0], &old)?;
            let dst = self.target(dirfds[1], &new)?;
            let s = sys::lstat_at(src.parent.as_fd(), &src.name).map_err(fail)?;
            let d = match sys::lstat_at(dst.parent.as_fd(), &dst.name) {
                Ok(d) => Some(d),
                Err(libc::ENOENT) => None,
                Err(e) => return Err(fail(e)),
            };
            if flags & libc::RENAME_NOREPLACE != 0 && d.is_some() {
                return Err(fail(libc::EEXIST));
            }
            let existing = |st: &libc::stat| Existing { made_by_run: self.made_by_run(st) };
            let pol = &self.sup.policy;
            let verdict =
                name_rules::rename(pol, &src.path, existing(&s), kind_of(&s), &dst.path, d.as_ref().map(existing));
            let verdict = match (flags & libc::RENAME_EXCHANGE != 0, verdict, &d) {
                (true, Verdict::Allow, Some(d)) => {
                    name_rules::rename(pol, &dst.path, existing(d), kind_of(d), &src.path, Some(existing(&s)))
                }
                (true, Verdict::Allow, None) => return Err(fail(libc::ENOENT)),
                (true, Verdict::InstallGitConfig, _) => Verdict::Refuse("a git config is only installed by rename"),
                (_, v, _) => v,
            };
            // a protected inode must not get a new name or lose one; a git config install
            // replaces the destination whole and never writes through it
            let install = verdict == Verdict::InstallGitConfig;
            for st in std::iter::once(&s).chain(d.as_ref().filter(|_| !install)) {
                if self.sup.protected.contains(&(st.st_dev, st.st_ino)) {
                    return Ok(self.refuse(&dst, "a second name of a protected file"));
                }
            }
            match verdict {
                Verdict::Allow => {}
                Verdict::Refuse(r) => return Ok(self.refuse(&dst, r)),
                Verdict::InstallGitConfig => return self.install_git_config(&src, &s, &dst),
            }
            // both sides of an exchange get a new name
            if matches!(kind_of(&s), Kind::Dir | Kind::Symlink) {
                self.no_project_dir(&dst)?;
            }
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            if exchange && d.as_ref().is_some_and(|d| matches!(kind_of(d), Kind::Dir | Kind::Symlink)) {
                self.no_project_dir(&src)?;
            }
            if kind_of(&s) == Kind::Dir {
                self.journal(Entry::Moved(dst.path.clone()))?;
            }
            self.git_name_made(&dst)?;
            if flags & libc::RENAME_EXCHANGE != 0 {
                self.git_name_made(&src)?;
            }
            if flags & libc::RENAME_EXCHANGE != 0 && d.as_ref().is_some_and(|d| kind_of(d) == Kind::Dir) {
                self.journal(Entry::Moved(src.path.clone()))?;
            }
            if matches!(kind_of(&s), Kind::Symlink | Kind::Special) {
                self.outside_git_dirs(&dst)?;
                self.journal(Entry::Special(dst.path.clone()))?;
            }
            if flags & libc::RENAME_EXCHANGE != 0
                && d.as_ref().is_some_and(|d| matches!(kind_of(d), Kind::Symlink | Kind::Special))
            {
                self.outside_git_dirs(&src)?;
                self.journal(Entry::Special(src.path.clone()))?;
            }
            // SAFETY: plain syscall with live fds and NUL-terminated names.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    src.parent.as_raw_fd(),
                    src.name.as_ptr(),
                    dst.parent.as_raw_fd(),
                    dst.name.as_ptr(),
                    flags,
                )
            };
            sys::result(r).map_err(fail)?;
            if let (Some(d), false) = (&d, flags & libc::RENAME_EXCHANGE != 0) {
                self.forget(d);
            }
            self.note(&dst.path, "renamed");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    /// `rename(config.lock, config)` into a git directory: the content is checked, and a
    /// copy of it, in a file the command holds no descriptor of, is installed, so nothing
    /// written to the source afterwards reaches the installed config.
    fn install_git_config(&self, src: &Target, s: &libc::stat, dst: &Target) -> Step<Outcome> {
        if sys::file_type(s) != libc::S_IFREG || s.st_nlink != 1 {
            return Ok(self.refuse(dst, "a git config must be a plain file with one name"));
        }
        let file =
            sys::open_entry(src.parent.as_fd(), &src.name, libc::O_RDONLY | libc::O_NOFOLLOW, 0).map_err(fail)?;
        let text = read_capped(&file, crate::git::config::MAX_LEN).map_err(fail)?;
        if let Err(refusal) = crate::git::config::check_at(&text, self.sup.policy.worktree_ups(&dst.path)) {
            crate::warn!("refused to install {}: {refusal}", dst.path.display());
            return Ok(self.refuse(dst, "git config content not allowed (see the warning)"));
        }
        let mode = u64::from(s.st_mode & 0o777);
        let (tmp, out) = (1..=16)
            .find_map(|i| {
                let name = CString::new(format!(".srt-config-{}-{i}", std::process::id())).ok()?;
                let how = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
                sys::open_entry(dst.parent.as_fd(), &name, how, mode).ok().map(|f| (name, f))
            })
            .ok_or_else(|| fail(libc::EEXIST))?;
        let written = write_all(&out, &text);
        // SAFETY: plain syscalls with live fds and NUL-terminated names.
        let r = written.and_then(|()| {
            sys::result(
                unsafe {
                    libc::renameat(dst.parent.as_raw_fd(), tmp.as_ptr(), dst.parent.as_raw_fd(), dst.name.as_ptr())
                }
                .into(),
            )
        });
        if let Err(e) = r {
            // SAFETY: removing our own temporary file.
            unsafe { libc::unlinkat(dst.parent.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(fail(e));
        }
        if let Ok(st) = sys::fstat(out.as_fd()) {
            self.made(&st);
        }
        // the rename the command asked for also removes the source name
        // SAFETY: plain syscall with a live fd and a NUL-terminated name.
        unsafe { libc::unlinkat(src.parent.as_raw_fd(), src.name.as_ptr(), 0) };
        self.note(&dst.path, "git config checked and installed");
        Ok(Outcome::Value(0))
    }

    pub(super) fn unlink(&self, dirfd: i32, addr: u64, flags: i32) -> Outcome {
        let run = || -> Step<Outcome> {
            let raw = self.path_arg(addr)?;
            if flags & libc::AT_REMOVEDIR != 0 {
                self.directories_moved();
            } else {
                self.names_changed();
            }
            if self.native_parent(base(dirfd), raw.to_bytes()) >= Some(Native::Write) {
                return Ok(Outcome::Continue);
            }
            let t = self.target(dirfd, &raw)?;
            let st = sys::lstat_at(t.parent.as_fd(), &t.name).map_err(fail)?;
            let e = Existing { made_by_run: self.made_by_run(&st) };
            if let Verdict::Refuse(r) = name_rules::remove(&self.sup.policy, &t.path, e) {
                return Ok(self.refuse(&t, r));
            }
            // SAFETY: plain syscall with a live fd and a NUL-terminated name.
            let r = unsafe { libc::unlinkat(t.parent.as_raw_fd(), t.name.as_ptr(), flags & libc::AT_REMOVEDIR) };
            sys::result(r.into()).map_err(fail)?;
            self.forget(&st);
            self.note(&t.path, "removed");
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }

    pub(super) fn truncate(&self, addr: u64, len: i64) -> Outcome {
        let run = || -> Step<Outcome> {
            let raw = self.path_arg(addr)?;
            if self.native_parent(Base::Cwd, raw.to_bytes()) >= Some(Native::Write) {
                return Ok(Outcome::Continue);
            }
            let t = self.target(libc::AT_FDCWD, &raw)?;
            if !self.sup.policy.can_write(&t.path) {
                return Ok(self.refuse(&t, "not writable by the policy"));
            }
            let file = match sys::open_entry(t.parent.as_fd(), &t.name, libc::O_WRONLY | libc::O_NOFOLLOW, 0) {
                Ok(f) => f,
                Err(libc::ELOOP) => return Ok(Outcome::Continue),
                Err(e) => return Err(fail(e)),
            };
            self.check_single_name(&sys::fstat(file.as_fd()).map_err(fail)?)?;
            // SAFETY: plain syscall on a descriptor we own.
            sys::result(unsafe { libc::ftruncate(file.as_raw_fd(), len) }.into()).map_err(fail)?;
            Ok(Outcome::Value(0))
        };
        run().unwrap_or_else(|o| o)
    }
}

/// The directory `t.parent` as srt's own mount namespace reaches it by its path, if that
/// is the same directory (opened without following any symlink).
fn same_dir_here(t: &Target) -> Option<OwnedFd> {
    let dir = t.path.parent()?;
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let fd = sys::openat2(None, &c, libc::O_PATH | libc::O_DIRECTORY, 0, sys::RESOLVE_NO_SYMLINKS).ok()?;
    let (a, b) = (sys::fstat(fd.as_fd()).ok()?, sys::fstat(t.parent.as_fd()).ok()?);
    (a.st_dev == b.st_dev && a.st_ino == b.st_ino).then_some(fd)
}

fn read_capped(f: &OwnedFd, max: usize) -> Result<Vec<u8>, Errno> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe { libc::read(f.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            n if n < 0 => return Err(sys::last_errno()),
            0 => return Ok(out),
            n => {
                out.extend_from_slice(&buf[..n as usize]);
                if out.len() > max {
                    return Err(libc::EFBIG);
                }
            }
        }
    }
}

fn write_all(f: &OwnedFd, mut data: &[u8]) -> Result<(), Errno> {
    while !data.is_empty() {
        // SAFETY: writing from a live slice of the given length.
        let n = unsafe { libc::write(f.as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if n < 0 {
            return Err(sys::last_errno());
        }
        data = &data[n as usize..];
    }
    Ok(())
}
