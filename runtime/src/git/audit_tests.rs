use super::*;
use std::fs;

struct Tree(PathBuf);

impl Tree {
    fn new(tag: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("srt-audit-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        Tree(root.canonicalize().unwrap())
    }
    fn file(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    fn repo(&self, rel: &str) {
        self.file(&format!("{rel}/HEAD"), "ref: refs/heads/main\n");
        fs::create_dir_all(self.0.join(rel).join("objects")).unwrap();
        fs::create_dir_all(self.0.join(rel).join("refs")).unwrap();
    }
    fn exists(&self, rel: &str) -> bool {
        self.0.join(rel).symlink_metadata().is_ok()
    }
    fn audit(&self) -> Report {
        audit(std::slice::from_ref(&self.0), Stamp { sec: 0, nsec: 0 }, &[], false)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const PLAIN: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const FSMONITOR: &str = "[core]\n\tfsmonitor = touch /tmp/pwned\n";

#[test]
fn new_nested_repository_with_a_program_in_its_config_is_moved_aside() {
    let t = Tree::new("nested");
    t.repo("vendor/lib/.git");
    t.file("vendor/lib/.git/config", FSMONITOR);
    t.repo(".git");
    t.file(".git/config", PLAIN);
    let r = t.audit();
    assert_eq!(r.quarantined.len(), 1, "{r:?}");
    assert_eq!(r.quarantined[0].path, t.0.join("vendor/lib/.git/config"));
    assert!(!t.exists("vendor/lib/.git/config"));
    assert!(t.exists("vendor/lib/.git/config.srt-quarantined"), "nothing is deleted");
    assert!(t.exists(".git/config"), "a plain config stays");
}

#[test]
fn git_directories_made_of_files_lose_them_and_their_config() {
    let t = Tree::new("files");
    t.file("a/HEAD", "ref: refs/heads/main\n");
    t.file("a/objects", "");
    t.file("a/refs", "");
    t.file("a/config", FSMONITOR);
    let r = t.audit();
    for gone in ["a/objects", "a/refs", "a/config"] {
        assert!(!t.exists(gone) && t.exists(&format!("{gone}.srt-quarantined")), "{gone}: {r:?}");
    }
    assert!(t.exists("a/HEAD"));
}

#[test]
fn bare_repositories_and_hooks_anywhere() {
    let t = Tree::new("bare");
    t.repo("a/b");
    t.file("a/b/config", "[core]\n\tpager = sh -c x\n");
    t.file("a/b/hooks/pre-commit", "#!/bin/sh\n");
    t.file("a/b/hooks/pre-commit.sample", "#!/bin/sh\n");
    let r = t.audit();
    let moved: Vec<_> = r.quarantined.iter().map(|q| q.path.clone()).collect();
    assert!(moved.contains(&t.0.join("a/b/config")), "{moved:?}");
    assert!(moved.contains(&t.0.join("a/b/hooks/pre-commit")), "{moved:?}");
    assert!(t.exists("a/b/hooks/pre-commit.sample"), "git never runs samples");
}

#[test]
fn worktree_is_judged_by_where_the_config_lives() {
    let t = Tree::new("worktree");
    t.repo(".git/modules/sub");
    t.file(".git/modules/sub/config", "[core]\n\tworktree = ../../../sub\n");
    t.repo("x/.git");
    t.file("x/.git/config", "[core]\n\tworktree = ../../../home\n");
    let r = t.audit();
    let moved: Vec<_> = r.quarantined.iter().map(|q| q.path.clone()).collect();
    assert_eq!(moved, vec![t.0.join("x/.git/config")], "{r:?}");
}

#[test]
fn commondir_must_lead_upwards_and_its_target_is_checked() {
    let t = Tree::new("commondir");
    t.repo(".git/worktrees/w");
    t.file(".git/worktrees/w/commondir", "../..\n");
    t.file(".git/config", FSMONITOR); // .git has no HEAD here: only commondir makes it a git dir
    t.repo("y/.git");
    t.file("y/.git/commondir", "../../build/g\n");
    let r = t.audit();
    let moved: Vec<_> = r.quarantined.iter().map(|q| q.path.clone()).collect();
    assert!(moved.contains(&t.0.join(".git/config")), "{moved:?}");
    assert!(moved.contains(&t.0.join("y/.git/commondir")), "{moved:?}");
}

#[test]
fn files_unchanged_during_the_run_are_left_alone() {
    let t = Tree::new("old");
    t.repo("r/.git");
    t.file("r/.git/config", FSMONITOR);
    t.file("r/.git/hooks/pre-commit", "#!/bin/sh\n");
    let later = Stamp { sec: i64::MAX, nsec: 0 };
    let r = audit(std::slice::from_ref(&t.0), later, &[], false);
    assert!(r.quarantined.is_empty(), "{r:?}");
    assert!(t.exists("r/.git/config"));
}

#[test]
fn symlinks_are_not_followed_and_a_symlinked_config_is_moved_aside() {
    let t = Tree::new("links");
    let outside = Tree::new("links-outside");
    outside.repo("o");
    outside.file("o/config", FSMONITOR);
    std::os::unix::fs::symlink(outside.0.join("o"), t.0.join("into")).unwrap();
    t.repo("r");
    std::os::unix::fs::symlink(outside.0.join("o/config"), t.0.join("r/config")).unwrap();
    let r = t.audit();
    let moved: Vec<_> = r.quarantined.iter().map(|q| q.path.clone()).collect();
    assert_eq!(moved, vec![t.0.join("r/config")], "{r:?}");
    assert!(outside.exists("o/config"), "the walk never went through the symlink");
}

#[test]
fn nested_roots_are_walked_once() {
    let roots = [PathBuf::from("/a/b"), PathBuf::from("/a"), PathBuf::from("/c")];
    let t = Tree::new("roots");
    fs::create_dir_all(t.0.join("a/b")).unwrap();
    let mine: Vec<PathBuf> = roots.iter().map(|r| t.0.join(r.strip_prefix("/").unwrap())).collect();
    assert_eq!(top_level(&mine), vec![t.0.join("a")], "missing /c dropped, /a/b inside /a");
}

#[test]
fn a_gitfile_is_read_as_git_reads_it() {
    assert_eq!(gitfile_target(b"gitdir: x \n"), Some(PathBuf::from("x ")));
    assert_eq!(gitfile_target(b"gitdir: a\nb\r\n"), Some(PathBuf::from("a\nb")));
    assert_eq!(gitfile_target(b"gitdir: /abs/path\n"), Some(PathBuf::from("/abs/path")));
    assert_eq!(gitfile_target(b"gitdir:x\n"), None, "git wants the space");
    assert_eq!(gitfile_target(b"gitdir: \n"), None);
}

/// Past the walk's bound the check moves aside, unread, what was made or changed during
/// the run (below the pool's directories no journal entry names a directory the kernel
/// made: a bound that only reported would leave a git directory planted behind enough
/// files); a plain walk only reports it.
#[test]
fn past_the_bound_the_check_moves_aside_what_it_cannot_read() {
    let t = Tree::new("bound");
    for i in 0..10 {
        t.file(&format!("a/f{i}"), "x");
    }
    t.repo("b/.git");
    t.file("b/.git/config", FSMONITOR);
    let mut check = Auditor::new(Stamp { sec: 0, nsec: 0 }, false, vec![], vec![t.0.clone()]).with_max_entries(3);
    check.refuse_made_dirs(|_| false);
    check.walk_root(&t.0);
    let r = check.finish();
    assert!(!t.exists("b/.git/config"), "a planted config past the bound stays: {r:?}");
    assert!(r.unchecked.is_empty(), "{r:?}");
    assert!(!r.quarantined.is_empty(), "{r:?}");

    let t = Tree::new("bound-plain");
    for i in 0..10 {
        t.file(&format!("a/f{i}"), "x");
    }
    t.file("b/c/keep", "x");
    let mut plain = Auditor::new(Stamp { sec: 0, nsec: 0 }, false, vec![], vec![t.0.clone()]).with_max_entries(3);
    plain.walk_root(&t.0);
    let r = plain.finish();
    assert!(t.exists("b/c/keep") && t.exists("a/f0"), "a plain walk moves nothing aside");
    assert!(!r.unchecked.is_empty(), "{r:?}");
}

/// Past the bound, a directory whose name is not UTF-8 is moved aside by its own name: a
/// lossy copy of it names nothing (the planted repository stayed, only reported) or names
/// a sibling the command made to take the rename instead.
#[test]
fn past_the_bound_a_name_that_is_not_utf8_is_moved_aside() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new("bound-bytes");
    let odd = OsStr::from_bytes(b"b\xff");
    let planted = t.0.join(odd).join("r/.git");
    fs::create_dir_all(planted.join("objects")).unwrap();
    fs::create_dir_all(planted.join("refs")).unwrap();
    fs::write(planted.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(planted.join("config"), FSMONITOR).unwrap();
    t.file("a/keep", "x");
    let mut check = Auditor::new(Stamp { sec: 0, nsec: 0 }, false, vec![], vec![t.0.clone()]).with_max_entries(1);
    check.refuse_made_dirs(|_| false);
    check.walk_root(&t.0);
    let r = check.finish();
    assert!(!planted.join("config").exists(), "a planted config past the bound stays: {r:?}");
    assert!(r.unchecked.is_empty(), "{r:?}");
    let mut moved = t.0.as_os_str().to_owned();
    moved.push("/");
    moved.push(odd);
    moved.push(".srt-quarantined");
    assert!(Path::new(&moved).join("r/.git/config").exists(), "moved aside under its own name: {r:?}");
}

/// Past the bound, a directory below one the command locked (mode 000, given back after
/// srt read it) is moved aside all the same: srt reopened its parent by path, which the
/// lock refuses to srt's uid, and only reported it, leaving what was planted in it (fails
/// that way only as a uid other than root, which the lock does not stop).
#[test]
fn past_the_bound_a_directory_in_a_locked_one_is_moved_aside() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new("bound-locked");
    t.repo("lock/r/.git");
    t.file("lock/r/.git/config", FSMONITOR);
    let lock = t.0.join("lock");
    fs::set_permissions(&lock, fs::Permissions::from_mode(0o000)).unwrap();
    let mut check = Auditor::new(Stamp { sec: 0, nsec: 0 }, false, vec![], vec![t.0.clone()]).with_max_entries(2);
    check.refuse_made_dirs(|_| false);
    check.walk_root(&t.0);
    let r = check.finish();
    let mode = fs::symlink_metadata(&lock).unwrap().permissions().mode() & 0o7777;
    fs::set_permissions(&lock, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(mode, 0, "the lock given back");
    assert!(!t.exists("lock/r/.git/config"), "a planted config past the bound stays: {r:?}");
    assert!(r.unchecked.is_empty(), "{r:?}");
}
