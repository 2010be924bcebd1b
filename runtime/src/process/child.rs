//! What the forked child does before it becomes the command. Only syscalls on data the
//! parent prepared: everything that allocates or opens files happened before the fork.
//! Order matters: session and parent-death first, capabilities before no_new_privs and
//! Landlock, seccomp last so it need not allow the setup syscalls.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

use landlock::RulesetCreated;

use crate::seccomp::{self, SockFilter};

/// Where setup failed, reported to the parent before the child exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    Session = 1,
    ParentDeath,
    CloseFds,
    Capabilities,
    Landlock,
    LandlockNotEnforced,
    Seccomp,
    SendListener,
    Exec,
    Mounts,
    Loopback,
    /// The auditor could not start the command's process.
    Spawn,
    /// The auditor could not create the namespaces.
    Namespaces,
    /// The auditor could not map srt's ids into the new user namespace.
    IdMaps,
    /// The `CLONE_VM` child allocated or freed memory: a bug in srt ([`spawn`]).
    Allocation,
}

/// The Landlock domain the command enters. The child gets it as a descriptor: entering it
/// is then two system calls of srt's own, with nothing of the landlock crate's in the
/// child, where nothing may allocate ([`spawn`]).
pub enum Landlock {
    /// None: a kernel without Landlock (only under `--allow-weaker`). The child sets only
    /// no_new_privs, which the seccomp filter needs.
    Off,
    /// The ruleset as built, to which namespace mode's init still adds rules for its own
    /// mounts. [`Landlock::ready`] makes it a descriptor before the child starts; a child
    /// given it refuses to run the command.
    Planned(RulesetCreated),
    /// The ruleset's descriptor.
    Ready(OwnedFd),
    /// The kernel made no ruleset of the plan (it handles none of the plan's rights): the
    /// child refuses to run the command.
    Unenforceable,
}

impl Landlock {
    /// The descriptor of a planned ruleset (the landlock crate creates one exactly when
    /// the kernel enforces some of it). Called in the parent.
    pub fn ready(self) -> Landlock {
        match self {
            Landlock::Planned(rs) => Option::<OwnedFd>::from(rs).map_or(Landlock::Unenforceable, Landlock::Ready),
            other => other,
        }
    }
}

impl ChildSpec {
    pub fn new(
        program: CString,
        argv: Vec<CString>,
        envp: Vec<CString>,
        sock: RawFd,
        old_mask: libc::sigset_t,
    ) -> Self {
        let ptrs = |v: &[CString]| v.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        ChildSpec {
            argv_ptrs: ptrs(&argv),
            envp_ptrs: ptrs(&envp),
            program,
            argv,
            envp,
            landlock: Landlock::Off,
            filter: Vec::new(),
            sock,
            // SAFETY: getpid cannot fail.
            parent_pid: unsafe { libc::getpid() },
            old_mask,
            given: crate::limits::given(),
        }
    }
}

/// Starts the child with `CLONE_VM | CLONE_VFORK` on its own stack, as posix_spawn does:
/// no page tables copied and no copy-on-write faults in the parent afterwards. The
/// parent is suspended until the child execs or exits, so the shared memory is never
/// used by both at once, and the child never allocates or frees: the parent's thread may
/// be suspended anywhere, its allocator's state half-changed. What the child runs is
/// system calls on data prepared here (the Landlock ruleset made a descriptor first), and
/// srt's allocator holds it to that: an allocation or free from the child ends it with
/// [`Stage::Allocation`] ([`crate::arena::forbid_in_children`]).
pub fn spawn(mut spec: ChildSpec) -> std::io::Result<libc::pid_t> {
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` points at the parent's spec, which the parent does not touch
        // until the child has exec'd or exited; this bitwise copy runs no destructor.
        let spec = unsafe { std::ptr::read(arg as *mut ChildSpec) };
        run(spec)
    }
    spec.landlock = spec.landlock.ready();
    SETUP_SOCK.store(spec.sock, Ordering::Relaxed);
    crate::arena::forbid_in_children(allocated_in_child);
    let pid = clone_into(libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, spec, entry);
    crate::arena::allow_in_children();
    pid
}

/// The setup socket of the `CLONE_VM` child running now, for [`allocated_in_child`].
static SETUP_SOCK: AtomicI32 = AtomicI32::new(-1);

/// Called by srt's allocator in the `CLONE_VM` child, instead of allocating or freeing.
fn allocated_in_child() -> ! {
    report_failure(SETUP_SOCK.load(Ordering::Relaxed), Stage::Allocation, libc::ENOMEM)
}

/// Runs `entry(&spec)` in a clone of this process made with `flags`, on a fresh stack.
/// `entry` takes a bitwise copy of `spec` and never returns (it execs or exits), so the
/// parent's drop of `spec` after the clone returns is the only one.
pub(crate) fn clone_into<T>(
    flags: libc::c_int,
    spec: T,
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
) -> std::io::Result<libc::pid_t> {
    const STACK: usize = 256 * 1024;
    // Mapped, not allocated: a zeroed heap allocation of this size may be cleared page by
    // page (0.04 ms of faults on the way to the command's exec); a fresh mapping is zero
    // without being touched, and the child uses a few pages of it.
    // SAFETY: a new private anonymous mapping; nothing else refers to it.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut slot = std::mem::ManuallyDrop::new(spec);
    // SAFETY: the stack is mapped and 16-byte aligned at its top for the whole clone; with
    // CLONE_VM the parent stays suspended (CLONE_VFORK) until the child execs or exits.
    let pid = unsafe {
        let top = (stack as *mut u8).add(STACK) as usize & !15;
        libc::clone(entry, top as *mut libc::c_void, flags, (&mut *slot as *mut T).cast())
    };
    let err = std::io::Error::last_os_error();
    drop(std::mem::ManuallyDrop::into_inner(slot));
    // SAFETY: our own mapping, which nothing uses any more: the child has exec'd or exited
    // (CLONE_VFORK), or has a copy of its own (no CLONE_VM).
    unsafe { libc::munmap(stack, STACK) };
    if pid < 0 {
        return Err(err);
    }
    Ok(pid)
}

impl Stage {
    pub fn from_u8(b: u8) -> Option<Stage> {
        Some(match b {
            1 => Stage::Session,
            2 => Stage::ParentDeath,
            3 => Stage::CloseFds,
            4 => Stage::Capabilities,
            5 => Stage::Landlock,
            6 => Stage::LandlockNotEnforced,
            7 => Stage::Seccomp,
            8 => Stage::SendListener,
            9 => Stage::Exec,
            10 => Stage::Mounts,
            11 => Stage::Loopback,
            12 => Stage::Spawn,
            13 => Stage::Namespaces,
            14 => Stage::IdMaps,
            15 => Stage::Allocation,
            _ => return None,
        })
    }
    pub fn describe(self) -> &'static str {
        match self {
            Stage::Session => "starting a new session (setsid)",
            Stage::ParentDeath => "setting the parent-death signal",
            Stage::CloseFds => "closing inherited file descriptors (close_range)",
            Stage::Capabilities => "dropping capabilities",
            Stage::Landlock => "enforcing Landlock",
            Stage::LandlockNotEnforced => "enforcing Landlock (the kernel enforced none of the rules)",
            Stage::Seccomp => "installing the seccomp filter",
            Stage::SendListener => "handing the seccomp listener to the supervisor",
            Stage::Exec => "executing the command",
            Stage::Mounts => "setting up the read-only mount view, private /proc and devpts in the new mount namespace",
            Stage::Loopback => "setting up the loopback interface and proxy ports in the new network namespace",
            Stage::Spawn => "starting the command's process",
            Stage::Namespaces => "clone with new user, network, mount, PID and IPC namespaces",
            Stage::IdMaps => "mapping srt's uid and gid into the new user namespace",
            Stage::Allocation => "starting the command (its process allocated memory in srt's own: a bug in srt)",
        }
    }
}

pub struct ChildSpec {
    pub program: CString,
    /// NULL-terminated pointer arrays into `argv`/`envp`, built before the clone: the
    /// child shares the parent's memory until it execs, so it must not allocate.
    pub argv_ptrs: Vec<*const libc::c_char>,
    pub envp_ptrs: Vec<*const libc::c_char>,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub landlock: Landlock,
    pub filter: Vec<SockFilter>,
    /// Our end of the setup socket (SOCK_SEQPACKET, close-on-exec).
    pub sock: RawFd,
    pub parent_pid: libc::pid_t,
    pub old_mask: libc::sigset_t,
    /// The limits and signal dispositions srt was started with, which srt changed for
    /// itself ([`crate::limits`]): the command gets them back.
    pub given: crate::limits::Given,
}

/// Tells srt which setup stage failed and exits 127 (async-signal-safe).
pub(crate) fn report_failure(sock: RawFd, stage: Stage, errno: i32) -> ! {
    let mut msg = [0u8; 6];
    msg[0] = b'E';
    msg[1] = stage as u8;
    msg[2..6].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: plain syscalls; the message buffer is live. Nothing else can be done on failure.
    unsafe {
        libc::send(sock, msg.as_ptr().cast(), msg.len(), 0);
        libc::_exit(127)
    }
}

/// Never returns: execs the command or exits 127 after telling the parent why.
pub fn run(spec: ChildSpec) -> ! {
    let sock = spec.sock;
    let fail = |stage: Stage, errno: i32| -> ! { report_failure(sock, stage, errno) };
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);

    spec.given.restore();
    // SAFETY (whole block): async-signal-safe syscalls on values prepared before fork.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, &spec.old_mask, std::ptr::null_mut());
        if libc::setsid() < 0 {
            fail(Stage::Session, errno());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
            fail(Stage::ParentDeath, errno());
        }
        // The parent may have died before the line above took effect.
        if libc::getppid() != spec.parent_pid {
            libc::_exit(127);
        }
        // CLOEXEC rather than close: our setup socket must live until exec.
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) < 0 {
            fail(Stage::CloseFds, errno());
        }
    }
    if let Err(e) = drop_capabilities() {
        fail(Stage::Capabilities, e);
    }
    // no_new_privs: Landlock and, without CAP_SYS_ADMIN, seccomp need it
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } < 0 {
        fail(Stage::Landlock, errno());
    }
    match &spec.landlock {
        Landlock::Off => {}
        Landlock::Ready(rs) => {
            // SAFETY: plain syscall on a ruleset descriptor the spec owns, no flags. The
            // descriptor is close-on-exec (as every ruleset is).
            if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, rs.as_raw_fd(), 0u32) } < 0 {
                fail(Stage::Landlock, errno());
            }
        }
        Landlock::Unenforceable => fail(Stage::LandlockNotEnforced, libc::ENOSYS),
        // a parent that did not make it ready: never enforce less than planned
        Landlock::Planned(_) => fail(Stage::Landlock, libc::EINVAL),
    }
    let listener = match seccomp::install(&spec.filter) {
        Ok(fd) => fd,
        Err(e) => fail(Stage::Seccomp, e),
    };
    if let Err(e) = send_fd(sock, listener) {
        fail(Stage::SendListener, e);
    }
    // SAFETY: closing our copy; the parent holds its own.
    unsafe { libc::close(listener) };
    // SAFETY: NULL-terminated arrays of C strings that live in `spec`.
    unsafe { libc::execve(spec.program.as_ptr(), spec.argv_ptrs.as_ptr(), spec.envp_ptrs.as_ptr()) };
    fail(Stage::Exec, errno())
}

/// Empties the effective, permitted, inheritable and ambient sets of the caller; enough
/// for a process that will not exec (the supervisor).
pub fn drop_own_capabilities() -> Result<(), i32> {
    // SAFETY: prctl/capset with integer and stack arguments.
    unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0);
        let mut header = CapHeader { version: 0x2008_0522, pid: 0 };
        let data = [CapData::default(); 2];
        if libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, data.as_ptr()) < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
        }
    }
    Ok(())
}

/// Empties every capability set of the command. As root it also locks the securebits
/// (NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE, KEEP_CAPS off), so an exec cannot hand
/// capabilities back; with no_new_privs set as well, the bounding set no longer matters
/// (clearing it costs 41 credential commits per launch for nothing).
fn drop_capabilities() -> Result<(), i32> {
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
    if has_effective(CAP_SETPCAP) {
        const SECUREBITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;
        // SAFETY: plain prctl with integer arguments.
        if unsafe { libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) } < 0 {
            return Err(errno());
        }
    }
    drop_own_capabilities()
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// linux/capability.h
const CAP_SETPCAP: u32 = 8;

fn has_effective(cap: u32) -> bool {
    let mut header = CapHeader { version: 0x2008_0522, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget writes two CapData structs into `data`.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut CapHeader, data.as_mut_ptr()) };
    r == 0 && data[(cap / 32) as usize].effective & (1 << (cap % 32)) != 0
}

fn send_fd(sock: RawFd, fd: RawFd) -> Result<(), i32> {
    let mut tag = [b'L'];
    let mut iov = libc::iovec { iov_base: tag.as_mut_ptr().cast(), iov_len: 1 };
    // room for one cmsg carrying one int, 8-byte aligned
    let mut cbuf = [0u64; 4];
    // SAFETY: msghdr and the control buffer live on this stack frame for the call; the
    // CMSG macros stay within `cbuf`, which is larger than CMSG_SPACE(sizeof(int)).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "child_tests.rs"]
mod tests;
