//! Path entries: `~` expansion, resolution against the launcher's working directory,
//! literal entries, and globs (only in `denyRead`/`allowRead`, as in srt on Linux).

use std::path::{Component, Path, PathBuf};

use crate::model::PathEntry;

/// A path entry after `~` and cwd resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedEntry {
    /// A literal path, lexically normalised (`//`, `/./` and a trailing `/` removed).
    Path(PathBuf),
    /// A glob pattern, absolute, to expand against the disk at launch.
    Glob(String),
}

pub fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Validation of one entry; `globs_ok` for the read lists.
pub(crate) fn check_entry(e: &PathEntry, globs_ok: bool, is_deny: bool) -> Result<(), String> {
    let s = e.as_str();
    if s.is_empty() {
        return Err("Path cannot be empty".into());
    }
    if s.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    if let PathEntry::Literal(l) = e {
        if !l.literal {
            return Err("\"literal\" must be true; write a plain string for a non-literal path".into());
        }
        return Ok(());
    }
    if !has_glob_chars(s) {
        return Ok(());
    }
    if !globs_ok {
        let stripped = s.strip_suffix("/**").unwrap_or(s);
        if has_glob_chars(stripped) {
            return Err(format!(
                "globs are only supported in denyRead, allowRead and listable; write a literal path, or \
                 {{\"path\": \"{s}\", \"literal\": true}} if the name really contains glob characters"
            ));
        }
        return Ok(());
    }
    if is_deny && (s.ends_with('/') || s.ends_with("/**/")) {
        let fixed = s.trim_end_matches('/');
        return Err(format!(
            "Deny glob \"{s}\" ends in a separator, so as a pattern it can match no path. Write \"{fixed}\""
        ));
    }
    globset::GlobBuilder::new(s)
        .literal_separator(true)
        .build()
        .map(|_| ())
        .map_err(|e| format!("invalid glob \"{s}\": {e}"))
}

/// Resolves an entry: `~` / `~/x` against `home`, relative paths against `cwd`.
/// In write lists a trailing `/**` is dropped (the directory itself is meant).
pub fn resolve(e: &PathEntry, cwd: &Path, home: Option<&Path>, allow_glob: bool) -> ResolvedEntry {
    let raw = e.as_str();
    let raw = if !allow_glob && !e.is_literal() { raw.strip_suffix("/**").unwrap_or(raw) } else { raw };
    let expanded: PathBuf = match (raw, home) {
        ("~", Some(h)) => h.to_path_buf(),
        (r, Some(h)) if r.starts_with("~/") => h.join(&r[2..]),
        (r, _) => PathBuf::from(r),
    };
    let abs = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    let norm = normalize(&abs);
    if allow_glob && !e.is_literal() && has_glob_chars(raw) {
        ResolvedEntry::Glob(norm.to_string_lossy().into_owned())
    } else {
        ResolvedEntry::Path(norm)
    }
}

/// Lexical normalisation: drops `.` components, repeated and trailing separators.
/// `..` is kept: folding it lexically is wrong across symlinks, so the kernel resolves it.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LiteralPath;

    fn plain(s: &str) -> PathEntry {
        PathEntry::Plain(s.into())
    }

    #[test]
    fn resolution() {
        let cwd = Path::new("/work/proj");
        let home = Some(Path::new("/home/u"));
        let r = |s: &str, g| resolve(&plain(s), cwd, home, g);
        assert_eq!(r(".", false), ResolvedEntry::Path("/work/proj".into()));
        assert_eq!(r("~", false), ResolvedEntry::Path("/home/u".into()));
        assert_eq!(r("~/.ssh", true), ResolvedEntry::Path("/home/u/.ssh".into()));
        assert_eq!(r("sub//x/./y/", false), ResolvedEntry::Path("/work/proj/sub/x/y".into()));
        assert_eq!(r("/data/**", false), ResolvedEntry::Path("/data".into()));
        assert_eq!(r("**/.env", true), ResolvedEntry::Glob("/work/proj/**/.env".into()));
        assert_eq!(r("../x", false), ResolvedEntry::Path("/work/proj/../x".into()));
        let lit = PathEntry::Literal(LiteralPath { path: "a[1]*".into(), literal: true });
        assert_eq!(resolve(&lit, cwd, home, true), ResolvedEntry::Path("/work/proj/a[1]*".into()));
    }

    #[test]
    fn entry_checks() {
        assert!(check_entry(&plain(""), true, true).is_err());
        assert!(check_entry(&plain("/a/*.txt"), false, false).is_err());
        assert!(check_entry(&plain("/a/**"), false, false).is_ok());
        assert!(check_entry(&plain("/a/*.txt"), true, true).is_ok());
        assert!(check_entry(&plain("/data/*/"), true, true).unwrap_err().contains("ends in a separator"));
        let lit = PathEntry::Literal(LiteralPath { path: "x".into(), literal: false });
        assert!(check_entry(&lit, true, true).is_err());
    }
}
