//! The pool's tests: a run's own pool, a shelf taken and put back, and what is never
//! handed out.

use super::*;

#[test]
fn hands_out_each_directory_once_then_none() {
    let root = std::env::temp_dir().join(format!("srt-pool-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("w")).unwrap();
    let pool = Pool::create(&root.join("w"), 2).unwrap();
    assert_eq!(pool.rules().len(), 2);
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    assert_eq!(pool.hand_out(w.as_fd(), c"a"), Ok(true));
    assert_eq!(pool.hand_out(w.as_fd(), c"a"), Err(libc::EEXIST), "the name is taken");
    assert_eq!(pool.hand_out(w.as_fd(), c"b"), Ok(true));
    assert_eq!(pool.hand_out(w.as_fd(), c"c"), Ok(false), "used up");
    assert!(root.join("w/a").is_dir() && root.join("w/b").is_dir());
    std::fs::write(root.join("w/a/f"), "x").unwrap();
    assert!(remove(&pool.parent).is_empty());
    assert!(!pool.parent.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shelf_is_taken_whole_and_put_back_without_what_was_written_into() {
    let root = std::env::temp_dir().join(format!("srt-shelf-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("state")).unwrap();
    std::fs::create_dir_all(root.join("w")).unwrap();
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    assert_eq!(pool.rules().len(), 3);
    assert_eq!(pool.hand_out(w.as_fd(), c"a"), Ok(true));
    let first: Vec<_> = pool.made.iter().map(|(_, id)| *id).collect();
    assert!(finish(&pool.parent, true).is_empty());
    assert!(!pool.parent.exists(), "put back on the shelves");
    // the next run takes the same two directories and makes one
    let again = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    let ids: Vec<_> = again.made.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids.iter().filter(|i| first.contains(i)).count(), 2, "{first:?} {ids:?}");
    // one written into stays where it is, and so does its shelf
    std::fs::write(again.rules()[0].path.join("HEAD"), "x").unwrap();
    let kept = finish(&again.parent, true);
    assert_eq!(kept, vec![again.rules()[0].path.clone()]);
    assert!(again.parent.exists());
    // a third run does not take that shelf
    let third = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    assert!(third.rules().iter().all(|r| !r.path.join("HEAD").exists()));
    assert_ne!(third.parent, again.parent);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_directory_with_something_in_it_is_never_handed_out() {
    let root = std::env::temp_dir().join(format!("srt-shelf-planted-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("w")).unwrap();
    // a shelf planted by someone who could write this state directory
    let shelf = root.join("state/pool/s-000000000000");
    std::fs::create_dir_all(shelf.join("d0")).unwrap();
    for d in [root.join("state"), root.join("state/pool"), shelf.clone(), shelf.join("d0")] {
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    }
    std::fs::write(shelf.join("d0/planted"), "x").unwrap();
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 1).unwrap().unwrap();
    assert_eq!(pool.hand_out(w.as_fd(), c"a"), Ok(false), "the planted one is not handed out");
    assert!(!root.join("w/a").exists());
    assert_eq!(finish(&pool.parent, true), vec![pool.parent.join("d0")], "and it is reported");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shelf_whose_processes_may_live_on_is_removed_not_put_back() {
    let root = std::env::temp_dir().join(format!("srt-shelf-stale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("state")).unwrap();
    std::fs::create_dir_all(root.join("w")).unwrap();
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 2).unwrap().unwrap();
    assert!(finish(&pool.parent, false).is_empty());
    assert!(!pool.parent.exists());
    let left: Vec<_> = std::fs::read_dir(root.join("state/pool")).unwrap().flatten().collect();
    assert!(left.is_empty(), "nothing put back: {left:?}");
    std::fs::remove_dir_all(&root).unwrap();
}
