//! Every call that makes or removes a name (opens: [`super::open`]; links and renames:
//! [`super::moves`]), and the checks they share. Each reads its
//! path arguments once, resolves them to descriptors of ours ([`super::resolve`]), asks
//! [`crate::fs::name_rules`] about the real locations and performs what is allowed on those
//! descriptors. What it does not grant, the kernel judges (`CONTINUE`) or is refused.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use super::native::Native;
use super::resolve::{self, Target, Why};
use super::sys::{self, Errno};
use super::tracee::Base;
use super::{Call, Outcome};
use crate::check::journal::Entry;
use crate::fs::name_rules::{self, Existing, Kind, Verdict};

pub(super) fn base(dirfd: i32) -> Base {
    if dirfd == libc::AT_FDCWD {
        Base::Cwd
    } else {
        Base::Fd(dirfd)
    }
}

pub(super) fn kind_of(st: &libc::stat) -> Kind {
    match sys::file_type(st) {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Symlink,
        libc::S_IFREG => Kind::File,
        _ => Kind::Special,
    }
}

/// `Err` carries the finished outcome: an error for the command, or CONTINUE where only the
/// kernel can judge.
pub(super) type Step<T> = Result<T, Outcome>;

pub(super) fn why(w: Why) -> Outcome {
    match w {
        Why::Unresolvable => Outcome::Continue,
        Why::Errno(e) => Outcome::Fail(e),
    }
}

pub(super) fn fail(e: Errno) -> Outcome {
    Outcome::Fail(e)
}

impl Call<'_> {
    /// A regular file with several names may be reachable from somewhere the policy
    /// protects; only the kernel's path-based Landlock check may decide for it.
    pub(super) fn check_single_name(&self, st: &libc::stat) -> Step<()> {
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

    pub(super) fn path_arg(&self, addr: u64) -> Step<CString> {
        self.t.read_path(addr).map_err(fail)
    }

    /// Resolves the parent of a path argument; the notification must still be pending.
    pub(super) fn target(&self, dirfd: i32, raw: &CStr) -> Step<Target> {
        let t = resolve::parent(&self.t, base(dirfd), raw.to_bytes()).map_err(why)?;
        if !self.valid() {
            return Err(Outcome::Gone);
        }
        // namespace mode's private /dev/shm has a rule of its own: the kernel judges there
        if self.private_shm(&t) {
            return Err(Outcome::Continue);
        }
        Ok(t)
    }

    pub(super) fn refuse(&self, t: &Target, rule: &'static str) -> Outcome {
        self.note(&t.path, rule);
        Outcome::Fail(libc::EACCES)
    }

    pub(super) fn mode(&self, mode: u32) -> u32 {
        mode & 0o7777 & !self.umask()
    }

    /// A directory named as a protected project entry (`.vscode`, `.claude`, `.husky`, ...),
    /// or a symlink by that name (it stands for a directory the command filled), may not be
    /// made, linked or moved in anywhere: below the top of a tree the rules protect such
    /// names only where they existed at launch, but an editor or agent that trusts a parent
    /// folder runs what a new one holds. Directories are always made here, so this costs
    /// nothing elsewhere (files of those names are judged where they are protected).
    pub(super) fn no_project_dir(&self, t: &Target) -> Step<()> {
        if crate::fs::protected_names::project_dir_name(std::ffi::OsStr::from_bytes(t.name.to_bytes())) {
            return Err(self.refuse(t, "a protected project directory name (editor, agent or hook configuration)"));
        }
        Ok(())
    }

    /// Links, FIFOs and sockets may not be made inside a git directory: host git opens its
    /// files by name (appending to `logs/HEAD` follows a symlink to `~/.bashrc`; a FIFO
    /// blocks it). Known git directories come from the policy; one the command made itself
    /// is recognised by its name or its `HEAD`. The check after the run looks again.
    pub(super) fn outside_git_dirs(&self, t: &Target) -> Step<()> {
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
    pub(super) fn git_name_made(&self, t: &Target) -> Step<()> {
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
    pub(super) fn take_from_pool(&self, t: &Target, mode: u32) -> Step<bool> {
        let Some(pool) = &self.sup.pool else { return Ok(false) };
        let pol = &self.sup.policy;
        // the pool's rules grant reading too: only where the policy lets the command read
        let plain = pol.can_write(&t.path)
            && pol.can_read(&t.path)
            && !pol.guards_below(&t.path)
            && !pol.read_denied_below(&t.path);
        if !plain || self.native_dir(t.parent.as_fd()) == Native::Files {
            tracing::debug!(plain, path = %t.path.display(), "no pool directory: not needed here");
            return Ok(false);
        }
        // Below a pool directory the kernel makes directories too, unjournaled: the check
        // walks its whole tree, as it does one moved in. Written before the move, for a
        // check done after srt's death, and only once a directory is taken: a test of
        // "any left" before it raced with another receiver's hand-out that failed and put
        // its directory back, and this one went out unjournaled.
        let record = || {
            self.journal(Entry::Moved(t.path.clone())).map_err(|o| match o {
                Outcome::Fail(e) => e,
                _ => libc::EIO,
            })
        };
        // the mode mkdir would give, set by the pool through its own descriptor before the
        // move (by name afterwards, it could land on a directory swapped in meanwhile)
        let mode = self.mode(mode);
        if !pool.hand_out(t.parent.as_fd(), &t.name, mode, &record).map_err(fail)? {
            // namespace mode: the command's directory is on a mount of its own view, and a
            // rename from srt's mount of the pool to it crosses mounts. The same directory
            // on srt's side, checked to be the same inode, takes it, unless the command's
            // view has it read-only (a missing allowWrite root: nothing below would be
            // writable there), where the kernel's answer stands.
            if sys::read_only_mount(t.parent.as_fd()) {
                return Err(fail(libc::EROFS));
            }
            let ours = (pool.any_left()).then(|| same_dir_here(t)).flatten();
            if !ours.is_some_and(|d| pool.hand_out(d.as_fd(), &t.name, mode, &record).unwrap_or(false)) {
                tracing::debug!(path = %t.path.display(), "no pool directory left for this filesystem");
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A symlink with the contents `text` about to stand at `t` is a write to where it
    /// leads ([`name_rules::symlink_to`]): made, renamed or linked there alike.
    pub(super) fn link_leads_where_writable(&self, t: &Target, text: &[u8]) -> Step<()> {
        let dir = t.path.parent().unwrap_or(std::path::Path::new("/"));
        let d = crate::fs::link_target::destination(dir, std::ffi::OsStr::from_bytes(text));
        match name_rules::symlink_to(&self.sup.policy, &d.path, d.is_dir, d.host_writes) {
            Verdict::Refuse(r) => {
                tracing::debug!(link = %t.path.display(), to = %d.path.display(), "{r}");
                Err(self.refuse(t, r))
            }
            _ => Ok(()),
        }
    }

    /// [`Call::link_leads_where_writable`] for the symlink `name` in `dir` given the new
    /// name `at` (a rename or a hard link of the link itself).
    pub(super) fn moved_link_leads_where_writable(&self, dir: &OwnedFd, name: &CStr, at: &Target) -> Step<()> {
        let text = sys::readlink_at(dir.as_fd(), name).map_err(fail)?;
        self.link_leads_where_writable(at, &text)
    }

    /// Runs a name rule; the target must not exist yet.
    pub(super) fn creating(&self, t: &Target, kind: Kind) -> Step<()> {
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

    pub(super) fn record_made(&self, t: &Target) {
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
            self.link_leads_where_writable(&t, target.to_bytes())?;
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
            if flags & libc::AT_REMOVEDIR == 0 && self.in_host_shm(&t) {
                return self.unlink_shm(&t);
            }
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
pub(super) fn same_dir_here(t: &Target) -> Option<OwnedFd> {
    let dir = t.path.parent()?;
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let fd = sys::openat2(None, &c, libc::O_PATH | libc::O_DIRECTORY, 0, sys::RESOLVE_NO_SYMLINKS).ok()?;
    let (a, b) = (sys::fstat(fd.as_fd()).ok()?, sys::fstat(t.parent.as_fd()).ok()?);
    (a.st_dev == b.st_dev && a.st_ino == b.st_ino).then_some(fd)
}

pub(super) fn read_capped(f: &OwnedFd, max: usize) -> Result<Vec<u8>, Errno> {
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

pub(super) fn write_all(f: &OwnedFd, mut data: &[u8]) -> Result<(), Errno> {
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
