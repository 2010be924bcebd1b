//! Namespace mode: the command runs in new user, network, mount, PID and IPC namespaces.
//! Its network namespace has only `lo`; the ports the proxy variables name (3128 HTTP,
//! 1080 SOCKS5) are listening sockets created *inside* it and handed to srt, whose proxy
//! serves them from outside, so nothing else is reachable and no bridge process is
//! needed. The first process is PID 1 of the new PID namespace, started by srt's auditor
//! ([`crate::process::auditor`]): when it exits, or the auditor dies, the kernel ends every process
//! of the command.

use std::os::fd::RawFd;

use crate::process::child::{self, ChildSpec, Landlock, Stage};

pub use crate::net::inside::{DNS_PORT, HTTP_PORT, SOCKS_PORT};

pub const FLAGS: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;

pub struct InitSpec {
    pub command: ChildSpec,
    /// The auditor writes one byte here once the id maps are in place.
    pub go: RawFd,
    /// The read-only mount view the command gets.
    pub view: crate::fs::mounts::MountView,
    /// Transparent mode: also open srt's DNS ports inside.
    pub dns: bool,
}

/// Starts the namespaced init; returns its pid (as srt sees it).
pub fn spawn(spec: InitSpec) -> std::io::Result<libc::pid_t> {
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: without CLONE_VM this reads our own copy of the parent's spec.
        let spec = unsafe { std::ptr::read(arg as *mut InitSpec) };
        init(spec)
    }
    child::clone_into(FLAGS | libc::SIGCHLD, spec, entry)
}

/// Maps the caller's own uid and gid into the child's user namespace.
pub fn write_id_maps(pid: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    std::fs::write(format!("/proc/{pid}/uid_map"), format!("{uid} {uid} 1\n"))?;
    std::fs::write(format!("/proc/{pid}/setgroups"), "deny\n")?;
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("{gid} {gid} 1\n"))
}

fn fail(sock: RawFd, stage: Stage, errno: i32) -> ! {
    child::report_failure(sock, stage, errno)
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// PID 1 of the command's namespaces. Runs in a fork-like copy of srt (single-threaded
/// at the clone), so it may allocate.
fn init(mut spec: InitSpec) -> ! {
    let sock = spec.command.sock;
    // SAFETY (block): plain syscalls on values we own.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"srt-init".as_ptr() as libc::c_ulong, 0, 0, 0);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
            fail(sock, Stage::ParentDeath, errno());
        }
        // if the auditor died before the line above, its end of `go` is closed and the read fails
        let mut b = [0u8; 1];
        if libc::read(spec.go, b.as_mut_ptr().cast(), 1) != 1 {
            libc::_exit(127);
        }
        libc::close(spec.go);
        // our mounts stay ours; a fresh /proc shows only the command's processes
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) < 0
        {
            fail(sock, Stage::Mounts, errno());
        }
        if let Err(e) = crate::fs::mounts::apply(&spec.view) {
            fail(sock, Stage::Mounts, e);
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, std::ptr::null()) < 0 {
            fail(sock, Stage::Mounts, errno());
        }
    }
    // the ruleset was planned on the host's /proc and /dev/pts; these are new inodes. Then
    // made a descriptor here, as for the vfork child: the command's child only enters it.
    let planned = std::mem::replace(&mut spec.command.landlock, Landlock::Unenforceable);
    spec.command.landlock = match planned {
        Landlock::Planned(rs) if spec.view.private_rules => {
            match crate::fs::landlock::with_private_mounts(rs, spec.view.shm) {
                Ok(rs) => Landlock::Planned(rs),
                Err(e) => fail(sock, Stage::Landlock, e),
            }
        }
        other => other,
    }
    .ready();
    if let Err(e) = loopback_up() {
        fail(sock, Stage::Loopback, e);
    }
    let mut listeners = Vec::new();
    for (port, v6) in [(HTTP_PORT, false), (SOCKS_PORT, false), (HTTP_PORT, true), (SOCKS_PORT, true)] {
        match listen(port, v6) {
            Ok(fd) => listeners.push(fd),
            // IPv6 may be disabled in the namespace; IPv4 is required
            Err(_) if v6 => {}
            Err(e) => fail(sock, Stage::Loopback, e),
        }
    }
    if spec.dns {
        for made in [listen(DNS_PORT, false), udp(DNS_PORT)] {
            match made {
                Ok(fd) => listeners.push(fd),
                Err(e) => fail(sock, Stage::Loopback, e),
            }
        }
    }
    if let Err(e) = send_fds(sock, b'B', &listeners) {
        fail(sock, Stage::SendListener, e);
    }
    for fd in listeners {
        // SAFETY: closing our copies; srt holds its own.
        unsafe { libc::close(fd) };
    }
    // SAFETY: single-threaded process; the child only makes syscalls before exec.
    let cmd = unsafe { libc::fork() };
    if cmd < 0 {
        fail(sock, Stage::Exec, errno());
    }
    if cmd == 0 {
        child::run(spec.command);
    }
    // SAFETY: closing init's copy of the setup socket, so exec in the command closes the last.
    unsafe { libc::close(sock) };
    wait_for(cmd)
}

/// Reaps everything (orphans come to PID 1), forwards srt's signals to the command's
/// process group, and exits with the command's status.
fn wait_for(cmd: libc::pid_t) -> ! {
    // SAFETY (block): signal-mask and wait syscalls on locals; the mask was blocked by srt.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        loop {
            let sig = libc::sigwaitinfo(&set, std::ptr::null_mut());
            if sig == libc::SIGCHLD {
                loop {
                    let mut st = 0;
                    let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
                    if r <= 0 {
                        break;
                    }
                    if r == cmd {
                        let code = if libc::WIFEXITED(st) {
                            libc::WEXITSTATUS(st)
                        } else if libc::WIFSIGNALED(st) {
                            128 + libc::WTERMSIG(st)
                        } else {
                            1
                        };
                        libc::_exit(code);
                    }
                }
            } else if sig > 0 {
                libc::kill(-cmd, sig);
            }
        }
    }
}

#[repr(C)]
struct Ifreq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn loopback_up() -> Result<(), i32> {
    const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
    const SIOCSIFFLAGS: libc::c_ulong = 0x8914;
    // SAFETY (block): ioctl on a fresh datagram socket with a correctly sized ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(errno());
        }
        let mut ifr = Ifreq { name: [0; 16], flags: 0, _pad: [0; 22] };
        ifr.name[..2].copy_from_slice(b"lo");
        let r = if libc::ioctl(fd, SIOCGIFFLAGS as _, &mut ifr) < 0 {
            Err(errno())
        } else {
            ifr.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(fd, SIOCSIFFLAGS as _, &mut ifr) < 0 {
                Err(errno())
            } else {
                Ok(())
            }
        };
        libc::close(fd);
        r
    }
}

fn listen(port: u16, v6: bool) -> Result<RawFd, i32> {
    let addr: std::net::SocketAddr =
        if v6 { (std::net::Ipv6Addr::LOCALHOST, port).into() } else { (std::net::Ipv4Addr::LOCALHOST, port).into() };
    let l = std::net::TcpListener::bind(addr).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    use std::os::fd::IntoRawFd;
    Ok(l.into_raw_fd())
}

fn udp(port: u16) -> Result<RawFd, i32> {
    let u = std::net::UdpSocket::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    use std::os::fd::IntoRawFd;
    Ok(u.into_raw_fd())
}

fn send_fds(sock: RawFd, tag: u8, fds: &[RawFd]) -> Result<(), i32> {
    let mut t = [tag];
    let mut iov = libc::iovec { iov_base: t.as_mut_ptr().cast(), iov_len: 1 };
    let mut cbuf = [0u64; 8];
    let len = std::mem::size_of_val(fds) as u32;
    // SAFETY: msghdr and the control buffer (large enough for 6 descriptors) live here.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(len) as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(len) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast::<RawFd>(), fds.len());
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return Err(errno());
        }
    }
    Ok(())
}
