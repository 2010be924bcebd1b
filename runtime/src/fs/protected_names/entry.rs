//! The shapes of the researched data: a protected entry, a project path decided not
//! protected, a home entry tools may write.

/// What the program expects at the path. Protection does not depend on it: an entry
/// covers its name and everything below, so a directory where a file is expected (or
/// the reverse) is covered too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
}

/// A protected path and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub path: &'static str,
    pub kind: Kind,
    /// Which later host program runs it (and when), or what access it grants.
    pub runs: &'static str,
    /// Man page section or documentation URL.
    pub source: &'static str,
}

/// A project path decided *not* protected, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Decision {
    pub path: &'static str,
    pub why: &'static str,
    pub source: &'static str,
}

/// A home entry tools may write when `$HOME` is writable.
#[derive(Debug, PartialEq, Eq)]
pub struct Allowed {
    pub path: &'static str,
    pub kind: Kind,
    /// Writable without any setting; otherwise only when the user names it.
    pub default: bool,
    /// Who writes it.
    pub tool: &'static str,
    /// What content planted there can do to a later host program.
    pub risk: &'static str,
}
