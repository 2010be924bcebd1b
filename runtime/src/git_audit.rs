//! The check after the run: git repositories the command made or changed anywhere in the
//! writable trees, whose files would make a later, unsandboxed `git` run a program.
//!
//! The rules in [`crate::git_guard`] hold for the git directories known at launch. A
//! command can also make new ones where no rule can follow it: `git init vendor/lib`,
//! a bare repository (`HEAD`, `objects/`, `refs/`, `config`) in any directory, a `.git` file
//! naming one. Landlock grants rights by directory, not by name, and a new directory below
//! a writable one inherits its rights, so these cannot all be refused as they happen without
//! mediating every file creation. A host `git` runs their `config` (`core.fsmonitor`,
//! `core.pager`, ...) and `hooks/` as soon as someone runs `git` there, or runs `git status`
//! in a superproject the command registered them in as submodules.
//!
//! So once every process of the command is gone, srt walks the writable trees (without
//! following symlinks) and, in every directory git would take for a git directory (one
//! holding `HEAD`), checks what changed during the run (the inode's ctime, which no command
//! can set back; rename and link update it): `config` and `config.worktree` must pass
//! [`crate::git_config::check_at`], `commondir` may only point to an ancestor (which is
//! then checked as a git directory too), `hooks/` may only gain `*.sample` files. What
//! fails is renamed to `<name>.srt-quarantined` (nothing is deleted) and reported.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::dir::{Dir, Type};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::git_config;

/// Entries looked at, at most: a bound on the work at exit (a writable `$HOME` with a
/// million files takes about a second). Beyond it srt says what it did not check.
const MAX_ENTRIES: usize = 5_000_000;

/// A moment on the clock the kernel uses for ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    sec: i64,
    nsec: i64,
}

impl Stamp {
    /// Now, minus a margin: ctime comes from the coarse clock, which may lag the fine one
    /// by a timer tick, so a change made right after launch must not look older.
    pub fn run_start() -> Stamp {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes into a local timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        let sec = ts.tv_sec - 1;
        Stamp { sec, nsec: ts.tv_nsec }
    }

    fn ctime(st: &libc::stat) -> Stamp {
        Stamp { sec: st.st_ctime, nsec: st.st_ctime_nsec }
    }
}

/// A file the audit moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    pub path: PathBuf,
    pub moved_to: PathBuf,
    pub why: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub quarantined: Vec<Quarantined>,
    /// What could not be checked (unreadable directories, the entry bound).
    pub unchecked: Vec<String>,
    pub entries: usize,
}

/// Walks `roots` (absolute, canonical directories) and quarantines what fails the checks.
pub fn audit(roots: &[PathBuf], since: Stamp, allow_git_config: bool) -> Report {
    let mut a = Auditor { since, allow_git_config, report: Report::default() };
    for root in top_level(roots) {
        a.walk_root(&root);
    }
    a.report
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

struct Auditor {
    since: Stamp,
    allow_git_config: bool,
    report: Report,
}

/// A directory waiting to be read: its path, and how many components lie between it and
/// the outermost `.git` above it (`Some(0)` for that `.git` itself).
struct Pending {
    path: PathBuf,
    fd: OwnedFd,
    below_git: Option<usize>,
}

fn open_dir(at: BorrowedFd<'_>, name: &CStr) -> nix::Result<OwnedFd> {
    let how = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    nix::fcntl::openat(at, name, how, Mode::empty())
}

fn lstat_at(dir: BorrowedFd<'_>, name: &CStr) -> Option<libc::stat> {
    // SAFETY: an all-zero stat is a valid value that fstatat overwrites.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, NUL-terminated name, pointer to a local.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    (r == 0).then_some(st)
}

fn cname(s: &str) -> CString {
    // the names used here are literals without NUL bytes
    CString::new(s).unwrap_or_default()
}

/// Filesystems that hold no files a command could write.
fn pseudo_fs(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: an all-zero statfs is valid; fstatfs overwrites it.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, pointer to a local.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut sf) } != 0 {
        return false;
    }
    // f_type's type and the constants' differ between architectures: compare as i64
    #[allow(clippy::unnecessary_cast)]
    let pseudo = [
        libc::PROC_SUPER_MAGIC as i64,
        libc::SYSFS_MAGIC as i64,
        libc::CGROUP2_SUPER_MAGIC as i64,
        libc::CGROUP_SUPER_MAGIC as i64,
        libc::DEVPTS_SUPER_MAGIC as i64,
    ];
    #[allow(clippy::unnecessary_cast)]
    let t = sf.f_type as i64;
    pseudo.contains(&t)
}

impl Auditor {
    fn walk_root(&mut self, root: &Path) {
        let Ok(c) = CString::new(root.as_os_str().as_bytes()) else { return };
        let fd = match open_dir(libc_cwd(), &c) {
            Ok(fd) => fd,
            Err(e) => return self.report.unchecked.push(format!("{}: {e}", root.display())),
        };
        let below_git = (root.file_name() == Some(OsStr::new(".git"))).then_some(0);
        let mut stack = vec![Pending { path: root.to_path_buf(), fd, below_git }];
        while let Some(dir) = stack.pop() {
            if self.report.entries >= MAX_ENTRIES {
                self.report.unchecked.push(format!(
                    "{} and what was left of the walk: more than {MAX_ENTRIES} entries",
                    dir.path.display()
                ));
                return;
            }
            self.read_dir(dir, &mut stack);
        }
    }

    fn read_dir(&mut self, dir: Pending, stack: &mut Vec<Pending>) {
        if pseudo_fs(dir.fd.as_fd()) {
            return;
        }
        let dup = match nix::unistd::dup(&dir.fd) {
            Ok(d) => d,
            Err(e) => return self.report.unchecked.push(format!("{}: {e}", dir.path.display())),
        };
        let mut listing = match Dir::from_fd(dup) {
            Ok(l) => l,
            Err(e) => return self.report.unchecked.push(format!("{}: {e}", dir.path.display())),
        };
        let mut has_head = false;
        let mut subdirs: Vec<CString> = Vec::new();
        for entry in listing.iter() {
            let Ok(entry) = entry else {
                self.report.unchecked.push(format!("{}: unreadable entries", dir.path.display()));
                break;
            };
            self.report.entries += 1;
            let name = entry.file_name();
            match name.to_bytes() {
                b"." | b".." => continue,
                b"HEAD" => has_head = true,
                _ => {}
            }
            let is_dir = match entry.file_type() {
                Some(t) => t == Type::Directory,
                None => lstat_at(dir.fd.as_fd(), name).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR),
            };
            if is_dir {
                subdirs.push(name.to_owned());
            }
        }
        if has_head {
            let ups = dir.below_git.map_or(0, |n| n + 1);
            self.check_git_dir(dir.fd.as_fd(), &dir.path, ups);
        }
        for name in subdirs {
            let path = dir.path.join(OsStr::from_bytes(name.as_bytes()));
            let below_git = match dir.below_git {
                Some(n) => Some(n + 1),
                None => (name.as_bytes() == b".git").then_some(0),
            };
            match open_dir(dir.fd.as_fd(), &name) {
                Ok(fd) => stack.push(Pending { path, fd, below_git }),
                // replaced by something else since it was listed: nothing of the command's
                // runs any more, so only the host did that
                Err(nix::errno::Errno::ENOTDIR | nix::errno::Errno::ELOOP | nix::errno::Errno::ENOENT) => {}
                Err(e) => self.report.unchecked.push(format!("{}: {e}", path.display())),
            }
        }
    }

    fn changed(&self, st: &libc::stat) -> bool {
        Stamp::ctime(st) >= self.since
    }

    /// `dir` holds a `HEAD`: git may take it for a git directory.
    fn check_git_dir(&mut self, dir: BorrowedFd<'_>, path: &Path, ups: usize) {
        for name in ["config", "config.worktree"] {
            let c = cname(name);
            let Some(st) = lstat_at(dir, &c) else { continue };
            if !self.changed(&st) || self.allow_git_config {
                continue;
            }
            if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                self.quarantine(dir, path, name, "a git config that is not a plain file".into());
                continue;
            }
            match read_capped(dir, &c) {
                Ok(text) => {
                    if let Err(refusal) = git_config::check_at(&text, ups) {
                        self.quarantine(dir, path, name, refusal.to_string());
                    }
                }
                Err(e) => self.report.unchecked.push(format!("{}/{name}: {e}", path.display())),
            }
        }
        self.check_commondir(dir, path, ups);
        self.check_hooks(dir, path);
    }

    /// git writes `commondir` only in `worktrees/<id>/`, as `../..`: a path to an ancestor.
    /// Anything else would send git to a config and hooks nobody checked.
    fn check_commondir(&mut self, dir: BorrowedFd<'_>, path: &Path, ups: usize) {
        let c = cname("commondir");
        let Some(st) = lstat_at(dir, &c) else { return };
        if !self.changed(&st) {
            return;
        }
        let text = if st.st_mode & libc::S_IFMT == libc::S_IFREG { read_capped(dir, &c).ok() } else { None };
        let steps = text.as_deref().and_then(|t| std::str::from_utf8(t).ok()).and_then(|t| {
            let t = t.trim_end_matches('\n');
            let parts: Vec<&str> = t.split('/').collect();
            (!t.is_empty() && parts.iter().all(|p| *p == "..")).then_some(parts.len())
        });
        let target = steps.and_then(|n| path.ancestors().nth(n).map(|a| (n, a.to_path_buf())));
        match target {
            Some((n, common)) => {
                let Ok(cpath) = CString::new(common.as_os_str().as_bytes()) else { return };
                match open_dir(libc_cwd(), &cpath) {
                    Ok(fd) => self.check_git_dir(fd.as_fd(), &common, ups.saturating_sub(n)),
                    Err(e) => self.report.unchecked.push(format!("{}: {e}", common.display())),
                }
            }
            None => self.quarantine(dir, path, "commondir", "commondir must lead to a directory above it".into()),
        }
    }

    fn check_hooks(&mut self, dir: BorrowedFd<'_>, path: &Path) {
        let c = cname("hooks");
        let Some(st) = lstat_at(dir, &c) else { return };
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            if self.changed(&st) {
                self.quarantine(dir, path, "hooks", "hooks that is not a plain directory".into());
            }
            return;
        }
        let hooks_path = path.join("hooks");
        let fd = match open_dir(dir, &c) {
            Ok(fd) => fd,
            Err(e) => return self.report.unchecked.push(format!("{}: {e}", hooks_path.display())),
        };
        let names: Vec<CString> = match nix::unistd::dup(&fd).and_then(Dir::from_fd) {
            Ok(mut l) => l.iter().flatten().map(|e| e.file_name().to_owned()).collect(),
            Err(e) => return self.report.unchecked.push(format!("{}: {e}", hooks_path.display())),
        };
        for name in names {
            let b = name.as_bytes();
            if b == b"." || b == b".." || b.ends_with(b".sample") || b.ends_with(b".srt-quarantined") {
                continue;
            }
            if lstat_at(fd.as_fd(), &name).is_some_and(|st| self.changed(&st)) {
                let n = String::from_utf8_lossy(b).into_owned();
                self.quarantine(fd.as_fd(), &hooks_path, &n, "a hook git would run".into());
            }
        }
    }

    /// Renames `dir/name` to `name.srt-quarantined` (or `.1`, `.2`, ... when taken).
    fn quarantine(&mut self, dir: BorrowedFd<'_>, path: &Path, name: &str, why: String) {
        let from = cname(name);
        for i in 0..100 {
            let to = if i == 0 { format!("{name}.srt-quarantined") } else { format!("{name}.srt-quarantined.{i}") };
            let cto = cname(&to);
            // SAFETY: live descriptor, NUL-terminated names.
            let r = unsafe {
                libc::renameat2(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), cto.as_ptr(), libc::RENAME_NOREPLACE)
            };
            if r == 0 {
                self.report.quarantined.push(Quarantined { path: path.join(name), moved_to: path.join(&to), why });
                return;
            }
            if nix::errno::Errno::last() != nix::errno::Errno::EEXIST {
                break;
            }
        }
        let e = std::io::Error::last_os_error();
        self.report.unchecked.push(format!("{}: could not move it aside ({e}): {why}", path.join(name).display()));
    }
}

fn libc_cwd() -> BorrowedFd<'static> {
    // SAFETY: AT_FDCWD is a constant every *at call accepts; it is never closed.
    unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) }
}

fn read_capped(dir: BorrowedFd<'_>, name: &CStr) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let how = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let fd = nix::fcntl::openat(dir, name, how, Mode::empty())?;
    let mut text = Vec::new();
    std::fs::File::from(fd).take(git_config::MAX_LEN as u64 + 1).read_to_end(&mut text)?;
    Ok(text)
}

/// Tells the user what the audit did, one line per file.
pub fn tell(report: &Report) {
    for q in &report.quarantined {
        crate::warn!(
            "moved {} aside to {}: a later git there would have run what the command planted ({})",
            q.path.display(),
            q.moved_to.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
            q.why
        );
    }
    for u in &report.unchecked {
        crate::warn!("could not check for planted git configuration: {u}");
    }
}

#[cfg(test)]
#[path = "git_audit_tests.rs"]
mod tests;
