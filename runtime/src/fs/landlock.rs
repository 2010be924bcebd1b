//! Builds the Landlock ruleset (in the parent: it opens O_PATH fds and allocates) that the
//! child then enters between fork and exec (`landlock_restrict_self` on its descriptor,
//! `process::child`).

use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};

use crate::error::LaunchError;
use crate::fs::landlock_plan::{Plan, PlannedRule};
use crate::fs::policy::Rights;

/// The ABI we ask for; older kernels are caught by [`kernel_abi`] checks before this.
const TARGET: ABI = ABI::V6;

/// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a NULL attr and size 0 this flag only queries the ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

/// Write rights no rule grants: devices; directories, symlinks and FIFOs, which the
/// supervisor makes (and moves) itself so that each one is in the run's journal and none
/// lands inside a git directory. Directories alone are granted below the pool's
/// directories ([`PlannedRule::makes_dirs`]): each is in the journal as moved in when it is
/// handed out, so the check after the run walks its whole tree.
const NEVER_NATIVE: landlock::BitFlags<AccessFs> = landlock::make_bitflags!(AccessFs::{
    MakeChar | MakeBlock | IoctlDev | MakeDir | MakeSym | MakeFifo
});

/// Write rights granted only below directories srt made for the run
/// ([`PlannedRule::makes_files`]): making (and linking or moving in) files and sockets.
/// A file alone can turn a directory into a git directory (git's discovery takes
/// `HEAD` beside an executable `objects` and `refs` of any kind, or a `commondir`), and
/// the check after the run looks only at directories the journal names: so in a
/// directory that existed at launch the supervisor makes every file itself and journals
/// the names git reads. Directories made during the run are in the journal anyway, so
/// below them files are made by the kernel, at its own speed.
const NEW_DIRS_ONLY: landlock::BitFlags<AccessFs> = landlock::make_bitflags!(AccessFs::{ MakeReg | MakeSock });

fn access_for(r: Rights, is_dir: bool, makes_files: bool, makes_dirs: bool) -> landlock::BitFlags<AccessFs> {
    let mut a = landlock::BitFlags::<AccessFs>::empty();
    if r.read {
        a |= AccessFs::ReadFile | AccessFs::Execute | AccessFs::IoctlDev;
    }
    if r.list {
        a |= AccessFs::ReadDir;
    }
    if r.write {
        a |= AccessFs::from_write(TARGET) & !NEVER_NATIVE;
        if !makes_files {
            a &= !NEW_DIRS_ONLY;
        }
        if makes_dirs && makes_files {
            a |= AccessFs::MakeDir;
        }
    }
    if !is_dir {
        a &= AccessFs::from_file(TARGET);
    }
    a
}

/// Adds rules for namespace mode's private mounts, made after the ruleset was planned (new
/// inodes no planned rule covers): `/dev/pts` read and write, `/proc` read, and the run's own
/// `/dev/shm` (`shm`) read and write with files made there by the kernel (it goes with the
/// namespace, so nothing made there outlives the run). Called in the namespace's init,
/// after mounting them.
pub fn with_private_mounts(mut rs: RulesetCreated, shm: bool) -> Result<RulesetCreated, i32> {
    let rw = Rights { read: true, list: true, write: true };
    let ro = Rights { read: true, list: true, write: false };
    let shm = shm.then_some((crate::fs::shm::DIR, rw, true));
    for (path, rights, makes_files) in [("/dev/pts", rw, false), ("/proc", ro, false)].into_iter().chain(shm) {
        let rule = PlannedRule { path: path.into(), rights, is_dir: true, id: None, makes_files, makes_dirs: false };
        let fd = match open_target(&rule) {
            Ok(Some(fd)) => fd,
            _ => return Err(libc::ENOENT),
        };
        let access = access_for(rights, true, makes_files, false);
        rs = rs.add_rule(PathBeneath::new(fd, access)).map_err(|_| libc::EINVAL)?;
    }
    Ok(rs)
}

/// Opens a rule's path without following any symlink on the way (plan paths are canonical,
/// so one there was put in since), and checks it is still the object the plan saw. `None`:
/// it no longer exists, and a rule for nothing grants nothing.
fn open_target(rule: &PlannedRule) -> Result<Option<OwnedFd>, LaunchError> {
    use std::os::unix::ffi::OsStrExt;
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    let changed = || LaunchError::RuleTargetChanged { path: rule.path.clone() };
    let path = std::ffi::CString::new(rule.path.as_os_str().as_bytes()).map_err(|_| changed())?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `how` and `path` are live for the call; the descriptor is owned below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOENT) if rule.id.is_none() => Ok(None),
            Some(libc::ENOENT | libc::ENOTDIR) => Err(changed()),
            Some(libc::ELOOP) => Err(changed()),
            Some(e) => Err(LaunchError::Landlock(format!(
                "opening {}: {}",
                rule.path.display(),
                std::io::Error::from_raw_os_error(e)
            ))),
            None => Err(changed()),
        };
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: an all-zero stat is a valid out-buffer for fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall writing into `st`.
    if unsafe { libc::fstat(std::os::fd::AsRawFd::as_raw_fd(&fd.as_fd()), &mut st) } < 0 {
        return Err(changed());
    }
    let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
    match rule.id {
        Some(id) if id != (st.st_dev, st.st_ino) || is_dir != rule.is_dir => Err(changed()),
        // planned as missing but there now: its rights were planned for whatever comes
        // there, but not for a symlink (O_NOFOLLOW gave us the link itself)
        None if st.st_mode & libc::S_IFMT == libc::S_IFLNK => Ok(None),
        _ => Ok(Some(fd)),
    }
}

/// Whether Landlock confines the command's signals to its own domain (ABI >= 6). Where it
/// cannot, the supervisor judges them (`seccomp::FilterOptions::judge_signals`). Debug
/// builds take `SRT_TEST_WITHOUT_SIGNAL_SCOPE=1` to run as on such a kernel (the escape
/// tests use it; release builds ignore it).
pub fn scopes_signals(abi: i32) -> bool {
    let test_off =
        cfg!(debug_assertions) && std::env::var_os("SRT_TEST_WITHOUT_SIGNAL_SCOPE").is_some_and(|v| v == "1");
    abi >= 6 && !test_off
}

/// `fs`: whether filesystem rules are wanted at all (`filesystem.disabled` turns them off).
/// `tcp`: handle TCP connect/bind with no port allowed (landlock mode; in namespace mode
/// the network namespace is the boundary and sandbox-local servers may listen).
/// `held`: descriptors already open on planned directories, by (dev, ino) (the pool's,
/// opened and checked when the run took them): their rules are added from these rather
/// than by opening the path again.
pub fn build(
    plan: &Plan,
    fs: bool,
    tcp: bool,
    mut held: Vec<((u64, u64), OwnedFd)>,
) -> Result<RulesetCreated, LaunchError> {
    let err = |e: landlock::RulesetError| LaunchError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if fs {
        ruleset = ruleset.handle_access(AccessFs::from_all(TARGET)).map_err(err)?;
    }
    // TCP connect and bind handled with no rule granting any port: the command's own
    // connects never succeed; the supervisor makes the proxy connection for it.
    if tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET)).map_err(err)?;
    }
    let mut scopes = Scope::from_all(TARGET);
    if !scopes_signals(kernel_abi()) {
        // not on this kernel (ABI < 6), or switched off to test the pid judge that stands in
        scopes &= !Scope::Signal;
    }
    let ruleset = ruleset.scope(scopes).map_err(err)?;
    let mut created = ruleset.create().map_err(err)?;
    if fs {
        for rule in &plan.rules {
            let known = rule.id.filter(|_| rule.is_dir).and_then(|id| held.iter().position(|(h, _)| *h == id));
            let opened = match known {
                Some(i) => Some(held.swap_remove(i).1),
                // a rule that grants no write only narrows what the directory above it grants
                // (the plan splits that one): if its target was replaced or removed since the
                // plan (another run's pool directory at the top of the tree, a tool's
                // temporary dot-directory), leaving it out withholds rights, never adds any
                None if !rule.rights.write => match open_target(rule) {
                    Err(LaunchError::RuleTargetChanged { .. }) => None,
                    r => r?,
                },
                None => open_target(rule)?,
            };
            let Some(fd) = opened else {
                tracing::debug!("skipping vanished path {}", rule.path.display());
                continue;
            };
            let access = access_for(rule.rights, rule.is_dir, rule.makes_files, rule.makes_dirs);
            if access.is_empty() {
                continue;
            }
            created = created.add_rule(PathBeneath::new(fd, access)).map_err(err)?;
        }
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_made_natively_only_below_directories_made_for_the_run() {
        let write = Rights { read: false, list: false, write: true };
        let existing = access_for(write, true, false, false);
        assert!(existing.contains(AccessFs::WriteFile | AccessFs::RemoveFile | AccessFs::Truncate));
        assert!(!existing.intersects(AccessFs::MakeReg | AccessFs::MakeSock), "a file there may be a name git reads");
        assert!(access_for(write, true, true, false).contains(AccessFs::MakeReg | AccessFs::MakeSock));
        for made in [false, true] {
            assert!(
                !access_for(write, true, made, false).intersects(NEVER_NATIVE),
                "directories, links and FIFOs never"
            );
        }
        // a directory only below the pool's directories, and links and FIFOs nowhere
        assert!(!access_for(write, true, false, true).contains(AccessFs::MakeDir), "not where files are not made");
        let pool = access_for(write, true, true, true);
        assert!(pool.contains(AccessFs::MakeDir | AccessFs::MakeReg));
        assert!(!pool.intersects(NEVER_NATIVE & !AccessFs::MakeDir));
        assert!(
            !access_for(Rights { read: true, list: true, write: false }, true, true, true).contains(AccessFs::MakeDir)
        );
    }
}
