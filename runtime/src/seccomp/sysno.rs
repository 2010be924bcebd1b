//! Syscall names and numbers for the architectures the filter supports.

/// Refused with EPERM: kernel attack surface and ways around the other layers.
#[rustfmt::skip]
pub const DENIED: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "open_tree",
    "move_mount",
    "mount_setattr",
    "open_tree_attr",
    "unshare",
    "setns",
    "name_to_handle_at",
    "open_by_handle_at",
    "iopl",
    "ioperm",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "uselib",
];

/// Routed to the supervisor: every syscall that creates, removes or renames a name, or
/// truncates by path (write-opens are routed by a flag test in `seccomp::rules`).
#[rustfmt::skip]
pub const MEDIATED: &[&str] = &[
    "creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
    "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "truncate",
];

/// Metadata: Landlock does not cover it. In landlock mode the supervisor judges every call;
/// in namespace mode read-only mounts make the kernel refuse what the policy refuses.
#[rustfmt::skip]
pub const METADATA: &[&str] = &[
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "futimesat", "utimensat",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
];

/// System V IPC and POSIX message queues: shared with the host unless the command has an
/// IPC namespace of its own, so refused in landlock mode.
#[rustfmt::skip]
pub const HOST_IPC: &[&str] = &[
    "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
    "shmget", "shmat", "shmdt", "shmctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
];

/// Landlock mode: calls that change another process named by pid (or process group) and
/// that neither Landlock's ptrace scoping nor its signal scoping covers, with the argument
/// holding the pid and, where a `which` argument can widen the target to every process of
/// a user, that argument and its user value. They go to the supervisor unless they name
/// the caller itself ([`crate::supervisor`]'s pid judge).
#[rustfmt::skip]
pub const PID_TARGETED: &[PidTargeted] = &[
    ("prlimit64", 0, None),
    ("sched_setaffinity", 0, None),
    ("sched_setscheduler", 0, None),
    ("sched_setparam", 0, None),
    ("sched_setattr", 0, None),
    // setpriority(which, who, prio): PRIO_USER (2) names every process of a uid
    ("setpriority", 1, Some((0, 2))),
    // ioprio_set(which, who, ioprio): IOPRIO_WHO_USER (3) likewise
    ("ioprio_set", 1, Some((0, 3))),
];

/// Landlock mode on a kernel whose Landlock cannot scope signals (ABI < 6): the calls
/// that send a signal to a pid, with the argument holding it (tgkill and
/// rt_tgsigqueueinfo: the thread id, which the kernel matches against the group).
/// `pidfd_send_signal` and `fcntl(F_SETOWN)` (SIGIO to an owner) are judged too.
#[rustfmt::skip]
pub const SIGNAL_TARGETED: &[PidTargeted] = &[
    ("kill", 0, None),
    ("tkill", 0, None),
    ("tgkill", 1, None),
    ("rt_sigqueueinfo", 0, None),
    ("rt_tgsigqueueinfo", 1, None),
];

/// (name, the argument holding the pid, the `which` argument and its whole-uid value).
pub type PidTargeted = (&'static str, u32, Option<(u32, u32)>);

pub struct Arch {
    pub audit_arch: u32,
    /// x86_64 kernels may route numbers with this bit to the x32 ABI; the filter kills them.
    pub x32_bit: Option<u32>,
    /// This architecture's calls beyond [`COMMON`].
    own: &'static [(&'static str, i64)],
}

impl Arch {
    fn table(&self) -> impl Iterator<Item = &'static (&'static str, i64)> {
        COMMON.iter().chain(self.own)
    }
    pub fn nr(&self, name: &str) -> Option<i64> {
        self.table().find(|(n, _)| *n == name).map(|(_, nr)| *nr)
    }
    pub fn name(&self, nr: i64) -> Option<&'static str> {
        self.table().find(|(_, n)| *n == nr).map(|(name, _)| *name)
    }
}

#[cfg(target_arch = "x86_64")]
pub fn native() -> Arch {
    Arch { audit_arch: 0xC000_003E, x32_bit: Some(0x4000_0000), own: X86_64_ONLY }
}

#[cfg(target_arch = "aarch64")]
pub fn native() -> Arch {
    Arch { audit_arch: 0xC000_00B7, x32_bit: None, own: &[] }
}

/// Syscalls both architectures have, with the same names (numbers from each target's libc;
/// the literals are newer than libc and numbered alike on every architecture).
#[rustfmt::skip]
static COMMON: &[(&str, i64)] = {
    use libc::*;
    &[
        ("ptrace", SYS_ptrace), ("process_vm_readv", SYS_process_vm_readv),
        ("process_vm_writev", SYS_process_vm_writev), ("io_uring_setup", SYS_io_uring_setup),
        ("io_uring_enter", SYS_io_uring_enter), ("io_uring_register", SYS_io_uring_register),
        ("bpf", SYS_bpf), ("perf_event_open", SYS_perf_event_open), ("userfaultfd", SYS_userfaultfd),
        ("keyctl", SYS_keyctl), ("add_key", SYS_add_key), ("request_key", SYS_request_key),
        ("kexec_load", SYS_kexec_load), ("kexec_file_load", SYS_kexec_file_load),
        ("init_module", SYS_init_module), ("finit_module", SYS_finit_module),
        ("delete_module", SYS_delete_module), ("mount", SYS_mount), ("umount2", SYS_umount2),
        ("pivot_root", SYS_pivot_root), ("chroot", SYS_chroot), ("fsopen", SYS_fsopen),
        ("fsconfig", SYS_fsconfig), ("fsmount", SYS_fsmount), ("fspick", SYS_fspick),
        ("open_tree", SYS_open_tree), ("move_mount", SYS_move_mount),
        ("mount_setattr", SYS_mount_setattr), ("open_tree_attr", 467),
        ("unshare", SYS_unshare), ("setns", SYS_setns),
        ("name_to_handle_at", SYS_name_to_handle_at), ("open_by_handle_at", SYS_open_by_handle_at),
        ("swapon", SYS_swapon), ("swapoff", SYS_swapoff),
        ("reboot", SYS_reboot), ("acct", SYS_acct), ("quotactl", SYS_quotactl), ("quotactl_fd", 443),
        ("clone3", SYS_clone3), ("openat2", SYS_openat2), ("clone", SYS_clone), ("ioctl", SYS_ioctl),
        ("socket", SYS_socket), ("bind", SYS_bind), ("setsockopt", SYS_setsockopt), ("socketpair", SYS_socketpair), ("connect", SYS_connect),
        ("sendto", SYS_sendto), ("sendmsg", SYS_sendmsg), ("sendmmsg", SYS_sendmmsg),
        ("openat", SYS_openat), ("mkdirat", SYS_mkdirat), ("mknodat", SYS_mknodat),
        ("symlinkat", SYS_symlinkat), ("linkat", SYS_linkat), ("renameat", SYS_renameat),
        ("renameat2", SYS_renameat2), ("unlinkat", SYS_unlinkat), ("truncate", SYS_truncate), ("read", SYS_read),
        ("fchmod", SYS_fchmod), ("fchmodat", SYS_fchmodat), ("fchmodat2", 452),
        ("fchown", SYS_fchown), ("fchownat", SYS_fchownat), ("utimensat", SYS_utimensat),
        ("setxattr", SYS_setxattr), ("lsetxattr", SYS_lsetxattr), ("fsetxattr", SYS_fsetxattr),
        ("removexattr", SYS_removexattr), ("lremovexattr", SYS_lremovexattr), ("fremovexattr", SYS_fremovexattr),
        ("setxattrat", 463), ("removexattrat", 466), ("file_setattr", 469), ("listen", SYS_listen), ("getsockname", SYS_getsockname), ("getpeername", SYS_getpeername), ("umask", SYS_umask), ("chdir", SYS_chdir), ("fchdir", SYS_fchdir),
        ("msgget", SYS_msgget), ("msgsnd", SYS_msgsnd), ("msgrcv", SYS_msgrcv), ("msgctl", SYS_msgctl),
        ("semget", SYS_semget), ("semop", SYS_semop), ("semtimedop", SYS_semtimedop), ("semctl", SYS_semctl),
        ("shmget", SYS_shmget), ("shmat", SYS_shmat), ("shmdt", SYS_shmdt), ("shmctl", SYS_shmctl),
        ("mq_open", SYS_mq_open), ("mq_unlink", SYS_mq_unlink), ("mq_timedsend", SYS_mq_timedsend),
        ("mq_timedreceive", SYS_mq_timedreceive), ("mq_notify", SYS_mq_notify), ("mq_getsetattr", SYS_mq_getsetattr),
        ("prlimit64", SYS_prlimit64), ("sched_setaffinity", SYS_sched_setaffinity),
        ("sched_setscheduler", SYS_sched_setscheduler), ("sched_setparam", SYS_sched_setparam),
        ("sched_setattr", SYS_sched_setattr), ("setpriority", SYS_setpriority), ("ioprio_set", SYS_ioprio_set),
        ("kill", SYS_kill), ("tkill", SYS_tkill), ("tgkill", SYS_tgkill), ("rt_sigqueueinfo", SYS_rt_sigqueueinfo),
        ("rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo), ("pidfd_send_signal", SYS_pidfd_send_signal),
        ("fcntl", SYS_fcntl),
    ]
};

/// x86_64's older path-based calls (aarch64 only has their `*at` forms) and I/O-port calls.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
static X86_64_ONLY: &[(&str, i64)] = {
    use libc::*;
    &[
        ("iopl", SYS_iopl), ("ioperm", SYS_ioperm), ("lookup_dcookie", SYS_lookup_dcookie), ("uselib", SYS_uselib),
        ("open", SYS_open), ("creat", SYS_creat), ("mkdir", SYS_mkdir), ("mknod", SYS_mknod),
        ("symlink", SYS_symlink), ("link", SYS_link), ("rename", SYS_rename), ("unlink", SYS_unlink),
        ("rmdir", SYS_rmdir), ("chmod", SYS_chmod), ("chown", SYS_chown), ("lchown", SYS_lchown),
        ("utime", SYS_utime), ("utimes", SYS_utimes), ("futimesat", SYS_futimesat),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A name the table lacks would silently drop out of the filter; on x86_64 every listed
    /// call exists, so every one must resolve (and to a number no other name has).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_filtered_name_resolves_on_x86_64() {
        let arch = native();
        let mut seen = std::collections::HashMap::new();
        let pid_targeted = PID_TARGETED.iter().chain(SIGNAL_TARGETED).map(|(n, _, _)| n);
        for name in DENIED.iter().chain(MEDIATED).chain(METADATA).chain(HOST_IPC).chain(pid_targeted) {
            let nr = arch.nr(name).unwrap_or_else(|| panic!("{name} is not in the syscall table"));
            assert_eq!(arch.name(nr), Some(*name));
            if let Some(other) = seen.insert(nr, *name) {
                panic!("{name} and {other} share number {nr}");
            }
        }
    }
}
