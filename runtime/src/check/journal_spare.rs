//! Finished journals kept for later runs (`runs/spare-<hex>`), so that a run neither makes
//! nor removes a file in the state directory: on ext4 without a journal, making one skips
//! every inode freed in the last minutes (up to a millisecond per run on a busy machine),
//! and on a disk mounted with `discard`, removing one waits for the device.
//!
//! A spare is taken by renaming it to the new journal's name, then opened, checked to be a
//! regular file of srt's uid that only it may read, with one link, open nowhere else (a
//! write lease is granted: a run that put it back a moment ago may still hold it, and so
//! may a command that planted it, see [`open_elsewhere`]), and locked without waiting. One
//! that fails is removed, and the run makes a new file. Its old contents go: the header is written over
//! them and the file cut to it. Spares are not named `*.journal`, so [`super::stale`]
//! never takes one for a dead run's.

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const PREFIX: &[u8] = b"spare-";
/// Enough for a few runs at once; more are removed as before.
const KEEP: usize = 4;

fn c(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

fn rename_noreplace(from: &Path, to: &Path) -> bool {
    let (Some(from), Some(to)) = (c(from), c(to)) else { return false };
    // SAFETY: AT_FDCWD is always a valid directory descriptor.
    let cwd = unsafe { std::os::fd::BorrowedFd::borrow_raw(libc::AT_FDCWD) };
    crate::sys::rename_noreplace(cwd, &from, cwd, &to) == 0
}

fn spares(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten().filter(|e| e.file_name().as_bytes().starts_with(PREFIX)).map(|e| e.path()).collect()
}

/// A spare of `dir`, renamed to `new`, opened for writing (not appending), checked and
/// locked; None when there is none to take.
pub(super) fn take(dir: &Path, new: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let spare = spares(dir).into_iter().find(|s| rename_noreplace(s, new))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(new)
        .ok();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let fits = |f: &std::fs::File| {
        f.metadata().is_ok_and(|m| m.is_file() && m.uid() == me && m.mode() & 0o077 == 0 && m.nlink() == 1)
    };
    match file {
        Some(f) if fits(&f) && !open_elsewhere(&f) => {
            // SAFETY: flock on a live descriptor.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Some(f);
            }
            // still its last run's: back on the shelf under its own name
            let _ = rename_noreplace(new, &spare);
            None
        }
        _ => {
            let _ = std::fs::remove_file(new);
            None
        }
    }
}

/// Whether any other open file description holds the file: a write lease is granted only
/// to the file's sole opener. A process that kept a spare open (a command that could
/// write a state directory of another run's environment planted one and held it) would
/// otherwise write into every later journal made from it. Where leases are refused (a
/// filesystem without them, `fs.leases-enable=0`), no spare is used.
fn open_elsewhere(f: &std::fs::File) -> bool {
    // SAFETY: fcntl on a live descriptor.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) } < 0 {
        return true;
    }
    // SAFETY: as above; the lease is only a test and goes at once.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
    false
}

/// Writes `head` over the spare's old contents, cuts the file to it and makes later
/// writes append.
pub(super) fn reset(file: &std::fs::File, head: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    // cut first, to the header's length: a journal that fits a block frees none
    file.set_len(head.len() as u64)?;
    file.write_all_at(head, 0)?;
    // SAFETY: fcntl on a live descriptor.
    let fl = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above.
    if fl < 0 || unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl | libc::O_APPEND) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Keeps the finished journal at `path` as a spare; false when it must be removed (the
/// shelf is full, or the rename failed).
pub(super) fn keep(path: &Path) -> bool {
    let Some(dir) = path.parent() else { return false };
    if spares(dir).len() >= KEEP {
        return false;
    }
    let mut nonce = [0u8; 8];
    // SAFETY: getrandom writes at most the buffer's length into it.
    unsafe { libc::getrandom(nonce.as_mut_ptr().cast(), nonce.len(), 0) };
    rename_noreplace(path, &dir.join(format!("spare-{:016x}", u64::from_ne_bytes(nonce))))
}
