//! The check after a run, driven by its journal: it looks at what the command made, never
//! at the whole writable tree, so it costs what the command changed.
//!
//! Why the journal is enough: no Landlock rule grants making a symlink or a FIFO, or a
//! directory outside the pool's directories, so every one the command made or moved went
//! through the supervisor, which wrote it (or the pool directory it is in) to the journal
//! before doing it ([`crate::check::journal`]). Files alone can make a git
//! directory (git takes `HEAD` beside executable files named `objects` and `refs`, or
//! beside a `commondir`), so the kernel makes files only below directories made during the
//! run, which the journal names; in a directory that existed at launch the supervisor
//! makes them, and journals the directory when the name is one git reads. So, with every
//! process of the command gone, srt looks at:
//! - each directory made, and the one it was made in (`git init x` makes `x/.git`;
//!   `mkdir objects refs` turns their directory into a bare repository), and each one a
//!   name git reads was made in (`HEAD`, `objects`, `refs`, `commondir`, `config`,
//!   `.git`, whatever their kind);
//! - each directory moved, with everything in it (it may have been prepared elsewhere),
//!   and each directory handed out from the pool, with everything in it (below it the
//!   kernel makes directories too, so the journal names none of them);
//! - each link or special file made: one inside a git directory is moved aside, and so is
//!   a symlink that now leads where the command could not write (moved directories' links
//!   too);
//! - the git directories the rules guarded, for what changed in them;
//! - the targets of `.git` files and symlinks made during the run.
//!
//! Git directories found this way are checked as [`crate::git::audit`] does: a config or
//! hook that could make a later host `git` run a program is moved aside and reported.
//! Directories the command locked are opened up for the check and given their modes back.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::check::journal::{Entry, Header};
use crate::fs::policy::under;
use crate::git::audit::{Auditor, Report};
use crate::git::dirfd::{c_path, cname, give_back, libc_cwd, lstat_at, open_dir, open_up};

/// Runs the check for one run.
pub fn check(h: &Header, entries: &[Entry], all_gone: bool) -> Report {
    // The run's pools are places the command could write too (every directory of a pool
    // has a write rule), and a pool kept in srt's state directory lies outside the
    // writable trees: without them as roots, what the command planted in a pool directory
    // it was not given (a git directory a `.git` file in its tree names) went unchecked.
    let mut roots = h.roots.clone();
    for p in &h.pools {
        roots.push(p.clone());
        roots.extend(p.canonicalize().ok().filter(|c| c != p));
    }
    let h = &Header { roots, ..h.clone() };
    let mut c = Check { a: Auditor::new(h.since, h.allow_git_config, h.trusted.clone(), h.roots.clone()), h };
    // below the pool's directories the kernel made the directories, unjudged by the
    // supervisor, which refuses these names wherever they are made
    c.a.refuse_made_dirs(crate::fs::protected_names::project_dir_name);
    // a link leads somewhere new when it or a directory on its way moves: each one made,
    // and each one in a directory moved, is judged again where it stands now
    let pol = h.link_policy();
    c.a.judge_links(Box::new(move |dir, text| {
        use crate::fs::name_rules::{symlink_to, Verdict};
        let d = crate::fs::link_target::destination(dir, text);
        match symlink_to(&pol, &d.path, d.is_dir, d.host_writes) {
            Verdict::Refuse(why) => Some(format!("{why}: it leads to {}", d.path.display())),
            _ => None,
        }
    }));
    for g in &h.guarded {
        c.git_dir_at(g);
    }
    let mut dirs = BTreeSet::new();
    let mut moved = BTreeSet::new();
    let mut specials = BTreeSet::new();
    let mut shared_memory = Vec::new();
    for e in entries {
        match e {
            Entry::Dir(p) | Entry::Wrote(p) => {
                dirs.insert(p.clone());
                dirs.extend(p.parent().map(Path::to_path_buf));
            }
            Entry::Moved(p) => {
                moved.insert(p.clone());
                dirs.extend(p.parent().map(Path::to_path_buf));
            }
            Entry::Special(p) => {
                specials.insert(p.clone());
            }
            Entry::Shm { path, dev, ino } => shared_memory.push((path.clone(), *dev, *ino)),
        }
    }
    // what the run made in the host's /dev/shm (landlock mode) goes with it
    let removed = crate::fs::shm::remove_made(&shared_memory);
    tracing::debug!(removed, "shared memory the run left");
    for p in &moved {
        // the supervisor refuses a directory moved to such a name, so one there got past it
        // (a swap between its look and the rename by name)
        if p.file_name().is_some_and(crate::fs::protected_names::project_dir_name) {
            c.project_dir_moved_in(p);
        }
        c.walk(p);
    }
    for d in &dirs {
        c.git_dir_at(d);
    }
    for s in &specials {
        c.special(s);
    }
    // what the command wrote into directories of the pool it was not given is checked like a
    // moved directory, and stays
    for p in &h.pools {
        for kept in crate::fs::pool::finish(p, all_gone) {
            c.walk(&kept);
            c.a.unchecked(format!(
                "{}: srt's own directory, written into by the command; left in place",
                kept.display()
            ));
        }
    }
    c.a.finish()
}

struct Check<'h> {
    a: Auditor,
    h: &'h Header,
}

/// A directory opened from its writable root down, with the modes to give back to the
/// directories on the way that srt had to open up.
struct Opened {
    chain: Vec<(OwnedFd, Option<libc::mode_t>)>,
}

impl Opened {
    fn fd(&self) -> BorrowedFd<'_> {
        // never empty: `open` returns `None` rather than an empty chain
        match self.chain.last() {
            Some((fd, _)) => fd.as_fd(),
            None => libc_cwd(),
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for (fd, mode) in self.chain.iter().rev() {
            give_back(fd.as_fd(), *mode);
        }
    }
}

impl Check<'_> {
    /// The writable root `p` lies in (the deepest one).
    fn root_of(&self, p: &Path) -> Option<&Path> {
        self.h.roots.iter().filter(|r| under(p, r)).max_by_key(|r| r.as_os_str().len()).map(PathBuf::as_path)
    }

    /// Opens the directory `p` without following a symlink below its root (what a path
    /// names may have changed since the journal recorded it: a directory moved later is in
    /// the journal at its new place too). `None`: not a directory there any more.
    fn open(&mut self, p: &Path) -> Option<Opened> {
        let root = self.root_of(p)?.to_path_buf();
        let fd = open_dir(libc_cwd(), &c_path(&root)).ok()?;
        let restore = open_up(fd.as_fd());
        let mut chain = vec![(fd, restore)];
        let mut at = root.clone();
        for comp in p.strip_prefix(&root).ok()?.components() {
            let name = std::ffi::CString::new(comp.as_os_str().as_bytes()).ok()?;
            let parent = chain.last()?.0.as_fd();
            let (fd, restore) = self.a.open_child(parent, &at, &name)?;
            at.push(comp);
            chain.push((fd, restore));
        }
        Some(Opened { chain })
    }

    /// `p`, if it is a git directory (or holds a `.git` file or symlink made during the
    /// run): checked for what could make a later host git run a program.
    fn git_dir_at(&mut self, p: &Path) {
        let Some(o) = self.open(p) else { return };
        self.a.note_gitfile(o.fd(), p);
        if is_git_dir(o.fd(), p) {
            self.a.check_git_dir(o.fd(), p, false);
        }
    }

    /// A directory moved during the run: everything in it.
    fn walk(&mut self, p: &Path) {
        let Some(o) = self.open(p) else { return };
        self.a.walk_open(p, o.fd());
    }

    /// A directory at a protected project name (`.vscode`, `.claude`, ...) that came there by
    /// a rename: moved aside.
    fn project_dir_moved_in(&mut self, p: &Path) {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else { return };
        let Some(o) = self.open(parent) else { return };
        let c = std::ffi::CString::new(name.as_bytes()).unwrap_or_default();
        if matches!(lstat_at(o.fd(), &c), Ok(Some(st)) if st.st_mode & libc::S_IFMT == libc::S_IFDIR) {
            let why = "a protected project directory (editor, agent or hook configuration) moved in".into();
            self.a.quarantine(o.fd(), parent, name, why);
        }
    }

    /// A link, FIFO or socket made during the run: moved aside if it is inside a git
    /// directory (host git would open it by name), and a `.git` symlink's target checked.
    fn special(&mut self, p: &Path) {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else { return };
        let Some(o) = self.open(parent) else { return };
        let c = std::ffi::CString::new(name.as_bytes()).unwrap_or_default();
        let Ok(Some(st)) = lstat_at(o.fd(), &c) else { return };
        let kind = st.st_mode & libc::S_IFMT;
        if kind == libc::S_IFDIR || kind == libc::S_IFREG {
            return;
        }
        if name == OsStr::new(".git") {
            self.a.note_gitfile(o.fd(), parent);
            return;
        }
        if kind == libc::S_IFLNK && self.a.link_refused(o.fd(), parent, &c) {
            return;
        }
        if crate::git::shape::inside_git_dir(&self.h.guarded, p) {
            self.a.quarantine(o.fd(), parent, name, "a link or special file inside a git directory".into());
        }
    }
}

/// [`crate::git::shape::is_git_dir`], on an open directory.
fn is_git_dir(dir: BorrowedFd<'_>, path: &Path) -> bool {
    if path.file_name() == Some(OsStr::new(".git")) {
        return true;
    }
    // an entry that cannot be looked at counts as there: checking too much costs little
    crate::git::shape::shaped(|name| match lstat_at(dir, &cname(name)) {
        Ok(Some(st)) => Some(crate::git::dirfd::is_dir(&st)),
        Ok(None) => None,
        Err(_) => Some(name != "HEAD"),
    })
}
