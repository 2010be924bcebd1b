//! The filesystem policy as plain data and pure decisions, shared by the Landlock planner
//! (which turns it into kernel rules) and the supervisor (which judges each mediated
//! syscall by it). All paths are absolute and canonical.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsPolicy {
    /// Never readable, unless an equally or more specific `allow_read` re-allows.
    pub deny_read: Vec<PathBuf>,
    pub allow_read: Vec<PathBuf>,
    /// Writable trees.
    pub write: Vec<PathBuf>,
    /// Never writable, whatever `write` says (deny wins, also for missing paths).
    pub deny_write: Vec<PathBuf>,
}

/// Rights at one path: reading files, listing directories, writing. Listing is separate
/// because it only concerns directories, so a denied *file* need not cost its ancestors
/// their listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rights {
    pub read: bool,
    pub list: bool,
    pub write: bool,
}

impl Rights {
    pub const NONE: Rights = Rights { read: false, list: false, write: false };
    pub fn and(self, o: Rights) -> Rights {
        Rights { read: self.read && o.read, list: self.list && o.list, write: self.write && o.write }
    }
    pub fn or(self, o: Rights) -> Rights {
        Rights { read: self.read || o.read, list: self.list || o.list, write: self.write || o.write }
    }
    pub fn minus(self, o: Rights) -> Rights {
        Rights { read: self.read && !o.read, list: self.list && !o.list, write: self.write && !o.write }
    }
    pub fn is_empty(self) -> bool {
        !self.read && !self.list && !self.write
    }
}

/// `p` is `base` or beneath it. Both are absolute and normalised (no `.`, no repeated or
/// trailing `/`), so a byte prefix ending at a separator is exactly `Path::starts_with`,
/// without its component-by-component walk (this runs for every rule and mediated call).
pub fn under(p: &Path, base: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, b) = (p.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    p.starts_with(b) && (p.len() == b.len() || b == b"/" || p[b.len()] == b'/')
}

impl FsPolicy {
    /// Reads: the deepest matching denyRead/allowRead entry decides; allow wins a tie.
    pub fn can_read(&self, p: &Path) -> bool {
        // deeper entries are longer: comparing lengths compares depths among prefixes of `p`
        let deepest = |list: &[PathBuf]| list.iter().filter(|e| under(p, e)).map(|e| e.as_os_str().len()).max();
        match (deepest(&self.deny_read), deepest(&self.allow_read)) {
            (Some(d), Some(a)) => a >= d,
            (Some(_), None) => false,
            _ => true,
        }
    }

    pub fn can_write(&self, p: &Path) -> bool {
        self.write.iter().any(|w| under(p, w)) && !self.deny_write.iter().any(|d| under(p, d))
    }

    /// `p` has a write-denied path strictly below it, so removing or renaming `p` would
    /// take the protection away (`mv .git x; mkdir -p .git/hooks`).
    pub fn guards_below(&self, p: &Path) -> bool {
        self.deny_write.iter().any(|d| d != p && under(d, p))
    }

    /// May the name `p` be unlinked, renamed away, or replaced?
    pub fn can_replace(&self, p: &Path) -> bool {
        self.can_write(p) && !self.guards_below(p)
    }

    pub fn rights(&self, p: &Path) -> Rights {
        let read = self.can_read(p);
        Rights { read, list: read, write: self.can_write(p) }
    }

    /// Every path where the rights may change.
    pub fn boundaries(&self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> =
            [&self.deny_read, &self.allow_read, &self.write, &self.deny_write].into_iter().flatten().cloned().collect();
        all.sort();
        all.dedup();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn policy() -> FsPolicy {
        FsPolicy {
            deny_read: vec![p("/home/u/.ssh"), p("/srv/data")],
            allow_read: vec![p("/srv/data/public")],
            write: vec![p("/w"), p("/tmp/x")],
            deny_write: vec![p("/w/.bashrc"), p("/w/.git/hooks"), p("/w/.git/config")],
        }
    }

    #[test]
    fn under_matches_path_starts_with() {
        for (a, b) in
            [("/a/b", "/a"), ("/a", "/a"), ("/ab", "/a"), ("/a", "/"), ("/", "/"), ("/a/b/c", "/a/b"), ("/a", "/a/b")]
        {
            assert_eq!(under(Path::new(a), Path::new(b)), Path::new(a).starts_with(b), "{a} under {b}");
        }
    }

    #[test]
    fn read_decisions() {
        let pol = policy();
        assert!(pol.can_read(&p("/etc/passwd")));
        assert!(!pol.can_read(&p("/home/u/.ssh/id_rsa")));
        assert!(!pol.can_read(&p("/home/u/.ssh")));
        assert!(pol.can_read(&p("/home/u/.sshx")), "component-wise, not string prefix");
        assert!(pol.can_read(&p("/srv/data/public/a")));
        assert!(!pol.can_read(&p("/srv/data/private")));
        let deeper = FsPolicy { deny_read: vec![p("/a"), p("/a/b/c")], allow_read: vec![p("/a/b")], ..policy() };
        assert!(deeper.can_read(&p("/a/b/x")));
        assert!(!deeper.can_read(&p("/a/b/c/x")), "a deeper deny inside an allow stays denied");
    }

    #[test]
    fn write_decisions() {
        let pol = policy();
        assert!(pol.can_write(&p("/w/f.txt")));
        assert!(pol.can_write(&p("/w/.git/index")));
        assert!(!pol.can_write(&p("/w/.bashrc")));
        assert!(!pol.can_write(&p("/w/.git/hooks/pre-commit")));
        assert!(!pol.can_write(&p("/tmp/y")));
        assert!(!pol.can_write(&p("/etc/passwd")));
        assert!(pol.can_write(&p("/w/.bashrc.bak")));
    }

    #[test]
    fn protected_parents_cannot_be_replaced() {
        let pol = policy();
        assert!(!pol.can_replace(&p("/w/.git")));
        assert!(!pol.can_replace(&p("/w")));
        assert!(!pol.can_replace(&p("/w/.bashrc")));
        assert!(pol.can_replace(&p("/w/src")));
        assert!(pol.guards_below(&p("/w/.git")));
        assert!(!pol.guards_below(&p("/w/.git/hooks")));
    }
}
