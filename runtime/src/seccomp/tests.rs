use super::bpf::*;
use super::rules::*;
use super::*;

fn opts(mediate_fs: bool, allow_unix_sockets: bool) -> FilterOptions {
    FilterOptions {
        mediate_fs,
        native_fs: mediate_fs,
        allow_unix_sockets,
        unix_listed: false,
        tcp: false,
        mediate_connect: false,
        mediate_metadata: mediate_fs,
        host_namespaces: true,
        judge_signals: false,
        show_asked_addresses: false,
        mediate_ptys: mediate_fs,
        udp: false,
    }
}

/// A tiny BPF interpreter for the instructions `assemble` emits, so the program's
/// decisions are tested without loading it into the kernel.
fn run(prog: &[SockFilter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
    let mut data = [0u8; 64];
    data[0..4].copy_from_slice(&(nr as i32).to_le_bytes());
    data[4..8].copy_from_slice(&arch.to_le_bytes());
    for (i, a) in args.iter().enumerate() {
        data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let ins = prog[pc];
        pc += 1;
        match ins.code {
            BPF_LD_W_ABS => {
                let k = ins.k as usize;
                acc = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
            }
            BPF_RET_K => return ins.k,
            BPF_ALU_AND_K => acc &= ins.k,
            BPF_JA => pc += ins.k as usize,
            BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K => {
                let hit = match ins.code {
                    BPF_JEQ_K => acc == ins.k,
                    BPF_JGE_K => acc >= ins.k,
                    _ => acc & ins.k != 0,
                };
                pc += usize::from(if hit { ins.jt } else { ins.jf });
            }
            c => panic!("unexpected opcode {c:#x}"),
        }
    }
}

fn decide(o: FilterOptions, name: &str, args: [u64; 6]) -> u32 {
    let arch = crate::seccomp::sysno::native();
    let prog = assemble(&arch, &rules(&arch, o)).unwrap();
    run(&prog, arch.audit_arch, arch.nr(name).unwrap(), args)
}

const EPERM: u32 = RET_ERRNO | libc::EPERM as u32;

#[test]
fn every_listed_syscall_reaches_its_own_rule_and_others_are_allowed() {
    let arch = crate::seccomp::sysno::native();
    let table = rules(&arch, opts(true, false));
    let prog = assemble(&arch, &table).unwrap();
    for (name, nr, rule) in &table {
        let got = run(&prog, arch.audit_arch, *nr, [0; 6]);
        let want = match rule {
            Rule::Always(a) => a.ret(),
            Rule::AnyBit { otherwise, .. } => otherwise.ret(),
            Rule::AnyBitUnless { .. } => RET_ALLOW,
            Rule::TcpOnly { .. } | Rule::UnixPair { .. } => RET_ERRNO | libc::EPERM as u32,
            Rule::Ioctl { .. } => RET_ALLOW,
            // all-zero arguments: a NULL pointer
            Rule::Null { then, .. } => then.ret(),
            Rule::AllOneOf { args, then, otherwise } => {
                if args.iter().all(|(_, v)| v.contains(&0)) {
                    then.ret()
                } else {
                    otherwise.ret()
                }
            }
            Rule::OneOf { values, then, otherwise, .. } => {
                if values.contains(&0) {
                    then.ret()
                } else {
                    otherwise.ret()
                }
            }
            // all-zero arguments: the caller itself
            Rule::SelfOrJudged { .. } => RET_ALLOW,
        };
        assert_eq!(got, want, "{name}");
    }
    assert!(prog.len() < 300, "program grew to {} instructions", prog.len());
    let listed: std::collections::HashSet<i64> = table.iter().map(|(_, nr, _)| *nr).collect();
    for nr in (0..500).filter(|n| !listed.contains(n)) {
        assert_eq!(run(&prog, arch.audit_arch, nr, [0; 6]), RET_ALLOW, "syscall {nr}");
    }
}

#[test]
fn calls_naming_another_process_go_to_the_supervisor_in_landlock_mode() {
    let landlock = opts(false, false);
    let namespace = FilterOptions { host_namespaces: false, ..landlock };
    let other = 4242u64;
    for name in ["prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"] {
        assert_eq!(decide(landlock, name, [0, 1, 0, 0, 0, 0]), RET_ALLOW, "{name} on itself");
        assert_eq!(decide(landlock, name, [other, 1, 0, 0, 0, 0]), RET_USER_NOTIF, "{name} on another pid");
        // only the low 32 bits are the pid: a high bit set does not make it "self"
        assert_eq!(decide(landlock, name, [other | 1 << 32, 0, 0, 0, 0, 0]), RET_USER_NOTIF, "{name}");
        assert_eq!(decide(landlock, name, [u64::from(u32::MAX), 0, 0, 0, 0, 0]), RET_USER_NOTIF, "{name} -1");
        assert_eq!(decide(namespace, name, [other, 1, 0, 0, 0, 0]), RET_ALLOW, "{name}: the PID namespace bounds it");
    }
    // setpriority(which, who): PRIO_PROCESS 0, PRIO_PGRP 1, PRIO_USER 2
    assert_eq!(decide(landlock, "setpriority", [0, 0, 10, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(landlock, "setpriority", [1, 0, 10, 0, 0, 0]), RET_ALLOW, "its own process group");
    assert_eq!(decide(landlock, "setpriority", [2, 0, 10, 0, 0, 0]), RET_USER_NOTIF, "every process of its uid");
    assert_eq!(decide(landlock, "setpriority", [0, other, 10, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(landlock, "setpriority", [1, other, 10, 0, 0, 0]), RET_USER_NOTIF);
    // ioprio_set(which, who): IOPRIO_WHO_PROCESS 1, PGRP 2, USER 3
    assert_eq!(decide(landlock, "ioprio_set", [1, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(landlock, "ioprio_set", [3, 0, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(landlock, "ioprio_set", [1, other, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(namespace, "ioprio_set", [3, 0, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn signals_go_to_the_supervisor_only_where_landlock_cannot_scope_them() {
    let scoped = opts(false, false);
    let judged = FilterOptions { judge_signals: true, ..scoped };
    let other = 4242u64;
    for (name, pid_arg) in [("kill", 0), ("tkill", 0), ("tgkill", 1), ("rt_sigqueueinfo", 0), ("rt_tgsigqueueinfo", 1)]
    {
        let mut args = [other, other, 0, 0, 0, 0];
        assert_eq!(decide(scoped, name, args), RET_ALLOW, "{name}: Landlock scopes it");
        assert_eq!(decide(judged, name, args), RET_USER_NOTIF, "{name} to another pid");
        args[pid_arg] = 0;
        assert_eq!(decide(judged, name, args), RET_ALLOW, "{name} naming no other pid");
    }
    assert_eq!(decide(judged, "pidfd_send_signal", [3, 0, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(scoped, "pidfd_send_signal", [3, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(judged, "fcntl", [3, libc::F_SETOWN as u64, other, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(judged, "fcntl", [3, u64::from(F_SETOWN_EX), other, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(judged, "fcntl", [3, libc::F_GETFL as u64, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(scoped, "fcntl", [3, libc::F_SETOWN as u64, other, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(judged, "ioctl", [3, u64::from(FIOSETOWN), 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(judged, "ioctl", [3, u64::from(SIOCSPGRP), 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(scoped, "ioctl", [3, u64::from(FIOSETOWN), 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn foreign_architecture_and_x32_are_killed() {
    let arch = crate::seccomp::sysno::native();
    let prog = assemble(&arch, &rules(&arch, opts(true, false))).unwrap();
    assert_eq!(run(&prog, 0x4000_0003, 1, [0; 6]), RET_KILL_PROCESS);
    if let Some(bit) = arch.x32_bit {
        assert_eq!(run(&prog, arch.audit_arch, i64::from(bit) | 1, [0; 6]), RET_KILL_PROCESS);
    }
}

#[test]
fn dangerous_syscalls_are_refused() {
    for name in ["ptrace", "io_uring_setup", "bpf", "mount", "unshare", "setns", "keyctl", "userfaultfd"] {
        assert_eq!(decide(opts(true, false), name, [0; 6]), EPERM, "{name}");
    }
    assert_eq!(decide(opts(true, false), "clone3", [0; 6]), RET_ERRNO | libc::ENOSYS as u32);
}

#[test]
fn clone_namespace_flags_and_tty_injection() {
    let o = opts(false, false);
    assert_eq!(decide(o, "clone", [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "clone", [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "clone", [libc::CLONE_NEWNET as u64 | 0x11, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "ioctl", [0, libc::TIOCSTI, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "ioctl", [0, libc::TIOCSTI | 1 << 32, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "ioctl", [0, libc::TIOCLINUX, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "ioctl", [0, libc::TCGETS, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn sockets() {
    let none = opts(false, false);
    for fam in [libc::AF_INET, libc::AF_INET6, libc::AF_UNIX, libc::AF_NETLINK, libc::AF_PACKET, 40] {
        assert_eq!(decide(none, "socket", [fam as u64, 1, 0, 0, 0, 0]), EPERM, "family {fam}");
    }
    let pair = |o, t: i32| decide(o, "socketpair", [libc::AF_UNIX as u64, t as u64, 0, 0, 0, 0]);
    assert_eq!(pair(none, libc::SOCK_STREAM), RET_ALLOW);
    assert_eq!(pair(none, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC), RET_ALLOW);
    assert_eq!(pair(none, libc::SOCK_DGRAM), EPERM, "a datagram pair can reach host sockets by path");
    assert_eq!(pair(none, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK), EPERM);
    assert_eq!(decide(none, "socketpair", [libc::AF_INET as u64, 1, 0, 0, 0, 0]), EPERM);
    let unix = opts(false, true);
    assert_eq!(decide(unix, "socket", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(unix, "socket", [libc::AF_INET as u64, 1, 0, 0, 0, 0]), EPERM);
    assert_eq!(pair(unix, libc::SOCK_DGRAM), RET_ALLOW, "allowAllUnixSockets");
    assert_eq!(decide(unix, "socketpair", [libc::AF_INET as u64, 1, 0, 0, 0, 0]), EPERM);
}

#[test]
fn host_namespaces_refuse_listen_and_sysv_ipc() {
    let shared = opts(true, false);
    let own = FilterOptions { host_namespaces: false, mediate_metadata: false, ..shared };
    for name in ["listen", "msgget", "msgsnd", "shmget", "shmat", "semget", "mq_open"] {
        assert_eq!(decide(shared, name, [0; 6]), EPERM, "{name}");
        assert_eq!(decide(own, name, [0; 6]), RET_ALLOW, "{name} in namespace mode");
    }
    assert_eq!(decide(shared, "fchmod", [0, 0o4755, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(shared, "chmod", [0; 6]), RET_USER_NOTIF);
    assert_eq!(decide(own, "fchmod", [0, 0o4755, 0, 0, 0, 0]), RET_ALLOW, "read-only mounts judge metadata");
    assert_eq!(decide(own, "mkdirat", [0; 6]), RET_USER_NOTIF);
}

#[test]
fn landlock_mode_shows_addresses_but_not_for_the_standard_streams() {
    let landlock = FilterOptions { tcp: true, mediate_connect: true, show_asked_addresses: true, ..opts(true, false) };
    for name in ["getsockname", "getpeername"] {
        assert_eq!(decide(landlock, name, [5, 0, 0, 0, 0, 0]), RET_USER_NOTIF, "{name}");
        // bash's getpeername(0) at every start would wait for the supervisor
        for fd in 0..3 {
            assert_eq!(decide(landlock, name, [fd, 0, 0, 0, 0, 0]), RET_ALLOW, "{name}({fd})");
        }
        let off = FilterOptions { show_asked_addresses: false, ..landlock };
        assert_eq!(decide(off, name, [5, 0, 0, 0, 0, 0]), RET_ALLOW, "{name} with allowLocalBinding");
    }
}

#[test]
fn inode_flags_are_refused() {
    let o = opts(false, false);
    for cmd in [FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION] {
        assert_eq!(decide(o, "ioctl", [3, u64::from(cmd), 0, 0, 0, 0]), EPERM, "{cmd:#x}");
        assert_eq!(decide(o, "ioctl", [3, u64::from(cmd) | 1 << 32, 0, 0, 0, 0]), EPERM, "{cmd:#x} high bits");
    }
    assert_eq!(decide(o, "ioctl", [3, 0x8008_6601, 0, 0, 0, 0]), RET_ALLOW, "FS_IOC_GETFLAGS");
    assert_eq!(decide(o, "file_setattr", [0; 6]), EPERM);
    let peer = [3, u64::from(TIOCGPTPEER), 0, 0, 0, 0];
    assert_eq!(decide(opts(true, false), "ioctl", peer), RET_USER_NOTIF, "landlock mode: the supervisor opens peers");
    assert_eq!(decide(opts(false, false), "ioctl", peer), RET_ALLOW);
    assert_eq!(decide(opts(true, false), "ioctl", [0, libc::TIOCSTI, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(opts(true, false), "ioctl", [0, libc::TCGETS, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn write_opens_go_to_the_supervisor_reads_do_not() {
    let o = opts(true, false);
    assert_eq!(decide(o, "openat", [0, 0, libc::O_RDONLY as u64, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "openat", [0, 0, (libc::O_RDONLY | libc::O_CLOEXEC) as u64, 0, 0, 0]), RET_ALLOW);
    for f in [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC] {
        assert_eq!(decide(o, "openat", [0, 0, f as u64, 0, 0, 0]), RET_USER_NOTIF);
    }
    let nb = (libc::O_RDWR | libc::O_NONBLOCK) as u64;
    assert_eq!(decide(o, "openat", [0, 0, nb, 0, 0, 0]), RET_ALLOW, "non-blocking opens stay with Landlock");
    let touch = (libc::O_WRONLY | libc::O_CREAT | libc::O_NONBLOCK | libc::O_NOCTTY) as u64;
    assert_eq!(decide(o, "openat", [0, 0, touch, 0, 0, 0]), RET_USER_NOTIF, "creating always goes to the supervisor");
    assert_eq!(decide(o, "open", [0, libc::O_CREAT as u64, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(o, "renameat2", [0; 6]), RET_USER_NOTIF);
    assert_eq!(decide(o, "unlinkat", [0; 6]), RET_USER_NOTIF);
    assert_eq!(decide(opts(false, false), "openat", [0, 0, libc::O_WRONLY as u64, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "read", [0; 6]), RET_ALLOW);
}

#[test]
fn opens_with_the_native_bit_are_left_to_the_kernel_but_unnamed_files() {
    let o = opts(true, false);
    let n = u64::from(NATIVE_CREATE);
    let create = (libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC) as u64;
    assert_eq!(decide(o, "openat", [0, 0, create, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(o, "openat", [0, 0, create | n, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "open", [0, create | n, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "openat", [0, 0, libc::O_RDWR as u64 | n, 0, 0, 0]), RET_ALLOW);
    // the bit is read in the low half only: a high-half bit is not it
    assert_eq!(decide(o, "openat", [0, 0, create | (n << 32), 0, 0, 0]), RET_USER_NOTIF);
    for tmpfile in [libc::O_TMPFILE | libc::O_RDWR, (libc::O_TMPFILE & !libc::O_DIRECTORY) | libc::O_WRONLY] {
        let f = tmpfile as u64 | n;
        assert_eq!(decide(o, "openat", [0, 0, f, 0, 0, 0]), RET_USER_NOTIF, "{f:#x}");
    }
    // the other bits of the rule are unchanged by the native test before them
    assert_eq!(decide(o, "openat", [0, 0, (libc::O_RDWR | libc::O_NONBLOCK) as u64, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "openat", [0, 0, libc::O_TRUNC as u64, 0, 0, 0]), RET_USER_NOTIF);
}

#[test]
fn tcp_only_sockets_and_mediated_connect() {
    let o = FilterOptions { tcp: true, mediate_connect: true, ..opts(true, false) };
    let sock = |f: i32, t: i32, p: i32| decide(o, "socket", [f as u64, t as u64, p as u64, 0, 0, 0]);
    assert_eq!(sock(libc::AF_INET, libc::SOCK_STREAM, 0), RET_ALLOW);
    assert_eq!(
        sock(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, libc::IPPROTO_TCP),
        RET_ALLOW
    );
    assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM, 0), EPERM, "UDP");
    assert_eq!(sock(libc::AF_INET, libc::SOCK_RAW, 1), EPERM, "raw");
    assert_eq!(sock(libc::AF_INET, libc::SOCK_STREAM, 132), EPERM, "SCTP over a stream socket");
    assert_eq!(sock(libc::AF_INET, libc::SOCK_SEQPACKET, 0), EPERM);
    assert_eq!(sock(libc::AF_UNIX, libc::SOCK_STREAM, 0), EPERM);
    assert_eq!(sock(libc::AF_NETLINK, libc::SOCK_RAW, 0), EPERM);
    assert_eq!(sock(libc::AF_PACKET, libc::SOCK_RAW, 0), EPERM);
    let with_unix = FilterOptions { allow_unix_sockets: true, ..o };
    assert_eq!(decide(with_unix, "socket", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(with_unix, "socket", [libc::AF_INET as u64, 2, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(o, "connect", [3, 0, 16, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(o, "sendto", [3, 0, 1, libc::MSG_FASTOPEN as u64, 0, 0]), EPERM);
    assert_eq!(decide(o, "sendto", [3, 0, 1, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(o, "sendmsg", [3, 0, libc::MSG_FASTOPEN as u64, 0, 0, 0]), EPERM);
}

#[test]
fn udp_sockets_only_where_asked_for() {
    for unix in [false, true] {
        let o = FilterOptions { tcp: true, mediate_connect: true, udp: true, ..opts(true, unix) };
        let sock = |f: i32, t: i32, p: i32| decide(o, "socket", [f as u64, t as u64, p as u64, 0, 0, 0]);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_STREAM, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_INET6, libc::SOCK_STREAM, libc::IPPROTO_TCP), RET_ALLOW);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_INET6, libc::SOCK_DGRAM, libc::IPPROTO_UDP), RET_ALLOW);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP), EPERM, "ping sockets");
        assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM, 136), EPERM, "UDP-Lite");
        assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_TCP), EPERM);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_UDP), EPERM);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_RAW, 0), EPERM, "raw");
        assert_eq!(sock(libc::AF_INET, libc::SOCK_SEQPACKET, 0), EPERM);
        assert_eq!(sock(libc::AF_NETLINK, libc::SOCK_DGRAM, 0), EPERM);
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_DGRAM, 0), if unix { RET_ALLOW } else { EPERM });
    }
}

#[test]
fn landlock_mode_sends_bind_and_listen_to_the_supervisor() {
    let landlock = FilterOptions { tcp: true, mediate_connect: true, ..opts(true, false) };
    assert_eq!(decide(landlock, "bind", [3, 0, 16, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(landlock, "listen", [3, 128, 0, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(landlock, "setsockopt", [3, 1, 15, 0, 4, 0]), RET_USER_NOTIF, "SO_REUSEPORT is judged");
    // no supervisor to place servers: listen stays refused (it would bind the wildcard)
    let unmediated = opts(true, false);
    assert_eq!(decide(unmediated, "listen", [3, 128, 0, 0, 0, 0]), EPERM);
    assert_eq!(decide(unmediated, "bind", [3, 0, 16, 0, 0, 0]), RET_ALLOW, "Landlock refuses TCP binds");
    // namespace mode: the sandbox's own loopback, the kernel decides
    let ns = FilterOptions { host_namespaces: false, mediate_metadata: false, ..landlock };
    assert_eq!(decide(ns, "bind", [3, 0, 16, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(ns, "listen", [3, 128, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn listed_unix_sockets_are_stream_or_seqpacket_only() {
    for tcp in [true, false] {
        let o = FilterOptions { tcp, mediate_connect: true, unix_listed: true, ..opts(true, false) };
        let sock = |f: i32, t: i32| decide(o, "socket", [f as u64, t as u64, 0, 0, 0, 0]);
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC), RET_ALLOW, "tcp {tcp}");
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_SEQPACKET), RET_ALLOW, "tcp {tcp}");
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_DGRAM), EPERM, "a datagram socket can sendto any path");
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK), EPERM);
        assert_eq!(sock(libc::AF_UNIX, libc::SOCK_RAW), EPERM);
        assert_eq!(sock(libc::AF_NETLINK, libc::SOCK_DGRAM), EPERM);
        assert_eq!(sock(libc::AF_INET, libc::SOCK_STREAM), if tcp { RET_ALLOW } else { EPERM });
        assert_eq!(sock(libc::AF_INET, libc::SOCK_DGRAM), EPERM);
        let pair = |t: i32| decide(o, "socketpair", [libc::AF_UNIX as u64, t as u64, 0, 0, 0, 0]);
        assert_eq!(pair(libc::SOCK_DGRAM), EPERM);
        assert_eq!(pair(libc::SOCK_STREAM), RET_ALLOW);
    }
    // allowAllUnixSockets wins
    let all = FilterOptions { tcp: true, mediate_connect: true, unix_listed: true, ..opts(true, true) };
    assert_eq!(decide(all, "socket", [libc::AF_UNIX as u64, libc::SOCK_DGRAM as u64, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn descriptor_metadata_that_grants_nothing_is_left_to_the_kernel() {
    let o = opts(true, false);
    let (uid, gid) = unsafe { (libc::geteuid() as u64, libc::getegid() as u64) };
    for mode in [0o644, 0o600, 0o444, 0o640, 0o000] {
        assert_eq!(decide(o, "fchmod", [3, mode, 0, 0, 0, 0]), RET_ALLOW, "fchmod {mode:o}");
    }
    // any execute bit: a file made runnable is judged by the supervisor
    for mode in [
        0o755,
        0o700,
        0o744,
        0o654,
        0o645,
        0o100,
        0o4755,
        0o2755,
        0o1777,
        0o666,
        0o664,
        0o646,
        0o777,
        0o4000 | (1 << 32),
    ] {
        assert_eq!(decide(o, "fchmod", [3, mode, 0, 0, 0, 0]), RET_USER_NOTIF, "fchmod {mode:o}");
    }
    let none = u32::MAX as u64;
    for (u, g) in [(uid, gid), (none, none), (uid, none), (none, gid)] {
        assert_eq!(decide(o, "fchown", [3, u, g, 0, 0, 0]), RET_ALLOW, "fchown {u} {g}");
    }
    for (u, g) in [(uid + 1, gid), (uid, gid + 1), (12345, none), (none, 12345)] {
        assert_eq!(decide(o, "fchown", [3, u, g, 0, 0, 0]), RET_USER_NOTIF, "fchown {u} {g}");
    }
    assert_eq!(decide(o, "utimensat", [3, 0, 0, 0, 0, 0]), RET_ALLOW, "futimens");
    assert_eq!(decide(o, "utimensat", [3, 0x1000, 0, 0, 0, 0]), RET_USER_NOTIF, "a path");
    assert_eq!(decide(o, "utimensat", [3, 1 << 32, 0, 0, 0, 0]), RET_USER_NOTIF, "a path whose low half is 0");
    for name in ["chmod", "fchmodat", "chown", "fchownat", "lchown", "utimes", "fsetxattr"] {
        assert_eq!(decide(o, name, [3, 0o644, 0, 0, 0, 0]), RET_USER_NOTIF, "{name}");
    }
}

/// Without Landlock's filesystem rules (`--allow-weaker` on an old kernel) nothing judges
/// a call the filter lets through: the native bit then grants nothing, every create and
/// `mkdirat` goes to the supervisor.
#[test]
fn the_native_bit_needs_landlock_filesystem_rules() {
    let n = u64::from(NATIVE_CREATE);
    let create = (libc::O_WRONLY | libc::O_CREAT) as u64;
    let with = opts(true, false);
    assert_eq!(decide(with, "openat", [0, 0, create | n, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(with, "mkdirat", [0, 0, 0o755 | n, 0, 0, 0]), RET_ALLOW);
    assert_eq!(decide(with, "mkdirat", [0, 0, 0o755, 0, 0, 0]), RET_USER_NOTIF);
    let without = FilterOptions { native_fs: false, ..with };
    assert_eq!(decide(without, "openat", [0, 0, create | n, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(without, "mkdirat", [0, 0, 0o755 | n, 0, 0, 0]), RET_USER_NOTIF);
    assert_eq!(decide(without, "mkdirat", [0, 0, 0o755, 0, 0, 0]), RET_USER_NOTIF);
}
