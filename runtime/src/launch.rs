//! The parent side of a run: prepare everything, fork, supervise, forward signals,
//! return the command's exit code and leave nothing behind.

use std::ffi::{CString, OsString};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use settings_schema::Settings;

use crate::auditor::Start;
use crate::child::{self, ChildSpec};
use crate::error::LaunchError;
use crate::landlock_plan::Plan;
use crate::parent::{block_signals, finish_run, pipe, seqpacket_pair, supervise, wait_for_bridge, Run};
use crate::policy::FsPolicy;
use crate::seccomp::{self, FilterOptions};
use crate::supervisor::Supervisor;
use crate::tmpdir::TmpDir;
use crate::{landlock, prepare, reaper, sysno};

pub struct Options {
    pub settings: Settings,
    pub argv: Vec<OsString>,
    pub allow_weaker: bool,
    pub debug: bool,
    pub mode: NetworkMode,
    /// `--resolve` overrides for the proxy.
    pub resolve: Vec<String>,
    /// Settings files that decide later runs; never writable by the command.
    pub settings_files: Vec<PathBuf>,
    /// `--control-fd`: live network policy updates, one settings JSON per line.
    pub control_fd: Option<RawFd>,
    /// Name the hosts the proxy refused, on stderr at exit.
    pub network_hints: bool,
}

/// How the command's network is confined (see README, "Network modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NetworkMode {
    /// Namespace mode where the kernel allows it, landlock mode otherwise.
    Auto,
    /// Landlock + a seccomp supervisor that connects sockets only to the proxy; needs no
    /// namespaces (unprivileged pods).
    Landlock,
    /// New user, network, mount, PID and IPC namespaces with only `lo`; the proxy serves
    /// ports created inside. Needs unprivileged user namespaces.
    Namespace,
}

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
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let ttys = own_ttys();
    // every place a state directory may be, not only this run's: a journal planted in
    // another one would be finished by a later run
    let own: Vec<PathBuf> = state_dir
        .into_iter()
        .chain(pool)
        .map(Path::to_path_buf)
        .chain(crate::journal::state_dir_candidates())
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
        prepare::with_resolution_cache(|| prepare::fs_policy(settings, &cx))?
    } else {
        FsPolicy::default()
    };
    let mut plan = if fs_enabled { crate::landlock_plan::plan(&policy) } else { Plan::default() };
    if fs_enabled {
        crate::landlock_plan::files_made_natively_in(&mut plan, &policy, tmpdir);
    }
    let landlock_mode = mode == NetworkMode::Landlock;
    let kernel_abi = landlock::kernel_abi();
    let transparent = crate::net::transparent_wanted(settings);
    let unix_listed = crate::net::UnixRule::from_settings(settings) == crate::net::UnixRule::Listed;
    let filter = FilterOptions {
        mediate_fs: fs_enabled,
        tcp: true,
        // namespace mode's transparent and Unix connects go through the supervisor too
        mediate_connect: landlock_mode || transparent || unix_listed,
        udp: !landlock_mode && transparent,
        allow_unix_sockets: settings.network.allow_all_unix_sockets.unwrap_or(false),
        unix_listed,
        mediate_metadata: fs_enabled && landlock_mode,
        host_namespaces: landlock_mode,
        judge_signals: landlock_mode && !landlock::scopes_signals(kernel_abi),
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
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
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
fn own_ttys() -> Vec<PathBuf> {
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

/// Runs the command; returns the exit code `srt` should exit with.
pub fn run(opts: Options) -> Result<i32, LaunchError> {
    crate::parent::finish_stale_runs();
    match opts.mode {
        NetworkMode::Auto => match run_in(&opts, NetworkMode::Namespace) {
            // nothing of the command ran yet: the namespaces were refused before it started
            Err(LaunchError::Namespaces(e)) => {
                tracing::debug!("namespace mode unavailable ({e}); using landlock mode");
                run_in(&opts, NetworkMode::Landlock)
            }
            other => other,
        },
        mode => run_in(&opts, mode),
    }
}

/// The mode a run with `mode` will really use, found by doing what a run does: setting up
/// namespace mode for `true` (user, network, mount, PID and IPC namespaces, the mount view,
/// /proc, devpts, loopback). A container may allow the namespaces and still refuse a step
/// (podman: mounting a private /proc), and a run then falls back to landlock mode.
/// For landlock mode, the reason namespace mode is unavailable comes along. Runs the probe
/// in a child process, so this process keeps its capabilities and signal mask.
pub fn probe_mode(mode: NetworkMode, settings: &Settings, settings_files: &[PathBuf]) -> (NetworkMode, Option<String>) {
    if mode != NetworkMode::Auto {
        return (mode, None);
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return (NetworkMode::Landlock, Some(format!("cannot probe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: fresh descriptors owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: `srt explain` is single-threaded here; the child runs the ordinary launch
    // code for `true` (allocation is fine after fork in a single-threaded process) and
    // leaves with _exit, never returning into the parent's code.
    match unsafe { libc::fork() } {
        0 => {
            drop(r);
            let opts = Options {
                settings: settings.clone(),
                argv: vec![OsString::from("true")],
                allow_weaker: true,
                debug: false,
                mode: NetworkMode::Namespace,
                resolve: Vec::new(),
                settings_files: settings_files.to_vec(),
                control_fd: None,
                network_hints: false,
            };
            let reason = match run_in(&opts, NetworkMode::Namespace) {
                Ok(_) => String::new(),
                Err(LaunchError::Namespaces(e)) => e.to_string(),
                // not about namespaces: a run would stop with the same error in either mode
                Err(_) => String::new(),
            };
            // SAFETY: writing a buffer we own to our end of the pipe, then leaving.
            unsafe {
                libc::write(w.as_raw_fd(), reason.as_ptr().cast(), reason.len());
                libc::_exit(0)
            }
        }
        -1 => (NetworkMode::Landlock, Some(format!("cannot probe: {}", std::io::Error::last_os_error()))),
        pid => {
            drop(w);
            let mut reason = String::new();
            let _ = std::io::Read::read_to_string(&mut std::fs::File::from(r), &mut reason);
            let mut status = 0;
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            if reason.is_empty() {
                (NetworkMode::Namespace, None)
            } else {
                (NetworkMode::Landlock, Some(reason))
            }
        }
    }
}

/// How often the plan is redone when a rule's target changed while it was being set up.
const PLAN_ATTEMPTS: usize = 3;

fn run_in(opts: &Options, mode: NetworkMode) -> Result<i32, LaunchError> {
    if let Some(fd) = opts.control_fd {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(LaunchError::Proxy(format!("--control-fd {fd} is not an open descriptor ({e})")));
        }
    }
    let tmp = TmpDir::create()?;
    let namespaced = mode == NetworkMode::Namespace;
    let fs_enabled = !opts.settings.filesystem.disabled.unwrap_or(false);
    let state_dir = if fs_enabled {
        Some(crate::journal::state_dir().map_err(|source| LaunchError::Journal { path: PathBuf::new(), source })?)
    } else {
        None
    };
    let pool = make_pool(&opts.settings).map(std::sync::Arc::new);
    let _pool_goes = PoolGuard(pool.as_ref().map(|p| p.parent.clone()));
    let mut attempt = 0;
    let (prepared, ruleset) = loop {
        attempt += 1;
        let pool_dir = pool.as_deref().map(|p| p.parent.as_path());
        let mut prepared = prepare(&opts.settings, &tmp.0, mode, &opts.settings_files, state_dir.as_deref(), pool_dir)?;
        if let (Some(p), true) = (&pool, prepared.fs_enabled) {
            prepared.plan.rules.extend(p.rules());
        }
        check_kernel(&prepared, opts.allow_weaker || opts.settings.weaker_opt_in())?;
        if prepared.kernel_abi == 0 {
            break (prepared, None);
        }
        match landlock::build(&prepared.plan, prepared.fs_enabled, !namespaced) {
            Ok(r) => break (prepared, Some(r)),
            // something renamed entries while we planned: plan again from what is there now
            Err(LaunchError::RuleTargetChanged { path }) if attempt < PLAN_ATTEMPTS => {
                tracing::debug!(path = %path.display(), attempt, "rule target changed; planning again");
            }
            Err(e) => return Err(e),
        }
    };
    tracing::debug!(rules = prepared.plan.rules.len(), split = ?prepared.plan.split_write_dirs, ?mode, "plan");

    let arch = sysno::native();
    let table = seccomp::rules(&arch, prepared.filter);
    let filter = seccomp::assemble(&arch, &table).map_err(|e| LaunchError::Seccomp(e.to_string()))?;
    let (program, argv) = shell_argv(&opts.argv)?;
    // a loopback listener of our own only where the command will connect to it
    let own_port = !namespaced
        && opts.settings.network.http_proxy_port.is_none()
        && opts.settings.network.socks_proxy_port.is_none();
    let mut net = crate::net::Net::prepare(&opts.settings, &opts.resolve, own_port)?;
    net.namespaced = namespaced;
    if namespaced {
        net.port = crate::namespace::HTTP_PORT;
        net.socks_port = crate::namespace::SOCKS_PORT;
    } else if let Some((http, socks)) = net.external {
        net.port = http;
        net.socks_port = socks;
    }
    let envp = environment(&opts.settings, &tmp.0, &net.env());
    // landlock mode routes every connect; namespace mode transparent mode's and Unix ones
    let route = (!namespaced || net.transparent.is_some() || prepared.filter.unix_listed).then(|| net.route());
    let journal = if prepared.fs_enabled {
        let dir = state_dir.as_deref().unwrap_or(Path::new("/"));
        Some(std::sync::Arc::new(open_journal(&prepared, &tmp.0, pool.as_deref(), dir)?))
    } else {
        None
    };
    let mut supervisor = Supervisor::new(prepared.policy.clone(), sysno::native(), route);
    supervisor.journal = journal.clone();
    supervisor.pool = pool.clone();
    supervisor.mediate_ptys = prepared.filter.mediate_ptys;
    supervisor.unix_paths = unix_socket_paths(&opts.settings);
    supervisor.native_rules =
        prepared.plan.rules.iter().filter(|r| r.rights.write && r.is_dir).filter_map(|r| r.id).collect();
    supervisor.files_rules = prepared
        .plan
        .rules
        .iter()
        .filter(|r| r.rights.write && r.is_dir && r.makes_files)
        .filter_map(|r| r.id)
        .collect();

    let (ours, theirs) = seqpacket_pair()?;
    // srt stays a subreaper too: should the auditor die, the command's processes come here
    reaper::become_subreaper()?;
    let (old_mask, sigfd) = block_signals()?;
    let mut spec = ChildSpec::new(program, argv, envp, theirs.as_raw_fd(), old_mask);
    spec.ruleset = ruleset;
    spec.filter = filter;
    let start = if namespaced {
        let view = if prepared.fs_enabled {
            crate::mounts::plan(&prepared.policy, &prepare::protected_paths(&prepared.policy))
        } else {
            crate::mounts::MountView { all_writable: true, ..Default::default() }
        };
        let dns = net.transparent.is_some();
        let view = crate::mounts::MountView { resolv_conf: if dns { resolv_conf(&tmp.0)? } else { None }, ..view };
        spec.parent_pid = 1; // the command's parent is the namespace's init
        let (go_r, go_w) = pipe()?;
        let init = crate::namespace::InitSpec { command: spec, go: go_r.as_raw_fd(), view, dns };
        Start::Namespaced { init, go_r, go_w }
    } else {
        Start::Direct(spec)
    };
    let mut finish = || finish_run(&tmp, journal.clone());
    let auditor = crate::auditor::fork(start, theirs.as_raw_fd(), sigfd.as_raw_fd(), &[ours.as_raw_fd()], &mut finish)?;
    drop(theirs);
    let run = Run { auditor, tmp, journal };
    let inside = if namespaced {
        match wait_for_bridge(&ours) {
            Ok(inside) => inside,
            Err(f) => return Err(run.end_early(f.stop, f.error, f.reported)),
        }
    } else {
        Vec::new()
    };
    // Whatever the supervisor does for the command it must do with no more privilege
    // than the command has: same uid, no capabilities.
    if let Err(errno) = child::drop_own_capabilities() {
        return Err(run.end_early(true, LaunchError::Sys(nix::errno::Errno::from_raw(errno)), None));
    }
    let proxy = match net.start(inside, opts.debug, opts.control_fd) {
        Ok(p) => p,
        Err(e) => return Err(run.end_early(true, e, None)),
    };
    // The supervisor creates files with the command's mode and umask applied explicitly.
    // SAFETY: plain umask syscall.
    unsafe { libc::umask(0) };
    if !namespaced {
        // the command's processes are the auditor's descendants ([`crate::supervisor`])
        supervisor.auditor = Some(run.auditor.pid);
    }
    let (status, setup_error) = supervise(run.auditor.pid, ours, sigfd.as_fd(), supervisor);
    let code = run.end(status, setup_error)?;
    if opts.network_hints {
        for line in crate::net::hints(&proxy.map(|p| p.refused()).unwrap_or_default()) {
            crate::say::line(&line);
        }
        if crate::supervisor::transparent_refused_without_getfd() {
            crate::say::line(crate::net::NO_GETFD_HINT);
        }
    }
    Ok(code)
}

/// The run's directory pool ([`crate::pool`]), in the working directory when the settings
/// let the command write there. A pool that cannot be made costs only speed.
fn make_pool(settings: &Settings) -> Option<crate::pool::Pool> {
    if settings.filesystem.disabled.unwrap_or(false) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    if !prepare::in_allow_write(settings, &cwd, home.as_deref(), &cwd) {
        return None;
    }
    crate::pool::Pool::create(&cwd, crate::pool::size_for(&cwd))
        .map_err(|e| tracing::debug!("no directory pool in {}: {e}", cwd.display()))
        .ok()
}

/// Removes what is left of the pool when the run ends, however it ends (the check after
/// the run normally has done so already).
struct PoolGuard(Option<PathBuf>);

impl Drop for PoolGuard {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            crate::pool::remove(p);
        }
    }
}

/// The journal of this run ([`crate::journal`]), holding what the check after it needs,
/// in srt's state directory (which the policy keeps the command from writing).
fn open_journal(
    prepared: &Prepared,
    tmp: &Path,
    pool: Option<&crate::pool::Pool>,
    state_dir: &Path,
) -> Result<crate::journal::Journal, LaunchError> {
    let policy = &prepared.policy;
    let header = crate::journal::Header {
        roots: policy.write.clone(),
        since: crate::git_audit::Stamp::run_start(),
        // guarded git directories that already were repositories: their files are the user's
        trusted: policy.git_dirs.iter().filter(|g| g.join("HEAD").symlink_metadata().is_ok()).cloned().collect(),
        guarded: policy.git_dirs.clone(),
        pools: pool.map(|p| p.parent.clone()).into_iter().collect(),
        allow_git_config: policy.allow_git_config,
        tmpdir: tmp.to_path_buf(),
    };
    crate::journal::Journal::create(state_dir, &header)
        .map_err(|source| LaunchError::Journal { path: state_dir.to_path_buf(), source })
}

/// With every process of the command gone: moves aside what it planted in git
/// repositories the rules could not follow ([`crate::git_audit`]), then drops the journal.
pub(crate) fn check_run(j: &crate::journal::Journal) {
    let t = std::time::Instant::now();
    let report = match crate::journal::read(j.path()) {
        Ok((header, entries)) => crate::after_run::check(&header, &entries),
        Err(e) => {
            eprintln!(
                "srt: error: could not read this run's journal {} ({e}); the check for planted git configuration was not done",
                j.path().display()
            );
            return;
        }
    };
    tracing::debug!(entries = report.entries, elapsed_us = t.elapsed().as_micros() as u64, "git check");
    crate::git_audit::tell(&report);
    if let Err(e) = j.finish() {
        crate::warn!("could not remove this run's journal: {e}");
    }
}

/// Transparent mode in namespace mode: srt's resolv.conf, written in the run's own
/// directory, to be mounted over the host's (whose real file a symlink may name).
/// `None` where the host has no resolv.conf to cover (resolvers then ask 127.0.0.1 anyway).
fn resolv_conf(tmp: &Path) -> Result<Option<(CString, CString)>, LaunchError> {
    let Ok(theirs) = std::fs::canonicalize("/etc/resolv.conf") else { return Ok(None) };
    let ours = tmp.join(".srt-resolv.conf");
    std::fs::write(&ours, crate::net::RESOLV_CONF)?;
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    Ok(c(&ours).zip(c(&theirs)))
}

/// srt runs commands with bash: `-c CMD` as given, argv words shell-quoted and joined.
pub fn shell_argv(words: &[OsString]) -> Result<(CString, Vec<CString>), LaunchError> {
    let shell = find_in_path("bash").or_else(|| find_in_path("sh")).ok_or(LaunchError::NoShell)?;
    let cstr = |b: Vec<u8>| {
        CString::new(b).map_err(|_| LaunchError::Io(std::io::Error::other("argument contains a NUL byte")))
    };
    let program = cstr(shell.into_os_string().into_vec())?;
    let argv = words.iter().map(|w| cstr(w.as_bytes().to_vec())).collect::<Result<Vec<_>, _>>()?;
    let mut full = vec![cstr(b"bash".to_vec())?, cstr(b"-c".to_vec())?];
    full.extend(argv);
    Ok((program, full))
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// srt's environment under the settings' `environment` policy, with the sandbox marker,
/// the private TMPDIR and the proxy variables on top (they replace any inherited ones).
/// What the policy left out is named under `-d`; a command that reads a dropped name
/// simply finds it unset.
fn environment(settings: &Settings, tmpdir: &Path, proxy: &[(String, String)]) -> Vec<CString> {
    let mut own = proxy.to_vec();
    own.push(("SANDBOX_RUNTIME".into(), "1".into()));
    own.push(("TMPDIR".into(), tmpdir.to_string_lossy().into_owned()));
    let built = crate::env_policy::build(&settings.environment(), std::env::vars_os().collect(), &own);
    if !built.report.is_empty() {
        tracing::debug!("environment: {}", crate::env_policy::describe(&built.report));
    }
    built.envp
}

/// Shell-quotes words for `bash -c` so arguments keep their boundaries.
pub fn quote_words(words: &[OsString]) -> OsString {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let b = w.as_bytes();
        if !b.is_empty() && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(c)) {
            out.extend_from_slice(b);
        } else {
            out.push(b'\'');
            for &c in b {
                if c == b'\'' {
                    out.extend_from_slice(b"'\\''");
                } else {
                    out.push(c);
                }
            }
            out.push(b'\'');
        }
    }
    OsString::from_vec(out)
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
                allow_unix_sockets: false,
                unix_listed: false,
                tcp: true,
                mediate_connect: true,
                mediate_metadata: fs,
                host_namespaces: true,
                judge_signals: false,
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

    #[test]
    fn quoting_keeps_word_boundaries() {
        let w: Vec<OsString> = ["printf", "%s|", "a b", "it's", "$HOME", ""].iter().map(OsString::from).collect();
        assert_eq!(quote_words(&w), OsString::from("printf '%s|' 'a b' 'it'\\''s' '$HOME' ''"));
    }
}
