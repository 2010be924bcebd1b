//! The pool's tests: a run's own pool, a shelf taken and put back, and what is never
//! handed out.

use super::*;

/// A fresh directory for one test, with an empty working directory `w` and state
/// directory `state` in it.
fn scratch(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("srt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("w")).unwrap();
    std::fs::create_dir_all(root.join("state")).unwrap();
    root
}

#[test]
fn hands_out_each_directory_once_then_none() {
    let root = scratch("pool-test");
    let pool = Pool::create(&root.join("w"), 2).unwrap();
    assert_eq!(pool.rules().len(), 2);
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &|| Ok(())), Ok(true));
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &|| Ok(())), Err(libc::EEXIST), "the name is taken");
    assert_eq!(pool.hand_out(w.as_fd(), c"b", 0o700, &|| Ok(())), Ok(true));
    assert_eq!(pool.hand_out(w.as_fd(), c"c", 0o700, &|| Ok(())), Ok(false), "used up");
    assert!(root.join("w/a").is_dir() && root.join("w/b").is_dir());
    std::fs::write(root.join("w/a/f"), "x").unwrap();
    assert!(remove(&pool.parent).is_empty());
    assert!(!pool.parent.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shelf_is_taken_whole_and_put_back_without_what_was_written_into() {
    let root = scratch("shelf-test");
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    assert_eq!(pool.rules().len(), 3);
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &|| Ok(())), Ok(true));
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
    let root = scratch("shelf-planted");
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
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &|| Ok(())), Ok(false), "the planted one is not handed out");
    assert!(!root.join("w/a").exists());
    assert_eq!(finish(&pool.parent, true), vec![pool.parent.join("d0")], "and it is reported");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shelf_whose_processes_may_live_on_is_removed_not_put_back() {
    let root = scratch("shelf-stale");
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 2).unwrap().unwrap();
    assert!(finish(&pool.parent, false).is_empty());
    assert!(!pool.parent.exists());
    let left: Vec<_> = std::fs::read_dir(root.join("state/pool")).unwrap().flatten().collect();
    assert!(left.is_empty(), "nothing put back: {left:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Stamps every directory of `pool` as settled, as [`Pool::claim`] does for those whose
/// ctime was old enough when it took them, then has the auditor's look at them.
fn settle(pool: &Pool) {
    let dirs = pool
        .made
        .iter()
        .map(|(n, _)| Settled {
            name: n.clone(),
            stamp: Stamp::of(&fstat_at(pool.dir.as_fd(), n).unwrap()),
            empty: false,
        })
        .collect();
    {
        let mut claimed = CLAIMED.lock().unwrap();
        claimed.retain(|(p, _)| p != &pool.parent);
        claimed.push((pool.parent.clone(), dirs));
    }
    crate::fs::pool_dirs::verify_claimed();
}

#[test]
fn a_settled_directory_goes_back_unopened_unless_its_stamp_moved() {
    let root = scratch("shelf-settled");
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 4).unwrap().unwrap();
    let dirs: Vec<PathBuf> = pool.rules().iter().map(|r| r.path.clone()).collect();
    let set_attr = |p: &Path| {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: NUL-terminated path and name, a live one-byte value.
        let r = unsafe { libc::setxattr(c.as_ptr(), c"user.srt-test".as_ptr(), b"x".as_ptr().cast(), 1, 0) };
        assert_eq!(r, 0, "user attributes on {}: {}", p.display(), std::io::Error::last_os_error());
    };
    // d0 carries an attribute from before the run took it: the full check would keep it
    set_attr(&dirs[0]);
    // d3 holds a file from before (a planted shelf): its content can change without its stamp
    std::fs::write(dirs[3].join("config"), "[core]\n").unwrap();
    settle(&pool);
    // past the coarse clock's tick, so that a change moves the ctime on any kernel
    std::thread::sleep(std::time::Duration::from_millis(25));
    set_attr(&dirs[1]); // only an attribute: no new entry
    std::fs::write(dirs[2].join("HEAD"), "x").unwrap();
    std::fs::write(dirs[3].join("config"), "[core]\n\tfsmonitor = evil\n").unwrap();
    let mut kept = finish(&pool.parent, true);
    kept.sort();
    assert_eq!(
        kept,
        vec![dirs[1].clone(), dirs[2].clone(), dirs[3].clone()],
        "d0 was empty with its stamp, which did not move: put back unopened"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// The journal is written for each directory taken, after it is taken: a hand-out that
/// finds none asks nothing, one whose record fails moves nothing and keeps the directory.
#[test]
fn records_each_hand_out_after_taking_a_directory() {
    let root = scratch("pool-record");
    let pool = Pool::create(&root.join("w"), 1).unwrap();
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    let asked = std::cell::Cell::new(0);
    let fails = || {
        asked.set(asked.get() + 1);
        Err(libc::ENOSPC)
    };
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &fails), Err(libc::ENOSPC));
    assert!(!root.join("w/a").exists() && pool.any_left(), "nothing moved, the directory kept");
    let ok = || {
        asked.set(asked.get() + 1);
        Ok(())
    };
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &ok), Ok(true));
    assert_eq!(pool.hand_out(w.as_fd(), c"b", 0o700, &ok), Ok(false));
    assert_eq!(asked.get(), 2, "not asked when none is left");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shelf_bigger_than_a_run_takes_loses_its_empty_extras_once() {
    let root = scratch("shelf-trim");
    // a build with a bigger shelf put back four
    let big = Pool::claim(&root.join("state"), &root.join("w"), 4).unwrap().unwrap();
    assert!(finish(&big.parent, true).is_empty());
    let shelf = std::fs::read_dir(root.join("state/pool")).unwrap().flatten().next().unwrap().path();
    let mut dirs: Vec<_> = std::fs::read_dir(&shelf).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    // one holding a directory is never taken nor removed
    std::fs::create_dir(dirs[3].join("planted")).unwrap();
    let small = Pool::claim(&root.join("state"), &root.join("w"), 2).unwrap().unwrap();
    assert_eq!(small.rules().len(), 2);
    let left: Vec<_> = std::fs::read_dir(&small.parent).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(left.len(), 3, "two taken, the empty extra removed, the written one kept: {left:?}");
    assert!(left.contains(&dirs[3].file_name().map(|n| small.parent.join(n)).unwrap()));
    let kept = finish(&small.parent, true);
    assert_eq!(kept.len(), 1, "the written one is reported: {kept:?}");
    assert!(kept[0].join("planted").exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_taken_shelf_hands_its_directories_descriptors_to_the_rules_once() {
    let root = scratch("shelf-held");
    let first = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    assert!(finish(&first.parent, true).is_empty());
    // the next run takes the three from the shelf, each opened on the way
    let pool = Pool::claim(&root.join("state"), &root.join("w"), 3).unwrap().unwrap();
    let held = pool.take_held();
    assert_eq!(held.len(), 3);
    for (id, fd) in &held {
        let st = sys_fstat(fd.as_fd()).unwrap();
        assert_eq!(*id, (st.st_dev, st.st_ino), "the descriptor is the directory it is filed under");
        assert!(pool.rules().iter().any(|r| r.id == Some(*id)), "and a planned rule's");
    }
    assert!(pool.take_held().is_empty(), "once");
    drop(held);
    assert!(finish(&pool.parent, true).is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

/// The old step of `take_from_pool`: the mode set by name once the directory had it.
fn chmod_by_name(dir: BorrowedFd<'_>, name: &std::ffi::CStr, mode: u32) {
    let how = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: live descriptor and NUL-terminated name; the descriptor is closed below.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), how) };
    assert!(fd >= 0);
    // SAFETY: plain syscalls on the descriptor just opened.
    unsafe {
        libc::fchmod(fd, mode);
        libc::close(fd);
    }
}

/// A hand-out's mode goes on the pool's directory through srt's descriptor of it, before
/// it gets the command's name. By that name afterwards it landed on whatever another
/// thread of the command had renamed there in between (a directory of its own replaces the
/// empty one); a move that fails gives the directory its own mode back.
#[test]
fn the_mode_goes_on_the_directory_handed_out_never_on_one_swapped_in() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = scratch("pool-mode");
    let w = nix::fcntl::open(
        &root.join("w"),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    let mode = |p: &str| std::fs::symlink_metadata(root.join(p)).unwrap().mode() & 0o7777;
    let victim = root.join("w/victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o700)).unwrap();
    let ino = std::fs::symlink_metadata(&victim).unwrap().ino();
    let pool = Pool::create(&root.join("w"), 2).unwrap();

    // by name after the move: the swap is followed
    assert_eq!(pool.hand_out(w.as_fd(), c"a", 0o700, &|| Ok(())), Ok(true));
    std::fs::rename(&victim, root.join("w/a")).unwrap();
    chmod_by_name(w.as_fd(), c"a", 0o755);
    assert_eq!((std::fs::symlink_metadata(root.join("w/a")).unwrap().ino(), mode("w/a")), (ino, 0o755));
    std::fs::rename(root.join("w/a"), &victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o700)).unwrap();

    // a move that fails: the directory keeps its own mode and is handed out later
    std::fs::write(root.join("w/taken"), "").unwrap();
    assert_eq!(pool.hand_out(w.as_fd(), c"taken", 0o777, &|| Ok(())), Err(libc::EEXIST));
    assert!(pool.made.iter().all(|(n, _)| pool.unused(n).is_none_or(|(_, st)| st.st_mode & 0o7777 == 0o700)));

    // through the descriptor, before the move: the name comes with the mode, and nothing
    // is done by name after it
    assert_eq!(pool.hand_out(w.as_fd(), c"b", 0o751, &|| Ok(())), Ok(true));
    assert_eq!(mode("w/b"), 0o751);
    std::fs::rename(&victim, root.join("w/b")).unwrap();
    assert_eq!(mode("w/b"), 0o700, "the swapped-in directory is untouched");
    assert!(!pool.any_left());
    std::fs::remove_dir_all(&root).unwrap();
}
