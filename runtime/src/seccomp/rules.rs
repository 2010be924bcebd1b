//! Which syscalls the command's filter lists and what each gets, from the run's
//! [`FilterOptions`]: the table [`super::bpf::assemble`] turns into the program.

use super::bpf::{Action, Rule};
use super::sysno::{self, Arch};

/// What the policy needs from the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterOptions {
    /// Route file-creating and write-opening syscalls to the supervisor.
    pub mediate_fs: bool,
    /// Opens and `mkdirat` carrying [`NATIVE_CREATE`] go to the kernel alone: only where
    /// Landlock's filesystem rules are in force, which then judge them (without them, with
    /// `--allow-weaker`, every such call goes to the supervisor).
    pub native_fs: bool,
    /// TCP stream sockets allowed (the network goes through the proxy).
    pub tcp: bool,
    /// Every connect() mediated by the supervisor (landlock mode).
    pub mediate_connect: bool,
    /// `socket(AF_UNIX)` allowed (`allowAllUnixSockets`).
    pub allow_unix_sockets: bool,
    /// `allowUnixSockets`: `socket(AF_UNIX)` of stream and seqpacket type allowed, their
    /// connects judged by the supervisor (needs `mediate_connect`).
    pub unix_listed: bool,
    /// UDP sockets allowed (namespace mode with transparent DNS: only `lo` exists).
    pub udp: bool,
    /// Metadata calls go to the supervisor (landlock mode: no read-only mounts).
    pub mediate_metadata: bool,
    /// The command shares the host's network and IPC namespaces (landlock mode): System V
    /// IPC is refused; `bind` and `listen` (which binds an ephemeral wildcard port without
    /// `bind`, past Landlock) go to the supervisor with `mediate_connect`, else are refused.
    pub host_namespaces: bool,
    /// Landlock mode where Landlock cannot scope signals (ABI < 6): signals to other pids,
    /// pidfds and SIGIO owners go to the supervisor's pid judge; `FIOSETOWN`/`SIOCSPGRP`
    /// are refused.
    pub judge_signals: bool,
    /// Landlock mode: `getsockname` and `getpeername` go to the supervisor, which shows the
    /// command the loopback addresses it asked for rather than the run's own
    /// ([`crate::net::shown_addr`]). Off with `allowLocalBinding`, where binds go as asked.
    pub show_asked_addresses: bool,
    /// `TIOCGPTPEER` goes to the supervisor (landlock mode: `/dev/pts` is shared with other
    /// sessions, so Landlock grants only the command's own terminals and the supervisor
    /// opens the ptys the command allocated).
    pub mediate_ptys: bool,
}

/// A bit of `open`/`openat` flags the kernel ignores (it masks flags with its valid
/// ones) and the filter reads as "let the kernel judge this one alone"; set by srt's
/// preload (`runtime/preload/native_create.rs`), which asks again without it on EACCES
/// or EROFS.
pub const NATIVE_CREATE: u32 = 1 << 30;

/// `__O_TMPFILE` without `O_DIRECTORY`: an unnamed file always goes to the supervisor.
const TMPFILE_BIT: u32 = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u32;

/// The rule table: pure, unit-tested, and what `srt explain` prints.
pub fn rules(arch: &Arch, opts: FilterOptions) -> Vec<(&'static str, i64, Rule)> {
    let eperm = Action::Errno(libc::EPERM);
    let mut out = Vec::new();
    for name in sysno::DENIED {
        if let Some(nr) = arch.nr(name) {
            out.push((*name, nr, Rule::Always(eperm)));
        }
    }
    // clone3 hides its flags behind a pointer; ENOSYS makes libc fall back to clone.
    // openat2 hides its flags too; its callers fall back to openat, which we can inspect.
    // setxattrat/removexattrat (6.13) take their arguments in a struct; libc does not need them.
    for name in ["clone3", "openat2", "setxattrat", "removexattrat"] {
        if let Some(nr) = arch.nr(name) {
            out.push((name, nr, Rule::Always(Action::Errno(libc::ENOSYS))));
        }
    }
    if let Some(nr) = arch.nr("clone") {
        out.push(("clone", nr, Rule::AnyBit { arg: 0, mask: NAMESPACE_FLAGS, then: eperm, otherwise: Action::Allow }));
    }
    // inode flags and attributes (chattr): not covered by Landlock, rarely needed by agents
    if let Some(nr) = arch.nr("file_setattr") {
        out.push(("file_setattr", nr, Rule::Always(eperm)));
    }
    if let Some(nr) = arch.nr("ioctl") {
        let mut refuse = vec![
            libc::TIOCSTI as u32,
            libc::TIOCLINUX as u32,
            FS_IOC_SETFLAGS,
            FS_IOC32_SETFLAGS,
            FS_IOC_SETVERSION,
            FS_IOC32_SETVERSION,
            FS_IOC_FSSETXATTR,
        ];
        if opts.judge_signals {
            // they set a SIGIO owner through a pointer: refused where signals are judged
            refuse.extend([FIOSETOWN, SIOCSPGRP]);
        }
        let notify = if opts.mediate_ptys { vec![TIOCGPTPEER] } else { vec![] };
        out.push(("ioctl", nr, Rule::Ioctl { refuse, notify }));
    }
    if let Some(nr) = arch.nr("socket") {
        let unix_listed = opts.unix_listed && !opts.allow_unix_sockets;
        if opts.tcp {
            let unix = opts.allow_unix_sockets || unix_listed;
            out.push(("socket", nr, Rule::TcpOnly { unix, unix_stream_only: unix_listed, udp: opts.udp }));
        } else if unix_listed {
            out.push(("socket", nr, Rule::UnixPair { any_type: false }));
        } else {
            let values = if opts.allow_unix_sockets { vec![libc::AF_UNIX as u32] } else { vec![] };
            out.push(("socket", nr, Rule::OneOf { arg: 0, values, then: Action::Allow, otherwise: eperm }));
        }
    }
    if opts.mediate_connect {
        // setsockopt only so that the options can be carried over when the supervisor must
        // replace the socket with its own connected one (it is continued)
        for name in ["connect", "setsockopt"] {
            if let Some(nr) = arch.nr(name) {
                out.push((name, nr, Rule::Always(Action::Notify)));
            }
        }
        // TCP Fast Open connects from sendto/sendmsg without a connect() to mediate
        let fastopen = libc::MSG_FASTOPEN as u32;
        for (name, arg) in [("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3)] {
            if let Some(nr) = arch.nr(name) {
                out.push((name, nr, Rule::AnyBit { arg, mask: fastopen, then: eperm, otherwise: Action::Allow }));
            }
        }
    }
    if let Some(nr) = arch.nr("socketpair") {
        out.push(("socketpair", nr, Rule::UnixPair { any_type: opts.allow_unix_sockets }));
    }
    if opts.host_namespaces {
        for name in sysno::HOST_IPC {
            if let Some(nr) = arch.nr(name) {
                out.push((*name, nr, Rule::Always(eperm)));
            }
        }
        out.extend(local_server_rules(arch, opts));
    }
    if opts.host_namespaces {
        out.extend(pid_rules(arch, opts.judge_signals));
    }
    if opts.mediate_fs {
        let write_bits = (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;
        // NATIVE_CREATE opens (srt's preload sets it first) go to the kernel alone: making a
        // file there is what Landlock grants, which is only below the run's own directories,
        // where the supervisor would let the kernel make it too. O_TMPFILE ones still come.
        // O_NONBLOCK opens of existing files (terminals, fifos: bash opens /dev/tty so at
        // every start) stay with Landlock alone; creating always goes to the supervisor
        // (coreutils touch creates with O_NONBLOCK). Safe: the supervisor only ever adds
        // writes Landlock's split rules could not express, so skipping it can deny but
        // never grant.
        let nonblock = libc::O_NONBLOCK as u32;
        for (name, arg) in [("open", 1), ("openat", 2)] {
            if let Some(nr) = arch.nr(name) {
                out.push((
                    name,
                    nr,
                    Rule::AnyBitUnless {
                        arg,
                        native: if opts.native_fs { NATIVE_CREATE } else { 0 },
                        native_unless: TMPFILE_BIT,
                        always: libc::O_CREAT as u32,
                        unless: nonblock,
                        mask: write_bits,
                        then: Action::Notify,
                    },
                ));
            }
        }
        // The same bit in mkdirat's mode (the kernel keeps only its low 16 bits): making a
        // directory is what Landlock grants only below the pool's directories, whose whole
        // tree the check after the run walks (it is in the journal as moved in).
        if let (Some(nr), true) = (arch.nr("mkdirat"), opts.native_fs) {
            out.push((
                "mkdirat",
                nr,
                Rule::AnyBit { arg: 2, mask: NATIVE_CREATE, then: Action::Allow, otherwise: Action::Notify },
            ));
        }
        // umask, chdir and fchdir only so that the supervisor's caches of them are dropped
        // (they are continued)
        let native_mkdir = |n: &&&str| **n != "mkdirat" || !opts.native_fs;
        for name in sysno::MEDIATED.iter().filter(native_mkdir).chain(&["umask", "chdir", "fchdir"]) {
            if let Some(nr) = arch.nr(name) {
                out.push((*name, nr, Rule::Always(Action::Notify)));
            }
        }
        if opts.mediate_metadata {
            for name in sysno::METADATA {
                if let Some(nr) = arch.nr(name) {
                    out.push((*name, nr, metadata_rule(name)));
                }
            }
        }
    }
    out
}

/// Landlock mode: `bind` and `listen` go to the supervisor, which places the command's
/// servers on the run's own loopback address (Landlock lets no TCP bind through by itself),
/// and `getsockname`/`getpeername`, which show the command what it asked for; without
/// connect mediation there is no supervisor to place them, and `listen` is refused.
pub(super) fn local_server_rules(arch: &Arch, opts: FilterOptions) -> Vec<(&'static str, i64, Rule)> {
    let action = if opts.mediate_connect { Action::Notify } else { Action::Errno(libc::EPERM) };
    let names: &[&'static str] = if opts.mediate_connect { &["bind", "listen"] } else { &["listen"] };
    let shown: &[&'static str] =
        if opts.mediate_connect && opts.show_asked_addresses { &["getsockname", "getpeername"] } else { &[] };
    let mut out: Vec<_> =
        names.iter().filter_map(|name| arch.nr(name).map(|nr| (*name, nr, Rule::Always(action)))).collect();
    // not on descriptors 0 to 2: bash asks getpeername(0) at every start (is it run by
    // sshd?), and a trap before the supervisor serves would hold every command's start up;
    // a standard stream is rarely a socket srt placed, and the answer shows only the
    // command's own socket anyway
    let std_streams = vec![0, 1, 2];
    out.extend(shown.iter().filter_map(|name| {
        arch.nr(name).map(|nr| {
            (
                *name,
                nr,
                Rule::OneOf { arg: 0, values: std_streams.clone(), then: Action::Allow, otherwise: Action::Notify },
            )
        })
    }));
    out
}

/// Landlock mode's metadata calls go to the supervisor, but for three on an open
/// descriptor that can neither let another user write a file, give it a privilege, nor
/// make it runnable: `fchmod` without setuid, setgid, sticky, group/other write or any
/// execute bit (an execute bit on a file opened only for reading switches on a disabled
/// git hook, or a program in a PATH directory the command may not write), `fchown` to srt's
/// own uid and gid (or -1), and `futimens` (`utimensat` with a NULL path). `tar x` makes
/// all three for every file it writes; a supervisor round trip each would triple its time.
/// What they can still do is recorded in docs/security.md's limits: change the mode (toward
/// less access), group or times of a file the command can open, also outside
/// `allowWrite`; no content, no ownership, no privilege.
pub(super) fn metadata_rule(name: &str) -> Rule {
    let notify = Action::Notify;
    match name {
        "fchmod" => Rule::AnyBit { arg: 1, mask: 0o7133, then: notify, otherwise: Action::Allow },
        "fchown" => {
            // SAFETY: geteuid/getegid cannot fail; srt's ids are the command's.
            let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
            Rule::AllOneOf {
                args: vec![(1, vec![u32::MAX, uid]), (2, vec![u32::MAX, gid])],
                then: Action::Allow,
                otherwise: notify,
            }
        }
        "utimensat" => Rule::Null { arg: 1, then: Action::Allow, otherwise: notify },
        _ => Rule::Always(notify),
    }
}

// ---- calls that act on another process by pid (landlock mode) ----------------------

/// Landlock mode shares the host's PID namespace: the calls of [`sysno::PID_TARGETED`]
/// could lower srt's, its auditor's or any host process's limits or priority. Those that
/// name the caller itself (pid 0) pass at once; the rest go to the supervisor, which lets
/// only the command's own processes be named.
///
/// Where Landlock cannot scope signals (ABI < 6), signals to other pids
/// ([`sysno::SIGNAL_TARGETED`]), `pidfd_send_signal` and `fcntl(F_SETOWN, F_SETOWN_EX)` go
/// there too.
pub(super) fn pid_rules(arch: &Arch, signals: bool) -> Vec<(&'static str, i64, Rule)> {
    let table = sysno::PID_TARGETED.iter().chain(if signals { sysno::SIGNAL_TARGETED } else { &[] });
    let mut out: Vec<_> = table
        .filter_map(|&(name, pid, which)| arch.nr(name).map(|nr| (name, nr, Rule::SelfOrJudged { pid, which })))
        .collect();
    if signals {
        if let Some(nr) = arch.nr("pidfd_send_signal") {
            out.push(("pidfd_send_signal", nr, Rule::Always(Action::Notify)));
        }
        if let Some(nr) = arch.nr("fcntl") {
            let values = vec![libc::F_SETOWN as u32, F_SETOWN_EX];
            out.push(("fcntl", nr, Rule::OneOf { arg: 1, values, then: Action::Notify, otherwise: Action::Allow }));
        }
    }
    out
}

/// asm-generic/fcntl.h: set the SIGIO owner through a pointer to `struct f_owner_ex`.
pub const F_SETOWN_EX: u32 = 15;
/// asm-generic/sockios.h: set the owner SIGIO and SIGURG go to, through a pointer.
pub const FIOSETOWN: u32 = 0x8901;
pub const SIOCSPGRP: u32 = 0x8902;

// ---- end of the pid block -------------------------------------------------------------

/// asm-generic/ioctls.h: open the peer of a pty master.
pub const TIOCGPTPEER: u32 = 0x5441;

/// linux/fs.h: setting inode flags and attributes (`chattr`, `FS_IOC_SETVERSION`).
pub const FS_IOC_SETFLAGS: u32 = 0x4008_6602;
pub const FS_IOC32_SETFLAGS: u32 = 0x4004_6602;
pub const FS_IOC_SETVERSION: u32 = 0x4008_7602;
pub const FS_IOC32_SETVERSION: u32 = 0x4004_7602;
pub const FS_IOC_FSSETXATTR: u32 = 0x401c_5820;

/// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME.
pub const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32
    | 0x80;
