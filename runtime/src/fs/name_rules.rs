//! The supervisor's rules for every syscall that makes, removes or moves a name, as pure
//! functions of the policy and the real locations involved. Landlock already refuses all of
//! these outside the directories the plan had to split; these rules decide inside them,
//! including for protected names whose parents do not exist yet (`.git/hooks/x` before
//! `git init`, `.claude/commands` behind a new `.claude` symlink).

use std::ffi::OsStr;
use std::path::Path;

use crate::fs::policy::FsPolicy;
use crate::git::guard::Guard;

/// What is being made at a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A second name for an existing regular file.
    Link,
    Special,
}

/// The rule's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused; the reason names the rule (for `-d` logs).
    Refuse(&'static str),
    /// Allowed only as a whole-file install of a git `config` whose content passes
    /// [`crate::git::config::check`].
    InstallGitConfig,
}

/// Facts about an existing object at a name that only the caller can observe.
#[derive(Debug, Clone, Copy, Default)]
pub struct Existing {
    /// The object was made by this run (the supervisor recorded its inode).
    pub made_by_run: bool,
}

/// Making something new at `p` (which does not exist).
pub fn create(pol: &FsPolicy, p: &Path, kind: Kind) -> Verdict {
    if !pol.in_write_tree(p) {
        return Verdict::Refuse("outside allowWrite");
    }
    match pol.guard(p) {
        Guard::Deny => Verdict::Refuse("protected path (denyWrite or mandatory deny)"),
        Guard::GitConfig => Verdict::Refuse("a git config is only installed whole, by rename"),
        Guard::HooksDir if kind == Kind::Dir => Verdict::Allow,
        Guard::HooksDir => Verdict::Refuse("git hooks directory"),
        Guard::HooksContent if kind == Kind::File && is_sample(p) => Verdict::Allow,
        Guard::HooksContent => Verdict::Refuse("git hook (only *.sample files may be created)"),
        // an empty new directory keeps what is protected below it protected: everything made
        // inside it comes back here; anything else at such a name would hide it
        Guard::Open if kind != Kind::Dir && pol.guards_below(p) => {
            Verdict::Refuse("protected paths lie below this name")
        }
        // a later run resolves its allowWrite roots through whatever is there: a symlink at
        // a root, or on the way to one, would hand that run a tree of the command's choice
        Guard::Open if kind != Kind::Dir && on_the_way_to_a_root(pol, p) => {
            Verdict::Refuse("an allowWrite root, or the way to one, may only be made as a new directory")
        }
        Guard::Open => Verdict::Allow,
    }
}

/// `p` is an `allowWrite` root (missing at launch) or lies above one.
fn on_the_way_to_a_root(pol: &FsPolicy, p: &Path) -> bool {
    pol.write.iter().any(|w| crate::fs::policy::under(w, p))
}

/// Removing the object at `p`, or moving it away.
pub fn remove(pol: &FsPolicy, p: &Path, e: Existing) -> Verdict {
    if !pol.in_write_tree(p) {
        return Verdict::Refuse("outside allowWrite");
    }
    // what this run made, it may take away again: that only restores the state at launch
    if e.made_by_run {
        return Verdict::Allow;
    }
    match pol.guard(p) {
        Guard::Open if pol.guards_below(p) => Verdict::Refuse("protected paths lie below this name"),
        Guard::Open => Verdict::Allow,
        _ => Verdict::Refuse("protected path (denyWrite, mandatory deny or git rule)"),
    }
}

/// `rename(src, dst)`; `dst` is `Some` when something exists there.
pub fn rename(
    pol: &FsPolicy,
    src: &Path,
    src_e: Existing,
    src_kind: Kind,
    dst: &Path,
    dst_e: Option<Existing>,
) -> Verdict {
    if let Verdict::Refuse(r) = remove(pol, src, src_e) {
        return Verdict::Refuse(r);
    }
    if let Some(r) = read_gain(pol, src, dst) {
        return Verdict::Refuse(r);
    }
    // Landlock's rules are on inodes and move with them: a directory that carries one (the
    // pool's, TMPDIR, any planned at launch) or holds one would take its read right into the
    // denied tree, or onto a name with a denied path below, and whatever denied is moved
    // into it there becomes readable. Judged whatever the source's kind: the kind the
    // supervisor saw can change before the rename acts by name (another thread swaps a
    // directory in), so nothing readable moves into a denied tree, and nothing onto a name
    // with a denied path below it.
    if pol.can_read(src) && !pol.can_read(dst) {
        return Verdict::Refuse(
            "nothing readable may be moved into a denyRead tree (a directory's rules would go with it)",
        );
    }
    if pol.read_denied_below(dst) {
        return Verdict::Refuse("a denyRead path lies below this name");
    }
    // a config is replaced whole, and only by content that passes the allow-list, so it
    // does not matter who wrote the one it replaces
    if pol.guard(dst) == Guard::GitConfig && src_kind == Kind::File {
        return Verdict::InstallGitConfig;
    }
    if let Some(e) = dst_e {
        if let Verdict::Refuse(r) = remove(pol, dst, e) {
            return Verdict::Refuse(r);
        }
    }
    // unlike mkdir, a directory moved here arrives with its contents, so it may not land on a
    // name that has protected paths below it, even where an empty one this run made stood,
    // nor where a later run's allowWrite root would be resolved through what it holds
    if pol.guards_below(dst) {
        return Verdict::Refuse("protected paths lie below this name");
    }
    if on_the_way_to_a_root(pol, dst) {
        return Verdict::Refuse("an allowWrite root, or the way to one, may only be made as a new directory");
    }
    create(pol, dst, src_kind)
}

/// `link(src, dst)`: a second name for the regular file (or symlink) at `src`.
pub fn link(pol: &FsPolicy, src: &Path, dst: &Path) -> Verdict {
    if let Some(r) = read_gain(pol, src, dst) {
        return Verdict::Refuse(r);
    }
    // the file becomes writable through the new name, so the old one must be writable too
    if !pol.can_write(src) {
        return Verdict::Refuse("the source is not writable by the policy");
    }
    create(pol, dst, Kind::Link)
}

/// A symlink put at a name (made, renamed or linked there) that leads to `dest`: judged as a
/// write to `dest`, since a host program that later writes through the name (a shell's
/// history, a build's output, git's logs) writes there with the host user's rights. Refused
/// where the command may not write `dest`, or, for a directory, where something protected
/// lies below it (a build writing `out/.bashrc` through `out -> ~`), unless the host user
/// could not write `dest` either (`.venv/bin/python -> /usr/bin/python3` for a user who is
/// not root): then writing through the link fails for everyone.
pub fn symlink_to(pol: &FsPolicy, dest: &Path, dest_is_dir: bool, host_writes: bool) -> Verdict {
    if crate::paths::under(dest, Path::new(crate::fs::link_target::UNJUDGED)) {
        return Verdict::Refuse(
            "a symlink srt cannot follow to its end as a host program would (through /proc or /dev/fd, past PATH_MAX)",
        );
    }
    // a directory's own mode says nothing about the names below it (`/` is not writable for
    // a user, `/home/u/.bashrc` is): only one whose whole tree the command may write is safe
    if dest_is_dir && (!pol.can_write(dest) || pol.guards_below(dest)) {
        return Verdict::Refuse("a symlink to a directory the command may not write (or with protected paths below)");
    }
    if !pol.can_write(dest) && host_writes {
        return Verdict::Refuse("a symlink to a path the command may not write (a write through it would land there)");
    }
    Verdict::Allow
}

/// A name (or tree) that is not readable must not become readable by moving or linking it.
fn read_gain(pol: &FsPolicy, src: &Path, dst: &Path) -> Option<&'static str> {
    if !pol.can_read(src) && pol.can_read(dst) {
        return Some("would make a denyRead path readable");
    }
    if pol.read_denied_below(src) {
        return Some("a denyRead path lies below the source");
    }
    None
}

fn is_sample(p: &Path) -> bool {
    p.file_name().and_then(OsStr::to_str).is_some_and(|n| n.ends_with(".sample") && n.len() > ".sample".len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn pol() -> FsPolicy {
        FsPolicy {
            deny_read: vec![p("/w/.env"), p("/w/secrets")],
            write: vec![p("/w"), p("/tmp/t")],
            deny_write: vec![p("/w/.bashrc"), p("/w/.claude/commands"), p("/w/.github/workflows")],
            git_dirs: vec![p("/w/.git")],
            ..FsPolicy::default()
        }
    }

    const NEW: Option<Existing> = None;
    const OLD: Existing = Existing { made_by_run: false };
    const MINE: Existing = Existing { made_by_run: true };

    #[test]
    fn protected_names_missing_at_launch() {
        let pol = pol();
        assert_eq!(create(&pol, &p("/w/out.txt"), Kind::File), Verdict::Allow);
        assert!(matches!(create(&pol, &p("/w/.bashrc"), Kind::File), Verdict::Refuse(_)));
        assert_eq!(create(&pol, &p("/w/.git"), Kind::Dir), Verdict::Allow, "git init");
        for k in [Kind::File, Kind::Symlink, Kind::Link, Kind::Special] {
            assert!(matches!(create(&pol, &p("/w/.git"), k), Verdict::Refuse(_)), "{k:?} at .git");
            assert!(matches!(create(&pol, &p("/w/.claude"), k), Verdict::Refuse(_)), "{k:?} at .claude");
            assert!(matches!(create(&pol, &p("/w/.github"), k), Verdict::Refuse(_)), "{k:?} at .github");
        }
        assert_eq!(create(&pol, &p("/w/.claude"), Kind::Dir), Verdict::Allow);
        assert!(matches!(create(&pol, &p("/w/.claude/commands"), Kind::Dir), Verdict::Refuse(_)));
        assert_eq!(create(&pol, &p("/w/.git/hooks"), Kind::Dir), Verdict::Allow);
        assert_eq!(create(&pol, &p("/w/.git/hooks/pre-commit.sample"), Kind::File), Verdict::Allow);
        for bad in ["/w/.git/hooks/pre-commit", "/w/.git/hooks/.sample", "/w/.git/commondir", "/w/.git/config"] {
            assert!(matches!(create(&pol, &p(bad), Kind::File), Verdict::Refuse(_)), "{bad}");
        }
        assert!(matches!(create(&pol, &p("/w/.git/hooks/x.sample"), Kind::Symlink), Verdict::Refuse(_)));
        assert_eq!(create(&pol, &p("/w/.git/objects/ab"), Kind::Dir), Verdict::Allow);
        assert!(matches!(create(&pol, &p("/etc/x"), Kind::File), Verdict::Refuse(_)));
    }

    #[test]
    fn git_config_is_installed_by_rename_only() {
        let pol = pol();
        let (lock, cfg) = (p("/w/.git/config.lock"), p("/w/.git/config"));
        assert_eq!(rename(&pol, &lock, MINE, Kind::File, &cfg, NEW), Verdict::InstallGitConfig);
        assert_eq!(rename(&pol, &lock, MINE, Kind::File, &cfg, Some(MINE)), Verdict::InstallGitConfig);
        assert_eq!(rename(&pol, &lock, MINE, Kind::File, &cfg, Some(OLD)), Verdict::InstallGitConfig, "checked, whole");
        assert!(matches!(rename(&pol, &p("/w/d"), MINE, Kind::Dir, &cfg, NEW), Verdict::Refuse(_)));
        let allowed = FsPolicy { allow_git_config: true, ..pol };
        assert_eq!(rename(&allowed, &lock, MINE, Kind::File, &cfg, Some(OLD)), Verdict::Allow);
    }

    #[test]
    fn removal_and_renames() {
        let pol = pol();
        assert_eq!(remove(&pol, &p("/w/src"), OLD), Verdict::Allow);
        assert!(matches!(remove(&pol, &p("/w/.git"), OLD), Verdict::Refuse(_)));
        assert_eq!(remove(&pol, &p("/w/.git"), MINE), Verdict::Allow, "a repository this run made");
        assert!(matches!(remove(&pol, &p("/w/.git/config"), OLD), Verdict::Refuse(_)));
        assert_eq!(remove(&pol, &p("/w/.git/index"), OLD), Verdict::Allow);
        // a directory with contents may not land where protected paths lie below
        assert!(matches!(rename(&pol, &p("/w/y"), MINE, Kind::Dir, &p("/w/.claude"), NEW), Verdict::Refuse(_)));
        assert!(matches!(rename(&pol, &p("/w/y"), MINE, Kind::Dir, &p("/w/.git"), NEW), Verdict::Refuse(_)));
        assert!(matches!(rename(&pol, &p("/w/y"), MINE, Kind::Dir, &p("/w/.git"), Some(MINE)), Verdict::Refuse(_)));
        assert_eq!(rename(&pol, &p("/w/a"), OLD, Kind::File, &p("/w/b"), Some(OLD)), Verdict::Allow);
        assert!(matches!(rename(&pol, &p("/w/a"), OLD, Kind::File, &p("/w/.bashrc"), Some(OLD)), Verdict::Refuse(_)));
    }

    #[test]
    fn read_denied_paths_do_not_move_out_from_under_their_rule() {
        let pol = pol();
        assert!(matches!(rename(&pol, &p("/w/.env"), OLD, Kind::File, &p("/tmp/t/x"), NEW), Verdict::Refuse(_)));
        assert!(matches!(link(&pol, &p("/w/.env"), &p("/w/x")), Verdict::Refuse(_)));
        assert!(matches!(rename(&pol, &p("/w"), OLD, Kind::Dir, &p("/tmp/t/w"), NEW), Verdict::Refuse(_)));
        assert!(matches!(rename(&pol, &p("/w/sub"), OLD, Kind::Dir, &p("/w/x"), NEW), Verdict::Allow));
        assert!(matches!(rename(&pol, &p("/w/secrets"), OLD, Kind::Dir, &p("/w/x"), NEW), Verdict::Refuse(_)));
        assert_eq!(link(&pol, &p("/w/a"), &p("/w/b")), Verdict::Allow);
        assert!(matches!(link(&pol, &p("/etc/passwd"), &p("/w/b")), Verdict::Refuse(_)));
    }

    /// Round 8's H1: rules travel with inodes. A directory with a read rule (a pool
    /// directory, TMPDIR, `src/` planned at launch) moved into the denied tree made a
    /// denied file moved into it readable.
    #[test]
    fn directories_do_not_move_into_a_denied_tree() {
        let pol = pol();
        for dst in ["/w/secrets/x", "/w/.env"] {
            assert!(matches!(rename(&pol, &p("/w/x"), MINE, Kind::Dir, &p(dst), NEW), Verdict::Refuse(_)), "{dst}");
            assert!(matches!(rename(&pol, &p("/tmp/t"), OLD, Kind::Dir, &p(dst), NEW), Verdict::Refuse(_)), "{dst}");
        }
        // files keep moving within it (what is written there stays unreadable)
        assert_eq!(rename(&pol, &p("/w/secrets/a"), OLD, Kind::File, &p("/w/secrets/b"), NEW), Verdict::Allow);
        assert_eq!(rename(&pol, &p("/w/x"), MINE, Kind::Dir, &p("/w/y"), NEW), Verdict::Allow);
        // round 8, second pass (F1): judged as a file, a directory swapped in by another thread
        // lands; so no kind of source moves in from outside
        assert!(matches!(rename(&pol, &p("/w/f"), MINE, Kind::File, &p("/w/secrets/x"), NEW), Verdict::Refuse(_)));
        assert!(matches!(rename(&pol, &p("/w/f"), MINE, Kind::File, &p("/w/.env"), Some(OLD)), Verdict::Refuse(_)));
        // (F2): onto a readable name with a denied path below it
        let below = FsPolicy { deny_read: vec![p("/w/keys/id")], ..pol.clone() };
        for k in [Kind::Dir, Kind::File, Kind::Symlink] {
            assert!(matches!(rename(&below, &p("/w/p"), MINE, k, &p("/w/keys"), NEW), Verdict::Refuse(_)), "{k:?}");
        }
    }

    /// Round 7's M2: a link is a write to its target. `ln -s .bashrc ~/.bash_history` made
    /// the next interactive bash append every command to `.bashrc`.
    #[test]
    fn links_are_judged_as_writes_to_their_target() {
        let mut pol = pol();
        pol.deny_write.push(p("/w/keep/.git/config"));
        let to = |d: &str, dir: bool, host: bool| symlink_to(&pol, &p(d), dir, host);
        assert_eq!(to("/w/notes.txt", false, true), Verdict::Allow, "inside the writable tree");
        assert_eq!(to("/w/sub", true, true), Verdict::Allow, "a directory whose whole tree is writable");
        assert_eq!(to("/tmp/t/missing", false, true), Verdict::Allow);
        for protected in ["/w/.bashrc", "/w/.git/config", "/w/.git/hooks/pre-commit", "/w/.claude/commands/x"] {
            assert!(matches!(to(protected, false, true), Verdict::Refuse(_)), "{protected}");
        }
        assert!(matches!(to("/home/u/.bashrc", false, true), Verdict::Refuse(_)), "outside every writable tree");
        assert_eq!(to("/usr/bin/python3", false, false), Verdict::Allow, "the host user cannot write it either");
        assert!(matches!(to("/usr/bin/python3", false, true), Verdict::Refuse(_)), "a host user who can (root)");
        for dir in ["/", "/home/u", "/w/.git", "/w/.claude", "/w/keep"] {
            assert!(matches!(to(dir, true, false), Verdict::Refuse(_)), "{dir}: names below it are writable");
        }
        assert!(matches!(to("/w", true, true), Verdict::Refuse(_)), "protected paths lie below the tree's top");
    }

    /// Round 8's H2: a symlink made at a missing allowWrite root (or on the way to one) sent
    /// the next run's root, and its read and write rights, wherever it pointed.
    #[test]
    fn missing_roots_and_the_way_to_them_are_only_made_as_directories() {
        let pol = FsPolicy { write: vec![p("/w"), p("/h/.npm"), p("/h/.cache/pip")], ..FsPolicy::default() };
        let pol = FsPolicy { write: [pol.write.clone(), vec![p("/h")]].concat(), ..pol };
        for at in ["/h/.npm", "/h/.cache", "/h/.cache/pip"] {
            assert_eq!(create(&pol, &p(at), Kind::Dir), Verdict::Allow, "{at}");
            for k in [Kind::Symlink, Kind::File, Kind::Link, Kind::Special] {
                assert!(matches!(create(&pol, &p(at), k), Verdict::Refuse(_)), "{k:?} at {at}");
            }
            assert!(matches!(rename(&pol, &p("/h/x"), MINE, Kind::Dir, &p(at), NEW), Verdict::Refuse(_)), "{at}");
            assert!(matches!(rename(&pol, &p("/h/l"), MINE, Kind::Symlink, &p(at), NEW), Verdict::Refuse(_)), "{at}");
            assert!(matches!(link(&pol, &p("/h/f"), &p(at)), Verdict::Refuse(_)), "{at}");
        }
        assert_eq!(create(&pol, &p("/h/.cache/other"), Kind::Symlink), Verdict::Allow, "beside the way");
    }
}
