//! The run's private TMPDIR: made (or taken from the shelf, [`crate::fs::tmpdir_shelf`])
//! before the command starts, removed ([`crate::fs::tree_removal`]) once every process of
//! the command is gone.

use std::path::{Path, PathBuf};

use crate::error::LaunchError;
use crate::fs::tree_removal::remove_below;
pub use crate::fs::tree_removal::remove_tree;

pub struct TmpDir(pub PathBuf);

impl TmpDir {
    pub fn create() -> Result<TmpDir, LaunchError> {
        let base = base(std::env::var_os("TMPDIR").map(PathBuf::from).filter(|p| p.is_dir()));
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = base.join(format!("srt-{}-{nanos:x}", std::process::id()));
        if !crate::fs::tmpdir_shelf::take(&path) {
            let mut b = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            b.create(&path).map_err(|source| LaunchError::TmpDir { path: path.clone(), source })?;
        }
        let path = path.canonicalize().unwrap_or(path);
        crate::fs::tmpdir_shelf::made(&path);
        Ok(TmpDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Removes the directory and everything in it; `Err` when something is left.
    pub fn remove(&self) -> std::io::Result<()> {
        remove_tree(&self.0)
    }

    /// Removes everything in the directory and puts it, empty, on the shelf for a later
    /// run ([`crate::fs::tmpdir_shelf`]), or removes it too. Only once every process of the
    /// command is gone: one left would still hold Landlock rights on it.
    pub fn remove_or_shelve(&self) -> std::io::Result<()> {
        remove_below(&self.0, false)?;
        if crate::fs::tmpdir_shelf::put_back(&self.0) {
            return Ok(());
        }
        remove_tree(&self.0)
    }
}

/// Where the run's TMPDIR is made: in `$TMPDIR`, else `/tmp`; never in `/dev/shm`, which is
/// the run's own ([`crate::fs::shm`]): the host's is closed to the command in landlock
/// mode and hidden by a fresh tmpfs in namespace mode.
fn base(tmpdir: Option<PathBuf>) -> PathBuf {
    let shm = Path::new(crate::fs::shm::DIR);
    tmpdir
        .filter(|p| !crate::paths::under(&p.canonicalize().unwrap_or_else(|_| p.clone()), shm))
        .unwrap_or_else(|| "/tmp".into())
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            crate::warn!("could not remove {}: {e}", self.0.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_tmpdir_is_never_made_in_dev_shm() {
        assert_eq!(base(None), PathBuf::from("/tmp"));
        assert_eq!(base(Some("/var/tmp".into())), PathBuf::from("/var/tmp"));
        assert_eq!(base(Some("/dev/shm".into())), PathBuf::from("/tmp"));
        assert_eq!(base(Some("/dev/shm/x/../y".into())), PathBuf::from("/tmp"));
    }
}
