//! What a run is asked to do: the settings, the command, the network mode and srt's own
//! options.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use settings_schema::Settings;

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
    /// Give the command's programs srt's create preload ([`crate::fs::preload`]).
    pub preload: bool,
}

/// How the command's network is confined (docs/network.md, "Network modes").
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
