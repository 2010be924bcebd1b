//! Directories made ahead, so that a directory the command makes where Landlock cannot
//! let it make files (the working directory: it holds protected names; every directory
//! that existed at launch: a file there may be a name git reads) is still written at the
//! kernel's speed.
//!
//! Landlock grants rights to inodes that exist when the rules are made, and a directory
//! made later inherits only what the rules above it grant: every file made below it
//! would go through the supervisor (`tar x`, `npm install` or a first `cargo build` in a
//! fresh checkout make `dist/`, `node_modules/` or `target/` in `.` and then thousands of
//! files below). So srt makes a few empty directories before the command starts, in a
//! directory of its own inside the working directory (`.srt-<pid>-<hex>`, same
//! filesystem, protected from the command), gives each a write rule that also grants
//! making files, and when the command makes a directory where files may not be made
//! natively, the supervisor moves one of them there instead (with the mode the command
//! asked for, set through srt's descriptor before the move). Everything below it is then
//! written natively, under the same rules as any other writable directory, but for
//! directories: the pool's rules alone grant making them, so that `tar x` does not pay a
//! round trip for each, and the hand-out is journaled as a directory moved in, so the
//! check walks the whole tree. No rule grants making links or FIFOs: those still go
//! through the supervisor and its journal.
//!
//! The check after the run removes what is left of the pool; a pool directory the command
//! wrote into is left in place and reported.
//!
//! On a disk filesystem making a directory costs 30-170 µs and removing one 0.3-1.5 ms
//! (freeing its block waits for a synchronous discard on a disk mounted with `discard`), so
//! a pool made and removed per run could only be small, and a `tar x` that makes more
//! top-level directories than the pool holds had most of its files made by the supervisor.
//! Where srt's state directory (which no command may write) is on the working directory's
//! mount, the pool is kept there between runs instead ([`Pool::claim`]): a run takes a
//! shelf of empty directories with one rename, makes only those the last run handed out,
//! and the check puts back the ones it did not hand out ([`finish`]), each checked to be an
//! empty directory of srt's uid, with one rename. So the pool can be large ([`SHELF_SIZE`])
//! at no cost per run.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::fs::landlock_plan::PlannedRule;
use crate::fs::policy::Rights;
use crate::fs::pool_dirs::{fstat_at, names, now_secs, open_dir_at, sys_fstat, Settled, Stamp, CLAIMED, SETTLED_SECS};

/// Directories made ahead per run: each serves one directory the command makes in a split
/// directory (with everything below it). A few cover the usual unpack, install or build
/// (`node_modules/`, `target/`, `dist/`); making and removing one costs 40-100 µs on a disk
/// filesystem and a few on tmpfs, where a pool is therefore bigger.
pub const SIZE: usize = 4;
pub const SIZE_IN_MEMORY: usize = 16;
/// Directories per run from a shelf kept between runs: each costs one `mkdir` at the next
/// launch once handed out, and at every launch a Landlock rule and its checks, five
/// system calls in all: 32 of them took 0.3 ms of every `srt -c true`. 16 cover an
/// archive with a dozen top-level directories unpacked into `.`; beyond them a command's
/// directories are made by the supervisor, and the files below them too.
pub const SHELF_SIZE: usize = 16;
/// The shelves' directory in srt's state directory: `s-<hex>` ready, `r-<pid>-<hex>` taken
/// by a run.
const SHELVES: &str = "pool";

/// The pool size for a directory on the filesystem of `at`.
pub fn size_for(at: &Path) -> usize {
    // SAFETY: an all-zero statfs is a valid out-buffer.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    let Ok(c) = CString::new(at.as_os_str().as_bytes()) else { return SIZE };
    // SAFETY: NUL-terminated path, pointer to a local.
    if unsafe { libc::statfs(c.as_ptr(), &mut sf) } != 0 {
        return SIZE;
    }
    // f_type's type differs between architectures: compare as i64
    #[allow(clippy::unnecessary_cast)]
    let in_memory = [libc::TMPFS_MAGIC as i64, 0x8584_58f6_i64 /* ramfs */].contains(&(sf.f_type as i64));
    if in_memory {
        SIZE_IN_MEMORY
    } else {
        SIZE
    }
}

#[derive(Debug)]
pub struct Pool {
    /// The pool's own directory (protected from the command).
    pub parent: PathBuf,
    dir: OwnedFd,
    dev: u64,
    free: Mutex<Vec<CString>>,
    /// Name and (dev, ino) of every directory made ahead.
    made: Vec<(CString, (u64, u64))>,
    /// Descriptors of the shelf's directories, opened when the run took them: their rules
    /// are added from these ([`Pool::take_held`]), not by opening each path again.
    held: Mutex<Vec<((u64, u64), OwnedFd)>>,
}

fn child_name(i: usize) -> CString {
    // digits only: never a NUL byte
    CString::new(format!("d{i}")).unwrap_or_default()
}

fn nonce() -> String {
    let mut nonce = [0u8; 6];
    // SAFETY: getrandom writes at most the buffer's length into it.
    unsafe { libc::getrandom(nonce.as_mut_ptr().cast(), nonce.len(), 0) };
    nonce.iter().map(|b| format!("{b:02x}")).collect()
}

/// The mount a path is on, as `statx` names it (`STATX_MNT_ID`): a rename works only
/// within one.
fn mount_id(p: &Path) -> Option<u64> {
    let c = CString::new(p.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statx is a valid out-buffer.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: NUL-terminated path, pointer to a local.
    if unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_MNT_ID, &mut sx) } != 0
        || sx.stx_mask & libc::STATX_MNT_ID == 0
    {
        return None;
    }
    Some(sx.stx_mnt_id)
}

/// A directory of srt's uid that only it may write.
pub(crate) fn ours(st: &libc::stat) -> bool {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    st.st_mode & libc::S_IFMT == libc::S_IFDIR && st.st_uid == me && st.st_mode & 0o022 == 0
}

impl Pool {
    /// Makes the pool in `at` (an existing directory of a writable tree).
    pub fn create(at: &Path, size: usize) -> std::io::Result<Pool> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let parent = at.join(format!(".srt-{}-{}", std::process::id(), nonce()));
        std::fs::DirBuilder::new().mode(0o700).create(&parent)?;
        let dir = nix::fcntl::open(
            &parent,
            nix::fcntl::OFlag::O_RDONLY
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_NOFOLLOW
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )?;
        let dev = std::fs::symlink_metadata(&parent)?.dev();
        let mut made = Vec::with_capacity(size);
        for i in 0..size {
            let name = child_name(i);
            // SAFETY: live descriptor, NUL-terminated name.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o700) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let m = std::fs::symlink_metadata(parent.join(std::ffi::OsStr::from_bytes(name.as_bytes())))?;
            made.push((name, (m.dev(), m.ino())));
        }
        Ok(Pool::new(parent, dir, dev, made, Vec::new()))
    }

    fn new(
        parent: PathBuf,
        dir: OwnedFd,
        dev: u64,
        made: Vec<(CString, (u64, u64))>,
        held: Vec<((u64, u64), OwnedFd)>,
    ) -> Pool {
        let free = made.iter().rev().map(|(n, _)| n.clone()).collect();
        Pool { parent, dir, dev, free: Mutex::new(free), made, held: Mutex::new(held) }
    }

    /// The descriptors opened when the shelf was taken, by (dev, ino), once: for the
    /// Landlock rules ([`crate::fs::landlock::build`]).
    pub fn take_held(&self) -> Vec<((u64, u64), OwnedFd)> {
        self.held.lock().map(|mut h| std::mem::take(&mut *h)).unwrap_or_default()
    }

    /// Takes `size` directories from a shelf kept in srt's state directory `state` between
    /// runs, if `state` is on the mount of `at` (else `Ok(None)`: make a pool per run). The
    /// shelf is taken whole by one rename, so that no two runs share a directory; only the
    /// directories missing from it are made.
    pub fn claim(state: &Path, at: &Path, size: usize) -> std::io::Result<Option<Pool>> {
        use std::os::unix::fs::DirBuilderExt;
        match (mount_id(state), mount_id(at)) {
            (Some(a), Some(b)) if a == b => {}
            _ => return Ok(None),
        }
        let store = state.join(SHELVES);
        match std::fs::DirBuilder::new().mode(0o700).create(&store) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let c = CString::new(store.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let sdir = open_dir_at(None, &c)?;
        if !ours(&sys_fstat(sdir.as_fd())?) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("{} is not a directory of srt's uid that only it may write", store.display()),
            ));
        }
        let run = CString::new(format!("r-{}-{}", std::process::id(), nonce())).map_err(std::io::Error::other)?;
        let shelf = names(sdir.as_fd())?
            .into_iter()
            .filter(|n| n.as_bytes().starts_with(b"s-"))
            .find(|n| crate::sys::rename_noreplace(sdir.as_fd(), n, sdir.as_fd(), &run) == 0);
        // SAFETY: live descriptor, NUL-terminated name.
        if shelf.is_none() && unsafe { libc::mkdirat(sdir.as_raw_fd(), run.as_ptr(), 0o700) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let dir = open_dir_at(Some(sdir.as_fd()), &run)?;
        let st = sys_fstat(dir.as_fd())?;
        if !ours(&st) {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
        let dev = st.st_dev;
        let mut made = Vec::with_capacity(size);
        let mut taken = Vec::new();
        let mut stamps = Vec::new();
        let settled_before = now_secs() - SETTLED_SECS;
        let mut held = Vec::new();
        for name in names(dir.as_fd())? {
            let wanted = made.len() < size;
            // those the run may take are opened: their rules are added from the descriptor
            let opened = if wanted { open_dir_at(Some(dir.as_fd()), &name).ok() } else { None };
            let st = match &opened {
                Some(fd) => sys_fstat(fd.as_fd()),
                None => fstat_at(dir.as_fd(), &name),
            };
            // what is not an empty-looking directory of ours stays, and is reported after the run
            let usable = st.as_ref().is_ok_and(|st| ours(st) && st.st_nlink == 2);
            match (st, opened) {
                (Ok(st), Some(fd)) if usable => {
                    let id = (st.st_dev, st.st_ino);
                    made.push((name.clone(), id));
                    held.push((id, fd));
                    if st.st_ctime < settled_before {
                        stamps.push(Settled { name: name.clone(), stamp: Stamp::of(&st), empty: false });
                    }
                }
                // a shelf made by a build with a bigger one: its extra directories (no rule
                // grants the command anything in them) go once, rather than be checked in
                // full after every run; one that is not empty stays
                // SAFETY: live descriptor, NUL-terminated name.
                _ if usable
                    && !wanted
                    && unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) } == 0 =>
                {
                    continue
                }
                _ => {}
            }
            taken.push(name);
        }
        let mut i = 0;
        while made.len() < size {
            let name = child_name(i);
            i += 1;
            if taken.contains(&name) {
                continue;
            }
            // SAFETY: live descriptor, NUL-terminated name.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o700) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let st = fstat_at(dir.as_fd(), &name)?;
            made.push((name, (st.st_dev, st.st_ino)));
        }
        let parent = store.join(std::ffi::OsStr::from_bytes(run.as_bytes()));
        if !stamps.is_empty() {
            if let Ok(mut c) = CLAIMED.lock() {
                c.push((parent.clone(), stamps));
            }
        }
        Ok(Some(Pool::new(parent, dir, dev, made, held)))
    }

    /// Write rules for the directories made ahead.
    /// The pool's rules: writing, making files and directories, and reading back what was
    /// written (a pool directory is handed out only where the policy lets the command read,
    /// `supervisor::names::take_from_pool`; Landlock's refer rule keeps a rename or link from
    /// carrying anything read-denied into one).
    pub fn rules(&self) -> Vec<PlannedRule> {
        let write = Rights { read: true, list: true, write: true };
        self.made
            .iter()
            .map(|(name, id)| PlannedRule {
                path: self.parent.join(std::ffi::OsStr::from_bytes(name.as_bytes())),
                rights: write,
                is_dir: true,
                id: Some(*id),
                makes_files: true,
                makes_dirs: true,
            })
            .collect()
    }

    /// Moves a directory of the pool to `to_dir`/`to_name` (which must not exist), with the
    /// permission bits `mode` (those `mkdir` gives: no setuid or setgid bit), if one is left
    /// and `to_dir` is on the pool's filesystem. `Ok(false)`: none was used (make the
    /// directory the ordinary way). `record` runs once a directory is taken for this
    /// hand-out, before it is moved (the journal): asked then, not before, no other
    /// thread's failed hand-out can make this one look as if none were left.
    pub fn hand_out(
        &self,
        to_dir: BorrowedFd<'_>,
        to_name: &std::ffi::CStr,
        mode: u32,
        record: &dyn Fn() -> Result<(), i32>,
    ) -> Result<bool, i32> {
        // SAFETY: an all-zero stat is a valid out-buffer for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: live descriptor, pointer to a local.
        if unsafe { libc::fstat(to_dir.as_raw_fd(), &mut st) } < 0 || st.st_dev != self.dev {
            return Ok(false);
        }
        let (name, dir, was) = loop {
            let Some(name) = self.free.lock().ok().and_then(|mut f| f.pop()) else { return Ok(false) };
            if let Some((dir, st)) = self.unused(&name) {
                break (name, dir, st.st_mode & 0o7777);
            }
            // not handed out, ever: it stays where it is, and the check reports it
            tracing::debug!(pool = %self.parent.display(), name = ?name, "a pool directory that is not empty is not handed out");
        };
        let put_back = |name: CString| {
            if let Ok(mut f) = self.free.lock() {
                f.push(name);
            }
        };
        if let Err(e) = record() {
            put_back(name);
            return Err(e);
        }
        // The mode goes on through the descriptor just checked, before the move: once the
        // directory has the command's name, another thread of the command can rename a
        // directory of its own onto it (an empty directory is replaced), and a chmod by
        // that name would land there. Here, in srt's own directory, the name is not needed.
        let mode = mode & 0o1777;
        if mode != was && !set_mode(dir.as_fd(), mode) {
            let e = last_errno();
            put_back(name);
            return Err(e);
        }
        let r = crate::sys::rename_noreplace(self.dir.as_fd(), &name, to_dir.as_fd(), to_name);
        if r == 0 {
            return Ok(true);
        }
        let e = last_errno();
        // still the pool's: with its own mode back, or, should that fail, never handed out
        // (the check after the run puts it back or reports it)
        if mode == was || set_mode(dir.as_fd(), was) {
            put_back(name);
        }
        match e {
            libc::EEXIST => Err(libc::EEXIST),
            // another mount of the same filesystem, or anything else: the ordinary way
            _ => Ok(false),
        }
    }

    /// The pool's directory `name`, opened, if it is still what it was made as: an empty
    /// directory of srt's uid that only it may write, with no extended attribute ([`bare`]).
    /// A shelf is kept between runs, so what is on it is judged when it is handed out, not
    /// when it was put there: a shelf planted by a command that could write a state
    /// directory of another run (`XDG_STATE_HOME` or `HOME` set differently then), or a
    /// directory this run's command wrote into through its path in the state directory, is
    /// never a "new, empty" directory in its tree.
    fn unused(&self, name: &std::ffi::CStr) -> Option<(OwnedFd, libc::stat)> {
        let id = self.made.iter().find(|(n, _)| n.as_c_str() == name).map(|(_, id)| *id)?;
        let d = open_dir_at(Some(self.dir.as_fd()), name).ok()?;
        let st = sys_fstat(d.as_fd()).ok()?;
        let fits = ours(&st)
            && (st.st_dev, st.st_ino) == id
            && names(d.as_fd()).is_ok_and(|n| n.is_empty())
            && bare(d.as_fd());
        fits.then_some((d, st))
    }

    /// Whether a directory is left to hand out.
    pub fn any_left(&self) -> bool {
        self.free.lock().is_ok_and(|f| !f.is_empty())
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

/// `fchmod` of a directory srt holds; `false` (errno set) when it failed.
fn set_mode(dir: BorrowedFd<'_>, mode: u32) -> bool {
    // SAFETY: plain syscall on a live descriptor.
    unsafe { libc::fchmod(dir.as_raw_fd(), mode) == 0 }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Extended attributes a directory may carry and still be handed out as a new one: the
/// security module's label, which the kernel gives every inode and no command may set.
const LABELS: &[&[u8]] = &[b"security.selinux", b"security.SMACK64"];

/// Whether an open directory carries no extended attribute but a security label. A default
/// ACL (`system.posix_acl_default`) leaves the mode as it is, and every file and directory
/// later made below takes it: on a directory of a shelf planted by a run with another
/// state directory, it would open the files of whichever run is handed it to other users,
/// whatever that run's umask. Any other attribute too is nothing a new directory has.
pub(crate) fn bare(d: BorrowedFd<'_>) -> bool {
    let mut buf = vec![0u8; 4096];
    // SAFETY: live descriptor; flistxattr writes at most the buffer's length into it.
    let n = unsafe { libc::flistxattr(d.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        // a filesystem without extended attributes has none to carry
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP);
    }
    buf.truncate(n as usize);
    buf.split(|&b| b == 0).filter(|n| !n.is_empty()).all(|n| LABELS.contains(&n))
}

/// What is left of a pool after the run: a shelf's directories go back to the shelves, a
/// pool of the run's own is removed ([`remove`]). A directory the command wrote into stays
/// where it is, and is named in the returned list.
///
/// `all_gone`: every process of the command is known to have ended. A run whose srt and
/// auditor were both killed may have left processes behind (landlock mode), whose
/// Landlock rules still grant writing in every directory of its pool: those directories
/// are removed, never handed to a later run (in another project, perhaps).
pub fn finish(parent: &Path, all_gone: bool) -> Vec<PathBuf> {
    let shelf = parent.parent().filter(|s| s.file_name() == Some(std::ffi::OsStr::new(SHELVES)));
    let run = parent.file_name().is_some_and(|n| n.as_bytes().starts_with(b"r-"));
    match shelf {
        Some(store) if run && all_gone => shelve(store, parent),
        _ => remove(parent),
    }
}

/// Puts a run's shelf back, if every directory left in it is an empty directory of srt's
/// uid only it may write, with no extended attribute ([`bare`]) (each given mode 0700 back); otherwise it stays as it is (a later
/// run never takes an `r-` directory) and what is not such a directory is reported.
fn shelve(store: &Path, parent: &Path) -> Vec<PathBuf> {
    let Ok(c) = CString::new(parent.as_os_str().as_bytes()) else { return vec![parent.to_path_buf()] };
    let Ok(dir) = open_dir_at(None, &c) else { return Vec::new() };
    let Ok(entries) = names(dir.as_fd()) else { return vec![parent.to_path_buf()] };
    let mut kept = Vec::new();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let stamps = CLAIMED.lock().ok().and_then(|mut c| {
        let i = c.iter().position(|(p, _)| p == parent)?;
        Some(c.swap_remove(i).1)
    });
    for name in entries {
        // empty when the run took it, and unchanged since: empty still, with the mode, owner
        // and attributes it had then (a later hand-out judges those: [`Pool::unused`])
        let settled = stamps.as_ref().and_then(|s| s.iter().find(|d| d.name == name && d.empty)).map(|d| d.stamp);
        if settled.is_some_and(|was| fstat_at(dir.as_fd(), &name).is_ok_and(|st| Stamp::of(&st) == was)) {
            continue;
        }
        let empty = open_dir_at(Some(dir.as_fd()), &name).is_ok_and(|d| {
            let Ok(st) = sys_fstat(d.as_fd()) else { return false };
            let fits = st.st_mode & libc::S_IFMT == libc::S_IFDIR
                && st.st_uid == me
                && names(d.as_fd()).is_ok_and(|n| n.is_empty())
                && bare(d.as_fd());
            // its mode the command may have lowered (fchmod of an open directory): given
            // back, and read again; one still 0700 (the usual case) needs neither
            fits && (st.st_mode & 0o7777 == 0o700
                // SAFETY: plain syscall on a descriptor we own.
                || (unsafe { libc::fchmod(d.as_raw_fd(), 0o700) } == 0 && sys_fstat(d.as_fd()).is_ok_and(|st| ours(&st))))
        });
        if !empty {
            kept.push(parent.join(std::ffi::OsStr::from_bytes(name.as_bytes())));
        }
    }
    if kept.is_empty() {
        let to = store.join(format!("s-{}", nonce()));
        if std::fs::rename(parent, &to).is_err() {
            // the shelf is not lost: nothing takes an `r-` directory, so remove it instead
            return remove(parent);
        }
    }
    kept
}

/// Removes what is left of a pool after the run: its empty directories and itself. One the
/// command wrote into stays, and is named in the returned list.
pub fn remove(parent: &Path) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            let p = e.path();
            if std::fs::remove_dir(&p).is_err() && p.symlink_metadata().is_ok() {
                kept.push(p);
            }
        }
    }
    if kept.is_empty() {
        let _ = std::fs::remove_dir(parent);
    }
    kept
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
