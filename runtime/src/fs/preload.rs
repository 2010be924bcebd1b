//! srt's `LD_PRELOAD` for the command (`runtime/preload/native_create.rs`): lets the kernel
//! make files below the run's own directories without a supervisor round trip. Embedded
//! in srt and kept, one file per build written once, in `/tmp/srt-state-<uid>`: the one
//! state directory that every run protects whatever its environment, so no command of
//! any run can change the library another run's programs load.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The shared library, empty where the build could not make it (see `runtime/build.rs`).
const LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/native_create.so"));

/// FNV-1a of the library: the file's name, so that two builds of srt never share one.
const HASH: u64 = {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < LIBRARY.len() {
        h ^= LIBRARY[i] as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    h
};

/// Where this build's library lives in `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(format!("native-create-{HASH:016x}.so"))
}

/// Where every run keeps the library: `/tmp/srt-state-<uid>`, never a place named by the
/// run's environment. Each run protects only the state directories its own environment
/// names (`HOME`, `XDG_STATE_HOME`, `TMPDIR`) and this one, so a library kept in one of
/// the former could be replaced by the command of a concurrent run with another
/// environment whose `allowWrite` covers it, and the first run's later programs would load
/// that: code of one sandbox run in another.
pub fn dir() -> PathBuf {
    crate::fs::state_dir::fixed()
}

/// Where a run's library is, or why the run gets none: what a run does and `srt explain`
/// says.
pub fn place(
    dir: &Path,
    policy: &crate::fs::policy::FsPolicy,
    mediated: bool,
    native: bool,
) -> Result<PathBuf, &'static str> {
    if !mediated {
        return Err("files are not mediated");
    }
    if !native {
        return Err("without Landlock's filesystem rules nothing may be made by the kernel alone");
    }
    if !available() {
        return Err("this build of srt has none");
    }
    let path = path_in(dir);
    // the policy's paths are canonical: where /tmp is a symlink, a denyRead names its target
    if !policy.can_read(&path) || !policy.can_read(&crate::fs::resolve::canonical(&path)) {
        return Err("denyRead covers where it is kept");
    }
    if ld_preload(&path, None).is_none() {
        return Err("its path cannot be named in LD_PRELOAD");
    }
    if noexec(dir) {
        return Err("where it is kept is mounted noexec");
    }
    Ok(path)
}

/// Whether `dir` (or, while it does not exist yet, the nearest directory above it) is on
/// a mount the loader cannot map code from: a hardened `/tmp` often is (`noexec`), and
/// there every program of the run would print an ld.so error and run without the library.
fn noexec(dir: &Path) -> bool {
    for at in dir.ancestors() {
        let Ok(c) = std::ffi::CString::new(at.as_os_str().as_bytes()) else { return false };
        // SAFETY: an all-zero statvfs is a valid out-buffer.
        let mut sv: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: NUL-terminated path, pointer to a local.
        if unsafe { libc::statvfs(c.as_ptr(), &mut sv) } == 0 {
            return sv.f_flag & libc::ST_NOEXEC != 0;
        }
    }
    false
}

/// The library at `path` ([`place`]), written there first if it is missing, its directory
/// made if need be (private to this uid). `None` (the command runs without it, every file
/// made the supervised way) when it cannot be written, or the directory is not this uid's
/// alone (another user made it first in `/tmp`); said under `-d`.
pub fn install_at(path: &Path) -> Option<PathBuf> {
    let path = path.to_path_buf();
    let dir = path.parent()?;
    if let Err(e) = crate::fs::state_dir::make_private(dir) {
        tracing::debug!("no create preload: {e}; files are made the supervised way");
        return None;
    }
    if is_ours(&path) {
        mark_used(&path);
        return Some(path);
    }
    match write(&path) {
        Ok(()) => Some(path),
        Err(e) => {
            tracing::debug!(
                "the create preload could not be written to {}: {e}; files are made the supervised way",
                path.display()
            );
            None
        }
    }
}

/// A regular file of this uid that only its owner may write, holding this build's library
/// byte for byte. Name, owner, mode and size are not enough: builds before this one kept
/// the library where the environment said (a command could make such a file there), and
/// what srt names in LD_PRELOAD runs in every program of the run. A few KiB, read once per
/// run.
fn is_ours(path: &Path) -> bool {
    use std::io::Read;
    // O_NONBLOCK: a FIFO planted by that name must not hold srt up
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let shaped = file.metadata().is_ok_and(|m| {
        m.file_type().is_file() && m.uid() == uid && m.len() == LIBRARY.len() as u64 && m.mode() & 0o022 == 0
    });
    let mut bytes = Vec::with_capacity(LIBRARY.len() + 1);
    shaped && file.take(LIBRARY.len() as u64 + 1).read_to_end(&mut bytes).is_ok() && bytes == LIBRARY
}

/// Another build's write removes a library a day after its time ([`sweep`]): kept the time
/// of a run that used it, at most an hour behind, so that a build in use every day keeps
/// its library while another build is tried (not the time it was first written, which
/// for a build in use for a week had its library removed under its running programs).
fn mark_used(path: &Path) {
    const HOUR: std::time::Duration = std::time::Duration::from_secs(3600);
    let Ok(file) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
    else {
        return;
    };
    let stale = file.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|a| a >= HOUR));
    if stale {
        // the owner may set the times of a file it may not write
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// Written under a name of this process's and renamed into place: a run reading it at the
/// same time sees the whole library or none, and a srt killed while writing leaves only a
/// temporary name, which a later writer sweeps.
fn write(path: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    // only what this call made is removed on failure
    let result = file.write_all(LIBRARY).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    if let Some(dir) = path.parent() {
        sweep(dir, path);
    }
    result
}

/// What earlier writes left in `dir`: other builds' libraries once a day has passed since
/// a run last used them ([`mark_used`]; a run of one that is still going would find its
/// library gone), and
/// temporary files of a srt killed while writing once a minute has.
fn sweep(dir: &Path, ours: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.as_bytes();
        if !name.starts_with(b"native-create-") || e.path() == ours {
            continue;
        }
        let limit = if name.ends_with(b".tmp") { 60 } else { 24 * 3600 };
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|a| a >= std::time::Duration::from_secs(limit)));
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The command's `LD_PRELOAD`: an inherited one first (its libraries see every call before
/// srt's does, as they would without srt), then srt's. `None` when srt's path cannot be
/// named in the list (the loader splits it at spaces and colons, and expands `$`).
pub fn ld_preload(ours: &Path, inherited: Option<&[u8]>) -> Option<Vec<u8>> {
    let bytes = ours.as_os_str().as_bytes();
    if !ours.is_absolute() || bytes.iter().any(|b| b" \t\n:$".contains(b)) {
        return None;
    }
    let mut out = Vec::new();
    if let Some(theirs) = inherited.filter(|t| t.iter().any(|b| !b" \t\n:".contains(b))) {
        out.extend_from_slice(theirs);
        out.push(b':');
    }
    out.extend_from_slice(bytes);
    Some(out)
}

/// What `srt explain` says about the preload ([`place`]).
pub fn explain(w: &mut String, policy: &crate::fs::policy::FsPolicy, mediated: bool, native: bool) {
    use std::fmt::Write;
    let _ = match place(&dir(), policy, mediated, native) {
        Ok(p) => writeln!(
            w,
            "create preload: LD_PRELOAD={} for the command's dynamically linked programs (--no-preload:\n  \
             none): their open(O_CREAT) asks the kernel first, with a flag bit the filter lets through untrapped:\n  \
             files below directories made during the run are made at the kernel's speed; elsewhere Landlock\n  \
             refuses (EACCES) and it asks again the supervised way. mkdir() the same below the pool's\n  \
             directories (names starting with a dot always supervised); chown, lchown, fchownat and\n  \
             utimensat on a directory the program made go through a descriptor (no round trip). Static\n  \
             programs and fopen() are always supervised. Kept there, one file per build, where no run's\n  \
             command can write.",
            p.display(),
        ),
        Err(why) => writeln!(w, "create preload: none ({why}): every open(O_CREAT) goes to the supervisor"),
    };
}

/// Whether this build carries the library.
pub fn available() -> bool {
    !LIBRARY.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_preload_comes_after_an_inherited_one() {
        let ours = Path::new("/home/u/.local/state/srt/native-create-1.so");
        assert_eq!(ld_preload(ours, None).as_deref(), Some(ours.as_os_str().as_bytes()));
        assert_eq!(ld_preload(ours, Some(b"")).as_deref(), Some(ours.as_os_str().as_bytes()));
        assert_eq!(
            ld_preload(ours, Some(b"/usr/lib/libfoo.so")),
            Some(b"/usr/lib/libfoo.so:/home/u/.local/state/srt/native-create-1.so".to_vec())
        );
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn a_run_gets_the_library_only_where_it_can_be_named_and_read() {
        use crate::fs::policy::FsPolicy;
        let open = FsPolicy::default();
        let at = Path::new("/tmp/srt-state-1000");
        assert_eq!(place(at, &open, true, true), Ok(path_in(at)));
        assert!(place(at, &open, true, false).is_err(), "no Landlock filesystem rules: no preload");
        assert_eq!(place(at, &open, false, true), Err("files are not mediated"));
        let denied = FsPolicy { deny_read: vec![PathBuf::from("/tmp")], ..FsPolicy::default() };
        assert_eq!(place(at, &denied, true, true), Err("denyRead covers where it is kept"));
        assert_eq!(place(Path::new("/tmp/a b"), &open, true, true), Err("its path cannot be named in LD_PRELOAD"));
        // reached through a symlink (a /tmp that is one): denyRead names the real place
        let base = std::env::temp_dir().join(format!("srt-preload-link-test-{}", std::process::id()));
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let real = FsPolicy { deny_read: vec![base.join("real").canonicalize().unwrap()], ..FsPolicy::default() };
        assert_eq!(place(&base.join("link/srt-state-1"), &real, true, true), Err("denyRead covers where it is kept"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Whatever the environment says: `HOME`, `XDG_STATE_HOME` and `TMPDIR` move the other
    /// state directories, and a concurrent run whose environment differs protects none of
    /// them.
    #[test]
    fn the_library_is_kept_where_no_environment_moves_it() {
        let uid = unsafe { libc::getuid() };
        assert_eq!(dir(), PathBuf::from(format!("/tmp/srt-state-{uid}")));
        assert!(crate::check::journal::state_dir_candidates().contains(&dir()), "every run protects it");
    }

    #[test]
    fn a_path_the_loader_would_split_or_expand_is_not_used() {
        for p in ["/home/a b/x.so", "/home/a:b/x.so", "/home/$LIB/x.so", "relative/x.so", "/home/a\tb/x.so"] {
            assert_eq!(ld_preload(Path::new(p), None), None, "{p}");
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn this_build_carries_the_library_with_the_filters_bit() {
        assert!(available(), "runtime/build.rs could not build preload/native_create.rs");
        let source = include_str!("../../preload/native_create.rs");
        assert_eq!(crate::seccomp::NATIVE_CREATE, 1 << 30);
        assert!(source.contains("const NATIVE: c_int = 1 << 30;"), "the preload's bit is not the filter's");
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_library_is_written_once_and_found_again() {
        let dir = std::env::temp_dir().join(format!("srt-preload-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = install_at(&path_in(&dir)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        let ino = std::fs::metadata(&p).unwrap().ino();
        assert_eq!(install_at(&path_in(&dir)).unwrap(), p);
        assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino, "an intact library is not written again");
        // one in use keeps a recent time, so that another build's write does not sweep it
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 24 * 3600);
        std::fs::File::open(&p).unwrap().set_modified(then).unwrap();
        assert_eq!(install_at(&path_in(&dir)).unwrap(), p);
        let age = std::fs::metadata(&p).unwrap().modified().unwrap().elapsed().unwrap();
        assert!(age < std::time::Duration::from_secs(3600), "used today, kept as {age:?} old");
        // one cut short is replaced
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, &LIBRARY[..10]).unwrap();
        assert_eq!(install_at(&path_in(&dir)).unwrap(), p);
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        // one of the right name, owner, mode and size but other bytes (planted) too
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, vec![0u8; LIBRARY.len()]).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert_eq!(install_at(&path_in(&dir)).unwrap(), p);
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Its directory is made private if missing, and one others may write (another user
    /// made it first in `/tmp`) gets nothing written and the run no preload.
    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_library_goes_only_into_a_directory_of_this_uid_alone() {
        let base = std::env::temp_dir().join(format!("srt-preload-dir-test-{}", std::process::id()));
        let made = base.join("made");
        std::fs::create_dir_all(&base).unwrap();
        assert_eq!(install_at(&path_in(&made)), Some(path_in(&made)));
        assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o777, 0o700);
        let shared = base.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(install_at(&path_in(&shared)), None);
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0, "nothing written there");
        // a killed writer's temporary file goes once it is a minute old, a fresh one stays
        let old = made.join("native-create-0.1.tmp");
        let fresh = made.join("native-create-0.2.tmp");
        std::fs::write(&old, b"x").unwrap();
        std::fs::write(&fresh, b"x").unwrap();
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(then).unwrap();
        std::fs::remove_file(path_in(&made)).unwrap();
        assert_eq!(install_at(&path_in(&made)), Some(path_in(&made)));
        assert!(!old.exists() && fresh.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
