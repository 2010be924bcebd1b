//! Links and renames: a file given a new name, a directory moved, two names exchanged.
//! Where the kernel may do it itself (both ends below write rules that allow it) the call
//! proceeds; elsewhere the supervisor performs it on descriptors of ours, so that the
//! journal hears of every name git reads and of every directory moved.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd};

use super::names::*;
use super::native::Native;
use super::resolve::Target;
use super::sys::{self};
use super::{Call, Outcome};
use crate::check::journal::Entry;
use crate::fs::name_rules::{self, Existing, Kind, Verdict};

impl Call<'_> {
    /// The kernel may link or move a file from `old` to `new` by itself: the source's
    /// directory is below a write rule, and the destination's lets it make files there
    /// (both, for an exchange). Anywhere else the supervisor gives the file its new name,
    /// so that the journal hears of names git reads.
    pub(super) fn both_native(&self, dirfds: [i32; 2], old: &CStr, new: &CStr, exchange: bool) -> bool {
        let need = if exchange { Native::Files } else { Native::Write };
        self.native_parent(base(dirfds[0]), old.to_bytes()).is_some_and(|n| n >= need)
            && self.native_parent(base(dirfds[1]), new.to_bytes()) == Some(Native::Files)
    }

    /// For `CONTINUE`: whether a rename moves a directory, a symlink or a FIFO (either way,
    /// with `RENAME_EXCHANGE`), as far as a look now tells. Only a hint: the kernel refuses
    /// one that appears there meanwhile, since no rule lets it make those.
    pub(super) fn moves_directory(&self, dirfds: [i32; 2], old: &CStr, new: &CStr, flags: u32) -> bool {
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
            if let Some(o) = self.across_host_shm(&src, &dst, None) {
                return o;
            }
            let st = sys::lstat_at(src.parent.as_fd(), &src.name).map_err(fail)?;
            if sys::file_type(&st) == libc::S_IFDIR {
                return Err(fail(libc::EPERM));
            }
            self.check_single_name(&st)?;
            if kind_of(&st) == Kind::Symlink {
                self.no_project_dir(&dst)?;
                self.moved_link_leads_where_writable(&src.parent, &src.name, &dst)?;
            }
            match sys::lstat_at(dst.parent.as_fd(), &dst.name) {
                Ok(_) => return Err(fail(libc::EEXIST)),
                Err(libc::ENOENT) => {}
                Err(e) => return Err(fail(e)),
            }
            if let Verdict::Refuse(r) = name_rules::link(&self.sup.policy, &src.path, &dst.path) {
                return Ok(self.refuse(&dst, r));
            }
            // a second name for a link or a special file is one as much as the first: kept
            // out of git directories, and in the journal whatever the kind seen here (another
            // thread may swap one in before linkat acts by name), so the check after the run
            // judges it again where it stands
            if sys::file_type(&st) != libc::S_IFREG {
                self.outside_git_dirs(&dst)?;
            }
            self.journal(Entry::Special(dst.path.clone()))?;
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
            // a whiteout leaves a 0:0 character device at the source's name, made by no call
            // the supervisor sees (round 7's second review: `.git/logs/HEAD` became one);
            // overlay filesystems make them for themselves, a command has no use for one
            if flags & libc::RENAME_WHITEOUT != 0 {
                return Ok(Outcome::Fail(libc::EPERM));
            }
            let (old, new) = (self.path_arg(addrs[0])?, self.path_arg(addrs[1])?);
            self.directories_moved();
            // files move natively below write rules; a directory never does (the filter traps
            // every rename), so that each one moved is in the run's journal
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            if self.both_native(dirfds, &old, &new, exchange) && !self.moves_directory(dirfds, &old, &new, flags) {
                return Ok(Outcome::Continue);
            }
            let src = self.target(dirfds[0], &old)?;
            let dst = self.target(dirfds[1], &new)?;
            if let Some(o) = self.across_host_shm(&src, &dst, Some(flags)) {
                return o;
            }
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
            // both sides of an exchange get a new name; a link's relative contents may lead
            // elsewhere from there
            if matches!(kind_of(&s), Kind::Dir | Kind::Symlink) {
                self.no_project_dir(&dst)?;
            }
            if kind_of(&s) == Kind::Symlink {
                self.moved_link_leads_where_writable(&src.parent, &src.name, &dst)?;
            }
            let exchange = flags & libc::RENAME_EXCHANGE != 0;
            if exchange && d.as_ref().is_some_and(|d| matches!(kind_of(d), Kind::Dir | Kind::Symlink)) {
                self.no_project_dir(&src)?;
            }
            if exchange && d.as_ref().is_some_and(|d| kind_of(d) == Kind::Symlink) {
                self.moved_link_leads_where_writable(&dst.parent, &dst.name, &src)?;
            }
            // every supervised rename's destination goes to the journal, whatever the kind
            // seen here: another thread may swap a directory or link in before the rename
            // acts by name, and the check after the run then looks at what really landed
            self.journal(Entry::Moved(dst.path.clone()))?;
            self.journal(Entry::Special(dst.path.clone()))?;
            self.git_name_made(&dst)?;
            if flags & libc::RENAME_EXCHANGE != 0 {
                self.git_name_made(&src)?;
            }
            if flags & libc::RENAME_EXCHANGE != 0 {
                self.journal(Entry::Moved(src.path.clone()))?;
                self.journal(Entry::Special(src.path.clone()))?;
            }
            if matches!(kind_of(&s), Kind::Symlink | Kind::Special) {
                self.outside_git_dirs(&dst)?;
            }
            if flags & libc::RENAME_EXCHANGE != 0
                && d.as_ref().is_some_and(|d| matches!(kind_of(d), Kind::Symlink | Kind::Special))
            {
                self.outside_git_dirs(&src)?;
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
}
