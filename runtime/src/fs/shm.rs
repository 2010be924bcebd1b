//! `/dev/shm`, POSIX shared memory: every run gets its own, in both modes, as srt 0.0.83
//! (bubblewrap's fresh `/dev`) gives. Python's `multiprocessing` (its locks, queues and
//! pools are `sem_open` semaphores), `shm_open`, Chromium and anything that makes a
//! temporary file there need it.
//!
//! - **Namespace mode**: a fresh tmpfs is mounted on `/dev/shm` in the command's mount
//!   namespace ([`crate::fs::mounts`]) with a Landlock rule of its own: the kernel judges
//!   everything there, and it is gone with the namespace.
//! - **Landlock mode** shares the host's `/dev/shm`, which Landlock keeps closed (it holds
//!   other programs' shared memory). Creating, opening for writing, linking, renaming and
//!   removing there trap to the supervisor already (`supervisor/shm.rs`), which lets the
//!   command make new entries and use, rename and remove the ones its run made, and
//!   nothing else; each is in the run's journal before it gets a name, and the check after
//!   the run removes whatever of them is still there ([`remove_made`]), also after srt died.
//!
//! The decisions are [`decide`]'s, pure and tested as a table.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where POSIX shared memory lives (glibc's `shm_open` and `sem_open` hard-code it).
pub const DIR: &str = "/dev/shm";

/// Whether `p` is an entry directly in `/dev/shm` (`shm_open` names have no `/`).
pub fn is_entry(p: &Path) -> bool {
    p.parent() == Some(Path::new(DIR)) && p.file_name().is_some()
}

/// An entry of `/dev/shm` as the supervisor finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Missing,
    /// A regular file this run made.
    Own,
    /// Anything else: another program's, or not a regular file.
    Other,
}

/// What the command asks of `/dev/shm` in landlock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// `open` for writing or with `O_CREAT` (`excl`: with `O_EXCL` too).
    Open {
        create: bool,
        excl: bool,
        entry: Found,
    },
    Unlink {
        entry: Found,
    },
    /// `link(from, to)` or `rename(from, to)` (`replace`: rename may replace `to`;
    /// `exchange`: `RENAME_EXCHANGE`).
    Name {
        from: Found,
        to: Found,
        replace: bool,
        exchange: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Make a new file (journaled before it gets its name) and hand it over.
    Create,
    /// Open the run's own file and hand it over.
    OpenOwn,
    /// Do it: every object involved is the run's.
    Perform,
    Refuse(i32),
}

/// What the supervisor does. Another program's entry is refused as Landlock refuses it
/// (`EACCES`), so a command cannot tell more about it than a failed open says.
pub fn decide(ask: Ask) -> Verdict {
    use Found::*;
    match ask {
        Ask::Open { create: true, excl: true, entry: Own | Other } => Verdict::Refuse(libc::EEXIST),
        Ask::Open { entry: Own, .. } => Verdict::OpenOwn,
        Ask::Open { create: true, entry: Missing, .. } => Verdict::Create,
        Ask::Open { create: false, entry: Missing, .. } => Verdict::Refuse(libc::ENOENT),
        Ask::Open { entry: Other, .. } => Verdict::Refuse(libc::EACCES),
        Ask::Unlink { entry: Own } => Verdict::Perform,
        Ask::Unlink { entry: Missing } => Verdict::Refuse(libc::ENOENT),
        Ask::Unlink { entry: Other } => Verdict::Refuse(libc::EACCES),
        Ask::Name { from: Missing, .. } => Verdict::Refuse(libc::ENOENT),
        Ask::Name { from: Other, .. } | Ask::Name { to: Other, .. } => Verdict::Refuse(libc::EACCES),
        Ask::Name { exchange: true, to: Missing, .. } => Verdict::Refuse(libc::ENOENT),
        Ask::Name { to: Own, replace: false, exchange: false, .. } => Verdict::Refuse(libc::EEXIST),
        Ask::Name { from: Own, .. } => Verdict::Perform,
    }
}

/// Removes what a run made in `/dev/shm` and left there: each name the journal recorded,
/// only while it holds one of the files the run made (any of them: a link or rename raced
/// by another thread of the command may have put another of its files there than the one
/// journaled for that name), never another program's that took the name since. Returns
/// how many went.
pub fn remove_made(made: &[(PathBuf, u64, u64)]) -> usize {
    let runs: std::collections::HashSet<(u64, u64)> = made.iter().map(|(_, d, i)| (*d, *i)).collect();
    if made.is_empty() {
        return 0;
    }
    let Ok(dir) = std::fs::File::open(DIR) else { return 0 };
    let dirfd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    let mut removed = 0;
    for (path, _, _) in made {
        let (true, Some(name)) = (is_entry(path), path.file_name()) else { continue };
        let Ok(name) = CString::new(name.as_bytes()) else { continue };
        // SAFETY: an all-zero stat is a valid out-buffer.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat on a live directory descriptor with a NUL-terminated name.
        let found = unsafe { libc::fstatat(dirfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0;
        if found && runs.contains(&(st.st_dev, st.st_ino)) && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            // SAFETY: unlinkat on a live directory descriptor with a NUL-terminated name.
            if unsafe { libc::unlinkat(dirfd, name.as_ptr(), 0) } == 0 {
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::Found::*;
    use super::*;

    #[test]
    fn entries_are_names_directly_in_dev_shm() {
        assert!(is_entry(Path::new("/dev/shm/sem.mp-1")));
        assert!(!is_entry(Path::new("/dev/shm")));
        assert!(!is_entry(Path::new("/dev/shm/dir/x")));
        assert!(!is_entry(Path::new("/tmp/shm/x")));
    }

    #[test]
    fn removes_only_names_that_still_hold_the_runs_file() {
        use std::os::unix::fs::MetadataExt;
        if !Path::new(DIR).is_dir() {
            return;
        }
        let tag = format!("srt-shm-test-{}", std::process::id());
        let at = |n: &str| Path::new(DIR).join(format!("{tag}-{n}"));
        for n in ["kept", "gone", "taken"] {
            std::fs::write(at(n), n).unwrap();
        }
        let id = |n: &str| std::fs::metadata(at(n)).map(|m| (m.dev(), m.ino())).unwrap();
        let (gone, taken) = (id("gone"), id("taken"));
        // another program took the name since: a file of its own there now
        std::fs::remove_file(at("taken")).unwrap();
        std::fs::write(at("taken-tmp"), "someone else's").unwrap();
        std::fs::rename(at("taken-tmp"), at("taken")).unwrap();
        // a raced link: the name was journaled with one of the run's files and holds another
        std::fs::write(at("raced-src"), "x").unwrap();
        let raced = id("raced-src");
        std::fs::hard_link(at("raced-src"), at("raced")).unwrap();
        let made = [
            (at("gone"), gone.0, gone.1),
            (at("taken"), taken.0, taken.1),
            (at("raced-src"), raced.0, raced.1),
            (at("raced"), gone.0, gone.1),
            (PathBuf::from("/tmp/not-in-dev-shm"), gone.0, gone.1),
        ];
        let removed = remove_made(&made);
        let still = |n: &str| at(n).exists();
        assert!(!still("gone") && !still("raced") && !still("raced-src"));
        assert!(still("kept") && still("taken"), "only names the run journaled, holding files it made");
        assert_eq!(removed, 3);
        for n in ["kept", "taken"] {
            std::fs::remove_file(at(n)).unwrap();
        }
    }

    #[test]
    fn the_command_makes_new_entries_and_uses_only_its_own() {
        let open = |create, excl, entry| decide(Ask::Open { create, excl, entry });
        assert_eq!(open(true, true, Missing), Verdict::Create, "shm_open(O_CREAT|O_EXCL), sem_open's temp file");
        assert_eq!(open(true, false, Missing), Verdict::Create);
        assert_eq!(open(true, false, Own), Verdict::OpenOwn);
        assert_eq!(open(false, false, Own), Verdict::OpenOwn, "sem_open(name, 0) of its own semaphore");
        assert_eq!(open(true, true, Own), Verdict::Refuse(libc::EEXIST));
        assert_eq!(open(true, true, Other), Verdict::Refuse(libc::EEXIST), "as the kernel says for any entry");
        assert_eq!(open(true, false, Other), Verdict::Refuse(libc::EACCES), "another program's: never opened");
        assert_eq!(open(false, false, Other), Verdict::Refuse(libc::EACCES));
        assert_eq!(open(false, false, Missing), Verdict::Refuse(libc::ENOENT));
    }

    #[test]
    fn only_the_runs_own_entries_are_removed_or_renamed() {
        assert_eq!(decide(Ask::Unlink { entry: Own }), Verdict::Perform);
        assert_eq!(decide(Ask::Unlink { entry: Other }), Verdict::Refuse(libc::EACCES));
        assert_eq!(decide(Ask::Unlink { entry: Missing }), Verdict::Refuse(libc::ENOENT));
        let name = |from, to, replace, exchange| decide(Ask::Name { from, to, replace, exchange });
        // sem_open: link(its temp file, the semaphore's name)
        assert_eq!(name(Own, Missing, false, false), Verdict::Perform);
        assert_eq!(name(Own, Own, false, false), Verdict::Refuse(libc::EEXIST), "link never replaces");
        assert_eq!(name(Own, Own, true, false), Verdict::Perform, "rename over its own");
        assert_eq!(name(Own, Other, true, false), Verdict::Refuse(libc::EACCES), "never over another's");
        assert_eq!(name(Other, Missing, true, false), Verdict::Refuse(libc::EACCES), "never another's away");
        assert_eq!(name(Own, Own, false, true), Verdict::Perform);
        assert_eq!(name(Own, Missing, false, true), Verdict::Refuse(libc::ENOENT));
        assert_eq!(name(Missing, Missing, true, false), Verdict::Refuse(libc::ENOENT));
    }
}
