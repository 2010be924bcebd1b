//! Which files of a git directory can make a later, unsandboxed `git` run a program, and
//! what a sandboxed command may do with each. Pure path classification; the supervisor and
//! the Landlock plan both decide by it.
//!
//! A git directory is `<cwd>/.git` (whether or not it exists at launch), every existing
//! nested `.git` directory the mandatory-deny search finds, and the working directory itself
//! when it already is a bare repository. Inside one:
//! - `config` runs programs through dozens of keys (`core.fsmonitor`, `alias.*`, ...);
//! - `hooks/` holds programs git runs by name;
//! - `commondir` and `config.worktree` redirect git to another config and hooks;
//! - `modules/<name>/` and `worktrees/<id>/` are git directories of their own (submodules,
//!   linked worktrees), with the same files.
//!
//! Objects, refs, logs and the index cannot make git run anything and stay writable, so
//! `git add`, `git commit` and `git fetch` work.

use std::ffi::OsStr;
use std::path::{Component, Path};

/// What the policy allows at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// The write rules decide.
    Open,
    /// Never written, created, replaced or removed.
    Deny,
    /// A git directory's `config`: never written in place (unless `allowGitConfig`); it is
    /// only replaced whole, by a rename whose source passed [`crate::git::config::check`].
    GitConfig,
    /// A `hooks` directory: may be created empty (`git init` does), never replaced.
    HooksDir,
    /// Inside `hooks`: only new regular files named `*.sample` (git never runs those names,
    /// and `git init` copies its templates under them).
    HooksContent,
}

/// Directories of a git directory that hold data, never programs or redirections: a guarded
/// name below them means nothing to git (an `objects/config` is never read).
const DATA_DIRS: &[&str] = &["objects", "refs", "logs", "lfs", "info", "rr-cache", "rebase-merge", "rebase-apply"];

/// Names that are git directories of their own below them.
const NESTED: &[&str] = &["modules", "worktrees"];

/// The guard for `rel`, a path relative to a git directory (its components).
pub fn classify(rel: &Path) -> Guard {
    let parts: Vec<&OsStr> = rel.components().filter_map(normal).collect();
    classify_parts(&parts)
}

fn normal(c: Component<'_>) -> Option<&OsStr> {
    match c {
        Component::Normal(n) => Some(n),
        _ => None,
    }
}

fn classify_parts(parts: &[&OsStr]) -> Guard {
    let Some(first) = parts.first() else { return Guard::Open };
    let last = parts.len() == 1;
    match first.to_str() {
        Some("hooks") if last => Guard::HooksDir,
        Some("hooks") => Guard::HooksContent,
        Some("config") if last => Guard::GitConfig,
        // `config`, `commondir` and `config.worktree` are files: anything "below" one can only
        // come from replacing it with a directory, which is refused as well
        Some("config" | "commondir" | "config.worktree") => Guard::Deny,
        Some(n) if NESTED.contains(&n) => nested(&parts[1..]),
        _ => Guard::Open,
    }
}

/// Below `modules/` or `worktrees/`: the first guarded name, unless a data directory comes
/// first, starts a nested git directory's rules. Submodule names may contain slashes, so
/// any depth counts.
fn nested(parts: &[&OsStr]) -> Guard {
    for (i, p) in parts.iter().enumerate() {
        match p.to_str() {
            Some(d) if DATA_DIRS.contains(&d) => return Guard::Open,
            Some("hooks" | "config" | "commondir" | "config.worktree") if i > 0 => return classify_parts(&parts[i..]),
            _ => {}
        }
    }
    Guard::Open
}

/// Whether something at `rel` (relative to a git directory; empty for the git directory
/// itself) could have guarded paths below it, so that replacing it, or creating anything
/// but a plain directory there, would take a protection away.
pub fn guards_below(rel: &Path) -> bool {
    let parts: Vec<&OsStr> = rel.components().filter_map(normal).collect();
    match parts.first().and_then(|f| f.to_str()) {
        None => true,
        Some("hooks") => parts.len() == 1,
        Some(n) if NESTED.contains(&n) => {
            // a directory below modules/ may be (or become) a git directory, unless it is
            // inside one's data or already is one of its guarded names
            let inner = &parts[1..];
            !inner.iter().any(|p| p.to_str().is_some_and(|s| DATA_DIRS.contains(&s)))
                && matches!(nested(inner), Guard::Open | Guard::HooksDir)
        }
        _ => false,
    }
}

/// Paths (relative to a git directory) where the Landlock plan must withhold write rights,
/// whether or not they exist: they make the git directory, and `modules/` and `worktrees/`,
/// directories whose new entries the supervisor judges.
pub const PLAN_BOUNDS: &[&str] =
    &["hooks", "config", "commondir", "config.worktree", "modules/hooks", "worktrees/hooks"];

/// The same, for an existing directory below `modules/` or `worktrees/` (a git directory of a
/// submodule or linked worktree, or a directory on the way to one).
pub const NESTED_PLAN_BOUNDS: &[&str] = &["hooks", "config", "commondir", "config.worktree"];

/// Whether the walk that finds existing nested git directories should descend into `name`.
pub fn walk_into(name: &OsStr) -> bool {
    name.to_str().is_none_or(|n| !DATA_DIRS.contains(&n) && !matches!(n, "hooks"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(rel: &str) -> Guard {
        classify(Path::new(rel))
    }

    #[test]
    fn top_level_files() {
        assert_eq!(g(""), Guard::Open);
        assert_eq!(g("config"), Guard::GitConfig);
        assert_eq!(g("config.lock"), Guard::Open, "git writes the lock file first, then renames");
        assert_eq!(g("commondir"), Guard::Deny);
        assert_eq!(g("config.worktree"), Guard::Deny);
        assert_eq!(g("config/x"), Guard::Deny);
        assert_eq!(g("hooks"), Guard::HooksDir);
        assert_eq!(g("hooks/pre-commit"), Guard::HooksContent);
        assert_eq!(g("hooks/sub/x"), Guard::HooksContent);
        for open in ["HEAD", "index", "objects/ab/cdef", "refs/heads/main", "logs/HEAD", "info/exclude", "description"]
        {
            assert_eq!(g(open), Guard::Open, "{open}");
        }
    }

    #[test]
    fn nested_git_directories() {
        assert_eq!(g("modules"), Guard::Open);
        assert_eq!(g("modules/sub"), Guard::Open);
        assert_eq!(g("modules/sub/config"), Guard::GitConfig);
        assert_eq!(g("modules/sub/hooks"), Guard::HooksDir);
        assert_eq!(g("modules/sub/hooks/post-checkout"), Guard::HooksContent);
        assert_eq!(g("modules/sub/commondir"), Guard::Deny);
        assert_eq!(g("modules/vendor/lib/config"), Guard::GitConfig, "names with slashes");
        assert_eq!(g("modules/a/modules/b/config"), Guard::GitConfig, "submodules of submodules");
        assert_eq!(g("modules/sub/objects/config"), Guard::Open, "data, never read as config");
        assert_eq!(g("modules/sub/refs/heads/hooks"), Guard::Open);
        assert_eq!(g("worktrees/wt/config.worktree"), Guard::Deny);
        assert_eq!(g("worktrees/wt/commondir"), Guard::Deny);
        assert_eq!(g("worktrees/wt/HEAD"), Guard::Open);
        assert_eq!(g("modules/config"), Guard::Open, "a submodule dir cannot be the first component itself");
    }

    #[test]
    fn what_guards_below() {
        let b = |r: &str| guards_below(Path::new(r));
        assert!(b(""), "the git directory itself");
        assert!(b("hooks"));
        assert!(b("modules"));
        assert!(b("modules/sub"));
        assert!(b("modules/a/b"));
        assert!(b("worktrees/wt"));
        assert!(b("modules/sub/hooks"));
        assert!(!b("objects"));
        assert!(!b("modules/sub/objects"));
        assert!(!b("modules/sub/objects/pack"));
        assert!(!b("refs/heads"));
        assert!(!b("config"));
        assert!(!b("hooks/x"));
    }
}
