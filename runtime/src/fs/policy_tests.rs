use super::*;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn policy() -> FsPolicy {
    FsPolicy {
        deny_read: vec![p("/home/u/.ssh"), p("/srv/data")],
        allow_read: vec![p("/srv/data/public")],
        write: vec![p("/w"), p("/tmp/x")],
        deny_write: vec![p("/w/.bashrc")],
        git_dirs: vec![p("/w/.git")],
        ..FsPolicy::default()
    }
}

#[test]
fn under_matches_path_starts_with() {
    for (a, b) in
        [("/a/b", "/a"), ("/a", "/a"), ("/ab", "/a"), ("/a", "/"), ("/", "/"), ("/a/b/c", "/a/b"), ("/a", "/a/b")]
    {
        assert_eq!(under(Path::new(a), Path::new(b)), Path::new(a).starts_with(b), "{a} under {b}");
    }
}

#[test]
fn read_decisions() {
    let pol = policy();
    assert!(pol.can_read(&p("/etc/passwd")));
    assert!(!pol.can_read(&p("/home/u/.ssh/id_rsa")));
    assert!(!pol.can_read(&p("/home/u/.ssh")));
    assert!(pol.can_read(&p("/home/u/.sshx")), "component-wise, not string prefix");
    assert!(pol.can_read(&p("/srv/data/public/a")));
    assert!(!pol.can_read(&p("/srv/data/private")));
    let deeper = FsPolicy { deny_read: vec![p("/a"), p("/a/b/c")], allow_read: vec![p("/a/b")], ..policy() };
    assert!(deeper.can_read(&p("/a/b/x")));
    assert!(!deeper.can_read(&p("/a/b/c/x")), "a deeper deny inside an allow stays denied");
}

#[test]
fn write_decisions() {
    let pol = policy();
    assert!(pol.can_write(&p("/w/f.txt")));
    assert!(pol.can_write(&p("/w/.git/index")));
    assert!(!pol.can_write(&p("/w/.bashrc")));
    assert!(!pol.can_write(&p("/w/.git/hooks/pre-commit")));
    assert!(!pol.can_write(&p("/tmp/y")));
    assert!(!pol.can_write(&p("/etc/passwd")));
    assert!(pol.can_write(&p("/w/.bashrc.bak")));
}

#[test]
fn protected_parents_cannot_be_replaced() {
    let pol = policy();
    assert!(!pol.can_replace(&p("/w/.git")));
    assert!(!pol.can_replace(&p("/w")));
    assert!(!pol.can_replace(&p("/w/.bashrc")));
    assert!(pol.can_replace(&p("/w/src")));
    assert!(pol.guards_below(&p("/w/.git")));
    assert!(pol.guards_below(&p("/w/.git/hooks")), "hooks may be created, not replaced");
    assert!(!pol.guards_below(&p("/w/.git/objects")));
}

#[test]
fn git_rules_apply_whether_or_not_the_repository_exists() {
    let pol = policy();
    assert_eq!(pol.guard(&p("/w/.git/config")), Guard::GitConfig);
    assert_eq!(pol.guard(&p("/w/.git/hooks/pre-commit")), Guard::HooksContent);
    assert_eq!(pol.guard(&p("/w/.git/commondir")), Guard::Deny);
    assert_eq!(pol.guard(&p("/w/.git/modules/s/config")), Guard::GitConfig);
    assert_eq!(pol.guard(&p("/w/.bashrc")), Guard::Deny);
    assert_eq!(pol.guard(&p("/w/src/config")), Guard::Open);
    assert!(!pol.can_write(&p("/w/.git/config")));
    assert!(pol.can_write(&p("/w/.git/index")));
    let allowed = FsPolicy { allow_git_config: true, ..policy() };
    assert_eq!(allowed.guard(&p("/w/.git/config")), Guard::Open);
    assert_eq!(allowed.guard(&p("/w/.git/hooks")), Guard::HooksDir, "hooks stay guarded");
}

#[test]
fn worktree_steps_lead_to_the_top_of_the_tree() {
    let pol = FsPolicy { git_dirs: vec![p("/w/.git/modules/a"), p("/w/.git"), p("/b")], ..policy() };
    assert_eq!(pol.worktree_ups(&p("/w/.git/config")), 1);
    assert_eq!(pol.worktree_ups(&p("/w/.git/modules/a/config")), 3);
    assert_eq!(pol.worktree_ups(&p("/w/.git/modules/x/y/config")), 4);
    assert_eq!(pol.worktree_ups(&p("/b/config")), 0, "a bare repository has no work tree");
}

/// Round 7's M3: agent configs missing from the list (`.qwen`, `.factory`, ...) were
/// written with `allowWrite: ["."]`. The top of a writable tree now fails closed for
/// new dot-entries, as `$HOME` does.
#[test]
fn new_dot_entries_at_a_top_fail_closed() {
    let pol = FsPolicy {
        write: vec![p("/w"), p("/w/.terraform"), p("/tmp")],
        tops: vec![p("/w"), p("/w/.terraform"), p("/tmp")],
        dot_tops: vec![p("/w"), p("/w/.terraform")],
        top_dot_files: vec![p("/w/.prettierrc")],
        ..FsPolicy::default()
    };
    for refused in [
        "/w/.qwen",
        "/w/.qwen/settings.json",
        "/w/.factory/hooks.json",
        "/w/.newagent/settings.json",
        "/w/.crushrc",
        "/w/.prettierrc/x",
    ] {
        assert_eq!(pol.guard(&p(refused)), Guard::Deny, "{refused}");
    }
    for open in [
        "/w/.venv/bin/python",
        "/w/.pytest_cache/v/x",
        "/w/.env.local",
        "/w/.coverage.host.1.2",
        "/w/.gitignore",
        "/w/.github/ISSUE_TEMPLATE/bug.md",
        "/w/.cargo/config.toml",
        "/w/.prettierrc",
        "/w/src/.hidden",
        "/w/.terraform/providers/x",
        "/tmp/.X11-unix/X0",
    ] {
        assert_eq!(pol.guard(&p(open)), Guard::Open, "{open}");
    }
}

/// In a tree the launch did not look through, the supervisor recognises the project
/// names at any depth, one-name and two-name ones, wildcards included, and git
/// directories by their shape.
#[test]
fn a_mediated_tree_protects_project_names_at_any_depth() {
    let root = std::env::temp_dir().join(format!("srt-mediated-guard-{}", std::process::id()));
    let repo = root.join("a/r");
    std::fs::create_dir_all(repo.join("objects")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let pol = FsPolicy { write: vec![root.clone()], mediated: vec![root.clone()], ..FsPolicy::default() };
    let at = |rel: &str| pol.guard(&root.join(rel));
    for denied in [
        "x/.bashrc",
        "x/y/.claude/settings.json",
        "x/.claude",
        "deep/er/.github/hooks/h",
        "x/.vscode/tasks.json",
        "x/my.code-workspace",
        "x/lefthook.yml",
        "x/.config/mise.toml",
        "x/HEAD",
        "a/r/config",
    ] {
        assert_ne!(at(denied), Guard::Open, "{denied}");
    }
    for open in ["x/notes.txt", "x/.github/workflows/ci.yml", "x/claude/settings.json", "x/config", "a/r2"] {
        assert_eq!(at(open), Guard::Open, "{open}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}
