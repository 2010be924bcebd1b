//! The check after the run: git repositories the command made or changed anywhere in the
//! writable trees, whose files would make a later, unsandboxed `git` run a program.
//!
//! The rules in [`crate::git::guard`] hold for the git directories known at launch. A
//! command can also make new ones where no rule can follow it: `git init vendor/lib`,
//! a bare repository (`HEAD`, `objects/`, `refs/`, `config`) in any directory, a `.git` file
//! naming one. Landlock grants rights by directory, not by name, and a new directory below
//! a writable one inherits its rights, so these cannot all be refused as they happen without
//! mediating every file creation. A host `git` runs their `config` (`core.fsmonitor`,
//! `core.pager`, ...) and `hooks/` as soon as someone runs `git` there, or runs `git status`
//! in a superproject the command registered them in as submodules.
//!
//! So once every process of the command is gone, srt walks the writable trees (without
//! following symlinks) and checks every directory git would take for a git directory (one
//! holding `HEAD`): `config` and `config.worktree` must pass
//! [`crate::git::config::check_at`], `commondir` may only point to an ancestor, `hooks/`
//! may only hold `*.sample` files. What is checked is decided by ctime, which no command
//! can set back (rename and link update it too): in a git directory that became one
//! during the run (it, or its `HEAD`, changed), everything, whatever its age, so that
//! files left dormant by an earlier run count; elsewhere what changed during the run. The
//! targets of `commondir` and of `.git` files and symlinks made during the run are checked
//! in full. A `.git` directory without `HEAD` is checked for what changed, so nothing can
//! be left in one to wait for a later run to add the `HEAD`. The repositories that existed
//! at launch and were guarded by the rules ([`crate::git::guard`]) are checked only for
//! what changed: their older files are the user's own.
//!
//! What fails is renamed to `<name>.srt-quarantined` (nothing is deleted) and reported.
//! Directories the command made unreadable or unsearchable are opened after giving their
//! owner (srt runs as the command's user) full rights for the moment of the check; what
//! still cannot be checked is moved aside whole, and what cannot be moved is reported as
//! an error.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::git::config;
use crate::git::dirfd::*;
pub use crate::git::report::{tell, Quarantined, Report, Stamp};
use crate::git::shape::{gitfile_target, ups_for};

/// Entries looked at, at most: a bound on the work at exit (a writable `$HOME` with a
/// million files takes about a second). Beyond it srt says what it did not check.
const MAX_ENTRIES: usize = 5_000_000;

/// Walks `roots` (absolute, canonical directories) whole and quarantines what fails the
/// checks: for a directory moved during the run, with everything it holds.
/// `trusted` are the git directories the rules guarded during the run that already were
/// git directories (held a `HEAD`) at launch: what they held then is the user's.
pub fn audit(roots: &[PathBuf], since: Stamp, trusted: &[PathBuf], allow_git_config: bool) -> Report {
    let roots = top_level(roots);
    let mut a = Auditor::new(since, allow_git_config, trusted.to_vec(), roots.clone());
    for root in &roots {
        a.walk_root(root);
    }
    a.finish()
}

/// The roots that are directories and not inside another root.
fn top_level(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        roots.iter().filter(|r| r.symlink_metadata().is_ok_and(|m| m.is_dir())).cloned().collect();
    dirs.sort();
    dirs.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        if !out.iter().any(|o| d.starts_with(o)) {
            out.push(d);
        }
    }
    out
}

/// A symlink's directory and contents -> `Some(why)` to move it aside.
pub(crate) type LinkJudge = Box<dyn Fn(&Path, &OsStr) -> Option<String>>;

pub(crate) struct Auditor {
    since: Stamp,
    allow_git_config: bool,
    trusted: Vec<PathBuf>,
    roots: Vec<PathBuf>,
    /// Targets of `.git` files and symlinks made during the run.
    later: Vec<PathBuf>,
    /// Git directories checked in full already (by dev and inode).
    done: Vec<(u64, u64)>,
    report: Report,
    /// Names of directories moved aside by a walk when made or changed during the run
    /// ([`Auditor::refuse_made_dirs`]).
    made_dirs_refused: Option<fn(&OsStr) -> bool>,
    /// Entries a walk reads before it stops ([`MAX_ENTRIES`]; smaller in unit tests).
    max_entries: usize,
    /// The check after a run's judge of symlinks a walk meets ([`Auditor::judge_links`]).
    links: Option<LinkJudge>,
}

/// A directory waiting to be read, and the mode to give it back when srt had to open it up.
struct Pending {
    path: PathBuf,
    fd: OwnedFd,
    restore: Option<libc::mode_t>,
}

impl Auditor {
    pub(crate) fn new(since: Stamp, allow_git_config: bool, trusted: Vec<PathBuf>, roots: Vec<PathBuf>) -> Auditor {
        Auditor {
            since,
            allow_git_config,
            trusted,
            roots,
            later: Vec::new(),
            done: Vec::new(),
            report: Report::default(),
            made_dirs_refused: None,
            max_entries: MAX_ENTRIES,
            links: None,
        }
    }

    /// `.git` files and symlinks made during the run: what they name is a git directory,
    /// checked in full; then the report.
    pub(crate) fn finish(mut self) -> Report {
        for target in std::mem::take(&mut self.later) {
            self.check_named(&target);
        }
        self.report
    }

    fn changed(&self, st: &libc::stat) -> bool {
        Stamp::ctime(st).at_or_after(self.since)
    }

    pub(crate) fn unchecked(&mut self, what: String) {
        self.report.unchecked.push(what);
    }

    pub(crate) fn walk_root(&mut self, root: &Path) {
        let fd = match open_dir(libc_cwd(), &c_path(root)) {
            Ok(fd) => fd,
            Err(e) => return self.unchecked(format!("{}: {e}", root.display())),
        };
        self.walk_open(root, fd.as_fd());
    }

    /// Walks the open directory `dir` (at `path`) and everything below it.
    pub(crate) fn walk_open(&mut self, path: &Path, dir: BorrowedFd<'_>) {
        let fd = match nix::unistd::dup(dir) {
            Ok(fd) => fd,
            Err(e) => return self.unchecked(format!("{}: {e}", path.display())),
        };
        let restore = open_up(fd.as_fd());
        let mut stack = vec![Pending { path: path.to_path_buf(), fd, restore }];
        while let Some(dir) = stack.pop() {
            if self.report.entries >= self.max_entries {
                // while srt may still search it: its parent is reached through it
                self.too_many(&dir.path, dir.fd.as_fd());
                give_back(dir.fd.as_fd(), dir.restore);
                continue;
            }
            self.read_dir(&dir, &mut stack);
            give_back(dir.fd.as_fd(), dir.restore);
        }
    }

    fn read_dir(&mut self, dir: &Pending, stack: &mut Vec<Pending>) {
        if pseudo_fs(dir.fd.as_fd()) {
            return;
        }
        let names: Vec<(CString, Option<Type>)> = match nix::unistd::dup(&dir.fd).and_then(Dir::from_fd) {
            Ok(mut l) => {
                let mut v = Vec::new();
                for e in l.iter() {
                    match e {
                        Ok(e) => v.push((e.file_name().to_owned(), e.file_type())),
                        Err(err) => {
                            self.unchecked(format!("{}: {err}", dir.path.display()));
                            break;
                        }
                    }
                }
                v
            }
            Err(e) => return self.unchecked(format!("{}: {e}", dir.path.display())),
        };
        let mut head = false;
        for (name, kind) in names {
            let b = name.as_bytes();
            if b == b"." || b == b".." {
                continue;
            }
            self.report.entries += 1;
            let kind = match kind {
                Some(k) => Some(k),
                None => match lstat_at(dir.fd.as_fd(), &name) {
                    Ok(Some(st)) if is_dir(&st) => Some(Type::Directory),
                    Ok(Some(st)) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => Some(Type::Symlink),
                    _ => None,
                },
            };
            if b == b"HEAD" {
                head = true;
            }
            if b == b".git" && kind != Some(Type::Directory) {
                self.note_gitfile(dir.fd.as_fd(), &dir.path);
            }
            if kind == Some(Type::Symlink) && self.link_refused(dir.fd.as_fd(), &dir.path, &name) {
                continue;
            }
            if kind == Some(Type::Directory) && self.made_and_refused(dir.fd.as_fd(), &name) {
                let why =
                    "a protected project directory name (editor, agent or hook configuration), made during the run";
                self.quarantine(dir.fd.as_fd(), &dir.path, OsStr::from_bytes(b), why.into());
                continue;
            }
            if kind == Some(Type::Directory) {
                let path = dir.path.join(OsStr::from_bytes(b));
                if let Some(child) = self.open_child(dir.fd.as_fd(), &dir.path, &name) {
                    stack.push(Pending { path, fd: child.0, restore: child.1 });
                }
            }
        }
        // a `.git` without `HEAD` is no git directory yet, but what is written there now
        // would count as soon as one appears
        if head || dir.path.file_name() == Some(OsStr::new(".git")) {
            self.check_git_dir(dir.fd.as_fd(), &dir.path, false);
        }
    }

    /// Opens a subdirectory to walk, opening it up first if the command locked srt out;
    /// what cannot be opened is moved aside.
    pub(crate) fn open_child(
        &mut self,
        parent: BorrowedFd<'_>,
        path: &Path,
        name: &CStr,
    ) -> Option<(OwnedFd, Option<libc::mode_t>)> {
        match open_dir(parent, name) {
            Ok(fd) => {
                let restore = open_up(fd.as_fd());
                return Some((fd, restore));
            }
            // replaced by something else since it was listed: only the host can have done
            // that, nothing of the command's runs any more
            Err(Errno::ENOTDIR | Errno::ELOOP | Errno::ENOENT) => return None,
            Err(Errno::EACCES) => {}
            Err(e) => {
                self.quarantine(
                    parent,
                    path,
                    OsStr::from_bytes(name.to_bytes()),
                    format!("could not be checked ({e})"),
                );
                return None;
            }
        }
        let n = OsStr::from_bytes(name.to_bytes());
        match lstat_at(parent, name) {
            Ok(Some(st)) if mine(&st) => {
                let mode = st.st_mode & 0o7777;
                // SAFETY: live descriptor, NUL-terminated name; a directory, so no symlink
                // is followed (and nothing of the command's runs to swap it).
                unsafe { libc::fchmodat(parent.as_raw_fd(), name.as_ptr(), mode | 0o700, 0) };
                if let Ok(fd) = open_dir(parent, name) {
                    return Some((fd, Some(mode)));
                }
                self.quarantine(parent, path, n, "a directory srt could not open to check".into());
            }
            // someone else's directory (another user's private /tmp entry, another run's
            // TMPDIR): never renamed. The command, with srt's uid and no capabilities, could
            // not have written in it unless it may write and search there.
            Ok(Some(_)) => {
                // SAFETY: live descriptor, NUL-terminated name.
                let writable = unsafe {
                    libc::faccessat(parent.as_raw_fd(), name.as_ptr(), libc::W_OK | libc::X_OK, libc::AT_EACCESS)
                } == 0;
                if writable {
                    self.unchecked(format!("{}: writable but not listable by srt", path.join(n).display()));
                }
            }
            _ => {}
        }
        None
    }

    /// A `.git` that is a file (`gitdir: X`) or a symlink, made during the run: X is a git
    /// directory to check in full after the walk.
    pub(crate) fn note_gitfile(&mut self, dir: BorrowedFd<'_>, path: &Path) {
        let name = cname(".git");
        let Ok(Some(st)) = lstat_at(dir, &name) else { return };
        if !self.changed(&st) {
            return;
        }
        let target = match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK => nix::fcntl::readlinkat(dir, name.as_c_str()).ok().map(PathBuf::from),
            libc::S_IFREG => self.read(dir, path, &name).ok().and_then(|t| gitfile_target(&t)),
            _ => None,
        };
        if let Some(t) = target {
            self.later.push(path.join(t));
        }
    }

    /// Checks in full the git directory a `.git` file or symlink names, wherever it lies
    /// inside the writable trees (outside them the command could not have written it).
    fn check_named(&mut self, target: &Path) {
        let Ok(fd) = nix::fcntl::open(target, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
        else {
            return;
        };
        let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) else { return };
        if !self.roots.iter().any(|r| real.starts_with(r)) {
            return;
        }
        let restore = open_up(fd.as_fd());
        self.check_git_dir(fd.as_fd(), &real, true);
        give_back(fd.as_fd(), restore);
    }

    /// `dir` may be a git directory. `full`: check every file, whatever its age.
    pub(crate) fn check_git_dir(&mut self, dir: BorrowedFd<'_>, path: &Path, full: bool) {
        // git makes `objects` and `refs` as directories; anything else there that changed
        // during the run (an executable file git enters all the same, a file one chmod
        // away from it, a symlink) only makes a git directory of its own: moved aside, so
        // that no shape is left for a later run to switch on without a trace
        for name in ["objects", "refs"] {
            if let Ok(Some(st)) = lstat_at(dir, &cname(name)) {
                if !is_dir(&st) && self.changed(&st) {
                    self.quarantine(dir, path, name, "not a directory: it made this a git directory".into());
                }
            }
        }
        if self.trusted.iter().any(|g| g == path) {
            // a repository at launch, guarded by the rules all along: only what changed
            return self.check_files(dir, path, false);
        }
        let head = lstat_at(dir, &cname("HEAD"));
        let became = fstat(dir).is_some_and(|st| self.changed(&st))
            || matches!(head, Ok(Some(ref st)) if self.changed(st))
            || head.is_err();
        self.check_files(dir, path, full || became);
    }

    fn check_files(&mut self, dir: BorrowedFd<'_>, path: &Path, full: bool) {
        if full {
            if let Some(st) = fstat(dir) {
                if self.done.contains(&(st.st_dev, st.st_ino)) {
                    return;
                }
                self.done.push((st.st_dev, st.st_ino));
            }
        }
        let ups = ups_for(path);
        for name in ["config", "config.worktree"] {
            let c = cname(name);
            let st = match lstat_at(dir, &c) {
                Ok(Some(st)) => st,
                Ok(None) => continue,
                Err(e) => {
                    self.quarantine_self(path, format!("{name} could not be checked ({e})"));
                    return;
                }
            };
            if !(full || self.changed(&st)) || self.allow_git_config {
                continue;
            }
            if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                self.quarantine(dir, path, name, "a git config that is not a plain file".into());
                continue;
            }
            match self.read(dir, path, &c) {
                Ok(text) => {
                    if let Err(refusal) = config::check_at(&text, ups) {
                        self.quarantine(dir, path, name, refusal.to_string());
                    }
                }
                Err(e) => self.quarantine(dir, path, name, format!("could not be read to check ({e})")),
            }
        }
        self.check_commondir(dir, path, full);
        self.check_hooks(dir, path, full);
    }

    /// Moves the git directory at `path` itself aside.
    fn quarantine_self(&mut self, path: &Path, why: String) {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else { return };
        match open_dir(libc_cwd(), &c_path(parent)) {
            Ok(p) => self.quarantine(p.as_fd(), parent, name, why),
            Err(e) => self.unchecked(format!("{}: {why}; and its directory: {e}", path.display())),
        }
    }

    /// git writes `commondir` only in `worktrees/<id>/`, as `../..`: a path to an ancestor,
    /// which is then a git directory checked in full. Anything else is moved aside.
    fn check_commondir(&mut self, dir: BorrowedFd<'_>, path: &Path, full: bool) {
        let c = cname("commondir");
        let st = match lstat_at(dir, &c) {
            Ok(Some(st)) => st,
            Ok(None) => return,
            Err(e) => return self.quarantine_self(path, format!("commondir could not be checked ({e})")),
        };
        let text = if st.st_mode & libc::S_IFMT == libc::S_IFREG { self.read(dir, path, &c).ok() } else { None };
        let steps = text.as_deref().and_then(|t| std::str::from_utf8(t).ok()).and_then(|t| {
            let t = t.trim_end_matches('\n');
            let parts: Vec<&str> = t.split('/').collect();
            (!t.is_empty() && parts.iter().all(|p| *p == "..")).then_some(parts.len())
        });
        match steps.and_then(|n| path.ancestors().nth(n).map(Path::to_path_buf)) {
            Some(common) => match open_dir(libc_cwd(), &c_path(&common)) {
                Ok(fd) => {
                    let restore = open_up(fd.as_fd());
                    self.check_git_dir(fd.as_fd(), &common, true);
                    give_back(fd.as_fd(), restore);
                }
                Err(e) => self.unchecked(format!("{}: {e}", common.display())),
            },
            None if full || self.changed(&st) => {
                self.quarantine(dir, path, "commondir", "commondir must lead to a directory above it".into())
            }
            None => {}
        }
    }

    fn check_hooks(&mut self, dir: BorrowedFd<'_>, path: &Path, full: bool) {
        let c = cname("hooks");
        let st = match lstat_at(dir, &c) {
            Ok(Some(st)) => st,
            Ok(None) => return,
            Err(e) => return self.quarantine_self(path, format!("hooks could not be checked ({e})")),
        };
        if !is_dir(&st) {
            if full || self.changed(&st) {
                self.quarantine(dir, path, "hooks", "hooks that is not a plain directory".into());
            }
            return;
        }
        let hooks_path = path.join("hooks");
        let Some((fd, restore)) = self.open_child(dir, path, &c) else { return };
        let names: Vec<CString> = match nix::unistd::dup(&fd).and_then(Dir::from_fd) {
            Ok(mut l) => l.iter().flatten().map(|e| e.file_name().to_owned()).collect(),
            Err(e) => {
                give_back(fd.as_fd(), restore);
                return self.quarantine(dir, path, "hooks", format!("could not be listed ({e})"));
            }
        };
        for name in names {
            let b = name.as_bytes();
            if b == b"." || b == b".." || b.ends_with(b".sample") || b.ends_with(b".srt-quarantined") {
                continue;
            }
            let judge = match lstat_at(fd.as_fd(), &name) {
                Ok(Some(st)) => full || self.changed(&st),
                Ok(None) => false,
                Err(_) => true,
            };
            if judge {
                self.quarantine(fd.as_fd(), &hooks_path, OsStr::from_bytes(b), "a hook git would run".into());
            }
        }
        give_back(fd.as_fd(), restore);
    }

    /// Reads a small file, giving its owner read permission for the moment if needed.
    fn read(&mut self, dir: BorrowedFd<'_>, _path: &Path, name: &CStr) -> std::io::Result<Vec<u8>> {
        match read_capped(dir, name) {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {}
            other => return other,
        }
        let Ok(Some(st)) = lstat_at(dir, name) else { return Err(std::io::Error::from_raw_os_error(libc::EACCES)) };
        if !mine(&st) || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(std::io::Error::from_raw_os_error(libc::EACCES));
        }
        let mode = st.st_mode & 0o7777;
        // SAFETY: live descriptor, NUL-terminated name of a regular file.
        unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), mode | 0o400, 0) };
        let r = read_capped(dir, name);
        // SAFETY: as above, giving the mode back.
        unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), mode, 0) };
        r
    }
}

#[path = "audit_links.rs"]
mod links;
#[path = "quarantine.rs"]
mod quarantine;

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
