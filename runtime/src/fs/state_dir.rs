//! Where srt keeps its own files outside the run's trees: the checks that a state
//! directory is this uid's alone, and the one place no environment variable moves.

use std::path::{Path, PathBuf};

/// `/tmp/srt-state-<uid>`: the state directory candidate that no environment variable
/// moves (the others follow `XDG_STATE_HOME`, `HOME` and `TMPDIR`), so every run protects
/// it from its command, whatever its own environment. The create preload is kept there
/// for that reason ([`crate::fs::preload::dir`]).
pub fn fixed() -> PathBuf {
    // SAFETY: getuid cannot fail.
    Path::new("/tmp").join(format!("srt-state-{}", unsafe { libc::getuid() }))
}

/// Makes `dir` (mode 0700) if it is missing, then checks it is [`owned_private`].
pub fn make_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    owned_private(dir)
}

/// A directory of this uid that only it may write, not a symlink: in a shared `/tmp`
/// another user could have made it first (or a symlink by that name) to read, plant or
/// remove what srt keeps there.
pub fn owned_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = dir.symlink_metadata()?;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if !m.is_dir() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of uid {me} that only it may write", dir.display()),
        ));
    }
    Ok(())
}
