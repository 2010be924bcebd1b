//! Removing a tree the command made (the run's TMPDIR), built not to depend on its shape:
//! no recursion (a tree 20,000 levels deep would overflow the stack), one directory
//! descriptor open at a time (going back up through `..`, each checked to be the directory
//! the walk came down from: the command's processes are gone, but another run of the same
//! user that may write here could move a directory of the tree elsewhere while it is
//! emptied, and the walk stops there), symlinks never followed, and a directory the
//! command locked (`chmod 000`) opened up by srt, its owner, just before entering it.
//! What cannot be removed is left, reported, and checked after the run like any writable
//! tree.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn open_dir(at: BorrowedFd<'_>, name: &CStr) -> std::io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: live descriptor and NUL-terminated name; the descriptor is owned below.
    let fd = unsafe { libc::openat(at.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens directory `name` in `at` and gives its owner (srt) full rights on it, so that its
/// entries can be removed (`chmod 555` kept them); when its mode keeps the owner from even
/// opening it, the rights come first (through an `O_PATH` descriptor of the directory).
fn enter(at: BorrowedFd<'_>, name: &CStr) -> std::io::Result<OwnedFd> {
    let fd = match open_dir(at, name) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            // by a descriptor of that very directory (O_PATH needs no right on it), not by
            // name: fchmodat follows a symlink another run could swap in meanwhile
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: live descriptor and NUL-terminated name; the descriptor is owned below.
            let p = unsafe { libc::openat(at.as_raw_fd(), name.as_ptr(), flags) };
            if p < 0 {
                return Err(e);
            }
            // SAFETY: a fresh descriptor nobody else owns.
            let p = unsafe { OwnedFd::from_raw_fd(p) };
            let Ok(magic) = CString::new(format!("/proc/self/fd/{}", p.as_raw_fd())) else { return Err(e) };
            // SAFETY: NUL-terminated path (the magic link names the directory opened above).
            if unsafe { libc::chmod(magic.as_ptr(), 0o700) } < 0 {
                return Err(e);
            }
            open_dir(at, name)?
        }
        other => other?,
    };
    open_up(fd.as_fd());
    Ok(fd)
}

/// Adds the owner's read, write and search rights to the directory `fd` when it lacks any.
fn open_up(fd: BorrowedFd<'_>) {
    // SAFETY: an all-zero stat is a valid out-buffer; fstat and fchmod on our descriptor.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut st) == 0 && st.st_mode & 0o700 != 0o700 {
            libc::fchmod(fd.as_raw_fd(), (st.st_mode & 0o7777) | 0o700);
        }
    }
}

/// The next entry of `dir` that is a directory, after removing every other entry read on
/// the way. Reads from the start: entries removed before are gone from the listing.
fn next_subdir(dir: BorrowedFd<'_>) -> std::io::Result<Option<CString>> {
    let mut buf = vec![0u8; 32 * 1024];
    // SAFETY: seeking our own directory descriptor back to its start.
    unsafe { libc::lseek(dir.as_raw_fd(), 0, libc::SEEK_SET) };
    loop {
        // SAFETY: getdents64 into a live buffer of the given length.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        for r in crate::fs::dirents::records(&buf[..n as usize]) {
            let (name, kind) = r.map_err(|()| std::io::Error::from_raw_os_error(libc::EIO))?;
            let Ok(c) = CString::new(name) else { continue };
            let is_dir = match kind {
                libc::DT_DIR => true,
                libc::DT_UNKNOWN => is_dir_at(dir, &c),
                _ => false,
            };
            if is_dir {
                return Ok(Some(c));
            }
            // SAFETY: live descriptor and NUL-terminated name.
            if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::ENOENT) {
                    return Err(e);
                }
            }
        }
    }
}

/// A directory's device and inode.
fn identity(fd: BorrowedFd<'_>) -> std::io::Result<(u64, u64)> {
    // SAFETY: an all-zero stat is a valid out-buffer; fstat on a live descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.st_dev as u64, st.st_ino as u64))
}

fn is_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> bool {
    // SAFETY: an all-zero stat is a valid out-buffer; fstatat does not follow the name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: live descriptor, NUL-terminated name, pointer to a local.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// Removes `root` and everything below it (see the module comment). Memory grows with the
/// depth (one name per level), descriptors do not.
pub fn remove_tree(root: &Path) -> std::io::Result<()> {
    remove_below(root, true)
}

/// Removes everything below `root`, and `root` itself when `and_root`.
pub(crate) fn remove_below(root: &Path, and_root: bool) -> std::io::Result<()> {
    let parent = root.parent().unwrap_or(Path::new("/"));
    let root_name =
        CString::new(root.file_name().map(|n| n.as_bytes()).unwrap_or(b".")).map_err(std::io::Error::other)?;
    let top = match open_dir_path(parent) {
        Ok(fd) => fd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut cur = match enter(top.as_fd(), &root_name) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
        Err(e) => return Err(e),
    };
    // the names from `root` down to `cur`, and the directory each was found in
    let mut path: Vec<CString> = Vec::new();
    let mut parents: Vec<(u64, u64)> = Vec::new();
    loop {
        match next_subdir(cur.as_fd()).map_err(|e| with_path(e, root, &path))? {
            Some(sub) => {
                let here = identity(cur.as_fd()).map_err(|e| with_path(e, root, &path))?;
                let next = enter(cur.as_fd(), &sub).map_err(|e| with_path(e, root, &path))?;
                path.push(sub);
                parents.push(here);
                cur = next;
            }
            None => {
                // `cur` is empty: go up and remove it
                let (Some(name), Some(was)) = (path.pop(), parents.pop()) else { break };
                let up = open_dir(cur.as_fd(), c"..").map_err(|e| with_path(e, root, &path))?;
                // Another run of the user's, still going and allowed to write where this
                // tree is, may have moved `cur` elsewhere while it was emptied: its `..`
                // is then a directory of that run's choosing. Stop rather than remove there.
                if identity(up.as_fd()).map_err(|e| with_path(e, root, &path))? != was {
                    let moved = std::io::Error::other("moved while it was being removed; left as it is");
                    return Err(with_path(moved, root, &path));
                }
                cur = up;
                // SAFETY: live descriptor and NUL-terminated name.
                if unsafe { libc::unlinkat(cur.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) } < 0 {
                    return Err(with_path(std::io::Error::last_os_error(), root, &path));
                }
            }
        }
    }
    drop(cur);
    // SAFETY: live descriptor and NUL-terminated name.
    if and_root && unsafe { libc::unlinkat(top.as_raw_fd(), root_name.as_ptr(), libc::AT_REMOVEDIR) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn open_dir_path(p: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The error, naming where below `root` it happened (at most the first few levels).
fn with_path(e: std::io::Error, root: &Path, below: &[CString]) -> std::io::Error {
    let mut p = root.to_path_buf();
    for n in below.iter().take(8) {
        p.push(std::ffi::OsStr::from_bytes(n.as_bytes()));
    }
    let more = if below.len() > 8 { format!("/... ({} levels)", below.len()) } else { String::new() };
    std::io::Error::new(e.kind(), format!("{}{more}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        // tmpfs where there is one: 20,000 directories on a disk mounted with `discard`
        // cost a synchronous discard each when removed
        let base = Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()).unwrap_or_else(std::env::temp_dir);
        let p = base.join(format!("srt-tmpdir-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn a_directory_moved_away_while_it_is_emptied_stops_the_removal_there() {
        // what a concurrent run allowed to write here can do: at the first removal in
        // `t/outer/y` it moves `y` into a directory of its choosing, whose `..` the walk
        // would otherwise climb to and remove
        let root = scratch("moved");
        let t = root.join("t");
        std::fs::create_dir_all(t.join("outer/y")).unwrap();
        for i in 0..3000 {
            std::fs::write(t.join(format!("outer/y/f{i}")), "").unwrap();
        }
        let victim = root.join("victim");
        std::fs::create_dir_all(victim.join(".git")).unwrap();
        std::fs::write(victim.join("keep"), "x").unwrap();
        // SAFETY: plain inotify calls on a descriptor owned here.
        let ino = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(ino >= 0);
        let y = CString::new(t.join("outer/y").as_os_str().as_bytes()).unwrap();
        // SAFETY: as above, NUL-terminated path.
        assert!(unsafe { libc::inotify_add_watch(ino, y.as_ptr(), libc::IN_DELETE) } >= 0);
        let (from, to) = (t.join("outer/y"), victim.join("y"));
        let mover = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // SAFETY: reading inotify events into a local buffer.
            unsafe { libc::read(ino, buf.as_mut_ptr().cast(), buf.len()) };
            std::fs::rename(&from, &to).unwrap();
            // SAFETY: closing our inotify descriptor.
            unsafe { libc::close(ino) };
        });
        let r = remove_tree(&t);
        mover.join().unwrap();
        assert!(r.is_err(), "the walk noticed the move");
        assert!(victim.join("keep").exists() && victim.join(".git").is_dir(), "nothing above the moved directory went");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn removes_a_tree_deeper_than_any_stack_with_locked_directories() {
        let root = scratch("deep");
        let t = root.join("t");
        std::fs::create_dir(&t).unwrap();
        // 20,000 levels, made relative to the last level as a command would
        let mut fd = open_dir_path(&t).unwrap();
        for i in 0..20_000 {
            // SAFETY: live descriptor, NUL-terminated name.
            assert_eq!(unsafe { libc::mkdirat(fd.as_raw_fd(), c"d".as_ptr(), 0o755) }, 0, "level {i}");
            if i % 1000 == 0 {
                std::fs::write(format!("/proc/self/fd/{}/f", fd.as_raw_fd()), "x").unwrap();
            }
            fd = open_dir(fd.as_fd(), c"d").unwrap();
        }
        drop(fd);
        // locked directories (no rights at all; read-only) and a symlink out that must not
        // be followed
        std::fs::create_dir_all(t.join("locked/inner")).unwrap();
        std::fs::write(t.join("locked/inner/f"), "x").unwrap();
        std::fs::set_permissions(t.join("locked/inner"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(t.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::create_dir_all(t.join("kept/r")).unwrap();
        std::fs::write(t.join("kept/r/f"), "x").unwrap();
        std::fs::set_permissions(t.join("kept/r"), std::fs::Permissions::from_mode(0o555)).unwrap();
        let outside = root.join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, t.join("link")).unwrap();
        // a small stack: any recursion over the depth would overflow it; no capabilities
        // (they are per thread): as root the locked modes would not hold it up otherwise
        let t2 = t.clone();
        let remove = move || {
            crate::process::child::drop_own_capabilities().unwrap();
            remove_tree(&t2)
        };
        std::thread::Builder::new().stack_size(128 * 1024).spawn(remove).unwrap().join().unwrap().unwrap();
        assert!(t.symlink_metadata().is_err(), "the tree is gone");
        assert!(outside.join("keep").exists(), "the symlink was not followed");
        remove_tree(&root).unwrap();
        assert!(remove_tree(&root).is_ok(), "a missing tree is removed already");
    }
}
