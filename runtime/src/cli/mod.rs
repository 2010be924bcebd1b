//! The srt-compatible command line.

mod args;
pub mod explain;
mod explain_fs;
mod library_path;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::error::LaunchError;
use crate::launch::{self, NetworkMode, Options};

#[derive(Debug, Parser)]
#[command(
    name = "srt",
    version,
    about = "Run a command in a sandbox: Landlock filesystem rules, seccomp, no network \
             except what srt-settings.json allows. Works unprivileged: no root, no \
             capabilities, no user namespaces needed.",
    after_help = "Examples:\n  srt -c 'echo hi > out.txt'           run with $SRT_SETTINGS_PATH, ~/.srt-settings.json or the built-in default\n  \
                  srt -s srt-settings.json -- cargo build\n  srt explain -s srt-settings.json      show how each rule is enforced here\n\n\
                  Without a settings file the built-in default applies: no network, writes only\n\
                  in the current directory and /tmp, reads unrestricted. Exit status: the\n\
                  command's own, 128+N when it was killed by signal N, 1 when srt refused to run it."
)]
pub struct Cli {
    /// Settings file (srt 0.0.83 format). Default: $SRT_SETTINGS_PATH when set, else
    /// ~/.srt-settings.json, or the built-in default policy when that file does not exist.
    #[arg(short = 's', long = "settings", value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Log sandbox decisions to stderr.
    #[arg(short = 'd', long)]
    pub debug: bool,
    /// Run this shell string with `bash -c`.
    #[arg(short = 'c', value_name = "COMMAND")]
    pub command_string: Option<OsString>,
    /// Print how each rule is enforced on this kernel instead of running anything.
    #[arg(long)]
    pub explain: bool,
    /// Run even when the kernel cannot enforce every rule (same as
    /// `"enableWeakerNestedSandbox": true`). `srt explain` lists what is lost.
    #[arg(long)]
    pub allow_weaker: bool,
    /// How the network is confined: `namespace` (user, network, mount, PID and IPC
    /// namespaces with only `lo`), `landlock` (no namespaces needed: unprivileged pods), or
    /// `auto`: namespace mode where the kernel allows it, else landlock mode.
    #[arg(long, value_enum, default_value = "auto")]
    pub network_mode: NetworkMode,
    /// Resolve HOST on PORT (or *) to ADDR in srt's proxy, like curl's --resolve
    /// (split-horizon names, tests). Trusted as written. Repeatable.
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// srt 0.0.83's live settings updates: read one complete settings JSON per line from
    /// descriptor N while the command runs; each replaces the network policy (the
    /// filesystem rules of a running command cannot change). N is not passed on.
    #[arg(long, value_name = "N")]
    pub control_fd: Option<i32>,
    /// Do not name the hosts the proxy refused (by default one line each on stderr at exit:
    /// `srt: network: refused example.com:443 (not in allowedDomains)`).
    #[arg(long)]
    pub no_network_hints: bool,
    /// Do not add srt's library to the command's LD_PRELOAD. It lets the kernel make files
    /// below directories made during the run (tar x, npm install, git clone) without a
    /// round trip to srt's supervisor; without it those are slower, never less confined.
    #[arg(long)]
    pub no_preload: bool,
    /// The command and its arguments (quoted for `bash -c`, boundaries preserved).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Parses `args` (the process's, program name first), runs, and returns the process exit
/// code.
pub fn main(mut args: Vec<OsString>) -> i32 {
    // first of all: a restart, when it is needed, runs nothing twice
    if let Err(msg) = crate::cli::library_path::settle(&args) {
        eprintln!("{msg}");
        return 1;
    }
    // srt's own limits must not be the command's (see limits.rs)
    crate::limits::take_own();
    // `srt explain [-s FILE]` is the same as `srt --explain [-s FILE]`.
    if args.get(1).is_some_and(|a| a == "explain") {
        args[1] = "--explain".into();
    }
    if let Err(msg) = crate::cli::args::check(&args) {
        eprintln!("{msg}");
        return 2;
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    init_logging(cli.debug);
    let cli_settings = cli.settings.clone();
    let home_settings = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".srt-settings.json"));
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e}");
            if matches!(e, LaunchError::Settings(_)) {
                eprintln!(
                    "Refusing to run with the built-in defaults, which would drop the rules {} asked for.",
                    settings_source(&cli_settings, home_settings.as_deref())
                );
            }
            1
        }
    }
}

/// Where the settings that failed came from, as the user would name it.
fn settings_source(flag: &Option<PathBuf>, home: Option<&std::path::Path>) -> String {
    if let Some(p) = flag {
        return format!("--settings {}", p.display());
    }
    if let Some(p) = std::env::var_os("SRT_SETTINGS_PATH").filter(|p| !p.is_empty()) {
        return format!("$SRT_SETTINGS_PATH ({})", PathBuf::from(p).display());
    }
    match home {
        Some(h) => format!("{} (read because no --settings was given)", h.display()),
        None => "the settings file".into(),
    }
}

fn init_logging(debug: bool) {
    let spec = std::env::var("SRT_LOG").ok();
    if !debug && std::env::var_os("SRT_DEBUG").is_none() && spec.is_none() {
        return; // no subscriber: tracing's macros cost nothing then
    }
    use std::io::IsTerminal;
    // colour codes only for a person at a terminal, never into logs and pipes
    let builder = tracing_subscriber::fmt()
        .with_writer(|| crate::say::Writer)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match spec {
        Some(spec) => builder.with_env_filter(tracing_subscriber::EnvFilter::new(spec)).try_init(),
        None => builder.with_max_level(tracing::Level::DEBUG).try_init(),
    };
}

fn load_settings(cli: &Cli) -> Result<settings_schema::Settings, LaunchError> {
    if let Some(p) = &cli.settings {
        return Ok(settings_schema::load_file(p)?);
    }
    // Set by srt-controller in sandbox pods (next to kagent's KAGENT_SRT_SETTINGS_PATH), so
    // a bare `srt -c CMD` there uses the agent's mounted settings. Set but unreadable is an
    // error, never a fallback.
    if let Some(p) = std::env::var_os("SRT_SETTINGS_PATH").filter(|p| !p.is_empty()) {
        return Ok(settings_schema::load_file(&PathBuf::from(p))?);
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    if let Some(default) = home.map(|h| h.join(".srt-settings.json")) {
        if default.symlink_metadata().is_ok() {
            return Ok(settings_schema::load_file(&default)?);
        }
    }
    Ok(settings_schema::Settings::embedded_default())
}

/// Settings files that decide later runs: the command must never be able to change them
/// (a rewritten file with `"disabled": true` would unsandbox the next call).
fn settings_files(cli: &Cli) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = env("HOME").map(|h| h.join(".srt-settings.json"));
    [cli.settings.clone(), env("SRT_SETTINGS_PATH"), env("KAGENT_SRT_SETTINGS_PATH"), home]
        .into_iter()
        .flatten()
        .map(|p| cwd.join(p))
        .collect()
}

fn run(cli: Cli) -> Result<i32, LaunchError> {
    let settings = load_settings(&cli)?;
    let settings_files = settings_files(&cli);
    if cli.explain {
        print!("{}", crate::cli::explain::report(&settings, cli.allow_weaker, cli.network_mode, &settings_files)?);
        return Ok(0);
    }
    let words = match (&cli.command_string, cli.command.is_empty()) {
        (Some(_), false) => return Err(LaunchError::CommandTwice),
        (Some(c), true) => vec![c.clone()],
        (None, false) => vec![launch::quote_words(&cli.command)],
        (None, true) => return Err(LaunchError::NoCommand),
    };
    launch::run(Options {
        settings,
        argv: words,
        allow_weaker: cli.allow_weaker,
        debug: cli.debug,
        mode: cli.network_mode,
        resolve: cli.resolve,
        settings_files,
        control_fd: cli.control_fd,
        network_hints: !cli.no_network_hints,
        preload: !cli.no_preload,
    })
}
