//! srt's mandatory write denies: files and directories that would let a sandboxed command
//! plant code the host runs later (shell rc files, git hooks and config, editor settings).
//! Applied in the working directory (whether or not they exist) and, where they exist,
//! in its subdirectories down to `mandatoryDenySearchDepth`.

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

/// The protected paths for a run in `cwd`.
pub fn mandatory_denies(cwd: &Path, depth: u8, allow_git_config: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut visited = 0usize;
    walk(cwd, 0, depth, allow_git_config, &mut out, &mut visited);
    out
}

fn protect_in(dir: &Path, always: bool, allow_git_config: bool, out: &mut Vec<PathBuf>) {
    for name in DANGEROUS_FILES.iter().chain(DANGEROUS_DIRS) {
        let p = dir.join(name);
        if always || p.symlink_metadata().is_ok() {
            out.push(p);
        }
    }
    let git = dir.join(".git");
    match git.symlink_metadata() {
        Ok(m) if m.is_dir() => {
            out.push(git.join("hooks"));
            if !allow_git_config {
                out.push(git.join("config"));
            }
        }
        // a worktree or submodule: `.git` is a file naming the real git dir
        Ok(_) => out.push(git),
        Err(_) => {}
    }
}

fn walk(dir: &Path, level: u8, depth: u8, allow_git_config: bool, out: &mut Vec<PathBuf>, visited: &mut usize) {
    protect_in(dir, level == 0, allow_git_config, out);
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
        walk(&e.path(), level + 1, depth, allow_git_config, out, visited);
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
        let got = mandatory_denies(&root, 3, false);
        assert!(got.contains(&root.join(".bashrc")), "missing cwd entries are protected");
        assert!(got.contains(&root.join(".claude/commands")));
        assert!(got.contains(&root.join("sub/.git/hooks")));
        assert!(got.contains(&root.join("sub/.git/config")));
        assert!(got.contains(&root.join("a/.zshrc")));
        assert!(!got.contains(&root.join("a/.bashrc")), "missing nested entries are not listed");
        assert!(!got.contains(&root.join("a/b/c/d/e/.bashrc")), "deeper than the search depth");
        assert!(!got.iter().any(|p| p.starts_with(root.join("node_modules"))));
        let with_cfg = mandatory_denies(&root, 3, true);
        assert!(!with_cfg.contains(&root.join("sub/.git/config")));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
