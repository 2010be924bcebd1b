//! From validated settings to a canonical [`FsPolicy`]: `~` and relative paths resolved,
//! symlinks resolved (a deny on a link protects the link and its target), globs expanded
//! against the disk, mandatory denies and the private TMPDIR added.

use std::path::{Path, PathBuf};

use settings_schema::paths::{resolve, ResolvedEntry};
use settings_schema::{PathEntry, Settings};

use crate::mandatory::mandatory_denies;
use crate::policy::FsPolicy;

/// Devices every command may write, as srt's built-in write paths.
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"];

/// Bounds on one glob's expansion, so a `**` under `/` cannot stall the launch.
const GLOB_MAX_ENTRIES: usize = 200_000;
const GLOB_MAX_DEPTH: usize = 32;

pub struct Context<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    pub tmpdir: &'a Path,
}

pub fn fs_policy(s: &Settings, cx: &Context<'_>) -> FsPolicy {
    let fs = &s.filesystem;
    let mut policy = FsPolicy {
        deny_read: expand_all(&fs.deny_read, cx, true),
        allow_read: expand_all(fs.allow_read.as_deref().unwrap_or(&[]), cx, true),
        write: expand_all(&fs.allow_write, cx, false),
        deny_write: Vec::new(),
    };
    for e in &fs.deny_write {
        if let ResolvedEntry::Path(p) = resolve(e, cx.cwd, cx.home, false) {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    // The working directory is canonical (getcwd) and the search walks real directories,
    // so these need no realpath unless the entry itself (or `.claude`) is a symlink.
    let cwd = canonical(cx.cwd);
    for p in mandatory_denies(&cwd, s.search_depth(), fs.allow_git_config.unwrap_or(false)) {
        let parent_plain = |d: &Path| d == cwd || d.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink());
        let plain =
            p.symlink_metadata().map_or(true, |m| !m.file_type().is_symlink()) && p.parent().is_none_or(parent_plain);
        if plain {
            policy.deny_write.push(p);
        } else {
            push_with_link(&mut policy.deny_write, &p);
        }
    }
    policy.write.push(cx.tmpdir.to_path_buf());
    // Missing devices cost nothing: the ruleset builder skips paths that do not open.
    policy.write.extend(DEVICES.iter().map(PathBuf::from));
    for list in [&mut policy.deny_read, &mut policy.allow_read, &mut policy.write, &mut policy.deny_write] {
        list.sort();
        list.dedup();
    }
    policy
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
