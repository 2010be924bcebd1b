//! What the audit found and did, and how srt tells the user; and the run's start on the
//! clock the kernel stamps changes with.

use std::path::PathBuf;

/// A moment on the clock the kernel uses for ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    pub(crate) sec: i64,
    pub(crate) nsec: i64,
}

impl Stamp {
    /// Now, on the clock the kernel stamps ctime from (the coarse one; with multigrain
    /// timestamps a change may get a finer stamp, never an earlier one), so everything
    /// changed from now on has a ctime at or after it. A change in the same clock tick
    /// just before launch counts as during the run: checked, never missed.
    pub fn run_start() -> Stamp {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes into a local timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        Stamp { sec: ts.tv_sec, nsec: ts.tv_nsec }
    }

    /// Whether a ctime of `self` may be a change made at or after `start`. Filesystems
    /// that keep whole seconds (ext4 with 128-byte inodes, some NFS) stamp a change made
    /// in the launch's second with that second's start, before `start`: such a stamp
    /// counts as changed (on others it is one chance in a billion, and only checks more).
    pub(crate) fn at_or_after(self, start: Stamp) -> bool {
        self >= start || (self.nsec == 0 && self.sec == start.sec)
    }

    pub(crate) fn ctime(st: &libc::stat) -> Stamp {
        Stamp { sec: st.st_ctime, nsec: st.st_ctime_nsec }
    }
}

/// A file the audit moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    pub path: PathBuf,
    pub moved_to: PathBuf,
    pub why: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub quarantined: Vec<Quarantined>,
    /// What could not be checked (unreadable directories, the entry bound).
    pub unchecked: Vec<String>,
    pub entries: usize,
}

/// Tells the user what the audit did, one line per file. What could not be checked is an
/// error: a later host `git` there may run what the command planted.
pub fn tell(report: &Report) {
    for q in &report.quarantined {
        crate::warn!(
            "moved {} aside to {}: a later host program there would have run, or written through, what the command planted ({})",
            q.path.display(),
            q.moved_to.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
            q.why
        );
    }
    for u in &report.unchecked {
        eprintln!(
            "srt: error: could not check for planted git configuration: {u}; do not run git there before looking"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::Stamp;

    #[test]
    fn a_whole_second_stamp_in_the_launch_second_counts_as_changed() {
        let start = Stamp { sec: 100, nsec: 400_000_000 };
        assert!(Stamp { sec: 100, nsec: 400_000_000 }.at_or_after(start));
        assert!(Stamp { sec: 101, nsec: 0 }.at_or_after(start));
        // a filesystem that keeps whole seconds stamps a change at 100.5 with 100.0
        assert!(Stamp { sec: 100, nsec: 0 }.at_or_after(start));
        assert!(!Stamp { sec: 100, nsec: 399_999_999 }.at_or_after(start));
        assert!(!Stamp { sec: 99, nsec: 0 }.at_or_after(start));
    }
}
