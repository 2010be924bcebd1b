//! `srt explain`: how each rule is enforced on this kernel, and what it does not cover.

use std::fmt::Write;

use settings_schema::Settings;

use crate::error::LaunchError;
use crate::launch::{self, MIN_ABI_FS};

use crate::{seccomp, seccomp::sysno};

pub fn report(
    settings: &Settings,
    allow_weaker: bool,
    mode: crate::launch::NetworkMode,
    settings_files: &[std::path::PathBuf],
) -> Result<String, LaunchError> {
    let tmp = std::env::temp_dir().join("srt-explain-TMPDIR");
    let (mode, fallback) = launch::probe::probe_mode(mode, settings, settings_files);
    let state = crate::check::journal::state_dir().ok();
    let p = launch::prepare(settings, &tmp, mode, settings_files, state.as_deref(), None)?;
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "srt {}", env!("CARGO_PKG_VERSION"));
    match (&fallback, mode) {
        (Some(why), _) => {
            let _ = writeln!(w, "mode: landlock (chosen by auto: namespace mode is unavailable here: {why})");
        }
        (None, m) => {
            let _ = writeln!(w, "mode: {}", if m == launch::NetworkMode::Namespace { "namespace" } else { "landlock" });
        }
    }
    let _ = writeln!(
        w,
        "kernel Landlock ABI: {} (filesystem rules need >= {MIN_ABI_FS}, TCP rules >= 4, scopes >= 6)",
        p.kernel_abi
    );
    match launch::check_kernel(&p, false) {
        Ok(()) => {
            let _ = writeln!(w, "status: every rule below is enforced");
        }
        Err(e) if allow_weaker || settings.weaker_opt_in() => {
            let _ = writeln!(w, "status: WEAKER (opted in): {e}");
        }
        Err(e) => {
            let _ = writeln!(w, "status: srt would refuse to run: {e}");
        }
    }
    let allowed = if settings.network.allowed_domains.is_empty() {
        "none (every request is answered 403)".to_string()
    } else {
        settings.network.allowed_domains.join(", ")
    };
    let transparent = crate::net::transparent_wanted(settings);
    let net: &[&str] = if p.mode == launch::NetworkMode::Namespace {
        &[
            "network (namespace mode): new user, network, mount, PID and IPC namespaces; the network namespace",
            "  has only lo, whose ports 3128 (HTTP) and 1080 (SOCKS5) srt's proxy serves from outside (no token:",
            "  only the sandbox reaches them)",
            "  sockets: TCP (UDP too in transparent mode; nothing but lo is routable)",
            "  processes: the command's init is PID 1 of its own PID namespace with a private /proc; the command",
            "  cannot see or signal processes outside, and nothing survives srt, even if srt is SIGKILLed",
        ]
    } else {
        &[
            "network (landlock mode): only through srt's own proxy, per run on a loopback port with a fresh token",
            "  sockets: TCP only (seccomp); every connect() goes to the supervisor, which connects the command's",
            "  own socket to the proxy and refuses every other address; Landlock allows no TCP connect or bind",
            "  itself (from Linux 6.7; before, under --allow-weaker, the supervisor alone holds it); UDP, raw,",
            "  packet and netlink sockets are refused",
            "  processes: the host's PID namespace is shared: the command sees other processes, cannot signal",
            "  or trace them (Landlock scoping), and may change limits, priority, CPU affinity, scheduling and",
            "  I/O priority only of its own processes (the supervisor judges every other pid)",
        ]
    };
    for l in net {
        let _ = writeln!(w, "{l}");
    }
    local_servers(w, settings, p.mode == launch::NetworkMode::Namespace);
    unix_sockets(w, settings, p.mode == launch::NetworkMode::Namespace);
    let _ = writeln!(w, "  allowed domains: {allowed}");
    if !settings.network.denied_domains.is_empty() {
        let _ = writeln!(w, "  denied domains:  {}", settings.network.denied_domains.join(", "));
    }
    let _ = writeln!(
        w,
        "  every tunnel: the TLS server name (SNI) or HTTP Host must name an allowed host; no SNI / ECH {}",
        if settings.network.allow_tls_without_sni.unwrap_or(false) {
            "allowed (allowTlsWithoutSni)"
        } else {
            "refused"
        }
    );
    let other = settings.network.allow_other_protocols.as_deref().unwrap_or_default();
    let _ = writeln!(
        w,
        "  other protocols (neither TLS nor HTTP: SSH, databases, git://): {}",
        if other.is_empty() {
            "refused (network.allowOtherProtocols lists where they may go)".into()
        } else {
            format!("only to {}", other.join(", "))
        }
    );
    if transparent {
        let dns = if p.mode == launch::NetworkMode::Namespace {
            "a stub on the sandbox's 127.0.0.1:53 (UDP, TCP) and its own /etc/resolv.conf"
        } else {
            "DNS over TCP (RES_OPTIONS=use-vc) to port 53 of any address, taken by the supervisor"
        };
        let _ = writeln!(
            w,
            "  transparent mode: clients that ignore the proxy variables work too; srt answers DNS ({dns})"
        );
        let _ = writeln!(
            w,
            "  with synthetic 198.18.0.0/15 addresses for allowed names, NXDOMAIN for others, and never asks"
        );
        let _ = writeln!(w, "  another server; direct connects go to the proxy with their destination, judged by name");
        if p.mode != launch::NetworkMode::Namespace {
            let _ = writeln!(
                w,
                "  LIMIT: musl's and Go's pure resolver cannot resolve here (no UDP; they ignore RES_OPTIONS)"
            );
        }
    } else {
        let _ = writeln!(w, "  LIMIT: clients that ignore HTTP_PROXY/ALL_PROXY fail instead of reaching the network");
        let _ = writeln!(w, "  (network.transparent is off, or an existing proxy on the settings' ports decides)");
    }
    crate::cli::explain_fs::report(w, &p, settings_files);
    crate::fs::preload::explain(w, &p.policy, p.filter.mediate_fs, p.filter.native_fs);
    crate::launch::env_policy::explain(w, &settings.environment());
    let _ = writeln!(w, "\nsyscalls (seccomp, foreign architectures and x32 killed):");
    let arch = sysno::native();
    for (name, _, rule) in seccomp::rules(&arch, p.filter) {
        let _ = writeln!(w, "  {name:<18} {}", describe(&rule));
    }
    let ipc = if p.mode == launch::NetworkMode::Namespace {
        "its own IPC namespace (System V IPC and POSIX message queues are private)"
    } else {
        "System V IPC and POSIX message queues refused (they would be the host's)"
    };
    let _ = writeln!(w, "\nprocess: new session (no TIOCSTI), parent-death signal, inherited fds above 2 closed,");
    let _ = writeln!(w, "  {ipc},");
    let _ = writeln!(
        w,
        "  no_new_privs, every capability dropped, Landlock signal and abstract-socket scoping (ABI >= 6)."
    );
    if p.filter.judge_signals {
        let _ = writeln!(
            w,
            "  This kernel's Landlock (ABI {}) cannot scope signals: the supervisor lets kill, tkill,",
            p.kernel_abi
        );
        let _ = writeln!(
            w,
            "  tgkill, rt_(tg)sigqueueinfo, pidfd_send_signal and fcntl(F_SETOWN) reach only the command's"
        );
        let _ = writeln!(w, "  own processes; F_SETOWN_EX, FIOSETOWN and SIOCSPGRP are refused.");
    }
    let _ =
        writeln!(w, "  The command's parent is srt's auditor (srt -> srt-auditor -> command), a subreaper the command");
    let _ =
        writeln!(w, "  cannot reach: when the command exits, or srt dies (even by SIGKILL), it kills every process");
    let _ = writeln!(w, "  the command left, removes the private TMPDIR and runs the check after the run. If srt and");
    let _ =
        writeln!(w, "  the auditor both die, the next srt run does the check first (its journal says what to check).");
    Ok(o)
}

/// Where the command's servers listen and who reaches them (`allowLocalBinding`).
fn local_servers(w: &mut String, settings: &Settings, namespace: bool) {
    let as_asked = settings.network.allow_local_binding.unwrap_or(false);
    let lines: &[&str] = match (namespace, as_asked) {
        (true, _) => &[
            "  local servers: bind and listen on any address, all inside the sandbox's own network namespace:",
            "  only the command reaches them (allowLocalBinding changes nothing in this mode)",
        ],
        (false, false) => &[
            "  local servers: bind and listen go to the supervisor; binds to loopback or wildcard addresses",
            "  (127.0.0.0/8, 0.0.0.0, ::, ::1) are placed on an address of the run's own in 127.0.0.0/8 (new each",
            "  run; dual-stack IPv6 sockets on its ::ffff: form; IPv6-only ones and those bound to ::1 made",
            "  dual-stack on a second one, never on ::1, which host clients of localhost try first), other",
            "  addresses refused, listen() only on a socket placed so; SO_REUSEPORT refused",
            "  the command sees the addresses it asked for: getsockname and getpeername (but on fds 0-2) show",
            "  the run's addresses as 127.0.0.1, 0.0.0.0, :: or ::1 as bound or dialed  [supervisor]",
            "  srt's proxy ports and 53 are held at the run's addresses: a bind there gets EADDRINUSE, and",
            "  port-0 binds never get them",
            "  loopback connects reach only listeners this run made, after a handshake srt makes itself (no",
            "  deferred TCP Fast Open connect), from 127.0.0.1; the host's and other runs' are refused",
            "  LIMIT: local processes that dial the run's addresses on the port reach the command's servers,",
            "  as they reach any local server; host clients of 127.0.0.1, ::1, localhost and the network do not",
        ],
        (false, true) => &[
            "  local servers (allowLocalBinding): bind and listen go to the supervisor, which binds where the",
            "  command asks: a server on 0.0.0.0 or a host address is reachable from the network, one on",
            "  127.0.0.1 by every local client of that address (and can stand in for a host service there);",
            "  listen() only on a bound socket; SO_REUSEPORT refused",
            "  loopback connects reach only listeners this run made; the host's and other runs' are refused",
        ],
    };
    for l in lines {
        let _ = writeln!(w, "{l}");
    }
}

/// Which Unix sockets the command reaches (`allowUnixSockets`, `allowAllUnixSockets`).
fn unix_sockets(w: &mut String, settings: &Settings, namespace: bool) {
    let _ = match crate::net::UnixRule::from_settings(settings) {
        crate::net::UnixRule::None => {
            writeln!(w, "  Unix sockets: none (only stream socketpairs, which address nothing)")
        }
        crate::net::UnixRule::All => {
            writeln!(w, "  Unix sockets: every one (allowAllUnixSockets), a container runtime's included")
        }
        crate::net::UnixRule::Listed => {
            let paths = launch::unix_socket_paths(settings);
            let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            let _ = writeln!(
                w,
                "  Unix sockets: connect only to {} (allowUnixSockets; a directory: the sockets beneath it)",
                list.join(", ")
            );
            let _ = writeln!(
                w,
                "  judged by the object the path reaches (symlinks, /proc/self/fd/N and passed descriptors resolved);"
            );
            let _ = writeln!(w, "  stream and seqpacket sockets only (no datagrams to any path)");
            let _ = writeln!(w, "  abstract names: {}", {
                if namespace {
                    "the sandbox's own only"
                } else {
                    "refused; the command serves no Unix socket in this mode"
                }
            });
            for p in paths.iter().filter(|p| hands_over_the_host(p)) {
                let _ = writeln!(
                    w,
                    "  WARNING: {} hands the command the host (it can start privileged containers)",
                    p.display()
                );
            }
            Ok(())
        }
    };
}

/// Container runtimes' and the kubelet's API sockets: whoever connects controls the host.
fn hands_over_the_host(p: &std::path::Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    ["docker.sock", "containerd.sock", "podman.sock", "crio.sock", "kubelet.sock", "dockershim.sock"]
        .contains(&name.as_str())
}

fn describe(r: &seccomp::Rule) -> String {
    use seccomp::{Action, Rule};
    let a = |x: &Action| match x {
        Action::Allow => "allow".to_string(),
        Action::Errno(e) => format!("fail with {}", nix::errno::Errno::from_raw(*e)),
        Action::Notify => "supervisor".to_string(),
    };
    match r {
        Rule::Always(x) => a(x),
        Rule::AnyBit { arg, mask, then, otherwise } => {
            format!("{} if arg{arg} & {mask:#x}, else {}", a(then), a(otherwise))
        }
        Rule::AnyBitUnless { arg, native, native_unless, always, unless, mask, then } => format!(
            "{n}{t} if arg{arg} & {always:#x}, else allow if arg{arg} & {unless:#x}, else {t} if arg{arg} & {mask:#x}, else allow",
            n = if *native != 0 {
                format!("allow (the kernel judges) if arg{arg} & {native:#x} and not & {native_unless:#x}, else ")
            } else {
                String::new()
            },
            t = a(then)
        ),
        Rule::TcpOnly { unix, unix_stream_only, udp } => {
            format!(
                "allow AF_INET/AF_INET6 SOCK_STREAM with protocol 0 or TCP{}{}, else EPERM",
                if *udp { ", SOCK_DGRAM with protocol 0 or UDP (only the namespace's lo exists)" } else { "" },
                match (unix, unix_stream_only) {
                    (true, true) => " (and AF_UNIX SOCK_STREAM/SOCK_SEQPACKET: allowUnixSockets)",
                    (true, false) => " (and AF_UNIX)",
                    _ => "",
                }
            )
        }
        Rule::Null { arg, then, otherwise } => format!("{} if arg{arg} is NULL, else {}", a(then), a(otherwise)),
        Rule::AllOneOf { args, then, otherwise } => {
            let conds: Vec<String> = args
                .iter()
                .map(|(arg, v)| format!("arg{arg} in [{}]", v.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>().join(", ")))
                .collect();
            format!("{} if {}, else {}", a(then), conds.join(" and "), a(otherwise))
        }
        Rule::UnixPair { any_type: true } => "allow AF_UNIX, else EPERM".to_string(),
        Rule::UnixPair { any_type: false } => {
            "allow AF_UNIX SOCK_STREAM/SOCK_SEQPACKET, else EPERM (datagram pairs reach host sockets)".to_string()
        }
        Rule::Ioctl { refuse, notify } => {
            let hex = |v: &[u32]| v.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>().join(", ");
            let mut d = format!("fail with EPERM for {} (TIOCSTI, TIOCLINUX, inode flags)", hex(refuse));
            if !notify.is_empty() {
                d.push_str(&format!(", supervisor for {} (TIOCGPTPEER)", hex(notify)));
            }
            d + ", else allow"
        }
        Rule::OneOf { arg, values, then, otherwise } => {
            format!("{} if arg{arg} in {values:?}, else {}", a(then), a(otherwise))
        }
        Rule::SelfOrJudged { pid, which } => {
            let user = which.map(|(w, u)| format!(" and arg{w} != {u}")).unwrap_or_default();
            format!("allow if arg{pid} == 0 (itself){user}, else supervisor (only the command's own processes)")
        }
    }
}
