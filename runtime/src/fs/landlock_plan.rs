//! Turns an [`FsPolicy`] into Landlock rules. Landlock rights are inherited by everything
//! beneath a rule and cannot be taken away below it, so where the policy changes inside a
//! tree the rights are split: the directory on the way to the exception gets only what
//! its whole subtree may have, and each of its other entries gets the rest. The
//! directories that lose write rights this way ("split directories") are where the
//! supervisor performs permitted writes on the command's behalf.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::fs::policy::{FsPolicy, Rights};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRule {
    pub path: PathBuf,
    pub rights: Rights,
    pub is_dir: bool,
    /// (dev, ino) when planned: the rule builder opens the path without following symlinks
    /// and refuses a target that is no longer this object (a concurrent rename could
    /// otherwise put a symlink or another directory there and widen the grant).
    pub id: Option<(u64, u64)>,
    /// Files and sockets may be made below it by the kernel: only directories srt made
    /// for the run (the pool, TMPDIR). A directory that existed at launch gets no such
    /// right, so every file made there goes through the supervisor and, where git would
    /// read its name, the journal ([`crate::fs::landlock`]).
    pub makes_files: bool,
    /// Directories may be made below it by the kernel too: only the pool's, whose trees
    /// the check after the run walks whole ([`crate::fs::pool`]).
    pub makes_dirs: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub rules: Vec<PlannedRule>,
    /// Directories whose own entries Landlock cannot let the command write.
    pub split_write_dirs: Vec<PathBuf>,
    /// Directories whose new entries Landlock cannot let the command read.
    pub split_read_dirs: Vec<PathBuf>,
}

/// Plans rules for `policy`, starting at `/` (reads are unrestricted unless denied).
pub fn plan(policy: &FsPolicy) -> Plan {
    let bounds: Vec<Bound> = policy
        .boundaries()
        .into_iter()
        .map(|path| {
            let mut rights = policy.native_rights(&path);
            // Listing means nothing for a file: a denied file leaves its ancestors
            // listable. Only an unlistable bound needs a stat to find out.
            if !rights.list && path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                rights.list = true;
            }
            // A denied path inside a writable tree must not be moved out from under its
            // rule by a rename the kernel allows: its directory and the ones above are split
            // for writing, so renames and links there go to the supervisor, which refuses
            // any that would make it readable. Below it, writing stays native.
            if policy.deny_read.contains(&path) && !rights.read && policy.in_write_tree(&path) {
                rights.write = false;
            }
            Bound { path, rights }
        })
        .collect();
    let mut out = Plan::default();
    let all: Vec<&Bound> = bounds.iter().collect();
    visit(policy, Path::new("/"), Rights::NONE, &all, &mut out);
    out
}

/// Lets the kernel make files and sockets below `dir`, a directory srt made for the run
/// (its TMPDIR, removed when the run ends, so nothing made there is left for a host git to
/// find): the rule at `dir` gets [`PlannedRule::makes_files`], or one is added when a
/// bigger writable tree holds `dir`. Only where the policy lets Landlock grant writing.
pub fn files_made_natively_in(plan: &mut Plan, policy: &FsPolicy, dir: &Path) {
    if !policy.native_rights(dir).write || policy.guards_below(dir) || policy.read_denied_below(dir) {
        return;
    }
    if let Some(r) = plan.rules.iter_mut().find(|r| r.path == dir && r.is_dir && r.rights.write) {
        r.makes_files = true;
        return;
    }
    let Ok(meta) = dir.symlink_metadata() else { return };
    if meta.is_dir() {
        plan.rules.push(PlannedRule {
            path: dir.to_path_buf(),
            rights: Rights { read: false, list: false, write: true },
            is_dir: true,
            id: Some(id(&meta)),
            makes_files: true,
            makes_dirs: false,
        });
    }
}

fn id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// A path where the policy changes, with the rights that hold from it downwards.
struct Bound {
    path: PathBuf,
    rights: Rights,
}

/// `bounds` are those at or below `node` (each level passes down only its own), so the
/// walk costs the bounds times their depth, not the bounds times every node.
fn visit(policy: &FsPolicy, node: &Path, inherited: Rights, bounds: &[&Bound], out: &mut Plan) {
    let here = policy.native_rights(node);
    let below: Vec<&Bound> = bounds
        .iter()
        .copied()
        .filter(|b| b.path.as_os_str() != node.as_os_str() && crate::fs::policy::under(&b.path, node))
        .collect();
    let uniform = below.iter().fold(here, |acc, b| acc.and(b.rights));
    let grant = uniform.minus(inherited);
    if !grant.is_empty() {
        let meta = node.symlink_metadata().ok();
        let is_dir = meta.as_ref().is_some_and(|m| m.is_dir());
        out.rules.push(PlannedRule {
            path: node.to_path_buf(),
            rights: grant,
            is_dir,
            id: meta.as_ref().map(id),
            makes_files: false,
            makes_dirs: false,
        });
    }
    if below.is_empty() {
        return;
    }
    let now = inherited.or(grant);
    let rest = here.minus(now);
    if rest.write {
        out.split_write_dirs.push(node.to_path_buf());
    }
    if rest.read {
        out.split_read_dirs.push(node.to_path_buf());
    }
    let on_path: BTreeSet<PathBuf> = below
        .iter()
        .filter_map(|b| b.path.strip_prefix(node).ok()?.components().next().map(|c| node.join(c)))
        .collect();
    if !rest.is_empty() {
        if let Ok(entries) = std::fs::read_dir(node) {
            for e in entries.flatten() {
                let path = e.path();
                // A rule on a symlink would grant its target: never follow one here.
                let Ok(meta) = e.metadata() else { continue };
                if meta.file_type().is_symlink() || on_path.contains(&path) {
                    continue;
                }
                out.rules.push(PlannedRule {
                    path,
                    rights: rest,
                    is_dir: meta.is_dir(),
                    id: Some(id(&meta)),
                    makes_files: false,
                    makes_dirs: false,
                });
            }
        }
    }
    for child in on_path {
        // Only real directories and files on the way; a symlink there was resolved
        // when the policy was canonicalised.
        match child.symlink_metadata() {
            Ok(m) if !m.file_type().is_symlink() => visit(policy, &child, now, &below, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("srt-plan-{}-{:?}", std::process::id(), std::thread::current().id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("w/.git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("w/src")).unwrap();
        std::fs::write(root.join("w/README"), "").unwrap();
        std::fs::write(root.join("w/.git/HEAD"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("w/link")).unwrap();
        root.canonicalize().unwrap()
    }

    fn rights_of(plan: &Plan, p: &Path) -> Option<Rights> {
        plan.rules.iter().find(|r| r.path == p).map(|r| r.rights)
    }

    #[test]
    fn splits_write_rights_around_protected_paths() {
        let root = tree();
        let w = root.join("w");
        let policy = FsPolicy {
            write: vec![w.clone()],
            deny_write: vec![w.join(".bashrc"), w.join(".git/hooks"), w.join(".git/config")],
            ..FsPolicy::default()
        };
        let plan = plan(&policy);
        let write_only = Rights { read: false, list: false, write: true };
        assert_eq!(rights_of(&plan, Path::new("/")), Some(Rights { read: true, list: true, write: false }));
        assert_eq!(rights_of(&plan, &w), None, "the cwd itself must not carry write rights");
        assert_eq!(rights_of(&plan, &w.join("src")), Some(write_only));
        assert_eq!(rights_of(&plan, &w.join("README")), Some(write_only));
        assert_eq!(rights_of(&plan, &w.join(".git/HEAD")), Some(write_only));
        assert_eq!(rights_of(&plan, &w.join(".git/hooks")), None);
        assert_eq!(rights_of(&plan, &w.join("link")), None, "symlinks never get rules");
        assert_eq!(plan.split_write_dirs, vec![w.clone(), w.join(".git")]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_denied_directory_cannot_be_renamed_natively() {
        let root = tree();
        let w = root.join("w");
        std::fs::create_dir_all(w.join("src/secrets/inner")).unwrap();
        let policy = FsPolicy { write: vec![w.clone()], deny_read: vec![w.join("src/secrets")], ..FsPolicy::default() };
        let plan = plan(&policy);
        assert!(plan.split_write_dirs.contains(&w.join("src")), "{:?}", plan.split_write_dirs);
        assert!(rights_of(&plan, &w.join("src")).is_none_or(|r| !r.write), "no write rule above the denied path");
        assert!(
            rights_of(&plan, &w.join("src/secrets")).is_some_and(|r| r.write && !r.read),
            "writing inside stays native"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn files_are_made_natively_in_the_tmpdir_only() {
        let root = tree();
        let w = root.join("w");
        let tmp = root.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let policy = FsPolicy { write: vec![w.clone(), tmp.clone()], ..FsPolicy::default() };
        let mut p = plan(&policy);
        assert!(p.rules.iter().all(|r| !r.makes_files), "planned rules are on what existed at launch");
        files_made_natively_in(&mut p, &policy, &tmp);
        let made: Vec<_> = p.rules.iter().filter(|r| r.makes_files).map(|r| r.path.clone()).collect();
        assert_eq!(made, vec![tmp.clone()]);
        // inside a bigger writable tree: a rule of its own
        let inner = w.join("src/tmp");
        std::fs::create_dir_all(&inner).unwrap();
        let policy = FsPolicy { write: vec![w.clone(), inner.clone()], ..FsPolicy::default() };
        let mut p = plan(&policy);
        files_made_natively_in(&mut p, &policy, &inner);
        assert!(p.rules.iter().any(|r| r.path == inner && r.makes_files && r.rights.write));
        // where the policy lets Landlock grant nothing, nothing
        let policy = FsPolicy { write: vec![w.clone()], deny_write: vec![inner.clone()], ..FsPolicy::default() };
        let mut p = plan(&policy);
        files_made_natively_in(&mut p, &policy, &inner);
        assert!(p.rules.iter().all(|r| !r.makes_files));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn plain_write_root_gets_one_rule() {
        let root = tree();
        let policy = FsPolicy { write: vec![root.join("w/src")], ..FsPolicy::default() };
        let plan = plan(&policy);
        assert_eq!(plan.rules.len(), 2);
        assert!(plan.split_write_dirs.is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn denied_read_file_keeps_siblings_readable() {
        let root = tree();
        let policy = FsPolicy { deny_read: vec![root.join("w/README")], ..FsPolicy::default() };
        let plan = plan(&policy);
        assert_eq!(rights_of(&plan, Path::new("/")), Some(Rights { read: false, list: true, write: false }));
        assert_eq!(rights_of(&plan, &root.join("w/src")), Some(Rights { read: true, list: false, write: false }));
        assert_eq!(rights_of(&plan, &root.join("w/README")), None);
        assert!(plan.split_read_dirs.contains(&root.join("w")));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
