//! A run, from settings to exit code. Its stages, in order, each a file:
//!
//! 1. [`prepare`]: everything decided before the fork (the filesystem policy and Landlock
//!    plan, the filter's options, the kernel check), the pool, the journal;
//! 2. [`command`]: bash's argv and the command's environment;
//! 3. spawn: the auditor is forked and the command started below it ([`crate::process`]);
//! 4. supervise ([`parent`]): srt serves the seccomp listener ([`crate::supervisor`]) and
//!    forwards signals while the command runs;
//! 5. [`finish`]: with every process gone, the check after the run; srt exits with the
//!    command's code and leaves nothing behind.
//!
//! [`run_in`] below reads as these stages in order. [`probe`] answers `srt explain`'s
//! question of which network mode a run would get, by trying it.

pub mod command;
pub mod env_policy;
mod finish;
mod options;
mod parent;
pub mod prepare;
pub mod probe;

use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use crate::error::LaunchError;
use crate::fs::tmpdir::TmpDir;
use crate::launch::parent::{block_signals, finish_run, pipe, seqpacket_pair, supervise, wait_for_bridge, Run};
use crate::net::Route;
use crate::process::auditor::Start;
use crate::process::child::{self, ChildSpec, Landlock};
use crate::seccomp;
use crate::supervisor::Supervisor;
use crate::{fs::landlock, process::reaper, seccomp::sysno};
pub use command::{quote_words, shell_argv};
pub use options::{NetworkMode, Options};
pub use prepare::{check_kernel, prepare, unix_socket_paths, Prepared, MIN_ABI_FS};
use prepare::{make_pool, open_journal, resolv_conf, PoolGuard};

/// Runs the command; returns the exit code `srt` should exit with.
pub fn run(opts: Options) -> Result<i32, LaunchError> {
    // (earlier runs that died before their check are finished by each attempt, `run_in`)
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

/// How often the plan is redone when a rule's target changed while it was being set up.
const PLAN_ATTEMPTS: usize = 3;

pub(crate) fn run_in(opts: &Options, mode: NetworkMode) -> Result<i32, LaunchError> {
    if let Some(fd) = opts.control_fd {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(LaunchError::Proxy(format!("--control-fd {fd} is not an open descriptor ({e})")));
        }
    }
    let namespaced = mode == NetworkMode::Namespace;
    let fs_enabled = !opts.settings.filesystem.disabled.unwrap_or(false);
    let settings = &opts.settings;
    // The run's directories (its TMPDIR, the state directory, the pool), then what needs
    // none of them (earlier runs' journals, the shell, the proxy's listener), one after the
    // other: a second thread for the directories gained nothing (the scheduler ran it on
    // the same CPU, after this one went to sleep in the join) and cost 0.3 ms a run.
    let make_dirs = || -> Result<_, LaunchError> {
        let tmp = TmpDir::create()?;
        let state_dir = if fs_enabled {
            Some(
                crate::check::journal::state_dir()
                    .map_err(|source| LaunchError::Journal { path: PathBuf::new(), source })?,
            )
        } else {
            None
        };
        let pool = make_pool(settings, state_dir.as_deref()).map(std::sync::Arc::new);
        Ok((tmp, state_dir, pool))
    };
    let shell_and_net = || -> Result<_, LaunchError> {
        crate::launch::parent::finish_stale_runs();
        let shell = shell_argv(&opts.argv)?;
        // a loopback listener of our own only where the command will connect to it
        let own_port = !namespaced
            && opts.settings.network.http_proxy_port.is_none()
            && opts.settings.network.socks_proxy_port.is_none();
        let net = crate::net::Net::prepare(&opts.settings, &opts.resolve, own_port)?;
        Ok((shell, net))
    };
    let dirs = make_dirs();
    let here = shell_and_net();
    let (tmp, state_dir, pool) = dirs?;
    let _pool_goes = PoolGuard(pool.as_ref().map(|p| p.parent.clone()));
    let ((program, argv), mut net) = here?;
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
        let held = pool.as_deref().map(crate::fs::pool::Pool::take_held).unwrap_or_default();
        match landlock::build(&prepared.plan, prepared.fs_enabled, !namespaced, held) {
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
    net.namespaced = namespaced;
    if namespaced {
        net.port = crate::net::inside::HTTP_PORT;
        net.socks_port = crate::net::inside::SOCKS_PORT;
    } else if let Some((http, socks)) = net.external {
        net.port = http;
        net.socks_port = socks;
    }
    // landlock mode routes every connect; namespace mode transparent mode's and Unix ones
    let route = (!namespaced || net.transparent.is_some() || prepared.filter.unix_listed).then(|| Route {
        // landlock::build handles TCP in landlock mode; the kernel honours it from ABI 4
        landlock_tcp: !namespaced && prepared.kernel_abi >= 4,
        ..net.route()
    });
    let journal = if prepared.fs_enabled {
        let dir = state_dir.as_deref().unwrap_or(Path::new("/"));
        Some(std::sync::Arc::new(open_journal(&prepared, &tmp.0, pool.as_deref(), dir)?))
    } else {
        None
    };
    let preload = match crate::fs::preload::place(
        &crate::fs::preload::dir(),
        &prepared.policy,
        prepared.filter.mediate_fs,
        prepared.filter.native_fs,
    ) {
        Ok(path) if opts.preload => crate::fs::preload::install_at(&path),
        Ok(_) => None,
        Err(why) => {
            tracing::debug!("no create preload: {why}");
            None
        }
    };
    let envp = command::environment(&opts.settings, &tmp.0, &net.env(), preload.as_deref());
    let mut supervisor = Supervisor::new(prepared.policy.clone(), sysno::native(), route);
    supervisor.journal = journal.clone();
    supervisor.pool = pool.clone();
    supervisor.mediate_ptys = prepared.filter.mediate_ptys;
    supervisor.unix_paths = unix_socket_paths(&opts.settings);
    supervisor.shm = match (prepared.fs_enabled, namespaced) {
        (false, _) => crate::supervisor::SharedMemory::Untouched,
        (true, true) => crate::supervisor::SharedMemory::Private,
        (true, false) => crate::supervisor::SharedMemory::host(),
    };
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
    spec.landlock = ruleset.map_or(Landlock::Off, Landlock::Planned);
    spec.filter = filter;
    for p in &prepared.policy.shm_settings_ignored {
        crate::warn!(
            "{} lies in /dev/shm, which every run gets as its own: the settings cannot open the host's, so it is neither readable nor writable (work elsewhere, e.g. in /tmp)",
            p.display()
        );
    }
    if namespaced {
        for p in crate::fs::mounts::missing_roots(&prepared.policy) {
            crate::warn!(
                "allowWrite {} does not exist, and namespace mode makes only existing paths writable: this run cannot write there (create it first: mkdir -p {})",
                p.display(),
                p.display()
            );
        }
    }
    let start = if namespaced {
        let view = if prepared.fs_enabled {
            crate::fs::mounts::plan(&prepared.policy, &crate::fs::prepare::protected_paths(&prepared.policy))
        } else {
            crate::fs::mounts::MountView { all_writable: true, shm: crate::fs::mounts::has_shm(), ..Default::default() }
        };
        let dns = net.transparent.is_some();
        let view = crate::fs::mounts::MountView { resolv_conf: if dns { resolv_conf(&tmp.0)? } else { None }, ..view };
        spec.parent_pid = 1; // the command's parent is the namespace's init
        let (go_r, go_w) = pipe()?;
        let init = crate::process::namespace::InitSpec { command: spec, go: go_r.as_raw_fd(), view, dns };
        Start::Namespaced { init, go_r, go_w }
    } else {
        Start::Direct(spec)
    };
    let mut finish = || finish_run(&tmp, journal.clone(), true);
    let auditor =
        crate::process::auditor::fork(start, theirs.as_raw_fd(), sigfd.as_raw_fd(), &[ours.as_raw_fd()], &mut finish)?;
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
    let mut proxy = match net.start(inside, opts.debug, opts.control_fd) {
        Ok(p) => p,
        Err(e) => return Err(run.end_early(true, e, None)),
    };
    // The supervisor creates files with the command's mode and umask applied explicitly.
    // SAFETY: plain umask syscall.
    unsafe { libc::umask(0) };
    if !namespaced {
        // the command's processes are the auditor's descendants ([`crate::supervisor`])
        supervisor.auditor = Some(run.auditor.pid);
        // srt's ports at the run's addresses: the command's servers never get them
        if let Some(route) = route {
            let mut ports = vec![route.port, route.socks_port];
            if route.transparent.is_some() {
                ports.push(53);
            }
            supervisor.reserved = crate::net::hold(&crate::net::shown_addr::reserved(&route.local, &ports));
        }
    }
    let (status, setup_error) = supervise(run.auditor.pid, ours, sigfd.as_fd(), supervisor, proxy.as_mut());
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
