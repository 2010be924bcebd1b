//! Researched data: the files in a home directory and in a project directory that make a
//! later, unsandboxed host program run code or grant access, each with the program and
//! its documentation; the home entries tools may keep writing when `$HOME` is writable,
//! each with the risk it leaves; and the project files deliberately left writable, with
//! the reason. Pure data and pure helpers: the launcher decides how to apply them.
//!
//! Paths are relative (to `$HOME`, or to a project directory), `/`-separated, and may use
//! `*` inside one component (`.local/lib/python*/site-packages`). An entry covers the
//! path it names and everything below it, whatever its [`Kind`].

mod allow;
mod entry;
mod environment;
mod home;
mod project;
mod project_dots;

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

pub use allow::{ALLOW_OVERLAPS, CACHE_ENV, HOME_ALLOW, PROTECTED_IN_ALLOWED};
pub use environment::{env_entries, ENV_LISTS, ENV_NAMED};
pub use home::{GIT_GLOBAL_PATH_KEYS, HOME};
pub use project::{INSTRUCTION_FILES, PROJECT, PROJECT_NOT_PROTECTED, SRT_0_0_83};
pub use project_dots::{DotAllowed, PROJECT_DOT_ALLOW};

pub use entry::{Allowed, Decision, Entry, Kind};

/// What the home rules say about a path relative to `$HOME`.
#[derive(Debug, PartialEq, Eq)]
pub enum HomeRule {
    /// A researched entry: a later host program runs it or trusts it. Never writable.
    Protected(&'static Entry),
    /// The user's `denyWrite` covers it.
    UserDenied,
    /// Writable: an entry of [`HOME_ALLOW`] (on by default, or named by the user), or a
    /// path the user allowed (`None`).
    Allowed(Option<&'static Allowed>),
    /// Below a dot-entry nothing allows: protected by default.
    DotEntry,
    /// Not a dot-entry and not listed (`~/projects/...`): the ordinary rules apply.
    Open,
}

/// The user's home settings: paths relative to `$HOME` they allow (entries of
/// [`HOME_ALLOW`] that are off by default, or paths of their own) and deny.
#[derive(Debug, Default, Clone, Copy)]
pub struct HomeSettings<'a> {
    pub allow: &'a [&'a str],
    pub deny: &'a [&'a str],
}

/// A relative path pattern as the lists spell them: non-empty components, no `.`/`..`,
/// no leading or trailing `/`, `*` only inside a component (never `**`), printable ASCII.
pub fn well_formed(pattern: &str) -> bool {
    !pattern.is_empty()
        && pattern.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && !pattern.contains('\\')
        && !pattern.contains("**")
        && pattern.split('/').all(|c| !c.is_empty() && c != "." && c != ".." && c.trim() == c)
}

/// `name` matches one pattern component, where `*` stands for any run of characters.
fn component_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else { return false };
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let Some(last) = parts.next_back() else { return rest.is_empty() };
    for p in parts {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The normal components of a relative path, or `None` when it is absolute or has `..`.
fn names(rel: &Path) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// `rel` is the path `pattern` names, or lies below it. Allocation-free: the launch and
/// the supervisor ask this for every name they judge.
pub fn covers(pattern: &str, rel: &Path) -> bool {
    let mut pat = pattern.split('/');
    let mut names = rel.components();
    loop {
        let Some(p) = pat.next() else { return true };
        let n = loop {
            match names.next() {
                Some(Component::Normal(n)) => break n,
                Some(Component::CurDir) => continue,
                _ => return false,
            }
        };
        match n.to_str() {
            Some(n) if component_matches(p, n) => {}
            _ => return false,
        }
    }
}

/// Something `pattern` names lies strictly below `rel` (moving or replacing `rel` would
/// move or replace it).
pub fn lies_below(pattern: &str, rel: &Path) -> bool {
    let mut pat = pattern.split('/');
    for c in rel.components() {
        let n = match c {
            Component::Normal(n) => n,
            Component::CurDir => continue,
            _ => return false,
        };
        match (pat.next(), n.to_str()) {
            (Some(p), Some(n)) if component_matches(p, n) => {}
            _ => return false,
        }
    }
    pat.next().is_some()
}

/// Two patterns name a common path (one covers what the other names, wildcards aside).
fn overlap(a: &str, b: &str) -> bool {
    a.split('/').zip(b.split('/')).all(|(x, y)| component_matches(x, y) || component_matches(y, x))
}

/// The entry first in `list` that covers `rel`.
fn find<'a, T>(list: &'a [T], path: impl Fn(&T) -> &str, rel: &Path) -> Option<&'a T> {
    list.iter().find(|e| covers(path(e), rel))
}

/// The researched home entry covering `rel` (relative to `$HOME`), if any.
pub fn home_entry(rel: &Path) -> Option<&'static Entry> {
    find(HOME, |e| e.path, rel)
}

/// Whether a directory named `name` is refused wherever it is made or moved in: a
/// one-component [`PROJECT`] entry (`.claude`, `.vscode`, `lefthook.*`, ...).
pub fn project_dir_name(name: &std::ffi::OsStr) -> bool {
    PROJECT.iter().filter(|e| !e.path.contains('/')).any(|e| covers(e.path, Path::new(name)))
}

/// Whether a directory entry named `name` could start a [`PROJECT`] entry: a set lookup
/// and the few wildcard patterns, for the launch's look at every name it lists.
pub fn starts_project_entry(name: &str) -> bool {
    use std::collections::HashSet;
    use std::sync::OnceLock;
    type Wild = (&'static str, &'static str, &'static str);
    static FIRST: OnceLock<(HashSet<&'static str>, Vec<Wild>)> = OnceLock::new();
    let (exact, wild) = FIRST.get_or_init(|| {
        let firsts = PROJECT.iter().map(|e| e.path.split('/').next().unwrap_or(e.path));
        let (w, x): (Vec<&str>, Vec<&str>) = firsts.partition(|f| f.contains('*'));
        // each pattern with its literal start and end: two memcmps rule out almost every
        // name before the matcher runs (this is called for every entry the search lists)
        let w = w.into_iter().map(|p| (p, p.split('*').next().unwrap_or(""), p.rsplit('*').next().unwrap_or("")));
        (x.into_iter().collect(), w.collect())
    });
    exact.contains(name)
        || wild.iter().any(|(w, pre, post)| name.starts_with(pre) && name.ends_with(post) && component_matches(w, name))
}

/// Whether `name` may appear at the top of a writable tree during a run, and `inside` (the
/// name below it, if any) within it: not a dot-name, or one [`PROJECT_DOT_ALLOW`] names
/// (within the names it allows inside, where it lists them: `.github/workflows`, not
/// `.github/mcp.json`), or the first name of a dot-path decided not protected
/// ([`PROJECT_NOT_PROTECTED`]: `.npmrc`, `.cargo`). [`PROJECT`]'s names are judged before
/// this, and stay protected below an allowed one.
pub fn top_dot_allowed(name: &str, inside: Option<&str>) -> bool {
    if !name.starts_with('.') {
        return true;
    }
    if let Some(d) = PROJECT_DOT_ALLOW.iter().find(|d| component_matches(d.name, name)) {
        return d.inside.is_empty() || inside.is_none_or(|i| d.inside.iter().any(|p| component_matches(p, i)));
    }
    PROJECT_NOT_PROTECTED.iter().any(|d| d.path.starts_with('.') && d.path.split('/').next() == Some(name))
}

/// The protected project entry covering `rel` (relative to a project directory), if any.
pub fn project_entry(rel: &Path) -> Option<&'static Entry> {
    find(PROJECT, |e| e.path, rel)
}

/// A researched home entry lies strictly below `rel` (`.config`, `.cargo`): even where
/// `rel` itself may be written, it may not be moved or replaced whole.
pub fn home_protected_below(rel: &Path) -> bool {
    HOME.iter().any(|e| lies_below(e.path, rel))
}

/// The first component of `rel` is a dot-entry of `$HOME`.
pub fn is_dot_entry(rel: &Path) -> bool {
    names(rel).and_then(|n| n.first().map(|f| f.starts_with('.'))).unwrap_or(false)
}

/// Researched home entries outside dot-entries: protecting `$HOME`'s dot-entries by
/// default does not cover them, so they must be protected by name.
pub fn non_dot_home_entries() -> impl Iterator<Item = &'static Entry> {
    HOME.iter().filter(|e| !e.path.starts_with('.'))
}

/// The rules for `rel` (relative to `$HOME`) when `$HOME` is writable. The researched
/// list wins over everything but the few allow entries documented in [`ALLOW_OVERLAPS`]
/// (a history file inside a protected directory); the user's denials win over allows.
pub fn home_rule(rel: &Path, user: HomeSettings<'_>) -> HomeRule {
    let user_allows = |path: &str| user.allow.iter().any(|a| covers(a, Path::new(path)));
    let enabled = |a: &Allowed| a.default || user_allows(a.path);
    let denied = user.deny.iter().any(|d| covers(d, rel));
    if let Some(entry) = home_entry(rel) {
        let overlap = ALLOW_OVERLAPS
            .iter()
            .filter(|(allowed, protected, _)| *protected == entry.path && covers(allowed, rel))
            .find_map(|(allowed, _, _)| HOME_ALLOW.iter().find(|a| a.path == *allowed));
        return match overlap {
            Some(a) if enabled(a) && !denied => HomeRule::Allowed(Some(a)),
            _ => HomeRule::Protected(entry),
        };
    }
    if denied {
        return HomeRule::UserDenied;
    }
    // a file entry names that file only: nothing below it (made as a directory) is data
    let named = |a: &Allowed| match a.kind {
        Kind::Dir => covers(a.path, rel),
        Kind::File => names(rel).is_some_and(|n| n.len() == a.path.split('/').count()) && covers(a.path, rel),
    };
    if let Some(a) = HOME_ALLOW.iter().find(|a| named(a) && enabled(a)) {
        return HomeRule::Allowed(Some(a));
    }
    if user.allow.iter().any(|a| covers(a, rel)) {
        return HomeRule::Allowed(None);
    }
    if is_dot_entry(rel) {
        HomeRule::DotEntry
    } else {
        HomeRule::Open
    }
}

/// A user allow entry may not reopen the researched list: the entry it would expose is
/// the error to report (`"~/.bashrc: bash runs it ..."`).
pub fn check_user_allow(pattern: &str) -> Result<(), &'static Entry> {
    match HOME.iter().find(|e| overlap(e.path, pattern) && pattern.split('/').count() >= e.path.split('/').count()) {
        Some(e) if !ALLOW_OVERLAPS.iter().any(|(a, p, _)| *p == e.path && covers(a, Path::new(pattern))) => Err(e),
        _ => Ok(()),
    }
}

/// Where an entry lives for this user: `.config/...`, `.local/share/...`,
/// `.local/state/...` and `.cache/...` follow `XDG_CONFIG_HOME`, `XDG_DATA_HOME`,
/// `XDG_STATE_HOME` and `XDG_CACHE_HOME` when `var` gives an absolute path for them (the
/// specification ignores relative ones); everything else is under `home`. Both places
/// matter when they differ (a tool may ignore the variable), so callers protect both.
pub fn xdg_location(pattern: &str, home: &Path, var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    const BASES: &[(&str, &str)] = &[
        (".config/", "XDG_CONFIG_HOME"),
        (".local/share/", "XDG_DATA_HOME"),
        (".local/state/", "XDG_STATE_HOME"),
        (".cache/", "XDG_CACHE_HOME"),
    ];
    for (prefix, name) in BASES {
        if let Some(rest) = pattern.strip_prefix(prefix) {
            if let Some(base) = var(name).map(PathBuf::from).filter(|b| b.is_absolute()) {
                return base.join(rest);
            }
        }
    }
    home.join(pattern)
}

#[cfg(test)]
#[path = "protected_names_tests.rs"]
mod tests;
