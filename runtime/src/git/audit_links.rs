//! Symlinks the check after a run meets: judged again where they stand now, as the
//! supervisor judged them when they were made ([`crate::fs::name_rules::symlink_to`]). What
//! it looks at moved since (a directory of relative links renamed elsewhere, a link made
//! while another thread swapped the one the supervisor had read) is caught here, and moved
//! aside like a planted git hook.

use std::ffi::{CStr, OsStr};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Auditor;
use crate::fs::name_rules::{symlink_to, Verdict};

impl Auditor {
    /// From now on a walk, and [`Auditor::link_refused`], judge symlinks by `pol`.
    pub(crate) fn judge_links(&mut self, pol: crate::fs::policy::FsPolicy) {
        self.links = Some(pol);
    }

    /// The symlink `name` in `dir` (at `path`) leads where the command could not write:
    /// moved aside (and `true`).
    pub(crate) fn link_refused(&mut self, dir: BorrowedFd<'_>, path: &Path, name: &CStr) -> bool {
        let Some(pol) = &self.links else { return false };
        let Ok(text) = nix::fcntl::readlinkat(dir, name) else { return false };
        let d = crate::fs::link_target::destination(path, &text);
        let Verdict::Refuse(why) = symlink_to(pol, &d.path, d.is_dir, d.host_writes) else { return false };
        let why = format!("{why}: it leads to {}", d.path.display());
        self.quarantine(dir, path, OsStr::from_bytes(name.to_bytes()), why);
        true
    }
}
