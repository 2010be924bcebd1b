//! Which directories of a shelf the check after the run may put back without opening
//! ([`crate::fs::pool`]): those whose stamp has not moved since the run took them, if it
//! had settled by then.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::Mutex;

/// What `fstat` says of a shelf directory that only a change to it moves: a new entry, a
/// removed or renamed one, a mode, owner, ACL or other extended attribute all set its
/// ctime (which no call can set back; only a clock set back could repeat it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
    mode: u32,
    uid: u32,
    nlink: u64,
}

impl Stamp {
    pub(crate) fn of(st: &libc::stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            ctime: (st.st_ctime, st.st_ctime_nsec),
            mtime: (st.st_mtime, st.st_mtime_nsec),
            mode: st.st_mode,
            uid: st.st_uid,
            #[allow(clippy::unnecessary_cast)] // nlink_t is u32 on some architectures
            nlink: st.st_nlink as u64,
        }
    }
}

/// A directory whose ctime is at least this old when a run takes it has a ctime that any
/// change during the run moves: timestamps come from a clock that ticks at least every
/// 10 ms (the coarse clock), so only one changed within the same tick as the last change
/// could keep it.
pub(crate) const SETTLED_SECS: i64 = 2;

/// The shelf this process took ([`crate::fs::pool::Pool::claim`]) and the stamps of its directories that had
/// settled: the check after the run (in the auditor, a fork that shares this memory) puts
/// back one whose stamp has not moved without opening it (`pool::shelve`). A check done by
/// another srt (a run whose srt and auditor were killed) has none, and opens each.
pub(crate) static CLAIMED: Mutex<Vec<(PathBuf, Stamps)>> = Mutex::new(Vec::new());

/// A shelf's settled directories, by name.
pub(crate) type Stamps = Vec<(CString, Stamp)>;

pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
