//! Moving aside what the check finds: renamed in place, never deleted, so the user can
//! look at it and take it back.

use std::ffi::{CStr, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::{Auditor, Quarantined};
use crate::git::dirfd::{c_path, fstat, libc_cwd, lstat_at, mine, open_dir};

impl Auditor {
    /// From now on a walk moves aside each directory whose name `refused` matches and that
    /// was made or changed during the run, instead of walking into it: what the supervisor
    /// refuses to make, when the kernel made it (below the pool's directories).
    pub(crate) fn refuse_made_dirs(&mut self, refused: fn(&OsStr) -> bool) {
        self.made_dirs_refused = Some(refused);
    }

    /// A directory whose name the check refuses ([`Auditor::refuse_made_dirs`]), made or
    /// changed during the run.
    pub(super) fn made_and_refused(&self, dir: BorrowedFd<'_>, name: &CStr) -> bool {
        let Some(refused) = self.made_dirs_refused else { return false };
        // one that cannot be looked at counts as changed
        refused(OsStr::from_bytes(name.to_bytes()))
            && match lstat_at(dir, name) {
                Ok(Some(st)) => self.changed(&st),
                Ok(None) => false,
                Err(_) => true,
            }
    }

    /// A directory the walk reached past its bound: in the check after a run (where the
    /// kernel may have made directories below the pool's that no journal entry names), one
    /// made or changed during the run is moved aside whole, unread; any other is reported.
    /// Called while `dir` is still opened up: its parent is reached through it (`..`), not
    /// by path, which a directory the command locked (its mode given back after srt read
    /// it) refuses to srt's uid.
    pub(super) fn too_many(&mut self, path: &Path, dir: BorrowedFd<'_>) {
        let why = format!("more than {} entries to check", self.max_entries);
        // one that cannot be looked at counts as changed
        let changed =
            self.made_dirs_refused.is_some() && nix::sys::stat::fstat(dir).map_or(true, |st| self.changed(&st));
        if let (true, Some(parent), Some(name)) = (changed, path.parent(), path.file_name()) {
            let how = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
            if let Ok(up) = nix::fcntl::openat(dir, c"..", how, Mode::empty()) {
                return self.quarantine_in_locked(dir, up.as_fd(), parent, name, why);
            }
            if let Ok(up) = open_dir(libc_cwd(), &c_path(parent)) {
                return self.quarantine(up.as_fd(), parent, name, why);
            }
        }
        self.unchecked(format!("{} and what is left below it: {why}", path.display()));
    }

    /// [`Auditor::quarantine`] of `name` in `up` (`dir/..`, opened `O_PATH`), giving the
    /// parent's owner write and search rights for the moment if srt is the owner.
    fn quarantine_in_locked(
        &mut self,
        dir: BorrowedFd<'_>,
        up: BorrowedFd<'_>,
        parent: &Path,
        name: &OsStr,
        why: String,
    ) {
        // only when the rename would be refused: a parent outside the walked tree (the walk
        // root's) keeps its mode and ctime whenever srt may write there
        // SAFETY: live descriptor, NUL-terminated name.
        let refused =
            unsafe { libc::faccessat(dir.as_raw_fd(), c"..".as_ptr(), libc::W_OK | libc::X_OK, libc::AT_EACCESS) } != 0;
        let lift = fstat(up).filter(|st| refused && mine(st)).map(|st| st.st_mode & 0o7777);
        if let Some(m) = lift {
            // SAFETY: live descriptor, NUL-terminated name; `..` is no symlink.
            unsafe { libc::fchmodat(dir.as_raw_fd(), c"..".as_ptr(), m | 0o700, 0) };
        }
        self.quarantine(up, parent, name, why);
        if let Some(m) = lift {
            // SAFETY: as above, giving the mode back (the rename kept `dir` in that parent).
            unsafe { libc::fchmodat(dir.as_raw_fd(), c"..".as_ptr(), m, 0) };
        }
    }

    #[cfg(test)]
    pub(crate) fn with_max_entries(mut self, n: usize) -> Auditor {
        self.max_entries = n;
        self
    }

    /// Renames `dir/name` to `name.srt-quarantined` (or `.1`, `.2`, ... when taken, then a
    /// random suffix: the command may have taken every numbered name first). `name` as the
    /// directory holds it, bytes and all: a lossy copy of a name that is not UTF-8 names
    /// nothing there, or a sibling the command made to take the rename instead.
    pub(crate) fn quarantine(&mut self, dir: BorrowedFd<'_>, path: &Path, name: impl AsRef<OsStr>, why: String) {
        let name = name.as_ref();
        let from = c_path(Path::new(name));
        for i in 0..102 {
            let mut to = name.to_owned();
            match i {
                0 => to.push(".srt-quarantined"),
                1..=99 => to.push(format!(".srt-quarantined.{i}")),
                _ => {
                    let mut r = [0u8; 8];
                    // SAFETY: getrandom writes at most the buffer's length into it.
                    unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
                    to.push(format!(".srt-quarantined.{:016x}", u64::from_ne_bytes(r)));
                }
            }
            let cto = c_path(Path::new(&to));
            let r = crate::sys::rename_noreplace(dir.as_fd(), &from, dir.as_fd(), &cto);
            if r == 0 {
                self.report.quarantined.push(Quarantined { path: path.join(name), moved_to: path.join(&to), why });
                return;
            }
            if Errno::last() != Errno::EEXIST {
                break;
            }
        }
        let e = std::io::Error::last_os_error();
        self.unchecked(format!("{}: could not move it aside ({e}): {why}", path.join(name).display()));
    }
}
