//! Empty TMPDIRs kept between runs, in srt's fixed state directory
//! (`/tmp/srt-state-<uid>/tmpdirs`, which every run protects from its command).
//!
//! Making a directory allocates an inode, and removing one frees its block. On ext4
//! without a journal, allocating skips every inode freed in the last minutes (it reads
//! each one's deletion time), so a machine running many commands paid up to a
//! millisecond per `mkdir`; on a disk mounted with `discard`, freeing waits for the
//! device. A run takes a shelved directory with one rename instead, and the auditor puts
//! it back, emptied, with another: no inode made or freed. Where the TMPDIR's parent is
//! on another filesystem (`TMPDIR` set elsewhere) the rename fails and the run makes and
//! removes its own, as before.
//!
//! A directory is taken only as an empty, private directory of srt's uid with no
//! extended attribute, and put back only when the run ended with every process of the
//! command gone, emptied, and the same. Landlock rules and open descriptors stay with a
//! directory wherever it moves, and another run still going may hold some on it (a run
//! whose policy let it write the TMPDIR's parent got a rule on each directory there). So
//! a directory goes back only if it is the one this run made or took (not one swapped in
//! under its name), and is handed out only to a TMPDIR in the same parent directory,
//! where any such run's policy let it write already.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::fs::pool_dirs::{names, open_dir_at, sys_fstat};

/// The run's own TMPDIR (device, inode), recorded when it is made or taken, before the
/// auditor's fork: the only directory the auditor puts back.
static MADE: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();

/// Records the run's TMPDIR at `path` as the one [`put_back`] may keep.
pub fn made(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = path.symlink_metadata() {
        let _ = MADE.set((m.dev(), m.ino()));
    }
}

/// Shelf names for TMPDIRs of the parent directory `parent`: by its device and inode.
fn prefix(parent: BorrowedFd<'_>) -> Option<Vec<u8>> {
    let st = sys_fstat(parent).ok()?;
    Some(format!("t-{:x}-{:x}-", st.st_dev, st.st_ino).into_bytes())
}

const SHELF: &std::ffi::CStr = c"tmpdirs";
/// Enough for a few runs at once; more are removed as before.
const KEEP: usize = 4;

/// The shelf, opened (made when `make`), if it is a private directory of srt's uid.
fn shelf(make: bool) -> Option<OwnedFd> {
    let state = CString::new(crate::fs::state_dir::fixed().as_os_str().as_bytes()).ok()?;
    let state = open_dir_at(None, &state).ok().filter(|d| private(d.as_fd()))?;
    let fd = match open_dir_at(Some(state.as_fd()), SHELF) {
        Err(e) if make && e.raw_os_error() == Some(libc::ENOENT) => {
            // SAFETY: live descriptor, NUL-terminated name.
            unsafe { libc::mkdirat(state.as_raw_fd(), SHELF.as_ptr(), 0o700) };
            open_dir_at(Some(state.as_fd()), SHELF).ok()?
        }
        other => other.ok()?,
    };
    private(fd.as_fd()).then_some(fd)
}

/// A directory of srt's uid that only it may write.
fn private(d: BorrowedFd<'_>) -> bool {
    sys_fstat(d).is_ok_and(|st| crate::fs::pool::ours(&st))
}

/// What a TMPDIR must be to be handed to a run or kept for one: an empty directory of
/// srt's uid, mode 0700, no extended attribute (a default ACL would open the next run's
/// files to others).
fn fit(d: BorrowedFd<'_>) -> bool {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    sys_fstat(d).is_ok_and(|st| {
        st.st_mode & libc::S_IFMT == libc::S_IFDIR
            && st.st_uid == me
            && st.st_mode & 0o7777 == 0o700
            && st.st_nlink == 2
    }) && names(d).is_ok_and(|n| n.is_empty())
        && crate::fs::pool::bare(d)
}

/// The shelf's names, read from its start whatever was read through `shelf` before.
fn listed(shelf: BorrowedFd<'_>) -> std::io::Result<Vec<CString>> {
    // SAFETY: seeking a directory descriptor we hold back to its start.
    unsafe { libc::lseek(shelf.as_raw_fd(), 0, libc::SEEK_SET) };
    names(shelf)
}

fn split(path: &Path) -> Option<(OwnedFd, CString)> {
    let parent = CString::new(path.parent()?.as_os_str().as_bytes()).ok()?;
    let name = CString::new(path.file_name()?.as_bytes()).ok()?;
    Some((open_dir_at(None, &parent).ok()?, name))
}

/// Moves a shelved directory of `path`'s parent to `path` (which must not exist). True when
/// `path` is then an empty private directory of srt's; false when the run must make its
/// own. A shelved directory that is not fit is removed from the shelf ([`discard`]).
pub fn take(path: &Path) -> bool {
    shelf(false).is_some_and(|s| take_from(s.as_fd(), &shelf_path(), path))
}

fn shelf_path() -> std::path::PathBuf {
    crate::fs::state_dir::fixed().join(std::ffi::OsStr::from_bytes(SHELF.to_bytes()))
}

fn take_from(shelf: BorrowedFd<'_>, at: &Path, path: &Path) -> bool {
    let Some((parent, name)) = split(path) else { return false };
    let Some(prefix) = prefix(parent.as_fd()) else { return false };
    let Ok(shelved) = listed(shelf) else { return false };
    for n in shelved.iter().filter(|n| n.as_bytes().starts_with(&prefix)) {
        // judged where no command reaches it, before it leaves: once in the TMPDIR's
        // parent, another run that may write there could change it
        if !open_dir_at(Some(shelf), n).is_ok_and(|d| fit(d.as_fd())) {
            discard(shelf, at, n);
            continue;
        }
        if crate::sys::rename_noreplace(shelf, n, parent.as_fd(), &name) == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EXDEV) {
            return false; // another filesystem: none of them will do
        }
        // another run took it first
    }
    false
}

/// Removes a shelved directory that is not fit to hand out (only srt writes the shelf,
/// so it can only be one a concurrent run swapped in as it was put back). Moved aside
/// first: a name another srt could still take.
fn discard(shelf: BorrowedFd<'_>, at: &Path, n: &CString) {
    let Ok(aside) = CString::new([b"x".as_slice(), &n.as_bytes()[1..]].concat()) else { return };
    if crate::sys::rename_noreplace(shelf, n, shelf, &aside) != 0 {
        return;
    }
    if let Err(e) = crate::fs::tree_removal::remove_tree(&at.join(std::ffi::OsStr::from_bytes(aside.as_bytes()))) {
        crate::warn!("could not remove an unfit directory from srt's TMPDIR shelf: {e}");
    }
}

/// Puts the emptied TMPDIR at `path` on the shelf. False when it stays where it is (not
/// fit, the shelf full or on another filesystem): the caller removes it.
pub fn put_back(path: &Path) -> bool {
    let Some(&made) = MADE.get() else { return false };
    shelf(true).is_some_and(|s| put_back_to(s.as_fd(), &shelf_path(), path, made))
}

fn put_back_to(shelf: BorrowedFd<'_>, at: &Path, path: &Path, made: (u64, u64)) -> bool {
    let Some((parent, name)) = split(path) else { return false };
    let Ok(dir) = open_dir_at(Some(parent.as_fd()), &name) else { return false };
    if !sys_fstat(dir.as_fd()).is_ok_and(|st| (st.st_dev, st.st_ino) == made) {
        return false; // not the run's own: swapped in under its name
    }
    let Some(prefix) = prefix(parent.as_fd()) else { return false };
    // the command may have changed its TMPDIR's mode; the run's ends with the mode it began with
    // SAFETY: plain syscall on a descriptor we own.
    unsafe { libc::fchmod(dir.as_raw_fd(), 0o700) };
    if !fit(dir.as_fd()) {
        return false;
    }
    if listed(shelf).map_or(true, |n| n.iter().filter(|n| n.as_bytes().starts_with(&prefix)).count() >= KEEP) {
        return false;
    }
    let mut nonce = [0u8; 8];
    // SAFETY: getrandom writes at most the buffer's length into it.
    unsafe { libc::getrandom(nonce.as_mut_ptr().cast(), nonce.len(), 0) };
    let to = [prefix.as_slice(), format!("{:016x}", u64::from_ne_bytes(nonce)).as_bytes()].concat();
    let Ok(to) = CString::new(to) else { return false };
    if crate::sys::rename_noreplace(parent.as_fd(), &name, shelf, &to) != 0 {
        return false;
    }
    // The rename moved whatever had the name by then: another run that may write the
    // TMPDIR's parent could have swapped another directory in. What arrived must be the
    // directory judged above; else it goes, and the run's own stays to be removed.
    let arrived = open_dir_at(Some(shelf), &to).ok();
    let same = |a: &OwnedFd| {
        sys_fstat(a.as_fd())
            .is_ok_and(|x| sys_fstat(dir.as_fd()).is_ok_and(|d| (x.st_dev, x.st_ino) == (d.st_dev, d.st_ino)))
    };
    if arrived.as_ref().is_some_and(|a| same(a) && fit(a.as_fd())) {
        return true;
    }
    discard(shelf, at, &to);
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn scratch(base: &str, name: &str) -> std::path::PathBuf {
        let p = Path::new(base).join(format!("srt-tmpdir-shelf-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("shelf")).unwrap();
        std::fs::set_permissions(p.join("shelf"), std::fs::Permissions::from_mode(0o700)).unwrap();
        p
    }

    fn open(p: &Path) -> OwnedFd {
        open_dir_at(None, &CString::new(p.as_os_str().as_bytes()).unwrap()).unwrap()
    }

    fn private_dir(p: &Path) {
        std::fs::create_dir(p).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    fn id(p: &Path) -> (u64, u64) {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.dev(), m.ino())
    }

    /// The shelf name prefix of TMPDIRs in `parent`.
    fn prefix_of(parent: &Path) -> String {
        String::from_utf8(prefix(open(parent).as_fd()).unwrap()).unwrap()
    }

    #[test]
    fn an_emptied_tmpdir_goes_back_and_is_handed_to_the_next_run() {
        let root = scratch("/tmp", "cycle");
        let shelf = open(&root.join("shelf"));
        let run1 = root.join("srt-1-a");
        private_dir(&run1);
        let ino = std::fs::metadata(&run1).unwrap().ino();
        // the command opened its TMPDIR to everyone; it goes back private
        std::fs::set_permissions(&run1, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(put_back_to(shelf.as_fd(), &root.join("shelf"), &run1, id(&run1)));
        assert!(!run1.exists());
        let run2 = root.join("srt-2-b");
        assert!(take_from(shelf.as_fd(), &root.join("shelf"), &run2));
        let m = std::fs::metadata(&run2).unwrap();
        assert_eq!((m.ino(), m.mode() & 0o7777), (ino, 0o700), "the same directory, private");
        assert!(!take_from(shelf.as_fd(), &root.join("shelf"), &root.join("srt-3-c")), "the shelf is empty now");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn what_is_not_an_empty_plain_directory_is_neither_kept_nor_handed_out() {
        let root = scratch("/tmp", "unfit");
        let shelf = open(&root.join("shelf"));
        let full = root.join("srt-1-a");
        private_dir(&full);
        std::fs::write(full.join("left"), "x").unwrap();
        assert!(!put_back_to(shelf.as_fd(), &root.join("shelf"), &full, id(&full)), "not empty");
        let labelled = root.join("srt-1-b");
        private_dir(&labelled);
        let c = CString::new(labelled.as_os_str().as_bytes()).unwrap();
        // SAFETY: NUL-terminated path and name, a value of the given length.
        let set = unsafe { libc::setxattr(c.as_ptr(), c"user.srt-test".as_ptr(), b"1".as_ptr().cast(), 1, 0) };
        if set == 0 {
            assert!(
                !put_back_to(shelf.as_fd(), &root.join("shelf"), &labelled, id(&labelled)),
                "an extended attribute"
            );
        }
        // planted on the shelf: a directory with something in it is removed, not handed out
        let planted = root.join(format!("shelf/{}0000000000000001", prefix_of(&root)));
        private_dir(&planted);
        std::fs::write(planted.join("plant"), "x").unwrap();
        let run = root.join("srt-2-c");
        assert!(!take_from(shelf.as_fd(), &root.join("shelf"), &run));
        assert!(!run.exists() && !planted.exists());
        assert_eq!(std::fs::read_dir(root.join("shelf")).unwrap().count(), 0, "removed from the shelf");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_the_runs_own_directory_goes_back_and_only_to_its_parent() {
        let root = scratch("/tmp", "own");
        let shelf = open(&root.join("shelf"));
        let (a, b) = (root.join("a"), root.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // another run swapped its own (empty, fit) directory in under this run's name
        let run = a.join("srt-1-a");
        private_dir(&run);
        let own = id(&run);
        std::fs::rename(&run, root.join("elsewhere")).unwrap();
        private_dir(&run);
        assert!(!put_back_to(shelf.as_fd(), &root.join("shelf"), &run, own), "not the run's own");
        std::fs::remove_dir(&run).unwrap();
        std::fs::rename(root.join("elsewhere"), &run).unwrap();
        assert!(put_back_to(shelf.as_fd(), &root.join("shelf"), &run, own));
        // a TMPDIR in another parent does not get it; one in the same parent does
        assert!(!take_from(shelf.as_fd(), &root.join("shelf"), &b.join("srt-2-b")));
        assert!(take_from(shelf.as_fd(), &root.join("shelf"), &a.join("srt-2-b")));
        assert_eq!(id(&a.join("srt-2-b")), own);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_shelf_keeps_a_few_and_another_filesystem_makes_its_own() {
        let root = scratch("/tmp", "few");
        let shelf = open(&root.join("shelf"));
        let kept = (0..KEEP + 2)
            .filter(|i| {
                let d = root.join(format!("srt-1-{i}"));
                private_dir(&d);
                put_back_to(shelf.as_fd(), &root.join("shelf"), &d, id(&d))
            })
            .count();
        assert_eq!(kept, KEEP);
        if Path::new("/dev/shm").is_dir() {
            let elsewhere = scratch("/dev/shm", "few");
            let run = elsewhere.join("srt-2-a");
            assert!(!take_from(shelf.as_fd(), &root.join("shelf"), &run), "EXDEV");
            assert!(!run.exists());
            std::fs::remove_dir_all(&elsewhere).unwrap();
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
