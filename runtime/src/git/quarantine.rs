//! Moving aside what the check finds: renamed in place, never deleted, so the user can
//! look at it and take it back.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

use nix::errno::Errno;

use super::{Auditor, Quarantined};
use crate::git::dirfd::cname;

impl Auditor {
    /// Renames `dir/name` to `name.srt-quarantined` (or `.1`, `.2`, ... when taken, then a
    /// random suffix: the command may have taken every numbered name first).
    pub(crate) fn quarantine(&mut self, dir: BorrowedFd<'_>, path: &Path, name: &str, why: String) {
        let from = cname(name);
        for i in 0..102 {
            let to = match i {
                0 => format!("{name}.srt-quarantined"),
                1..=99 => format!("{name}.srt-quarantined.{i}"),
                _ => {
                    let mut r = [0u8; 8];
                    // SAFETY: getrandom writes at most the buffer's length into it.
                    unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
                    format!("{name}.srt-quarantined.{:016x}", u64::from_ne_bytes(r))
                }
            };
            let cto = cname(&to);
            // SAFETY: live descriptor, NUL-terminated names.
            let r = unsafe {
                libc::renameat2(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), cto.as_ptr(), libc::RENAME_NOREPLACE)
            };
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
