//! Namespace mode's mount view: every mount read-only except the `allowWrite` trees, each
//! protected path that exists re-mounted read-only on top, and a private devpts. The kernel
//! then refuses writes *and metadata changes* (chmod, chown, utimes, xattrs, inode flags)
//! outside what the policy allows, by itself and at native speed, so in this mode the
//! supervisor need not see metadata calls at all. Landlock stays on top as the same policy
//! expressed a second way.
//!
//! Built by the namespace's init (which holds the user namespace's capabilities; the
//! command never does) between clone and fork, with the new mount API: writable trees are
//! cloned first, from the still-writable tree, then everything is made read-only in one
//! recursive `mount_setattr`, then the clones are attached back in place.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::fs::policy::{under, FsPolicy};

/// Paths prepared in the parent; the init only makes syscalls with them.
#[derive(Debug, Default, Clone)]
pub struct MountView {
    /// Writable trees (outermost only: a clone carries the mounts below it).
    pub rw: Vec<CString>,
    /// Existing protected paths inside writable trees, mounted read-only on top.
    pub ro: Vec<CString>,
    /// Existing writable paths inside those (the home allow-list's `~/.local/state/nvim/shada`
    /// inside a protected `~/.local`), mounted writable again on top, so that this mode
    /// grants what Landlock mode grants from the same policy; the protected paths below one
    /// are mounted read-only once more after it.
    pub rw_inside: Vec<CString>,
    /// `/` itself is writable: nothing is made read-only.
    pub all_writable: bool,
    /// The command's Landlock ruleset handles filesystem access, so the private devpts and
    /// /proc need rules of their own.
    pub private_rules: bool,
    /// The working directory, entered again once the view is built: the process's old
    /// reference still points into the mount underneath, now read-only.
    pub cwd: Option<CString>,
    /// Transparent mode: (srt's resolv.conf, the host's resolv.conf file) mounted read-only
    /// over it, so resolvers ask srt's DNS on the namespace's loopback.
    pub resolv_conf: Option<(CString, CString)>,
    /// A fresh tmpfs on `/dev/shm`: the run's own POSIX shared memory ([`crate::fs::shm`]).
    pub shm: bool,
}

/// Whether the host has a `/dev/shm` to put the run's own in place of.
pub fn has_shm() -> bool {
    Path::new(crate::fs::shm::DIR).symlink_metadata().is_ok_and(|m| m.is_dir())
}

/// Which mounts the policy needs. Devices are special files, writable on a read-only mount,
/// so they need none (only directories and regular files are kept); `/dev/pts` gets its
/// own instance.
pub fn plan(policy: &FsPolicy, protected: &[PathBuf]) -> MountView {
    let mut roots: Vec<&PathBuf> = policy
        .write
        .iter()
        .filter(|p| !under(p, Path::new("/dev/pts")))
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir() || m.is_file()))
        .collect();
    roots.sort_by_key(|p| p.as_os_str().len());
    let mut outer: Vec<&PathBuf> = Vec::new();
    for r in roots {
        if !outer.iter().any(|o| under(r, o)) {
            outer.push(r);
        }
    }
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    // symlinks are left out: a mount would land on their target; the names themselves are
    // guarded by the supervisor (every unlink and rename goes to it)
    let ro: Vec<&PathBuf> = protected
        .iter()
        .filter(|p| outer.iter().any(|o| under(p, o) && *p != *o))
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir() || m.is_file()))
        .collect();
    let rw_inside = writable_inside(policy, &ro);
    let ro = ro.into_iter().filter_map(|p| c(p)).collect();
    MountView {
        rw_inside: rw_inside.iter().filter_map(|p| c(p)).collect(),
        cwd: std::env::current_dir().ok().and_then(|d| c(&d)),
        private_rules: true,
        all_writable: outer.iter().any(|o| o.as_os_str() == "/"),
        rw: outer.iter().filter_map(|p| c(p)).collect(),
        ro,
        resolv_conf: None,
        shm: has_shm(),
    }
}

/// The outermost existing paths the policy lets the command write that lie below one of the
/// read-only paths `ro`: each place where rights change is a boundary of the policy, so
/// these are among [`FsPolicy::boundaries`].
fn writable_inside(policy: &FsPolicy, ro: &[&PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = policy
        .boundaries()
        .into_iter()
        .filter(|b| ro.iter().any(|r| under(b, r) && b != *r))
        .filter(|b| policy.can_write(b))
        .filter(|b| b.symlink_metadata().is_ok_and(|m| m.is_dir() || m.is_file()))
        .collect();
    found.sort_by_key(|p| p.as_os_str().len());
    let mut out: Vec<PathBuf> = Vec::new();
    for f in found {
        if !out.iter().any(|o| under(&f, o)) {
            out.push(f);
        }
    }
    out
}

/// `allowWrite` roots that do not exist: no mount can make them writable in the command's
/// view (namespace mode), so the command cannot make them either. The run's TMPDIR and
/// devices are never among them.
pub fn missing_roots(policy: &FsPolicy) -> Vec<PathBuf> {
    policy
        .write
        .iter()
        .filter(|p| p.symlink_metadata().is_err() && !policy.write.iter().any(|o| o != *p && under(p, o)))
        .cloned()
        .collect()
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x04;
const MOUNT_ATTR_RDONLY: u64 = 0x01;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

fn clone_tree(path: &CString, recursive: bool) -> Result<i32, i32> {
    let flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: plain syscall with a NUL-terminated path.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd as i32)
    }
}

fn set_readonly(dirfd: i32, path: &CString, flags: libc::c_uint) -> Result<(), i32> {
    let attr = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: plain syscall with a live attr struct and a NUL-terminated path.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

fn read_only_on_top(p: &CString) -> Result<(), i32> {
    // gone since the plan (another run's pool directory at the top of the tree, a tool's
    // temporary dot-directory): nothing is there to cover, and a name made there later
    // is judged as it is made
    let fd = match clone_tree(p, true) {
        Err(libc::ENOENT) => return Ok(()),
        r => r?,
    };
    set_readonly(fd, &CString::from(c""), AT_RECURSIVE | libc::AT_EMPTY_PATH as libc::c_uint)?;
    // gone between the clone and the attach: as above (attach closes the clone either way)
    gone_is_fine(attach(fd, p))
}

/// `Ok` for a path that no longer exists: there is nothing left to mount over.
fn gone_is_fine(r: Result<(), i32>) -> Result<(), i32> {
    match r {
        Err(libc::ENOENT) => Ok(()),
        r => r,
    }
}

fn c_os(c: &CString) -> &std::ffi::OsStr {
    std::ffi::OsStr::from_bytes(c.as_bytes())
}

fn attach(fd: i32, path: &CString) -> Result<(), i32> {
    // SAFETY: plain syscall; `fd` is a detached mount we own, `path` is NUL-terminated.
    let r = unsafe {
        libc::syscall(libc::SYS_move_mount, fd, c"".as_ptr(), libc::AT_FDCWD, path.as_ptr(), MOVE_MOUNT_F_EMPTY_PATH)
    };
    // SAFETY: closing the detached mount's descriptor; once attached it lives on.
    unsafe { libc::close(fd) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Builds the view in the calling process's (new, private) mount namespace.
pub fn apply(v: &MountView) -> Result<(), i32> {
    // the writable clones are taken while the tree is still writable: made read-only, a
    // clone of it would be too
    let mut inside = Vec::with_capacity(v.rw_inside.len());
    for p in &v.rw_inside {
        // an allowed entry gone since the plan is simply not opened again
        match clone_tree(p, true) {
            Err(libc::ENOENT) => {}
            r => inside.push((r?, p)),
        }
    }
    if !v.all_writable {
        let mut clones = Vec::with_capacity(v.rw.len());
        for p in &v.rw {
            clones.push((clone_tree(p, true)?, p));
        }
        set_readonly(libc::AT_FDCWD, &CString::from(c"/"), AT_RECURSIVE)?;
        for (fd, p) in clones {
            attach(fd, p)?;
        }
    }
    for p in &v.ro {
        read_only_on_top(p)?;
    }
    for (fd, p) in inside {
        gone_is_fine(attach(fd, p))?;
    }
    // a protected path below a writable one made writable again (`nvim/shada` is, a
    // protected entry inside it would not be)
    let below = |p: &&CString| v.rw_inside.iter().any(|w| under(Path::new(c_os(p)), Path::new(c_os(w))));
    for p in v.ro.iter().filter(below) {
        read_only_on_top(p)?;
    }
    if let Some((ours, theirs)) = &v.resolv_conf {
        let fd = clone_tree(ours, false)?;
        set_readonly(fd, &CString::from(c""), libc::AT_EMPTY_PATH as libc::c_uint)?;
        attach(fd, theirs)?;
    }
    if let Some(cwd) = &v.cwd {
        // SAFETY: plain syscall with a NUL-terminated path.
        if unsafe { libc::chdir(cwd.as_ptr()) } < 0 {
            return Err(errno());
        }
    }
    // other sessions' terminals are out of sight: /dev/ptmx finds this instance through
    // its sibling `pts` directory
    let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
    // SAFETY: plain syscall with NUL-terminated strings.
    let r = unsafe {
        libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            flags,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        )
    };
    if r < 0 {
        return Err(errno());
    }
    if v.shm {
        // as bubblewrap's fresh /dev gives: writable by all, sticky, no devices or setuid
        // SAFETY: plain syscall with NUL-terminated strings.
        let r = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                c"/dev/shm".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"mode=1777".as_ptr().cast(),
            )
        };
        if r < 0 {
            return Err(errno());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outermost_writable_trees_and_protected_paths_inside_them() {
        let root = std::env::temp_dir().join(format!("srt-mounts-{}", std::process::id()));
        std::fs::create_dir_all(root.join("w/sub")).unwrap();
        std::fs::write(root.join("w/.bashrc"), "").unwrap();
        let root = root.canonicalize().unwrap();
        let policy = FsPolicy {
            write: vec![root.join("w"), root.join("w/sub"), root.join("missing"), "/dev/null".into()],
            ..FsPolicy::default()
        };
        let v = plan(&policy, &[root.join("w/.bashrc"), "/etc/passwd".into()]);
        let s = |p: PathBuf| CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(v.rw, vec![s(root.join("w"))]);
        assert_eq!(
            v.ro,
            vec![s(root.join("w/.bashrc"))],
            "protected paths outside writable trees are read-only already"
        );
        assert!(!v.all_writable);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
