use super::*;
use crate::git::audit::Stamp;

fn header(dir: &Path) -> Header {
    Header {
        roots: vec![dir.join("w"), PathBuf::from("/tmp")],
        since: Stamp { sec: 1_700_000_000, nsec: 42 },
        trusted: vec![dir.join("w/.git")],
        guarded: vec![dir.join("w/.git"), dir.join("w/sub/.git")],
        pools: vec![dir.join("w/.srt-1-ab")],
        allow_git_config: true,
        tmpdir: PathBuf::from("/tmp/srt-1-abc"),
        denied: vec![dir.join("w/.bashrc")],
        tops: vec![dir.join("w")],
        dot_tops: vec![dir.join("w")],
        top_dot_files: vec![dir.join("w/.prettierrc")],
        mediated: vec![dir.join("w/big")],
        home: Some(crate::fs::policy::HomePolicy {
            home: dir.join("w"),
            allow: vec![".npm".into()],
            deny: vec![".bash_history".into()],
            xdg: vec![(dir.join("cfg"), ".config".into()), (dir.join("data"), ".local/share".into())],
        }),
    }
}

#[test]
fn round_trip_and_lock() {
    let dir = std::env::temp_dir().join(format!("srt-journal-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let h = header(&dir);
    let j = Journal::create(&dir, &h).unwrap();
    j.record(&Entry::Dir(dir.join("w/new dir\nwith newline"))).unwrap();
    j.record(&Entry::Special(dir.join("w/.git/logs/HEAD"))).unwrap();
    j.record(&Entry::Wrote(dir.join("w/deep"))).unwrap();
    j.record(&Entry::Moved(dir.join("w/moved"))).unwrap();
    j.record(&Entry::Shm { path: "/dev/shm/sem.a b".into(), dev: 23, ino: 4_000_000_001 }).unwrap();
    let (h2, entries) = read(j.path()).unwrap();
    assert_eq!(h2, h);
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[3], Entry::Moved(dir.join("w/moved")));
    assert_eq!(entries[4], Entry::Shm { path: "/dev/shm/sem.a b".into(), dev: 23, ino: 4_000_000_001 });
    assert_eq!(entries[0], Entry::Dir(dir.join("w/new dir\nwith newline")));
    assert!(stale(&dir).is_empty(), "a journal whose run holds its lock is not stale");
    let path = j.path().to_path_buf();
    drop(j);
    let s = stale(&dir);
    assert_eq!(s.len(), 1, "the lock went with the run");
    assert_eq!(s[0].0, path);
    assert!(stale(&dir).is_empty(), "one finisher at a time");
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn appends_stop_at_the_cap_and_longer_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("srt-journal-cap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let j = Journal::create(&dir, &header(&dir)).unwrap();
    // as if the run had already written all but a little of the cap
    j.len.fetch_add(MAX_LEN - j.len.load(Ordering::SeqCst) - 10, Ordering::SeqCst);
    let e = j.record(&Entry::Dir(dir.join("w/one-more-directory"))).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    j.record(&Entry::Dir(PathBuf::from("/a"))).unwrap();
    // a file past the cap (not written by srt) is not read in part
    let f = std::fs::OpenOptions::new().append(true).open(j.path()).unwrap();
    f.set_len(MAX_LEN + 1).unwrap();
    assert_eq!(read(j.path()).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
    // a journal taken over counts what is in it
    let adopted = adopt(std::os::fd::OwnedFd::from(f), j.path().to_path_buf());
    assert!(adopted.record(&Entry::Dir(PathBuf::from("/b"))).is_err());
    drop(j);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_journals_srt_could_have_written_are_finished() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("srt-journal-planted-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    drop(Journal::create(&dir, &header(&dir)).unwrap());
    assert_eq!(stale(&dir).len(), 1, "a dead run's journal");
    let planted = dir.join("runs/run-1-0.journal");
    std::fs::write(&planted, encode_header(&header(&dir))).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(stale(&dir).len(), 1, "a journal others may read was not written by srt");
    std::fs::set_permissions(dir.join("runs"), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(stale(&dir).is_empty(), "a runs directory others may write is not srt's");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_state_directory_of_another_user_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("srt-journal-usable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::set_permissions(dir.join("mine"), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(owned_private(&dir.join("mine")).is_ok(), "ours");
    std::fs::set_permissions(dir.join("mine"), std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(owned_private(&dir.join("mine")).is_err(), "ours, but others may write it");
    // SAFETY: geteuid cannot fail.
    let other = if unsafe { libc::geteuid() } == 0 { 65534 } else { 0 };
    std::fs::create_dir(dir.join("theirs")).unwrap();
    if std::os::unix::fs::chown(dir.join("theirs"), Some(other), None).is_ok() {
        assert!(owned_private(&dir.join("theirs")).is_err(), "another user's");
    }
    std::fs::write(dir.join("file"), "").unwrap();
    assert!(owned_private(&dir.join("file")).is_err(), "not a directory");
    std::os::unix::fs::symlink(dir.join("mine"), dir.join("link")).unwrap();
    assert!(owned_private(&dir.join("link")).is_err(), "a symlink");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn partial_last_record_is_ignored_and_no_header_refused() {
    let dir = PathBuf::from("/x");
    let mut buf = encode_header(&header(&dir));
    buf.extend(record(TAG_DIR, b"/x/w/a"));
    buf.extend_from_slice(b"D/x/w/b"); // cut short
    let (_, e) = parse(&buf).unwrap();
    assert_eq!(e, vec![Entry::Dir("/x/w/a".into())]);
    assert!(parse(&record(TAG_DIR, b"/a")).is_err(), "entries without a header");
}

/// Round 7's closed-stderr finding left warnings in a journal, and the check then read
/// nothing of it: a record srt cannot read is skipped, and every other is still checked.
#[test]
fn unreadable_records_are_skipped_and_the_rest_is_checked() {
    let dir = PathBuf::from("/x");
    let mut buf = encode_header(&header(&dir));
    buf.extend(record(TAG_DIR, b"/x/w/a"));
    buf.extend(record(b'?', b"srt: warning: something"));
    buf.extend(record(TAG_SHM, b"not numbers"));
    buf.extend_from_slice(b"\0");
    buf.extend(record(TAG_SPECIAL, b"/x/w/link"));
    let (h, e) = parse(&buf).unwrap();
    assert_eq!(h, header(&dir));
    assert_eq!(e, vec![Entry::Dir("/x/w/a".into()), Entry::Special("/x/w/link".into())]);
}

#[test]
fn a_finished_journal_is_kept_as_a_spare_and_reused_with_only_the_new_header() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = std::env::temp_dir().join(format!("srt-journal-spare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runs = dir.join("runs");
    let mut h = header(&dir);
    let j = Journal::create(&dir, &h).unwrap();
    for i in 0..50 {
        j.record(&Entry::Dir(dir.join(format!("w/an old run's directory {i}")))).unwrap();
    }
    let ino = std::fs::metadata(j.path()).unwrap().ino();
    j.finish().unwrap();
    drop(j);
    let spares = |d: &Path| {
        std::fs::read_dir(d).unwrap().flatten().filter(|e| e.file_name().as_bytes().starts_with(b"spare-")).count()
    };
    assert_eq!(spares(&runs), 1, "kept, not removed");
    assert!(stale(&dir).is_empty(), "a spare is never a dead run's journal");

    h.tmpdir = PathBuf::from("/tmp/srt-2-def");
    let j = Journal::create(&dir, &h).unwrap();
    assert_eq!(std::fs::metadata(j.path()).unwrap().ino(), ino, "the same file");
    assert_eq!(spares(&runs), 0);
    j.record(&Entry::Moved(dir.join("w/new"))).unwrap();
    let (h2, entries) = read(j.path()).unwrap();
    assert_eq!(h2, h, "the new header");
    assert_eq!(entries, vec![Entry::Moved(dir.join("w/new"))], "none of the old run's entries");
    assert!(stale(&dir).is_empty(), "locked by its run");
    j.finish().unwrap();
    drop(j);

    // a spare its last run still holds (locked, open) is not used but removed; the run
    // makes a file
    let held =
        std::fs::File::open(runs.join(std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().file_name())).unwrap();
    lock(&held, false).unwrap();
    let j = Journal::create(&dir, &h).unwrap();
    assert_ne!(std::fs::metadata(j.path()).unwrap().ino(), ino);
    assert_eq!(spares(&runs), 0);
    drop(held);
    j.finish().unwrap();
    drop(j);

    // one that another process holds open is not taken (it could write into the journal
    // made from it), and goes
    let spare = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().as_bytes().starts_with(b"spare-"))
        .unwrap()
        .path();
    let kept_open = std::fs::OpenOptions::new().append(true).open(&spare).unwrap();
    let kept_ino = std::fs::metadata(&spare).unwrap().ino();
    let j = Journal::create(&dir, &h).unwrap();
    assert_ne!(std::fs::metadata(j.path()).unwrap().ino(), kept_ino, "a spare held open elsewhere is not used");
    drop(kept_open);
    j.finish().unwrap();
    drop(j);

    // one that is not srt's own (readable by others) is not taken, and goes
    for e in std::fs::read_dir(&runs).unwrap().flatten() {
        std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let j = Journal::create(&dir, &h).unwrap();
    assert_eq!(std::fs::metadata(j.path()).unwrap().mode() & 0o777, 0o600);
    assert_eq!(read(j.path()).unwrap().1, vec![]);
    drop(j);

    // no more than a few are kept
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(Journal::create(&dir, &h).unwrap());
    }
    for j in &open {
        j.finish().unwrap();
    }
    assert_eq!(spares(&runs), 4);
    drop(open);
    std::fs::remove_dir_all(&dir).unwrap();
}
