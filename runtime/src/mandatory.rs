//! srt's mandatory write denies: files and directories that would let a sandboxed command
//! plant code the host runs later (shell rc files, git hooks and config, editor settings).
//! Applied in the working directory (whether or not they exist) and, where they exist,
//! in its subdirectories down to `mandatoryDenySearchDepth`. Git directories are returned
//! separately: what is guarded inside them is [`crate::git_guard`]'s business.

use std::path::{Path, PathBuf};

pub const DANGEROUS_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
];
pub const DANGEROUS_DIRS: &[&str] = &[".vscode", ".idea", ".claude/commands", ".claude/agents"];

/// Directories never descended into while searching (as srt's `!**/node_modules/**`).
const SKIP_DIRS: &[&str] = &["node_modules"];
/// Bound on directories visited so a huge tree cannot stall every launch.
const MAX_DIRS_VISITED: usize = 20_000;

/// What the mandatory rules protect in a run in `cwd`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mandatory {
    /// Never writable (whether or not they exist).
    pub deny: Vec<PathBuf>,
    /// Git directories, guarded by [`crate::git_guard`] (whether or not they exist).
    pub git_dirs: Vec<PathBuf>,
}

/// The protected paths for a run in `cwd`.
pub fn mandatory_denies(cwd: &Path, depth: u8) -> Mandatory {
    let mut out = Mandatory::default();
    let mut visited = 0usize;
    walk(cwd, 0, depth, &mut out, &mut visited);
    out
}

fn protect_in(dir: &Path, top: bool, out: &mut Mandatory) {
    for name in DANGEROUS_FILES.iter().chain(DANGEROUS_DIRS) {
        let p = dir.join(name);
        if top || p.symlink_metadata().is_ok() {
            out.deny.push(p);
        }
    }
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
        // in the working directory `.git` is guarded before it exists (`git init`)
        Err(_) if top => out.git_dirs.push(git),
        Err(_) => {}
    }
    // The working directory may not be turned into a bare repository for a host `git` to
    // find: that takes a `HEAD` file, so one may not appear. This holds with a `.git` too:
    // git falls back to the directory itself when `.git/HEAD` is made invalid.
    if top {
        if is_bare_repository(dir) {
            out.git_dirs.push(dir.to_path_buf());
        } else {
            out.deny.push(dir.join("HEAD"));
        }
    }
}

/// git's own test (`is_git_directory`): `HEAD`, `objects/` and `refs/`.
fn is_bare_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

fn walk(dir: &Path, level: u8, depth: u8, out: &mut Mandatory, visited: &mut usize) {
    protect_in(dir, level == 0, out);
    if level >= depth || *visited >= MAX_DIRS_VISITED {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name();
        if !ft.is_dir() || name == ".git" || SKIP_DIRS.iter().any(|s| name == *s) {
            continue;
        }
        *visited += 1;
        if *visited >= MAX_DIRS_VISITED {
            crate::warn!("mandatory-deny search stopped after {MAX_DIRS_VISITED} directories");
            return;
        }
        walk(&e.path(), level + 1, depth, out, visited);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_always_and_nested_when_present() {
        let root = std::env::temp_dir().join(format!("srt-mand-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub/.git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("a/b/c/d/e")).unwrap();
        std::fs::write(root.join("a/b/c/d/e/.bashrc"), "").unwrap();
        std::fs::write(root.join("a/.zshrc"), "").unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("node_modules/x/.bashrc"), "").unwrap();
        let got = mandatory_denies(&root, 3);
        assert!(got.deny.contains(&root.join(".bashrc")), "missing cwd entries are protected");
        assert!(got.deny.contains(&root.join(".claude/commands")));
        assert!(got.git_dirs.contains(&root.join(".git")), "a missing .git in cwd is guarded");
        assert!(got.deny.contains(&root.join("HEAD")), "cwd may not become a bare repository");
        assert!(got.git_dirs.contains(&root.join("sub/.git")));
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let with_git = mandatory_denies(&root, 0);
        assert!(with_git.deny.contains(&root.join("HEAD")), "with a .git too: git falls back to a bare cwd");
        std::fs::remove_dir(root.join(".git")).unwrap();
        assert!(got.deny.contains(&root.join("a/.zshrc")));
        assert!(!got.deny.contains(&root.join("a/.bashrc")), "missing nested entries are not listed");
        assert!(!got.git_dirs.contains(&root.join("a/.git")));
        assert!(!got.deny.contains(&root.join("a/b/c/d/e/.bashrc")), "deeper than the search depth");
        assert!(!got.deny.iter().any(|p| p.starts_with(root.join("node_modules"))));
        std::fs::create_dir_all(root.join("objects")).unwrap();
        std::fs::create_dir_all(root.join("refs")).unwrap();
        std::fs::write(root.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let bare = mandatory_denies(&root, 1);
        assert!(bare.git_dirs.contains(&root), "an existing bare repository in cwd is guarded as one");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
