//! Symlinks the check after a run meets: judged again where they stand now by the judge the
//! check gives ([`crate::check::after_run`]: a link is a write to where it leads). What
//! moved since the supervisor judged a link (a directory of relative links renamed
//! elsewhere, a link made while another thread swapped the one the supervisor had read) is
//! caught here, and moved aside like a planted git hook.

use std::ffi::{CStr, OsStr};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Auditor, LinkJudge};

impl Auditor {
    /// From now on a walk, and [`Auditor::link_refused`], judge symlinks by `judge`.
    pub(crate) fn judge_links(&mut self, judge: LinkJudge) {
        self.links = Some(judge);
    }

    /// The symlink `name` in `dir` (at `path`) is one the judge refuses: moved aside (and
    /// `true`).
    pub(crate) fn link_refused(&mut self, dir: BorrowedFd<'_>, path: &Path, name: &CStr) -> bool {
        let Some(judge) = &self.links else { return false };
        let Ok(text) = nix::fcntl::readlinkat(dir, name) else { return false };
        let Some(why) = judge(path, &text) else { return false };
        self.quarantine(dir, path, OsStr::from_bytes(name.to_bytes()), why);
        true
    }
}
