//! What host git takes for a git directory, by looking at the disk: the supervisor asks
//! before it makes a link or special file, and the check after the run asks about the
//! directories the command made.
//!
//! git's own test (`is_git_directory` in setup.c) is a `HEAD`, plus `objects/` and `refs/`
//! or a `commondir` naming where they are. A directory named `.git` counts whatever it
//! holds so far: the command (or a later run) may add the rest.

use std::ffi::OsStr;
use std::path::Path;

use crate::policy::under;

/// How far up the supervisor looks for an enclosing git directory: git directories nest
/// `modules/<name>/` and `worktrees/<id>/` a few levels deep, and their data directories
/// (`refs/heads/feature/x`) a few more.
const MAX_UP: usize = 12;

/// `dir` holds what git needs to use it as a git directory, or is named `.git`.
pub fn is_git_dir(dir: &Path) -> bool {
    if dir.file_name() == Some(OsStr::new(".git")) {
        return true;
    }
    let has = |name: &str, want_dir: bool| {
        dir.join(name).symlink_metadata().is_ok_and(|m| if want_dir { m.is_dir() } else { !m.is_dir() })
    };
    has("HEAD", false) && (has("commondir", false) || (has("objects", true) && has("refs", true)))
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
