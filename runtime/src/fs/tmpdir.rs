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
        let base =
            std::env::var_os("TMPDIR").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(|| "/tmp".into());
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

impl Drop for TmpDir {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            crate::warn!("could not remove {}: {e}", self.0.display());
        }
    }
}
