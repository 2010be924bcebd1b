//! Where a symlink leads, as the disk has it now: the facts the pure rule
//! [`crate::fs::name_rules::symlink_to`] judges a link by. A link is a write to its target:
//! a host program that later writes through the link's name (a shell appending to a history
//! file, a build writing its output, git appending to `logs/HEAD`) writes wherever it
//! leads, with the host user's rights rather than the command's.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// What a link leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// Canonical where it exists, with the missing rest appended (`..` taken lexically
    /// there, as it will be once those directories are made).
    pub path: PathBuf,
    /// It is a directory now: writing through the link can then reach any name below it.
    pub is_dir: bool,
    /// The user srt runs as could write it, or make it, outside the sandbox: writing
    /// through the link would succeed for a host program of that user.
    pub host_writes: bool,
}

/// Where a symlink made in the directory `dir` (canonical) with the contents `text` leads.
pub fn destination(dir: &Path, text: &OsStr) -> Destination {
    // `/proc/self/cwd/x`, `/dev/fd/3/x`: what these lead to depends on the process that
    // follows the link, not on srt, so no answer srt finds here would hold for a host
    // program; nor does one srt could not finish (a path past PATH_MAX, a name it may not
    // look at): all are taken as the place no command may write
    let unjudged = Destination { path: PathBuf::from(UNJUDGED), is_dir: true, host_writes: true };
    let Some(path) = resolve(dir, Path::new(text)) else { return unjudged };
    if ["/proc", "/dev/fd"].iter().any(|p| crate::paths::under(&path, Path::new(p))) {
        return unjudged;
    }
    let meta = std::fs::metadata(&path);
    let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
    let host_writes = match meta {
        Ok(_) => writable(&path),
        // to be made: by whoever may add a name to the nearest directory that exists
        Err(_) => path.ancestors().skip(1).find(|a| a.is_dir()).is_some_and(writable),
    };
    Destination { path, is_dir, host_writes }
}

/// The destination of a link srt cannot judge ([`destination`]); refused by
/// [`crate::fs::name_rules::symlink_to`] whatever the policy says about it.
pub const UNJUDGED: &str = "/proc";

/// Symlinks followed on the way, as the kernel's `MAXSYMLINKS`: past it the kernel gives up
/// (`ELOOP`).
const MAX_HOPS: usize = 40;

/// `text` resolved from `dir` as the kernel would: each existing symlink on the way
/// followed, `..` taken after it; from the first missing name on, `.` and `..` are taken
/// lexically (as they will be once those directories are made). `None` where srt cannot
/// tell: a path that grows past `PATH_MAX` (the kernel follows a relative link that far,
/// srt's look by path would not), a name it may not look at, a link it cannot read, more
/// links than the kernel follows.
fn resolve(dir: &Path, text: &Path) -> Option<PathBuf> {
    let mut cur = if text.has_root() { PathBuf::from("/") } else { dir.to_path_buf() };
    let mut todo: Vec<std::ffi::OsString> = names(text);
    todo.reverse();
    let (mut hops, mut missing) = (0, false);
    while let Some(n) = todo.pop() {
        if cur.as_os_str().len() + n.len() >= libc::PATH_MAX as usize {
            return None;
        }
        if n == ".." {
            cur.pop();
            // back in a directory that exists: the disk decides again from here
            missing = missing && std::fs::symlink_metadata(&cur).is_err();
            continue;
        }
        cur.push(&n);
        // magic links there are srt's own (its cwd, its descriptors): not followed
        if missing || cur == Path::new("/proc") || cur == Path::new("/dev/fd") {
            missing |= cur.starts_with("/proc") || cur.starts_with("/dev/fd");
            continue;
        }
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return None;
                }
                let link = std::fs::read_link(&cur).ok()?;
                cur.pop();
                if link.has_root() {
                    cur = PathBuf::from("/");
                }
                todo.extend(names(&link).into_iter().rev());
            }
            Ok(_) => {}
            // missing, or below a file: nothing there now (the kernel fails too)
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => missing = true,
            Err(_) => return None,
        }
    }
    Some(cur)
}

/// The names of `p`, `.` dropped, `..` kept.
fn names(p: &Path) -> Vec<std::ffi::OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// The user srt runs as may write `p` outside the sandbox. For root, whose capabilities
/// srt has dropped by now (so `faccessat` would say no to other users' files), only a
/// read-only mount says no; for anyone else, the mode and the mount do.
fn writable(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else { return true };
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // SAFETY: statvfs writes only into the struct it is given.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a live struct.
        let r = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
        return r != 0 || st.f_flag & libc::ST_RDONLY == 0;
    }
    // SAFETY: plain syscall with a NUL-terminated path; it only reads its arguments.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_absolute_links_and_missing_rests() {
        let root = std::env::temp_dir().join(format!("srt-link-target-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("w/a/b")).unwrap();
        std::os::unix::fs::symlink(root.join("w"), root.join("w/a/up")).unwrap();
        let root = root.canonicalize().unwrap();
        let w = root.join("w");
        let at = |dir: &str, text: &str| destination(&w.join(dir), OsStr::new(text));
        assert_eq!(at("a", "../f").path, w.join("f"));
        assert_eq!(at("a/b", "../../a").path, w.join("a"));
        assert!(at("a/b", "../../a").is_dir);
        assert_eq!(at("a", "up/x").path, w.join("x"), "an existing link on the way is followed");
        assert_eq!(at("a", "missing/../../g").path, w.join("g"), "missing parts are taken lexically");
        assert_eq!(at("a", "missing/../up/y").path, w.join("y"), "and links after them followed again");
        assert_eq!(at("a", "up/../z").path, root.join("z"), "`..` after a link is the link target's parent");
        assert_eq!(at("a", "/etc/../etc/passwd").path, PathBuf::from("/etc/passwd"));
        assert_eq!(at("a", "../../../../../../../..").path, PathBuf::from("/"));
        assert!(at("a", "new").host_writes, "a missing name in a directory of ours can be made");
        let long = format!("{}/../f", "d/".repeat(2100));
        assert_eq!(at("a", &long).path, PathBuf::from(UNJUDGED), "past PATH_MAX srt cannot judge");
        for magic in ["/proc/self/cwd/bin/git", "/proc/1/root/etc/passwd", "/dev/fd/3/x", "/dev/stdout"] {
            let d = at("a", magic);
            assert_eq!(d.path, PathBuf::from("/proc"), "{magic} is judged as /proc: {d:?}");
            assert!(d.is_dir && d.host_writes, "{magic}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
