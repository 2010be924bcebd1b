//! Live policy changes: srt's `--control-fd` (one complete settings JSON per line) and a
//! watch on the settings file that follows Kubernetes' symlink swap of mounted
//! ConfigMaps (it polls the *target's* identity, so a swapped `..data` link is seen).
//! An invalid policy is logged and the old one stays. New connections see the change.

use std::io::BufRead;
use std::os::fd::FromRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::policy::Policy;
use crate::shared::Shared;

/// Validates and installs a policy from settings text; the result is logged.
pub fn apply(shared: &Shared, text: &str, source: &str) -> Result<(), String> {
    let result = settings_schema::parse_str(text, Path::new(source))
        .map_err(|e| e.to_string())
        .and_then(|s| Policy::from_settings(&s));
    let mut f = Map::new();
    f.insert("source".into(), source.into());
    match result {
        Ok(p) => {
            f.insert("result".into(), "ok".into());
            f.insert("allow_rules".into(), p.allow.len().into());
            f.insert("deny_rules".into(), p.deny.len().into());
            shared.policy.store(Arc::new(p));
            shared.metrics.reloads_ok.fetch_add(1, Ordering::Relaxed);
            shared.log.event("config_reload", f);
            Ok(())
        }
        Err(e) => {
            f.insert("result".into(), "error".into());
            f.insert("error".into(), Value::from(e.clone()));
            f.insert("note".into(), "previous policy still in force".into());
            shared.metrics.reloads_error.fetch_add(1, Ordering::Relaxed);
            shared.log.event("config_reload", f);
            Err(e)
        }
    }
}

/// Reads policy lines from an inherited descriptor until EOF, on its own thread.
pub fn watch_control_fd(fd: i32, shared: Arc<Shared>) -> std::io::Result<()> {
    // SAFETY: the caller hands over an open descriptor it will not use again.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    // a zero-length read tells a closed or bogus descriptor from a usable one now
    use std::io::Read;
    let _zero: usize = (&file).read(&mut [])?;
    std::thread::Builder::new().name("control-fd".into()).spawn(move || {
        for line in std::io::BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let _ = apply(&shared, &line, &format!("control-fd {fd}"));
        }
    })?;
    Ok(())
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Identity {
    dev: u64,
    ino: u64,
    mtime_ns: i64,
    len: u64,
}

fn identity(p: &Path) -> Option<Identity> {
    let m = std::fs::metadata(p).ok()?; // follows symlinks: a swapped ..data link changes ino
    Some(Identity { dev: m.dev(), ino: m.ino(), mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(), len: m.len() })
}

/// Polls `path` every `every` and reloads when the file it resolves to changes.
pub async fn watch_file(path: PathBuf, shared: Arc<Shared>, every: Duration) {
    let mut seen = identity(&path);
    loop {
        tokio::time::sleep(every).await;
        let now = identity(&path);
        if now.is_some() && now != seen {
            seen = now;
            if let Ok(text) = std::fs::read_to_string(&path) {
                let _ = apply(&shared, &text, &path.display().to_string());
            }
        }
    }
}
