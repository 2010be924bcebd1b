//! What host git takes for a git directory, by looking at the disk: the supervisor asks
//! before it makes a link or special file, and the check after the run asks about the
//! directories the command made.
//!
//! git's own test (`is_git_directory` in setup.c) is a `HEAD` with valid content, plus
//! `objects` and `refs` it may enter (`access(X_OK)`: a directory, a symlink to one, or an
//! executable file), or a `commondir` naming where they are. srt counts a little more, so
//! that what one chmod or one in-place write away (which leave no trace in the journal) is
//! counted already: a `HEAD` that is not a directory, whatever it holds, beside `objects`
//! and `refs` of any kind and mode, or beside a `commondir`. A directory named `.git`
//! counts whatever it holds so far: the command (or a later run) may add the rest.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::paths::under;

/// How far up the supervisor looks for an enclosing git directory: git directories nest
/// `modules/<name>/` and `worktrees/<id>/` a few levels deep, and their data directories
/// (`refs/heads/feature/x`) a few more.
const MAX_UP: usize = 12;

/// `dir` holds what git needs to use it as a git directory, or is named `.git`.
pub fn is_git_dir(dir: &Path) -> bool {
    if dir.file_name() == Some(OsStr::new(".git")) {
        return true;
    }
    let meta = |name: &str| dir.join(name).symlink_metadata().ok();
    shaped(|name| meta(name).map(|m| m.is_dir()))
}

/// The test of [`is_git_dir`] on what `is_dir` says of an entry (`None`: there is none),
/// shared with the launch's search and the check after the run.
pub fn shaped(is_dir: impl Fn(&str) -> Option<bool>) -> bool {
    is_dir("HEAD") == Some(false)
        && (is_dir("commondir").is_some() || (is_dir("objects").is_some() && is_dir("refs").is_some()))
}

/// `path` lies strictly inside a git directory: one of `known` (the policy's guarded ones,
/// which need not exist yet), one named `.git` on the way, or an ancestor that
/// [`is_git_dir`] recognises.
pub fn inside_git_dir(known: &[std::path::PathBuf], path: &Path) -> bool {
    if known.iter().any(|g| g != path && under(path, g)) {
        return true;
    }
    let Some(parent) = path.parent() else { return false };
    if parent.components().any(|c| c.as_os_str() == ".git") {
        return true;
    }
    parent.ancestors().take(MAX_UP).any(is_git_dir)
}

/// Where a `.git` file points, read exactly as git reads it (`read_gitfile_gently`):
/// `gitdir: ` and everything after it, but for the trailing line ends, spaces and further
/// lines included. Any other reading lets the command name one directory to srt and
/// another to git (`gitdir: x ` opens `x `).
pub fn gitfile_target(text: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut rest = text.strip_prefix(b"gitdir: ")?;
    while let Some(r) = rest.strip_suffix(b"\n").or_else(|| rest.strip_suffix(b"\r")) {
        rest = r;
    }
    (!rest.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(rest)))
}

/// How many `..` steps lead from git directory `dir` to the top of its repository's tree:
/// the components after the first `.git`, plus one; 0 outside any `.git` (bare).
pub(crate) fn ups_for(dir: &Path) -> usize {
    let parts: Vec<&OsStr> = dir.iter().collect();
    match parts.iter().position(|p| *p == OsStr::new(".git")) {
        Some(i) => parts.len() - i,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn recognises_git_directories_as_git_does() {
        let root = std::env::temp_dir().join(format!("srt-shape-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let bare = root.join("bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs/heads")).unwrap();
        assert!(!is_git_dir(&bare), "no HEAD yet");
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(is_git_dir(&bare));
        let linked = root.join("linked");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(linked.join("HEAD"), "x").unwrap();
        assert!(!is_git_dir(&linked), "HEAD alone");
        std::fs::write(linked.join("commondir"), "../bare\n").unwrap();
        assert!(is_git_dir(&linked), "HEAD and commondir");
        // git enters `objects` and `refs` with access(X_OK): executable files do
        let files = root.join("files");
        std::fs::create_dir_all(&files).unwrap();
        std::fs::write(files.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(files.join("objects"), "").unwrap();
        assert!(!is_git_dir(&files), "no refs yet");
        std::fs::write(files.join("refs"), "").unwrap();
        assert!(is_git_dir(&files), "files of any mode: one chmod away");
        let links = root.join("links");
        std::fs::create_dir_all(&links).unwrap();
        std::fs::write(links.join("HEAD"), "x").unwrap();
        std::os::unix::fs::symlink("/nowhere", links.join("objects")).unwrap();
        std::os::unix::fs::symlink(&bare, links.join("refs")).unwrap();
        assert!(is_git_dir(&links), "symlinks, dangling or not");
        let head_dir = root.join("head-dir");
        std::fs::create_dir_all(head_dir.join("HEAD")).unwrap();
        std::fs::write(head_dir.join("commondir"), "../bare").unwrap();
        assert!(!is_git_dir(&head_dir), "git cannot read a HEAD directory");
        assert!(is_git_dir(&root.join("w/.git")), "a .git by name, even before it exists");
        assert!(inside_git_dir(&[], &bare.join("logs/HEAD")));
        assert!(inside_git_dir(&[], &bare.join("refs/heads/feature/x")));
        assert!(inside_git_dir(&[], &root.join("w/.git/logs/HEAD")));
        assert!(!inside_git_dir(&[], &root.join("w/src/x")));
        assert!(!inside_git_dir(&[], &root.join("w/.git")), "the .git itself is a name in its work tree");
        let known = vec![PathBuf::from("/r/.git/modules/a")];
        assert!(inside_git_dir(&known, Path::new("/r/.git/modules/a/x")));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
