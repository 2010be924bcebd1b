//! srt's mandatory write denies: files and directories that would let a sandboxed command
//! plant code the host runs later (shell rc files, git hooks and config, editor settings).
//!
//! Applied at the top of the working directory and of every writable tree (whether or not
//! they exist there) and, where they exist, below them down to `mandatoryDenySearchDepth`.
//! Git directories are returned separately: what is guarded inside them is
//! [`crate::git::guard`]'s business. A git directory is a `.git` (directory, or a file or
//! symlink naming one), or a directory git would take for one (`HEAD` with `objects/` and
//! `refs/`, or with a `commondir`).
//!
//! The search costs at most [`BUDGET`] directory entries, so that a launch does not slow
//! down as the trees grow. A directory it had no budget left to list is not assumed safe:
//! it is returned in `mediated`, where no Landlock rule grants writing and the supervisor
//! judges every write by the same names, at any depth, recognising git directories as it
//! goes ([`crate::fs::policy::FsPolicy::guard`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fs::protected_names::{self, PROJECT};

/// Directories never descended into while searching (as srt's `!**/node_modules/**`).
const SKIP_DIRS: &[&str] = &["node_modules"];

/// Directory entries the search reads at most in the working directory's tree (about a
/// millisecond on disk), and in all the other writable trees together.
pub const BUDGET: usize = 4_096;
pub const OTHER_BUDGET: usize = 1_024;

/// CPU time the search may take in the working directory's tree, and in the other
/// writable trees together. An entry costs a fraction of a microsecond to list on one
/// filesystem and several on another (tmpfs on this 6.x kernel lists about 1.5 µs an
/// entry), so the count alone let a launch in a million-entry tree on tmpfs spend 8 ms
/// here. What is not listed in time is mediated, like what the count does not reach.
/// The thread's own CPU time, not the clock's: a search descheduled under load lists as
/// much as on an idle machine. Debug builds (the test suite's) run this code about twenty
/// times slower, and get twenty times the time, so that they list what a release build does.
pub const SEARCH_CPU: Duration = Duration::from_micros(1_000 * DEBUG_SLOWER);
pub const OTHER_SEARCH_CPU: Duration = Duration::from_micros(500 * DEBUG_SLOWER);
const DEBUG_SLOWER: u64 = if cfg!(debug_assertions) { 20 } else { 1 };

/// Trees the supervisor judges whole, at most: more would cost the Landlock plan (which
/// splits around each) more than it saves; siblings are merged into their directory.
const MAX_MEDIATED: usize = 64;

/// Entries a writable tree other than the working directory may have at its top and still
/// be split around its protected names: a bigger one (a busy `/tmp`) is written through
/// the supervisor. Each entry costs the plan a `statx` and a Landlock rule (five system
/// calls) at every launch, about 20 µs on our VM: `/tmp` with 105 entries cost 2.6 ms per
/// command split, and costs its writes a supervisor round trip each mediated (files made
/// in the command's own TMPDIR, where `mktemp` and most tools write, stay native).
pub const SPLIT_MAX: usize = 64;

/// Entries a listing made for the home rules reads at most: of a wildcard's directory
/// (`~/.config/autostart/*.desktop`), and four times this of a writable home or XDG base
/// that is split around each of its entries (a bigger one is judged whole by the
/// supervisor). Kept apart from [`SPLIT_MAX`]: a home that is also the working directory
/// is where the command works.
pub const LISTING_MAX: usize = 512;

/// What the mandatory rules protect in a run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mandatory {
    /// Never writable (whether or not they exist).
    pub deny: Vec<PathBuf>,
    /// Git directories, guarded by [`crate::git::guard`] (whether or not they exist).
    pub git_dirs: Vec<PathBuf>,
    /// Directories the search could not list within its budget.
    pub mediated: Vec<PathBuf>,
    /// The tops of the trees (the working directory, each writable tree): the project
    /// names hold there for names made later too, wildcards included
    /// ([`crate::fs::policy::FsPolicy::guard`]).
    pub tops: Vec<PathBuf>,
    /// The dot-entries at the top of each top the search listed, and whether each is a
    /// directory: for the rule on new dot-entries (`crate::fs::prepare`), without a second
    /// listing of a top that may hold a million names.
    pub top_dots: Vec<(PathBuf, bool)>,
}

/// The protected paths for a run in `cwd` whose writable trees are `roots` (canonical).
pub fn mandatory_denies(cwd: &Path, roots: &[PathBuf], depth: u8) -> Mandatory {
    mandatory_denies_within(cwd, roots, depth, BUDGET, SEARCH_CPU)
}

/// `budget` entries and `cpu` time for the working directory's tree; the other trees share
/// at most [`OTHER_BUDGET`] entries and [`OTHER_SEARCH_CPU`].
fn mandatory_denies_within(cwd: &Path, roots: &[PathBuf], depth: u8, budget: usize, cpu: Duration) -> Mandatory {
    let mut out = Mandatory::default();
    let mut tops: Vec<PathBuf> = vec![cwd.to_path_buf()];
    for r in roots {
        if !tops.contains(r) {
            tops.push(r.clone());
        }
    }
    for top in &tops {
        protect_missing_at_top(top, &mut out);
    }
    // the working directory's tree first, with a budget of its own: it is where the
    // command works, and where a tree the search did not list costs most. The other trees
    // share a smaller one, down to the same depth: a repository nested in them (`a/b/.git`
    // in a second writable tree) is guarded like one in the project, and what the budget
    // does not reach is mediated, never assumed empty (a busy /tmp, over SPLIT_MAX at its
    // top, is mediated whole)
    for (group, mut left, time) in
        [(&tops[..1], budget, cpu), (&tops[1..], budget.min(OTHER_BUDGET), cpu.min(OTHER_SEARCH_CPU))]
    {
        let mut queue: VecDeque<(PathBuf, u8)> = group.iter().map(|t| (t.clone(), 0)).collect();
        let until = thread_cpu() + time;
        if !search(&mut queue, cwd, depth, &mut left, until, &mut out) {
            tracing::debug!(budget, mediated = out.mediated.len(), "protected-name search out of budget");
        }
    }
    out.mediated = collapse(std::mem::take(&mut out.mediated), MAX_MEDIATED);
    out.tops = tops;
    out
}

/// At most `max` trees: siblings merged into their directory, the deepest first, until
/// the list is short enough; what lies under another entry is dropped.
fn collapse(mut dirs: Vec<PathBuf>, max: usize) -> Vec<PathBuf> {
    loop {
        // drop what lies under another entry: sorted by components, everything below a
        // directory comes right after it, so one pass against the last one kept does it
        // (a set of every ancestor cost 75% of a launch in a 1M-entry tree)
        // (sorted on bytes with `/` as the smallest byte, which is component order for
        // canonical paths and a memcmp: Path's own comparison cost most of a launch here)
        let mut keyed: Vec<(Vec<u8>, PathBuf)> = dirs
            .into_iter()
            .map(|d| {
                use std::os::unix::ffi::OsStrExt;
                let key = d.as_os_str().as_bytes().iter().map(|&b| if b == b'/' { 0 } else { b }).collect();
                (key, d)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(Vec<u8>, PathBuf)> = Vec::with_capacity(keyed.len());
        for (key, d) in keyed {
            let below = kept.last().is_some_and(|(k, _)| {
                key.starts_with(k) && (key.len() == k.len() || key[k.len()] == 0 || k.last() == Some(&0))
            });
            if !below {
                kept.push((key, d));
            }
        }
        dirs = kept.into_iter().map(|(_, d)| d).collect();
        if dirs.len() <= max {
            return dirs;
        }
        // components, counted as separators (canonical paths: `/` is one, `/a/b` three)
        let depth = |d: &PathBuf| {
            use std::os::unix::ffi::OsStrExt;
            let bytes = d.as_os_str().as_bytes();
            bytes.iter().filter(|&&b| b == b'/').count() + usize::from(bytes.len() > 1)
        };
        let deepest = dirs.iter().map(depth).max().unwrap_or(0);
        if deepest <= 1 {
            return dirs;
        }
        dirs = dirs
            .into_iter()
            .map(|d| if depth(&d) == deepest { d.parent().map(Path::to_path_buf).unwrap_or(d) } else { d })
            .collect();
    }
}

/// Breadth first (the shallow levels, where the names matter most, come first) through
/// `queue`; `false` when the budget ran out, of entries or of CPU time (`until`, on the
/// thread's clock): what was left is then mediated.
fn search(
    queue: &mut VecDeque<(PathBuf, u8)>,
    cwd: &Path,
    depth: u8,
    left: &mut usize,
    until: Duration,
    out: &mut Mandatory,
) -> bool {
    while let Some((dir, level)) = queue.pop_front() {
        if level >= depth {
            continue;
        }
        if thread_cpu() >= until {
            out.mediated.push(dir);
            out.mediated.extend(queue.drain(..).filter(|(_, l)| *l < depth).map(|(d, _)| d));
            return false;
        }
        let before = *left;
        match list(&dir, left) {
            Listing::Done(_) if level == 0 && dir != cwd && before - *left > SPLIT_MAX => out.mediated.push(dir),
            Listing::Done(entries) => {
                if level == 0 {
                    let dots = entries.iter().filter(|(n, _)| n.starts_with('.'));
                    out.top_dots.extend(dots.map(|(n, d)| (dir.join(n), *d)));
                }
                protect_listed(&dir, &entries, out);
                if level > 0 {
                    git_dir_by_names(&dir, &entries, out);
                }
                // once per directory, not per entry: a component-wise `starts_with` for each
                // of the budget's entries cost milliseconds in a million-entry tree
                let in_cwd = crate::paths::under(&dir, cwd);
                for (name, is_dir) in entries {
                    if !is_dir || name == ".git" || SKIP_DIRS.contains(&name.as_str()) {
                        continue;
                    }
                    let d = dir.join(&name);
                    // another user's directory in a shared tree (/tmp): the command, with
                    // srt's uid, writes there only what its owner opened to everyone, and a
                    // mount view could not cover what lies inside it
                    if !in_cwd && !owned(&d) {
                        continue;
                    }
                    // one level further is not listed: look for a git directory there by name
                    if level + 1 >= depth {
                        git_dir_in(&d, false, out);
                    }
                    queue.push_back((d, level + 1));
                }
            }
            Listing::Unreadable => {}
            Listing::OverBudget => {
                out.mediated.push(dir);
                out.mediated.extend(queue.drain(..).filter(|(_, l)| *l < depth).map(|(d, _)| d));
                return false;
            }
        }
    }
    true
}

/// This thread's CPU time so far (zero where the clock cannot be read: the entry count
/// still bounds the search).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into a local.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(u64::try_from(ts.tv_sec).unwrap_or(0), u32::try_from(ts.tv_nsec).unwrap_or(0))
}

fn owned(d: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    d.symlink_metadata().is_ok_and(|m| m.uid() == unsafe { libc::geteuid() })
}

enum Listing {
    /// Names (UTF-8 only: the researched names are ASCII) and whether each is a directory.
    Done(Vec<(String, bool)>),
    Unreadable,
    OverBudget,
}

/// The entries of `dir`, unless listing them would take more than `left` entries.
///
/// The kernel lists as many entries per call as the buffer holds, and ext4 reads a hashed
/// directory about one 4 KiB block per hundred entries to fill it: libc's 32 KiB buffer
/// read a thousand entries of a 100,000-entry `/tmp` (0.75 ms) to find it over a budget of
/// 64. The buffer here is sized to what is left of the budget. An error part-way is taken
/// as over budget: what was not listed is judged by the supervisor, never taken as empty.
fn list(dir: &Path, left: &mut usize) -> Listing {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return Listing::Unreadable };
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Listing::Unreadable;
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut buf = vec![0u8; left.saturating_add(2).saturating_mul(64).clamp(2048, 32 * 1024)];
    let mut out = Vec::new();
    loop {
        // SAFETY: getdents64 writes at most the buffer's length into it.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
        let Ok(n) = usize::try_from(n) else { return Listing::OverBudget };
        if n == 0 {
            return Listing::Done(out);
        }
        for r in crate::fs::dirents::records(&buf[..n]) {
            let Ok((name, kind)) = r else { return Listing::OverBudget };
            if *left == 0 {
                return Listing::OverBudget;
            }
            *left -= 1;
            let Ok(name) = std::str::from_utf8(name) else { continue };
            let is_dir = match kind {
                libc::DT_DIR => true,
                libc::DT_UNKNOWN => dir.join(name).symlink_metadata().is_ok_and(|m| m.is_dir()),
                _ => false,
            };
            out.push((name.to_string(), is_dir));
        }
    }
}

/// At the top of a tree the project names are protected whether or not they exist (as
/// names are made: [`Mandatory::tops`]), and so is `.git`.
/// (The names that do not exist are protected by [`Mandatory::tops`], without a path of
/// their own for the Landlock plan to split around: the top is split already, since its
/// `.git` is guarded.)
fn protect_missing_at_top(top: &Path, out: &mut Mandatory) {
    git_dir_in(top, true, out);
}

/// The project names among `dir`'s entries (and, for names of two components, what is
/// there below a listed first one).
fn protect_listed(dir: &Path, entries: &[(String, bool)], out: &mut Mandatory) {
    for (name, _) in entries.iter().filter(|(n, _)| protected_names::starts_project_entry(n)) {
        for e in PROJECT {
            let first = e.path.split('/').next().unwrap_or(e.path);
            if !protected_names::covers(first, Path::new(name)) {
                continue;
            }
            if first.len() == e.path.len() {
                out.deny.push(dir.join(name));
            } else {
                let rest = &e.path[first.len() + 1..];
                let below = dir.join(name);
                // a wildcard in the second component: what is there matches or not
                if let Ok(rd) = std::fs::read_dir(&below).map(|r| r.flatten().collect::<Vec<_>>()) {
                    out.deny.extend(
                        rd.iter()
                            .filter(|x| {
                                x.file_name().to_str().is_some_and(|n| protected_names::covers(rest, Path::new(n)))
                            })
                            .map(|x| x.path()),
                    );
                }
            }
        }
    }
}

/// [`git_dir_in`] from a listing of `dir` (no look at the disk but for a `.git` that is
/// not a directory).
fn git_dir_by_names(dir: &Path, entries: &[(String, bool)], out: &mut Mandatory) {
    let has = |n: &str, want_dir: bool| entries.iter().any(|(e, d)| e == n && *d == want_dir);
    if has(".git", true) {
        out.git_dirs.push(dir.join(".git"));
    } else if entries.iter().any(|(e, _)| e == ".git") {
        git_dir_in(dir, false, out);
        return;
    }
    // `objects` and `refs` of any kind and mode (git enters executable files too; a chmod
    // leaves no trace in the journal), with or without a `HEAD`: one `HEAD` away
    let any = |n: &str| entries.iter().any(|(e, _)| e == n);
    let bare_shaped = any("objects") && any("refs");
    if bare_shaped || (has("HEAD", false) && any("commondir")) {
        out.git_dirs.push(dir.to_path_buf());
    }
}

/// `.git` in `dir`, and `dir` itself as a git directory (see the module's comment).
fn git_dir_in(dir: &Path, top: bool, out: &mut Mandatory) {
    let git = dir.join(".git");
    match git.symlink_metadata() {
        Ok(m) if m.is_dir() => out.git_dirs.push(git),
        // a worktree or submodule: `.git` is a file naming the real git dir; a symlink to
        // one is kept as it is too
        Ok(_) => {
            out.deny.push(git.clone());
            if let Ok(real) = git.canonicalize() {
                if real.is_dir() {
                    out.git_dirs.push(real);
                }
            }
        }
        // at the top of a tree `.git` is guarded before it exists (`git init`)
        Err(_) if top => out.git_dirs.push(git),
        Err(_) => {}
    }
    // A directory git would use as a git directory is guarded as one. At the top of a tree
    // one may not be made: that takes a `HEAD` file, so one may not appear. This holds
    // with a `.git` too: git falls back to the directory itself when `.git/HEAD` is made
    // invalid.
    if crate::git::shape::is_git_dir(dir) {
        out.git_dirs.push(dir.to_path_buf());
    } else if top {
        out.deny.push(dir.join("HEAD"));
    } else if dir.join("objects").symlink_metadata().is_ok() && dir.join("refs").symlink_metadata().is_ok() {
        // one `HEAD` away from a repository (of any kind: git enters executable files, and
        // a chmod leaves no trace in the journal): guarded as one already
        out.git_dirs.push(dir.to_path_buf());
    }
}

#[cfg(test)]
#[path = "mandatory_tests.rs"]
mod tests;
