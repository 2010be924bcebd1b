//! Everything decided before the fork, from the settings: the filesystem policy and its
//! Landlock plan ([`crate::fs`]), the seccomp filter's options, the kernel's Landlock
//! version and whether it is enough; the run's directory pool, its journal and namespace
//! mode's resolv.conf. `srt explain` reports the same [`Prepared`].

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use settings_schema::Settings;

use super::options::NetworkMode;
use crate::error::LaunchError;
use crate::fs::landlock;
use crate::fs::landlock_plan::Plan;
use crate::fs::policy::FsPolicy;
use crate::fs::prepare;
use crate::seccomp::FilterOptions;

/// Everything decided before the fork; also what `srt explain` reports.
pub struct Prepared {
    pub policy: FsPolicy,
    pub plan: Plan,
    pub fs_enabled: bool,
    pub filter: FilterOptions,
    pub kernel_abi: i32,
    pub tmpdir: PathBuf,
    pub mode: NetworkMode,
}

pub const MIN_ABI_FS: i32 = 3;

pub fn prepare(
    settings: &Settings,
    tmpdir: &Path,
    mode: NetworkMode,
    settings_files: &[PathBuf],
    state_dir: Option<&Path>,
    pool: Option<&Path>,
) -> Result<Prepared, LaunchError> {
    // auto is settled by the caller (a run tries namespace mode first; explain probes)
    let mode = if mode == NetworkMode::Auto { NetworkMode::Landlock } else { mode };
    let cwd = std::env::current_dir().map_err(LaunchError::Cwd)?;
    // without $HOME the user's own home still has its rules (a shell would use it too)
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).or_else(crate::paths::passwd_home);
    let ttys = own_ttys();
    // every place a state directory may be, not only this run's: a journal planted in
    // another one would be finished by a later run
    let own: Vec<PathBuf> = state_dir
        .into_iter()
        .chain(pool)
        .map(Path::to_path_buf)
        .chain(crate::check::journal::state_dir_candidates())
        .collect();
    let cx = prepare::Context {
        cwd: &cwd,
        home: home.as_deref(),
        tmpdir,
        settings_files,
        own: &own,
        own_ttys: (mode == NetworkMode::Landlock).then_some(&ttys[..]),
    };
    let fs_enabled = !settings.filesystem.disabled.unwrap_or(false);
    let policy = if fs_enabled {
        crate::fs::resolve::with_resolution_cache(|| prepare::fs_policy(settings, &cx))?
    } else {
        FsPolicy::default()
    };
    let mut plan = if fs_enabled { crate::fs::landlock_plan::plan(&policy) } else { Plan::default() };
    if fs_enabled {
        crate::fs::landlock_plan::files_made_natively_in(&mut plan, &policy, tmpdir);
    }
    let landlock_mode = mode == NetworkMode::Landlock;
    let kernel_abi = landlock::kernel_abi();
    let transparent = crate::net::transparent_wanted(settings);
    let unix_listed = crate::net::UnixRule::from_settings(settings) == crate::net::UnixRule::Listed;
    let filter = FilterOptions {
        mediate_fs: fs_enabled,
        native_fs: fs_enabled && kernel_abi >= MIN_ABI_FS,
        tcp: true,
        // namespace mode's transparent and Unix connects go through the supervisor too
        mediate_connect: landlock_mode || transparent || unix_listed,
        udp: !landlock_mode && transparent,
        allow_unix_sockets: settings.network.allow_all_unix_sockets.unwrap_or(false),
        unix_listed,
        mediate_metadata: fs_enabled && landlock_mode,
        host_namespaces: landlock_mode,
        judge_signals: landlock_mode && !landlock::scopes_signals(kernel_abi),
        show_asked_addresses: landlock_mode && !settings.network.allow_local_binding.unwrap_or(false),
        mediate_ptys: fs_enabled && landlock_mode,
    };
    Ok(Prepared { policy, plan, fs_enabled, filter, kernel_abi, tmpdir: tmpdir.to_path_buf(), mode })
}

/// `allowUnixSockets` as real locations: `~/` is `$HOME`, relative paths are from the working
/// directory, and symlinks are resolved now (as for the other settings paths: one the
/// command plants later is never followed). A socket not there yet is looked for in its
/// directory's real location.
pub fn unix_socket_paths(settings: &Settings) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    // without $HOME the user's own home still has its rules (a shell would use it too)
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).or_else(crate::paths::passwd_home);
    let list = settings.network.allow_unix_sockets.as_deref().unwrap_or(&[]);
    let real = |p: PathBuf| {
        std::fs::canonicalize(&p).unwrap_or_else(|_| match (p.parent().map(std::fs::canonicalize), p.file_name()) {
            (Some(Ok(dir)), Some(name)) => dir.join(name),
            _ => p,
        })
    };
    list.iter()
        .filter_map(|p| match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => Some(h.join(rest)),
            (Some(_), None) => None,
            (None, _) => Some(cwd.join(p)),
        })
        .map(real)
        .collect()
}

/// The terminals on our stdin, stdout and stderr (landlock mode lets the command open only
/// these under /dev/pts).
pub(crate) fn own_ttys() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = (0..3)
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .filter(|p| p.starts_with("/dev/pts/") && p.as_os_str().len() > "/dev/pts/".len())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Refuses to run with less protection than asked for, unless the user opted in.
pub fn check_kernel(p: &Prepared, allow_weaker: bool) -> Result<(), LaunchError> {
    if allow_weaker {
        return Ok(());
    }
    if p.fs_enabled && p.kernel_abi < MIN_ABI_FS {
        return Err(LaunchError::LandlockTooOld {
            found: p.kernel_abi,
            needed: MIN_ABI_FS,
            feature: "filesystem rules (write, truncate and rename control)",
            kernel: "6.2",
        });
    }
    if p.kernel_abi < 4 {
        return Err(LaunchError::LandlockTooOld {
            found: p.kernel_abi,
            needed: 4,
            feature: "TCP connect/bind rules",
            kernel: "6.7",
        });
    }
    Ok(())
}

/// The run's directory pool ([`crate::fs::pool`]), when the settings let the command write in
/// the working directory: a shelf kept in srt's state directory where that is on the same
/// mount, else made in the working directory. A pool that cannot be made costs only speed.
pub(crate) fn make_pool(settings: &Settings, state_dir: Option<&Path>) -> Option<crate::fs::pool::Pool> {
    if settings.filesystem.disabled.unwrap_or(false) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    // without $HOME the user's own home still has its rules (a shell would use it too)
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).or_else(crate::paths::passwd_home);
    if !prepare::in_allow_write(settings, &cwd, home.as_deref(), &cwd) {
        return None;
    }
    // a state directory in /tmp goes when empty: nothing is kept there
    if let Some(state) = state_dir.filter(|s| !crate::check::journal::transient(s)) {
        match crate::fs::pool::Pool::claim(state, &cwd, crate::fs::pool::SHELF_SIZE) {
            Ok(Some(p)) => return Some(p),
            Ok(None) => {}
            Err(e) => tracing::debug!("no directory shelf in {}: {e}", state.display()),
        }
    }
    crate::fs::pool::Pool::create(&cwd, crate::fs::pool::size_for(&cwd))
        .map_err(|e| tracing::debug!("no directory pool in {}: {e}", cwd.display()))
        .ok()
}

/// Removes what is left of the pool when the run ends, however it ends (the check after
/// the run normally has done so already).
pub(crate) struct PoolGuard(pub(crate) Option<PathBuf>);

impl Drop for PoolGuard {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            crate::fs::pool::finish(p, true);
        }
    }
}

/// The journal of this run ([`crate::check::journal`]), holding what the check after it needs,
/// in srt's state directory (which the policy keeps the command from writing).
pub(crate) fn open_journal(
    prepared: &Prepared,
    tmp: &Path,
    pool: Option<&crate::fs::pool::Pool>,
    state_dir: &Path,
) -> Result<crate::check::journal::Journal, LaunchError> {
    let policy = &prepared.policy;
    let header = crate::check::journal::Header {
        roots: policy.write.clone(),
        since: crate::git::audit::Stamp::run_start(),
        // guarded git directories that already were repositories: their files are the user's
        trusted: policy.git_dirs.iter().filter(|g| g.join("HEAD").symlink_metadata().is_ok()).cloned().collect(),
        guarded: policy.git_dirs.clone(),
        pools: pool.map(|p| p.parent.clone()).into_iter().collect(),
        allow_git_config: policy.allow_git_config,
        tmpdir: tmp.to_path_buf(),
        denied: policy.deny_write.iter().filter(|d| policy.in_write_tree(d)).cloned().collect(),
        tops: policy.tops.clone(),
        dot_tops: policy.dot_tops.clone(),
        top_dot_files: policy.top_dot_files.clone(),
        mediated: policy.mediated.clone(),
        home: policy.home.clone(),
    };
    crate::check::journal::Journal::create(state_dir, &header)
        .map_err(|source| LaunchError::Journal { path: state_dir.to_path_buf(), source })
}

/// Transparent mode in namespace mode: srt's resolv.conf, written in the run's own
/// directory, to be mounted over the host's (whose real file a symlink may name).
/// `None` where the host has no resolv.conf to cover (resolvers then ask 127.0.0.1 anyway).
pub(crate) fn resolv_conf(tmp: &Path) -> Result<Option<(CString, CString)>, LaunchError> {
    let Ok(theirs) = std::fs::canonicalize("/etc/resolv.conf") else { return Ok(None) };
    let ours = tmp.join(".srt-resolv.conf");
    std::fs::write(&ours, crate::net::RESOLV_CONF)?;
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    Ok(c(&ours).zip(c(&theirs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(abi: i32, fs: bool) -> Prepared {
        Prepared {
            policy: FsPolicy::default(),
            plan: Plan::default(),
            fs_enabled: fs,
            filter: FilterOptions {
                mediate_fs: fs,
                native_fs: fs,
                allow_unix_sockets: false,
                unix_listed: false,
                tcp: true,
                mediate_connect: true,
                mediate_metadata: fs,
                host_namespaces: true,
                judge_signals: false,
                show_asked_addresses: false,
                mediate_ptys: fs,
                udp: false,
            },
            mode: NetworkMode::Landlock,
            kernel_abi: abi,
            tmpdir: PathBuf::new(),
        }
    }

    #[test]
    fn kernel_without_enough_landlock_is_refused_unless_opted_in() {
        for (abi, fs, ok) in [
            (0, true, false),
            (2, true, false),
            (3, true, false),
            (4, true, true),
            (7, true, true),
            (3, false, false),
            (4, false, true),
        ] {
            let r = check_kernel(&prepared(abi, fs), false);
            assert_eq!(r.is_ok(), ok, "abi {abi} fs {fs}");
            if let Err(e) = r {
                assert!(e.to_string().contains("--allow-weaker"), "{e}");
                assert!(e.to_string().contains(if abi < 3 && fs { "Linux >= 6.2" } else { "Linux >= 6.7" }), "{e}");
            }
            assert!(check_kernel(&prepared(abi, fs), true).is_ok());
        }
    }
}
