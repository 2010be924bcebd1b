//! From validated settings to a canonical [`FsPolicy`]: `~` and relative paths resolved,
//! symlinks resolved (a deny on a link protects the link and its target), globs expanded
//! against the disk, mandatory denies, git directories, the settings files and the private
//! TMPDIR added.

use std::path::{Path, PathBuf};

use settings_schema::paths::{resolve, ResolvedEntry};
use settings_schema::{PathEntry, Settings};

use crate::error::LaunchError;
use crate::mandatory::mandatory_denies;
use crate::policy::FsPolicy;

/// Devices every command may write, as srt's built-in write paths. `/dev/pts` only in
/// namespace mode, where it is a private instance; in landlock mode only the command's own
/// terminal is (see [`Context::own_ttys`]).
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"];

/// Bounds on one glob's expansion, so a `**` under `/` cannot stall the launch.
const GLOB_MAX_ENTRIES: usize = 200_000;
const GLOB_MAX_DEPTH: usize = 32;
/// Bound on directories visited below git directories' `modules/` and `worktrees/`.
const GIT_WALK_MAX: usize = 5_000;

pub struct Context<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    pub tmpdir: &'a Path,
    /// Settings files that decide later runs (the one in use, `$SRT_SETTINGS_PATH`,
    /// `~/.srt-settings.json`): never writable, whatever `allowWrite` says.
    pub settings_files: &'a [PathBuf],
    /// srt's state directory (run journals, [`crate::journal`]): never writable.
    pub state_dir: Option<&'a Path>,
    /// Landlock mode: the terminals on the command's stdin/stdout/stderr, the only ones
    /// under `/dev/pts` it may open (other sessions' terminals could be read or written).
    /// `None` in namespace mode, where `/dev/pts` is a private instance.
    pub own_ttys: Option<&'a [PathBuf]>,
}

pub fn fs_policy(s: &Settings, cx: &Context<'_>) -> Result<FsPolicy, LaunchError> {
    let fs = &s.filesystem;
    let mut policy = FsPolicy {
        deny_read: expand_all(&fs.deny_read, cx, true),
        allow_read: expand_all(fs.allow_read.as_deref().unwrap_or(&[]), cx, true),
        write: expand_all(&fs.allow_write, cx, false),
        allow_git_config: fs.allow_git_config.unwrap_or(false),
        ..FsPolicy::default()
    };
    check_planted_symlinks(&fs.allow_write, "allowWrite", &policy.write, cx)?;
    check_planted_symlinks(fs.allow_read.as_deref().unwrap_or(&[]), "allowRead", &policy.write, cx)?;
    for e in &fs.deny_write {
        if let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    for p in cx.settings_files.iter().map(PathBuf::as_path).chain(cx.state_dir) {
        push_with_link(&mut policy.deny_write, p);
    }
    // Landlock mode (the only one with `own_ttys`) shares the host's /proc: a write there
    // reaches other processes (srt's and its auditor's oom_score_adj and autogroup nice,
    // whatever allowWrite says about `/`). Namespace mode mounts a /proc of its own.
    if cx.own_ttys.is_some() {
        policy.deny_write.push(PathBuf::from("/proc"));
    }
    // The working directory is canonical (getcwd) and the search walks real directories,
    // so these need no realpath unless the entry itself (or `.claude`) is a symlink.
    let cwd = canonical(cx.cwd);
    let mandatory = mandatory_denies(&cwd, s.search_depth());
    for p in mandatory.deny {
        let parent_plain = |d: &Path| d == cwd || d.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink());
        let plain =
            p.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink()) && p.parent().is_none_or(parent_plain);
        if plain {
            policy.deny_write.push(p);
        } else {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    policy.git_dirs = mandatory.git_dirs;
    // deepest first: a path below a nested repository is judged by that repository's rules
    policy.git_dirs.sort_by_key(|g| std::cmp::Reverse(g.as_os_str().len()));
    policy.git_dirs.dedup();
    policy.extra_bounds = git_bounds(&policy.git_dirs);
    policy.write.push(cx.tmpdir.to_path_buf());
    // Missing devices cost nothing: the ruleset builder skips paths that do not open.
    // Canonical, because some containers make /dev/ptmx a symlink to pts/ptmx.
    let devices: Vec<PathBuf> = DEVICES
        .iter()
        .map(|d| canonical(Path::new(d)))
        .chain(match cx.own_ttys {
            None => vec![PathBuf::from("/dev/pts")],
            Some(ttys) => ttys.to_vec(),
        })
        .collect();
    if !policy.deny_read.iter().any(|d| d.as_os_str() == "/") {
        policy.deny_read.push(PathBuf::from("/dev"));
        policy.listable.push(PathBuf::from("/dev"));
        policy.allow_read.extend(devices.iter().cloned());
    }
    policy.write.extend(devices);
    for list in [
        &mut policy.deny_read,
        &mut policy.allow_read,
        &mut policy.write,
        &mut policy.deny_write,
        &mut policy.extra_bounds,
    ] {
        list.sort();
        list.dedup();
    }
    Ok(policy)
}

/// Where the Landlock plan must split rights for git directories: their guarded names
/// (existing or not), and the same names in every existing directory below `modules/` and
/// `worktrees/` (submodules' and linked worktrees' git directories, or the way to them).
fn git_bounds(git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in git_dirs {
        out.extend(crate::git_guard::PLAN_BOUNDS.iter().map(|b| g.join(b)));
        let mut budget = GIT_WALK_MAX;
        let mut stack: Vec<PathBuf> = ["modules", "worktrees"].iter().map(|n| g.join(n)).collect();
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                if !e.file_type().is_ok_and(|t| t.is_dir()) || !crate::git_guard::walk_into(&e.file_name()) {
                    continue;
                }
                if budget == 0 {
                    crate::warn!(
                        "stopped looking for nested git directories below {} after {GIT_WALK_MAX}",
                        g.display()
                    );
                    return out;
                }
                budget -= 1;
                let d = e.path();
                out.extend(crate::git_guard::NESTED_PLAN_BOUNDS.iter().map(|b| d.join(b)));
                stack.push(d);
            }
        }
    }
    out
}

/// Existing paths the policy protects: write-denied ones and git directories' guarded
/// files and hooks directories. Namespace mode mounts these read-only; the supervisor
/// refuses second names of the files among them.
pub fn protected_paths(pol: &FsPolicy) -> Vec<PathBuf> {
    let guarded = pol.extra_bounds.iter().filter(|b| pol.guard(b) != crate::git_guard::Guard::Open);
    let mut out: Vec<PathBuf> =
        pol.deny_write.iter().chain(guarded).filter(|p| p.symlink_metadata().is_ok()).cloned().collect();
    out.sort();
    out.dedup();
    out
}

/// An `allowWrite` (or `allowRead`) entry that reaches its target through a symlink lying
/// inside a writable tree may have been redirected by an earlier sandboxed run (`ln -sfn
/// ~/.ssh build`): refuse it rather than grant whatever the link points at now.
fn check_planted_symlinks(
    entries: &[PathEntry],
    key: &'static str,
    write: &[PathBuf],
    cx: &Context<'_>,
) -> Result<(), LaunchError> {
    for e in entries {
        let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) else { continue };
        let mut cur = PathBuf::new();
        for c in p.components() {
            cur.push(c);
            if !cur.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                continue;
            }
            let link_at = cur.parent().map(canonical).unwrap_or_default();
            if let Some(tree) = write.iter().find(|w| crate::policy::under(&link_at, w)) {
                return Err(LaunchError::PlantedSymlink { key, entry: p.clone(), link: cur, tree: tree.clone() });
            }
        }
    }
    Ok(())
}

fn expand_all(entries: &[PathEntry], cx: &Context<'_>, globs: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in entries {
        match resolve(e, cx.cwd, cx.home, globs) {
            ResolvedEntry::Path(p) => out.push(canonical(&p)),
            ResolvedEntry::Glob(g) => {
                out.extend(expand_glob(&g).iter().map(|p| canonical(p)));
                // srt applies a glob string that also names an existing path both ways
                if Path::new(&g).symlink_metadata().is_ok() {
                    out.push(canonical(Path::new(&g)));
                }
            }
        }
    }
    out
}

/// A deny on a symlink protects both the name and what it points at.
fn push_with_link(out: &mut Vec<PathBuf>, p: &Path) {
    let name_kept = match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => p.to_path_buf(),
    };
    let target = canonical(p);
    if target != name_kept {
        out.push(target);
    }
    out.push(name_kept);
}

/// realpath for the longest existing prefix, the rest appended (missing paths still get
/// a location the kernel will agree with once they exist).
pub fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    while let (Some(parent), Some(name)) =
        (cur.parent().map(Path::to_path_buf), cur.file_name().map(|n| n.to_os_string()))
    {
        rest.push(name);
        if let Ok(c) = parent.canonicalize() {
            let mut out = c;
            for n in rest.iter().rev() {
                out.push(n);
            }
            return out;
        }
        cur = parent;
    }
    p.to_path_buf()
}

/// Expands an absolute glob against the disk, starting from its literal prefix.
pub fn expand_glob(pattern: &str) -> Vec<PathBuf> {
    let Ok(glob) = globset::GlobBuilder::new(pattern).literal_separator(true).build() else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let root: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !settings_schema::paths::has_glob_chars(&c.as_os_str().to_string_lossy()))
        .collect();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack = vec![(root, 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > GLOB_MAX_ENTRIES {
                crate::warn!("glob {pattern} stopped after {GLOB_MAX_ENTRIES} entries; later matches are not covered");
                return out;
            }
            let path = e.path();
            if matcher.is_match(&path) {
                out.push(path.clone());
            }
            if depth < GLOB_MAX_DEPTH && e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_links() {
        let root = std::env::temp_dir().join(format!("srt-prep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        std::fs::write(root.join("a/b/.env"), "").unwrap();
        std::fs::write(root.join("a/x.txt"), "").unwrap();
        let root = root.canonicalize().unwrap();
        let mut got = expand_glob(&format!("{}/**/.env", root.display()));
        got.sort();
        assert_eq!(got, vec![root.join(".env"), root.join("a/b/.env")]);
        std::os::unix::fs::symlink(root.join("a/x.txt"), root.join("link")).unwrap();
        let mut v = Vec::new();
        push_with_link(&mut v, &root.join("link"));
        assert_eq!(v, vec![root.join("a/x.txt"), root.join("link")]);
        assert_eq!(canonical(&root.join("a/missing/deeper")), root.join("a/missing/deeper"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
