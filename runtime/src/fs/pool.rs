//! Directories made ahead, so that a directory the command makes where Landlock cannot
//! let it make files (the working directory: it holds protected names; every directory
//! that existed at launch: a file there may be a name git reads) is still written at the
//! kernel's speed.
//!
//! Landlock grants rights to inodes that exist when the rules are made, and a directory
//! made later inherits only what the rules above it grant: every file made below it
//! would go through the supervisor (`tar x`, `npm install` or a first `cargo build` in a
//! fresh checkout make `dist/`, `node_modules/` or `target/` in `.` and then thousands of
//! files below). So srt makes a few empty directories before the command starts, in a
//! directory of its own inside the working directory (`.srt-<pid>-<hex>`, same
//! filesystem, protected from the command), gives each a write rule that also grants
//! making files, and when the command makes a directory where files may not be made
//! natively, the supervisor moves one of them there instead (with the mode the command
//! asked for). Everything below it is then written natively,
//! under the same rules as any other writable directory: no rule grants making
//! directories, links or FIFOs, so those still go through the supervisor and its journal.
//!
//! The check after the run removes what is left of the pool; a pool directory the command
//! wrote into is left in place and reported.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::fs::landlock_plan::PlannedRule;
use crate::fs::policy::Rights;

/// Directories made ahead per run: each serves one directory the command makes in a split
/// directory (with everything below it). A few cover the usual unpack, install or build
/// (`node_modules/`, `target/`, `dist/`); making and removing one costs 40-100 µs on a disk
/// filesystem and a few on tmpfs, where a pool is therefore bigger.
pub const SIZE: usize = 4;
pub const SIZE_IN_MEMORY: usize = 16;

/// The pool size for a directory on the filesystem of `at`.
pub fn size_for(at: &Path) -> usize {
    // SAFETY: an all-zero statfs is a valid out-buffer.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    let Ok(c) = CString::new(at.as_os_str().as_bytes()) else { return SIZE };
    // SAFETY: NUL-terminated path, pointer to a local.
    if unsafe { libc::statfs(c.as_ptr(), &mut sf) } != 0 {
        return SIZE;
    }
    // f_type's type differs between architectures: compare as i64
    #[allow(clippy::unnecessary_cast)]
    let in_memory = [libc::TMPFS_MAGIC as i64, 0x8584_58f6_i64 /* ramfs */].contains(&(sf.f_type as i64));
    if in_memory {
        SIZE_IN_MEMORY
    } else {
        SIZE
    }
}

#[derive(Debug)]
pub struct Pool {
    /// The pool's own directory (protected from the command).
    pub parent: PathBuf,
    dir: OwnedFd,
    dev: u64,
    free: Mutex<Vec<CString>>,
    /// (dev, ino) of every directory made ahead.
    pub ids: Vec<(u64, u64)>,
}

fn child_name(i: usize) -> CString {
    // digits only: never a NUL byte
    CString::new(format!("d{i}")).unwrap_or_default()
}

impl Pool {
    /// Makes the pool in `at` (an existing directory of a writable tree).
    pub fn create(at: &Path, size: usize) -> std::io::Result<Pool> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let mut nonce = [0u8; 6];
        // SAFETY: getrandom writes at most the buffer's length into it.
        unsafe { libc::getrandom(nonce.as_mut_ptr().cast(), nonce.len(), 0) };
        let hex: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let parent = at.join(format!(".srt-{}-{hex}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&parent)?;
        let dir = nix::fcntl::open(
            &parent,
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_NOFOLLOW,
            nix::sys::stat::Mode::empty(),
        )?;
        let dev = std::fs::symlink_metadata(&parent)?.dev();
        let mut names = Vec::with_capacity(size);
        let mut ids = Vec::with_capacity(size);
        for i in 0..size {
            let name = child_name(i);
            // SAFETY: live descriptor, NUL-terminated name.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o700) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let m = std::fs::symlink_metadata(parent.join(std::ffi::OsStr::from_bytes(name.as_bytes())))?;
            ids.push((m.dev(), m.ino()));
            names.push(name);
        }
        names.reverse();
        Ok(Pool { parent, dir, dev, free: Mutex::new(names), ids })
    }

    /// Write rules for the directories made ahead.
    pub fn rules(&self) -> Vec<PlannedRule> {
        let write = Rights { read: false, list: false, write: true };
        (0..self.ids.len())
            .map(|i| PlannedRule {
                path: self.parent.join(format!("d{i}")),
                rights: write,
                is_dir: true,
                id: Some(self.ids[i]),
                makes_files: true,
            })
            .collect()
    }

    /// Moves a directory of the pool to `to_dir`/`to_name` (which must not exist), if one is
    /// left and `to_dir` is on the pool's filesystem. `Ok(false)`: none was used (make the
    /// directory the ordinary way).
    pub fn hand_out(&self, to_dir: BorrowedFd<'_>, to_name: &std::ffi::CStr) -> Result<bool, i32> {
        // SAFETY: an all-zero stat is a valid out-buffer for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: live descriptor, pointer to a local.
        if unsafe { libc::fstat(to_dir.as_raw_fd(), &mut st) } < 0 || st.st_dev != self.dev {
            return Ok(false);
        }
        let Some(name) = self.free.lock().ok().and_then(|mut f| f.pop()) else { return Ok(false) };
        // SAFETY: live descriptors, NUL-terminated names.
        let r = unsafe {
            libc::renameat2(
                self.dir.as_raw_fd(),
                name.as_ptr(),
                to_dir.as_raw_fd(),
                to_name.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
        if let Ok(mut f) = self.free.lock() {
            f.push(name);
        }
        match e {
            libc::EEXIST => Err(libc::EEXIST),
            // another mount of the same filesystem, or anything else: the ordinary way
            _ => Ok(false),
        }
    }

    /// Whether a directory is left to hand out.
    pub fn any_left(&self) -> bool {
        self.free.lock().is_ok_and(|f| !f.is_empty())
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

/// Removes what is left of a pool after the run: its empty directories and itself. One the
/// command wrote into stays, and is named in the returned list.
pub fn remove(parent: &Path) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            let p = e.path();
            if std::fs::remove_dir(&p).is_err() && p.symlink_metadata().is_ok() {
                kept.push(p);
            }
        }
    }
    if kept.is_empty() {
        let _ = std::fs::remove_dir(parent);
    }
    kept
}

#[cfg(test)]
mod tests {
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
}
