//! srt's `LD_PRELOAD` for the command (`runtime/preload/native_create.rs`): lets the kernel
//! make files below the run's own directories without a supervisor round trip. Embedded
//! in srt and kept in its state directory (which the command cannot write), one file per
//! build, written once.

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

/// Where this build's library lives in `state_dir`.
pub fn path_in(state_dir: &Path) -> PathBuf {
    state_dir.join(format!("native-create-{HASH:016x}.so"))
}

/// Where a run's library goes, and whether that place is shared by runs (`true`: the
/// state directory's one per build), or why the run gets none: what a run does and
/// `srt explain` says. `run_copy`: the run's own copy, beside its journal, in a state
/// directory shared through `/tmp` (no usable home), where the copy goes with the journal:
/// no run ever removes a library another run uses.
pub fn place(
    state_dir: Option<&Path>,
    run_copy: Option<PathBuf>,
    policy: &crate::fs::policy::FsPolicy,
    mediated: bool,
) -> Result<(PathBuf, bool), &'static str> {
    if !mediated {
        return Err("files are not mediated");
    }
    if !available() {
        return Err("this build of srt has none");
    }
    let dir = state_dir.ok_or("no state directory to keep it in")?;
    let (path, shared) = match run_copy {
        Some(p) => (p, false),
        None => (path_in(dir), true),
    };
    if !policy.can_read(&path) {
        return Err("denyRead covers where it is kept");
    }
    if ld_preload(&path, None).is_none() {
        return Err("its path cannot be named in LD_PRELOAD");
    }
    Ok((path, shared))
}

/// The library at `path` ([`place`]), written there first if it is missing. `None` (the
/// command runs without it, every file made the supervised way) when it cannot be
/// written; said under `-d`. `shared`: other builds' libraries beside it are swept once a
/// day old.
pub fn install_at(path: &Path, shared: bool) -> Option<PathBuf> {
    let path = path.to_path_buf();
    if is_ours(&path) {
        return Some(path);
    }
    match write(&path, shared) {
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
/// byte for byte. Name, owner, mode and size are not enough: a command whose policy lets it
/// write where a later run (another HOME, XDG_STATE_HOME or TMPDIR) keeps its state can
/// make such a file there, and that run would name it in its command's LD_PRELOAD. A few
/// KiB, read once per run.
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

/// Written under a name of this process's and renamed into place: a run reading it at the
/// same time sees the whole library or none. A run's own copy (not `shared`) is written
/// in place: no one reads it before srt names it, and a copy cut short by a killed srt
/// has the name its journal's finish removes (a temporary name would stay for good).
fn write(path: &Path, shared: bool) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = if shared { path.with_extension(format!("{}.tmp", std::process::id())) } else { path.to_path_buf() };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    // only what this call made is removed on failure
    let result = file.write_all(LIBRARY).and_then(|()| if shared { std::fs::rename(&tmp, path) } else { Ok(()) });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // a new build: other builds' libraries go once a day has passed since they were written
    // (a run of one that is still going would find its library gone)
    if let Some(dir) = path.parent().filter(|_| shared) {
        remove_all(dir, std::time::Duration::from_secs(24 * 3600));
    }
    result
}

/// Removes other builds' libraries in `state_dir` unchanged for `older_than`.
fn remove_all(state_dir: &Path, older_than: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(state_dir) else { return };
    let ours = path_in(state_dir);
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.as_bytes();
        if !name.starts_with(b"native-create-") || e.path() == ours {
            continue;
        }
        let old = e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|a| a >= older_than));
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

/// What `srt explain` says about the preload ([`place`]); `per_run`: the state directory
/// is shared through `/tmp`, where each run has its own copy.
pub fn explain(
    w: &mut String,
    state_dir: Option<&Path>,
    per_run: bool,
    policy: &crate::fs::policy::FsPolicy,
    mediated: bool,
) {
    use std::fmt::Write;
    let copy = state_dir.filter(|_| per_run).map(|d| d.join("runs").join("run-<pid>-<hex>.so"));
    let _ = match place(state_dir, copy, policy, mediated) {
        Ok((p, shared)) => writeln!(
            w,
            "create preload: LD_PRELOAD={}{} for the command's dynamically linked programs (--no-preload:\n  \
             none): their open(O_CREAT) asks the kernel first, with a flag bit the filter lets through untrapped:\n  \
             files below directories made during the run are made at the kernel's speed; elsewhere Landlock\n  \
             refuses (EACCES) and it asks again the supervised way. Static programs and fopen() are always\n  \
             supervised.",
            p.display(),
            if shared { "" } else { " (each run's own copy, removed with its journal)" }
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
        let state = Path::new("/home/u/.local/state/srt");
        assert_eq!(place(Some(state), None, &open, true), Ok((path_in(state), true)));
        let copy = state.join("runs/run-1-00.so");
        assert_eq!(place(Some(state), Some(copy.clone()), &open, true), Ok((copy, false)));
        assert_eq!(place(Some(state), None, &open, false), Err("files are not mediated"));
        assert_eq!(place(None, None, &open, true), Err("no state directory to keep it in"));
        let denied = FsPolicy { deny_read: vec![PathBuf::from("/home/u/.local")], ..FsPolicy::default() };
        assert_eq!(place(Some(state), None, &denied, true), Err("denyRead covers where it is kept"));
        let spaced = Path::new("/home/a b/.local/state/srt");
        assert_eq!(place(Some(spaced), None, &open, true), Err("its path cannot be named in LD_PRELOAD"));
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
    fn a_runs_own_copy_is_written_under_its_own_name_only() {
        let dir = std::env::temp_dir().join(format!("srt-preload-copy-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run-1-00.so");
        assert_eq!(install_at(&p, false), Some(p.clone()));
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("run-1-00.so")], "no other name, not even for a moment");
        // something else already there by that name: no preload, and it is left alone
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"other").unwrap();
        assert_eq!(install_at(&p, false), None);
        assert_eq!(std::fs::read(&p).unwrap(), b"other");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_library_is_written_once_and_found_again() {
        let dir = std::env::temp_dir().join(format!("srt-preload-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = install_at(&path_in(&dir), true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        let ino = std::fs::metadata(&p).unwrap().ino();
        assert_eq!(install_at(&path_in(&dir), true).unwrap(), p);
        assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino, "an intact library is not written again");
        // one cut short is replaced
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, &LIBRARY[..10]).unwrap();
        assert_eq!(install_at(&path_in(&dir), true).unwrap(), p);
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        // one of the right name, owner, mode and size but other bytes (planted) too
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, vec![0u8; LIBRARY.len()]).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert_eq!(install_at(&path_in(&dir), true).unwrap(), p);
        assert_eq!(std::fs::read(&p).unwrap(), LIBRARY);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
