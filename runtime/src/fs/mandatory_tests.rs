use super::*;

/// Every entry but `.` and `..`, each with whether it is a directory (a symlink to
/// one is not), counted against the budget; over it, the listing says so.
#[test]
fn a_listing_counts_its_entries_against_the_budget() {
    let d = std::env::temp_dir().join(format!("srt-list-test-{}", std::process::id()));
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for i in 0..300 {
        std::fs::write(d.join(format!("f{i}")), "").unwrap();
    }
    std::os::unix::fs::symlink(d.join("sub"), d.join("link")).unwrap();
    let mut left = 302;
    match list(&d, &mut left) {
        Listing::Done(mut got) => {
            got.sort();
            assert_eq!(got.len(), 302);
            assert!(got.contains(&("sub".to_string(), true)));
            assert!(got.contains(&("link".to_string(), false)));
            assert!(got.contains(&("f299".to_string(), false)));
        }
        _ => panic!("302 entries within a budget of 302"),
    }
    assert_eq!(left, 0);
    let mut left = 64;
    assert!(matches!(list(&d, &mut left), Listing::OverBudget));
    let mut left = 301;
    assert!(matches!(list(&d, &mut left), Listing::OverBudget), "one over");
    assert!(matches!(list(&d.join("missing"), &mut 10), Listing::Unreadable));
    std::fs::remove_dir_all(&d).unwrap();
}

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
    let got = mandatory_denies(&root, &[], 3);
    assert!(got.tops.contains(&root), "missing cwd entries are protected as they are made");
    assert!(got.git_dirs.contains(&root.join(".git")), "a missing .git in cwd is guarded");
    assert!(got.deny.contains(&root.join("HEAD")), "cwd may not become a bare repository");
    assert!(got.git_dirs.contains(&root.join("sub/.git")));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let with_git = mandatory_denies(&root, &[], 0);
    assert!(with_git.deny.contains(&root.join("HEAD")), "with a .git too: git falls back to a bare cwd");
    std::fs::remove_dir(root.join(".git")).unwrap();
    assert!(got.deny.contains(&root.join("a/.zshrc")));
    assert!(!got.deny.contains(&root.join("a/.bashrc")), "missing nested entries are not listed");
    assert!(!got.git_dirs.contains(&root.join("a/.git")));
    assert!(!got.deny.contains(&root.join("a/b/c/d/e/.bashrc")), "deeper than the search depth");
    assert!(!got.deny.iter().any(|p| p.starts_with(root.join("node_modules"))));
    assert!(got.mediated.is_empty());
    std::fs::create_dir_all(root.join("objects")).unwrap();
    std::fs::create_dir_all(root.join("refs")).unwrap();
    std::fs::write(root.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let bare = mandatory_denies(&root, &[], 1);
    assert!(bare.git_dirs.contains(&root), "an existing bare repository in cwd is guarded as one");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn every_writable_tree_and_bare_shapes_below() {
    let root = std::env::temp_dir().join(format!("srt-mand-roots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("w")).unwrap();
    std::fs::create_dir_all(root.join("home/x/objects")).unwrap();
    std::fs::create_dir_all(root.join("home/x/refs")).unwrap();
    std::fs::create_dir_all(root.join("home/linked")).unwrap();
    std::fs::write(root.join("home/linked/HEAD"), "x").unwrap();
    std::fs::write(root.join("home/linked/commondir"), "../x").unwrap();
    let got = mandatory_denies(&root.join("w"), &[root.join("home")], 3);
    assert!(got.tops.contains(&root.join("home")), "names at the top of every writable tree");
    assert!(got.git_dirs.contains(&root.join("home/.git")));
    assert!(got.deny.contains(&root.join("home/HEAD")));
    assert!(got.git_dirs.contains(&root.join("home/x")), "objects/ and refs/: one HEAD from a repository");
    assert!(got.git_dirs.contains(&root.join("home/linked")), "HEAD and commondir");
    std::fs::create_dir_all(root.join("home/a/b/c/.git/hooks")).unwrap();
    std::fs::write(root.join("home/a/b/.bashrc"), "").unwrap();
    let deep = mandatory_denies(&root.join("w"), &[root.join("home")], 3);
    assert!(deep.git_dirs.contains(&root.join("home/a/b/c/.git")), "a repository nested in another tree");
    assert!(deep.deny.contains(&root.join("home/a/b/.bashrc")), "protected names deeper in another tree");
    std::fs::create_dir_all(root.join("home/files")).unwrap();
    std::fs::write(root.join("home/files/objects"), "").unwrap();
    std::fs::write(root.join("home/files/refs"), "").unwrap();
    let files = mandatory_denies(&root.join("w"), &[root.join("home")], 3);
    assert!(files.git_dirs.contains(&root.join("home/files")), "objects and refs as files: a chmod from one");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn many_mediated_trees_merge_into_their_directories() {
    let p = |s: &str| PathBuf::from(s);
    let many: Vec<PathBuf> = (0..100).map(|i| p(&format!("/w/d{}/p{i}", i % 10))).chain([p("/w/e")]).collect();
    let got = collapse(many, 64);
    assert_eq!(got.len(), 11, "{got:?}");
    assert!(got.contains(&p("/w/d3")) && got.contains(&p("/w/e")));
    let got = collapse((0..100).map(|i| p(&format!("/w/d{i}"))).collect(), 64);
    assert_eq!(got, vec![p("/w")], "a hundred siblings: their directory");
    assert_eq!(collapse(vec![p("/w/a/b"), p("/w/a")], 64), vec![p("/w/a")], "nested entries are one");
}

#[test]
fn what_the_time_does_not_reach_is_mediated() {
    let root = std::env::temp_dir().join(format!("srt-mand-time-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("w/a/b/.git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("other/x/.git")).unwrap();
    let listed = mandatory_denies_within(&root.join("w"), &[root.join("other")], 3, BUDGET, SEARCH_CPU);
    assert!(listed.git_dirs.contains(&root.join("w/a/b/.git")) && listed.mediated.is_empty(), "{listed:?}");
    // no time at all: nothing below the tops is listed, and nothing is taken as safe
    let none = mandatory_denies_within(&root.join("w"), &[root.join("other")], 3, BUDGET, Duration::ZERO);
    assert_eq!(none.mediated, vec![root.join("other"), root.join("w")], "{none:?}");
    assert!(none.git_dirs.contains(&root.join("w/.git")), "the tops' own names hold all the same");
    assert!(!none.git_dirs.contains(&root.join("w/a/b/.git")));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn what_the_budget_does_not_reach_is_mediated() {
    let root = std::env::temp_dir().join(format!("srt-mand-budget-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for i in 0..20 {
        std::fs::create_dir_all(root.join(format!("d{i:02}/e"))).unwrap();
    }
    let got = mandatory_denies_within(&root, &[], 3, 25, SEARCH_CPU);
    // 20 entries at the top, then one each for five of the d's (in the order the
    // directory lists them): the other 15 and the five `e`s queued below are mediated
    assert!(!got.mediated.contains(&root), "the top was listed");
    let level1 = got.mediated.iter().filter(|m| m.parent() == Some(root.as_path())).count();
    let level2 = got.mediated.iter().filter(|m| m.file_name() == Some(std::ffi::OsStr::new("e"))).count();
    assert_eq!((level1, level2), (15, 5), "{:?}", got.mediated);
    let none = mandatory_denies_within(&root, &[], 3, 3, SEARCH_CPU);
    assert_eq!(none.mediated, vec![root.clone()], "a top it could not list is mediated whole");
    let wide = mandatory_denies_within(&root.join("d00"), std::slice::from_ref(&root), 3, 10_000, SEARCH_CPU);
    assert!(wide.mediated.is_empty(), "20 entries are split");
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::create_dir_all(root.join("w")).unwrap();
    for i in 0..SPLIT_MAX + 1 {
        std::fs::write(root.join(format!("f{i}")), "").unwrap();
    }
    let wide = mandatory_denies_within(&root.join("w"), std::slice::from_ref(&root), 3, 10_000, SEARCH_CPU);
    assert_eq!(wide.mediated, vec![root.clone()], "a wide tree other than the working directory is not split");
    std::fs::remove_dir_all(&root).unwrap();
}
