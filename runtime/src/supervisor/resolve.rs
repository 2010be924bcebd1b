//! From a path the command passed to the object or parent directory it names, as a
//! descriptor of our own plus the real location the policy judges.
//!
//! Resolution happens in the command's view: relative paths from its working directory or
//! `dirfd`, absolute ones inside its root (`RESOLVE_IN_ROOT`, so in namespace mode they see
//! its mounts). Magic links (`/proc/<pid>/fd/N`, `cwd`, `root`) are never followed by the
//! general walk: through them the supervisor would land on *its own* objects, or on objects
//! the command could not reach. The descriptor forms agents really use (`/dev/fd/N`,
//! `/proc/self/fd/N`, `/dev/stdout`) are recognised by name and mapped to the command's own
//! descriptor instead.

use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use super::sys::{self, Errno};
use super::tracee::{Base, Tracee};

/// Why a path could not be resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The walk met something the supervisor must not follow for the command (a magic
    /// link, procfs): only the kernel, under the command's Landlock domain, can judge it.
    Unresolvable,
    /// The error the command's own syscall would get (ENOENT, ENOTDIR, EACCES, ...).
    Errno(Errno),
}

impl From<Errno> for Why {
    fn from(e: Errno) -> Why {
        Why::Errno(e)
    }
}

/// The parent directory of the last component, and that component.
pub struct Target {
    pub parent: OwnedFd,
    pub name: CString,
    /// Real location of the last component (`<parent's path>/<name>`).
    pub path: PathBuf,
}

/// The command's descriptor a path names directly (`/dev/fd/3`, `/proc/self/fd/3`,
/// `/dev/stdout`), if it is one of those forms.
pub fn descriptor_alias(raw: &[u8]) -> Option<i32> {
    let num = |s: &[u8]| -> Option<i32> {
        if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    match raw {
        b"/dev/stdin" => Some(0),
        b"/dev/stdout" => Some(1),
        b"/dev/stderr" => Some(2),
        _ => ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
            .iter()
            .find_map(|p| raw.strip_prefix(p.as_bytes()).and_then(num)),
    }
}

/// Splits `raw` into its directory part and last component; `None` when the last
/// component is not a plain name (empty, `.`, `..`: the kernel judges those itself).
fn split(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut end = raw.len();
    while end > 1 && raw[end - 1] == b'/' {
        end -= 1;
    }
    let trimmed = &raw[..end];
    let (dir, name) = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
        None => (&b""[..], trimmed),
    };
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    Some((dir, name))
}

/// Opens the directory `dir` (a path of the command's, relative to `base`, or absolute).
fn open_dir(t: &Tracee, base: Base, dir: &[u8]) -> Result<OwnedFd, Why> {
    open_dir_from(t, base, None, dir)
}

/// As [`open_dir`], with the base directory already open (`from`) for relative paths.
fn open_dir_from(t: &Tracee, base: Base, from: Option<BorrowedFd<'_>>, dir: &[u8]) -> Result<OwnedFd, Why> {
    let absolute = dir.first() == Some(&b'/');
    let rel: &[u8] = {
        let mut d = dir;
        while d.first() == Some(&b'/') {
            d = &d[1..];
        }
        if d.is_empty() {
            b"."
        } else {
            d
        }
    };
    let opened;
    let base = match (absolute, from) {
        (false, Some(f)) => f,
        _ => {
            opened = t.open_base(if absolute { Base::Root } else { base }).map_err(Why::Errno)?;
            opened.as_fd()
        }
    };
    let resolve = sys::RESOLVE_NO_MAGICLINKS | if absolute { sys::RESOLVE_IN_ROOT } else { 0 };
    let path = sys::cstr(rel)?;
    sys::openat2(Some(base), &path, libc::O_PATH | libc::O_DIRECTORY, 0, resolve).map_err(|e| match e {
        // a magic link on the way (or a symlink loop: the kernel would say ELOOP as well,
        // and leaving it to the kernel gives exactly that)
        libc::ELOOP | libc::EXDEV => Why::Unresolvable,
        e => Why::Errno(e),
    })
}

/// The real location of a directory we hold, refused when it is not an ordinary place in
/// the filesystem tree: procfs (whose `self` would be the supervisor), or something deleted.
fn dir_path(fd: &OwnedFd) -> Result<PathBuf, Why> {
    let p = sys::fd_path(fd.as_fd())?;
    let b = p.as_os_str().as_encoded_bytes();
    if !b.starts_with(b"/") || sys::is_deleted(&p) || b == b"/proc" || b.starts_with(b"/proc/") {
        return Err(Why::Unresolvable);
    }
    Ok(p)
}

/// The parent directory of `raw`, opened as the command would reach it (relative to `base`
/// unless absolute), and the last component.
pub fn parent_dir<'a>(t: &Tracee, base: Base, raw: &'a [u8]) -> Result<(OwnedFd, &'a [u8]), Why> {
    if raw.is_empty() {
        return Err(Why::Errno(libc::ENOENT));
    }
    let (dir, name) = split(raw).ok_or(Why::Unresolvable)?;
    Ok((open_dir(t, base, dir)?, name))
}

/// As [`parent_dir`], for a relative path from an already open working directory.
pub fn parent_dir_from<'a>(t: &Tracee, cwd: BorrowedFd<'_>, raw: &'a [u8]) -> Result<(OwnedFd, &'a [u8]), Why> {
    if raw.is_empty() {
        return Err(Why::Errno(libc::ENOENT));
    }
    let (dir, name) = split(raw).ok_or(Why::Unresolvable)?;
    Ok((open_dir_from(t, Base::Cwd, Some(cwd), dir)?, name))
}

/// Names the real location of what [`parent_dir`] found.
pub fn located(parent: OwnedFd, name: &[u8]) -> Result<Target, Why> {
    let path = dir_path(&parent)?.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name));
    Ok(Target { parent, name: sys::cstr(name)?, path })
}

/// Resolves the parent of `raw` as the command would (relative to `base` unless absolute).
pub fn parent(t: &Tracee, base: Base, raw: &[u8]) -> Result<Target, Why> {
    let (parent, name) = parent_dir(t, base, raw)?;
    located(parent, name)
}

/// A whole directory path (for `O_TMPFILE`, whose path names the directory).
pub fn directory(t: &Tracee, base: Base, raw: &[u8]) -> Result<(OwnedFd, PathBuf), Why> {
    let fd = open_dir(t, base, raw)?;
    let path = dir_path(&fd)?;
    Ok((fd, path))
}

/// The object `raw` names, as an `O_PATH` descriptor; `follow` says whether a symlink in
/// the last component is followed (as the syscall would).
pub fn object(t: &Tracee, base: Base, raw: &[u8], follow: bool) -> Result<OwnedFd, Why> {
    if let Some(fd) = descriptor_alias(raw) {
        return t.open_fd_object(fd).map_err(Why::Errno);
    }
    let target = match parent(t, base, raw) {
        Ok(target) => target,
        // `.`, `..`, `/`: the object is a directory we can open as a whole
        Err(Why::Unresolvable) if split(raw).is_none() && !raw.is_empty() => {
            return directory(t, base, raw).map(|(fd, _)| fd)
        }
        Err(e) => return Err(e),
    };
    let flags = libc::O_PATH | if follow { 0 } else { libc::O_NOFOLLOW };
    // symlinks in the last component are followed only inside the command's root, and never
    // through magic links
    let root = t.open_base(Base::Root).map_err(Why::Errno)?;
    match sys::openat2(Some(target.parent.as_fd()), &target.name, flags, 0, sys::RESOLVE_NO_MAGICLINKS) {
        Ok(fd) if follow => {
            // a followed absolute symlink resolved against the supervisor's root; redo the
            // walk inside the command's root from the real location to stay in its view
            let p = sys::fd_path(fd.as_fd())?;
            let rel = p.as_os_str().as_encoded_bytes().strip_prefix(b"/").unwrap_or(b".");
            let rel = if rel.is_empty() { &b"."[..] } else { rel };
            let fd2 = sys::openat2(
                Some(root.as_fd()),
                &sys::cstr(rel)?,
                libc::O_PATH | libc::O_NOFOLLOW,
                0,
                sys::RESOLVE_NO_MAGICLINKS | sys::RESOLVE_IN_ROOT,
            )
            .map_err(|_| Why::Unresolvable)?;
            // the same object both ways, or the views differ and only the kernel can judge
            let (a, b) = (sys::fstat(fd.as_fd())?, sys::fstat(fd2.as_fd())?);
            if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
                return Err(Why::Unresolvable);
            }
            Ok(fd2)
        }
        Ok(fd) => Ok(fd),
        Err(libc::ELOOP | libc::EXDEV) => Err(Why::Unresolvable),
        Err(e) => Err(Why::Errno(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_forms() {
        assert_eq!(descriptor_alias(b"/dev/fd/63"), Some(63));
        assert_eq!(descriptor_alias(b"/proc/self/fd/5"), Some(5));
        assert_eq!(descriptor_alias(b"/proc/thread-self/fd/0"), Some(0));
        assert_eq!(descriptor_alias(b"/dev/stdout"), Some(1));
        assert_eq!(descriptor_alias(b"/dev/fd/"), None);
        assert_eq!(descriptor_alias(b"/dev/fd/5/x"), None);
        assert_eq!(descriptor_alias(b"/dev/fd/-1"), None);
        assert_eq!(descriptor_alias(b"/proc/1/fd/5"), None, "other processes go through the kernel");
    }

    #[test]
    fn splitting() {
        assert_eq!(split(b"a/b/c"), Some((&b"a/b/"[..], &b"c"[..])));
        assert_eq!(split(b"c"), Some((&b""[..], &b"c"[..])));
        assert_eq!(split(b"/c//"), Some((&b"/"[..], &b"c"[..])));
        assert_eq!(split(b"a/.."), None);
        assert_eq!(split(b"/"), None);
        assert_eq!(split(b"."), None);
    }
}
