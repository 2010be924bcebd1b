//! Paths as the disk has them: canonical locations (symlinks resolved, the missing rest
//! appended), resolved once per planning, and glob expansion against the disk.

use std::path::{Path, PathBuf};

/// Bounds on one glob's expansion, so a `**` under `/` cannot stall the launch.
const GLOB_MAX_ENTRIES: usize = 200_000;
const GLOB_MAX_DEPTH: usize = 32;

/// A deny on a symlink protects both the name and what it points at.
pub(crate) fn push_with_link(out: &mut Vec<PathBuf>, p: &Path) {
    let name_kept = match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => p.to_path_buf(),
    };
    let target = canonical(p);
    if target != name_kept {
        out.push(target);
    }
    out.push(name_kept);
}

/// realpath for the longest existing prefix, the rest appended (missing paths still get
/// a location the kernel will agree with once they exist).
pub fn canonical(p: &Path) -> PathBuf {
    if let Some(c) = realpath(p) {
        return c;
    }
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    while let (Some(parent), Some(name)) =
        (cur.parent().map(Path::to_path_buf), cur.file_name().map(|n| n.to_os_string()))
    {
        rest.push(name);
        if let Some(c) = realpath(&parent) {
            let mut out = c;
            for n in rest.iter().rev() {
                out.push(n);
            }
            return out;
        }
        cur = parent;
    }
    p.to_path_buf()
}

/// What one component of a path turned out to be, as [`realpath`] remembers it.
#[derive(Clone)]
enum Step {
    Missing,
    /// Not a symlink; whether a directory.
    Plain(bool),
    Link(PathBuf),
}

std::thread_local! {
    /// Within [`with_resolution_cache`]: each real directory plus name already looked at.
    static RESOLVED: std::cell::RefCell<Option<std::collections::HashMap<PathBuf, Step>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` (one planning of a launch) with [`canonical`] remembering every component it
/// looked at: glibc's realpath reads each component of each path again (`/root`,
/// `/root/.local`, ... once per path below them: ~90 `readlink` calls a launch). One
/// planning sees one snapshot, as it would by looking faster; the rules built from it are
/// still checked against the disk when they are opened ([`crate::landlock::build`]), and
/// a planning done again starts from an empty cache.
pub fn with_resolution_cache<T>(f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            RESOLVED.with(|c| *c.borrow_mut() = None);
        }
    }
    RESOLVED.with(|c| *c.borrow_mut() = Some(std::collections::HashMap::new()));
    let _reset = Reset;
    f()
}

/// `p` with every symlink resolved, or `None` where some component does not exist (as
/// `realpath(3)`); remembered per component within [`with_resolution_cache`].
fn realpath(p: &Path) -> Option<PathBuf> {
    use std::ffi::OsString;
    let cached = RESOLVED.with(|c| c.borrow().is_some());
    if !cached || !p.is_absolute() {
        return p.canonicalize().ok();
    }
    // the components still to walk, the next one last; `None` stands for the root
    fn push_rev(todo: &mut Vec<Option<OsString>>, p: &Path) {
        use std::path::Component;
        for c in p.components().rev() {
            match c {
                Component::RootDir => todo.push(None),
                Component::Normal(n) => todo.push(Some(n.to_os_string())),
                Component::ParentDir => todo.push(Some(OsString::from(".."))),
                Component::CurDir | Component::Prefix(_) => {}
            }
        }
    }
    let mut todo = Vec::new();
    push_rev(&mut todo, p);
    let mut out = PathBuf::from("/");
    let mut out_is_dir = true;
    let mut links = 0;
    while let Some(c) = todo.pop() {
        let Some(name) = c else {
            out = PathBuf::from("/");
            out_is_dir = true;
            continue;
        };
        if !out_is_dir {
            return None; // ENOTDIR, as the kernel would say
        }
        if name == ".." {
            // `out` is real, so its parent is what `..` reaches
            out.pop();
            continue;
        }
        let cand = out.join(&name);
        let known = RESOLVED.with(|c| c.borrow().as_ref().and_then(|m| m.get(&cand).cloned()));
        let step = match known {
            Some(s) => s,
            None => {
                let s = match cand.symlink_metadata() {
                    Err(_) => Step::Missing,
                    Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&cand) {
                        Ok(t) => Step::Link(t),
                        Err(_) => Step::Missing,
                    },
                    Ok(m) => Step::Plain(m.is_dir()),
                };
                RESOLVED.with(|c| {
                    if let Some(m) = c.borrow_mut().as_mut() {
                        m.insert(cand.clone(), s.clone());
                    }
                });
                s
            }
        };
        match step {
            Step::Missing => return None,
            Step::Plain(dir) => {
                out = cand;
                out_is_dir = dir;
            }
            Step::Link(target) => {
                links += 1;
                if links > 40 {
                    return None; // ELOOP, as the kernel would say
                }
                // the link's own components next, from `out` (an absolute one from `/`)
                push_rev(&mut todo, &target);
            }
        }
    }
    Some(out)
}

/// Expands an absolute glob against the disk, starting from its literal prefix.
pub fn expand_glob(pattern: &str) -> Vec<PathBuf> {
    let Ok(glob) = globset::GlobBuilder::new(pattern).literal_separator(true).build() else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let root: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !settings_schema::paths::has_glob_chars(&c.as_os_str().to_string_lossy()))
        .collect();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack = vec![(root, 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > GLOB_MAX_ENTRIES {
                crate::warn!("glob {pattern} stopped after {GLOB_MAX_ENTRIES} entries; later matches are not covered");
                return out;
            }
            let path = e.path();
            if matcher.is_match(&path) {
                out.push(path.clone());
            }
            if depth < GLOB_MAX_DEPTH && e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_links() {
        let root = std::env::temp_dir().join(format!("srt-prep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        std::fs::write(root.join("a/b/.env"), "").unwrap();
        std::fs::write(root.join("a/x.txt"), "").unwrap();
        let root = root.canonicalize().unwrap();
        let mut got = expand_glob(&format!("{}/**/.env", root.display()));
        got.sort();
        assert_eq!(got, vec![root.join(".env"), root.join("a/b/.env")]);
        std::os::unix::fs::symlink(root.join("a/x.txt"), root.join("link")).unwrap();
        let mut v = Vec::new();
        push_with_link(&mut v, &root.join("link"));
        assert_eq!(v, vec![root.join("a/x.txt"), root.join("link")]);
        assert_eq!(canonical(&root.join("a/missing/deeper")), root.join("a/missing/deeper"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn remembered_resolution_agrees_with_realpath() {
        let root = std::env::temp_dir().join(format!("srt-prep-real-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/file"), "").unwrap();
        let root = root.canonicalize().unwrap();
        std::os::unix::fs::symlink("b/c", root.join("a/rel")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b"), root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../abs/../rel", root.join("a/b/up")).unwrap();
        std::os::unix::fs::symlink("loop2", root.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", root.join("loop2")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        let names = [
            "a",
            "a/b/c",
            "a/rel",
            "a/rel/..",
            "abs/c",
            "abs/../file",
            "a/b/up",
            "a/b/up/x",
            "a/file",
            "a/file/..",
            "a/file/x",
            "a/./b/../b/c",
            "loop1",
            "loop1/x",
            "dangling",
            "dangling/x",
            "missing",
            "missing/deeper",
            "a/missing/deeper",
        ];
        let plain: Vec<PathBuf> = names.iter().map(|n| canonical(&root.join(n))).collect();
        let remembered: Vec<PathBuf> =
            with_resolution_cache(|| names.iter().chain(names.iter()).map(|n| canonical(&root.join(n))).collect());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(remembered[i], plain[i], "{n}");
            assert_eq!(remembered[i + names.len()], plain[i], "{n}, remembered");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
