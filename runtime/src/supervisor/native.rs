//! The fast path. Below a Landlock rule that grants writing (an existing directory of an
//! `allowWrite` tree that holds nothing protected: `src/`, `target/`, `node_modules/`), the
//! kernel already judges every name operation exactly as the policy would, because the
//! plan puts protected names only in directories it splits. There the supervisor answers
//! `CONTINUE` after opening the parent directory, without naming its location or doing
//! the work itself; it only performs operations in the split directories.
//!
//! Making a file (or linking or moving one in) is let through only below a rule that
//! grants it ([`Native::Files`]: the pool's directories and TMPDIR, made for the run):
//! in a directory that existed at launch the supervisor makes the file itself, so that
//! the journal hears of every name git reads there ([`crate::fs::landlock`]).
//!
//! `CONTINUE` is safe even when this check is wrong: the kernel then judges under the
//! command's Landlock domain, which never allows more than the policy. A wrong answer can
//! only turn a permitted operation into EACCES, and the cache is cleared whenever a
//! directory may have moved.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use super::resolve::{self, Why};
use super::sys;
use super::tracee::Base;
use super::Call;

pub(crate) use super::state::Native;

/// Ancestors walked at most (deeper trees are judged the slow way).
const MAX_DEPTH: usize = 256;
/// Directories remembered at most; the cache starts over beyond this.
const MAX_CACHED: usize = 100_000;

impl Call<'_> {
    /// What Landlock lets the command do natively in the parent directory of its path
    /// `raw` (relative to `base`). `None` when it cannot be opened (the slow path decides).
    pub(super) fn native_parent(&self, base: Base, raw: &[u8]) -> Option<Native> {
        if self.sup.native_rules.is_empty() {
            return Some(Native::No);
        }
        self.native_parent_entry(base, raw).map(|(native, _, _)| native)
    }

    /// As [`Self::native_parent`], with the parent directory it opened and the last name,
    /// for a look at what is there (only to choose `CONTINUE`: it may change before the
    /// kernel acts, and the kernel then judges what it finds).
    pub(super) fn native_parent_entry<'r>(&self, base: Base, raw: &'r [u8]) -> Option<(Native, OwnedFd, &'r [u8])> {
        let found = match (base, raw.first()) {
            (Base::Cwd, Some(&c)) if c != b'/' => {
                let cwd = self.cached_cwd()?;
                resolve::parent_dir_from(&self.t, cwd.as_fd(), raw)
            }
            _ => resolve::parent_dir(&self.t, base, raw),
        };
        let (dir, name) = match found {
            Ok(d) => d,
            Err(Why::Unresolvable | Why::Errno(_)) => return None,
        };
        Some((self.native_dir(dir.as_fd()), dir, name))
    }

    /// The trapping thread's working directory, opened once per thread and kept until any
    /// thread changes directory (chdir and fchdir are trapped for this only). Used only to
    /// choose `CONTINUE`; operations the supervisor performs resolve afresh.
    fn cached_cwd(&self) -> Option<Arc<OwnedFd>> {
        if let Some(fd) = self.sup.cwds.lock().ok().and_then(|c| c.get(&self.req.pid).cloned()) {
            return Some(fd);
        }
        let fd = Arc::new(self.t.open_base(Base::Cwd).ok()?);
        if !self.valid() {
            return None;
        }
        if let Ok(mut c) = self.sup.cwds.lock() {
            if c.len() >= 4096 {
                c.clear();
            }
            c.insert(self.req.pid, Arc::clone(&fd));
        }
        Some(fd)
    }

    /// chdir/fchdir: cached working directories may be wrong from now on.
    pub(super) fn directory_changes(&self) -> super::Outcome {
        if let Ok(mut c) = self.sup.cwds.lock() {
            c.clear();
        }
        super::Outcome::Continue
    }

    /// What the rules on `dir` and every directory above it grant (Landlock adds up the
    /// rules on the way to the root): each directory on the way is remembered with what
    /// holds from it down.
    pub(super) fn native_dir(&self, dir: BorrowedFd<'_>) -> Native {
        let Ok(st) = sys::fstat(dir) else { return Native::No };
        let key = (st.st_dev, st.st_ino);
        let cached = |k: &(u64, u64)| self.sup.native_dirs.lock().ok().and_then(|c| c.get(k).copied());
        if let Some(v) = cached(&key) {
            return v;
        }
        let own = |k: &(u64, u64)| {
            if self.sup.files_rules.contains(k) {
                Native::Files
            } else if self.sup.native_rules.contains(k) {
                Native::Write
            } else {
                Native::No
            }
        };
        // (directory, what its own rule grants), from `dir` upwards
        let mut seen = vec![(key, own(&key))];
        // what holds above the last directory seen: known once a remembered one is met
        let mut above = Native::No;
        // nothing above can grant more than Files: the walk ends there
        let mut complete = seen[0].1 == Native::Files;
        let mut cur: Option<OwnedFd> = None;
        while !complete && seen.len() < MAX_DEPTH {
            let from = cur.as_ref().map_or(dir, |c| c.as_fd());
            let Ok(up) = sys::openat2(Some(from), c"..", libc::O_PATH | libc::O_DIRECTORY, 0, 0) else { break };
            let Ok(ust) = sys::fstat(up.as_fd()) else { break };
            let ukey = (ust.st_dev, ust.st_ino);
            if seen.last().is_some_and(|(k, _)| *k == ukey) {
                complete = true; // the root is its own parent
                break;
            }
            if let Some(v) = cached(&ukey) {
                above = v;
                complete = true;
                break;
            }
            let mine = own(&ukey);
            seen.push((ukey, mine));
            complete = mine == Native::Files;
            cur = Some(up);
        }
        let mut holds = above;
        let mut out = Vec::with_capacity(seen.len());
        for (k, mine) in seen.iter().rev() {
            holds = holds.max(*mine);
            out.push((*k, holds));
        }
        // a walk cut short knows only what the rules it saw grant: not remembered
        if complete {
            if let Ok(mut c) = self.sup.native_dirs.lock() {
                if c.len() >= MAX_CACHED {
                    c.clear();
                }
                c.extend(out);
            }
        }
        holds
    }

    /// A directory may have moved: what lies above cached directories may have changed.
    pub(super) fn directories_moved(&self) {
        if let Ok(mut c) = self.sup.native_dirs.lock() {
            c.clear();
        }
        self.names_changed();
    }

    /// A rename, link or unlink: metadata judgments made by path may be stale.
    pub(super) fn names_changed(&self) {
        if let Ok(mut m) = self.sup.meta_ok.lock() {
            m.clear();
        }
    }
}
