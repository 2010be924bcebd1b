//! The child's tests: its stage bytes, and that the `CLONE_VM` child allocates nothing on
//! its way to exec, under srt's allocator (this crate's unit tests run on it, `lib.rs`).

use super::*;

#[test]
fn every_stage_round_trips_through_its_byte() {
    for b in 0..=255u8 {
        if let Some(s) = Stage::from_u8(b) {
            assert_eq!(s as u8, b);
        }
    }
    assert_eq!(Stage::from_u8(0), None);
    assert_eq!(Stage::from_u8(Stage::Allocation as u8 + 1), None);
    assert_eq!((1..=Stage::Allocation as u8).filter_map(Stage::from_u8).count(), Stage::Allocation as usize);
}

/// Runs `f` in a process of its own (a fork of this test process) and returns what it
/// returned, as its exit status: what these tests forbid in srt's allocator then concerns
/// no other test's processes.
fn in_own_process(f: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the forked child runs `f` and exits without returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(101);
        // SAFETY: leaving the forked test process at once.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "status {status:#x}");
    libc::WEXITSTATUS(status)
}

/// A SOCK_SEQPACKET pair, close-on-exec, as srt's setup socket.
fn setup_pair() -> (OwnedFd, OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`, owned below.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
    assert_eq!(r, 0);
    // SAFETY: fresh descriptors nobody else owns.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// The first byte of each message until the other end is closed everywhere (exec closes
/// the child's copy), and the second of an 'E' (the stage).
fn messages(ours: &OwnedFd) -> Vec<(u8, u8)> {
    let mut got = Vec::new();
    loop {
        let mut buf = [0u8; 8];
        // SAFETY: reading into a live buffer of its length; a passed descriptor is dropped.
        let n = unsafe { libc::recv(ours.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            return got;
        }
        got.push((buf[0], buf[1]));
    }
}

/// What the guard does: an allocation in a `CLONE_VM` child, while [`spawn`]'s guard is
/// on, ends the child with [`Stage::Allocation`] on its setup socket before it allocates.
#[test]
fn an_allocation_in_the_clone_vm_child_ends_it_with_its_stage() {
    extern "C" fn allocates(_: *mut libc::c_void) -> libc::c_int {
        let v: Vec<u8> = Vec::with_capacity(64);
        std::hint::black_box(&v);
        // SAFETY: leaving the child; the parent owns everything it shares.
        unsafe { libc::_exit(0) }
    }
    let code = in_own_process(|| {
        let (ours, theirs) = setup_pair();
        SETUP_SOCK.store(theirs.as_raw_fd(), Ordering::Relaxed);
        crate::arena::forbid_in_children(allocated_in_child);
        let pid = clone_into(libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, (), allocates);
        crate::arena::allow_in_children();
        let pid = pid.unwrap();
        drop(theirs);
        let got = messages(&ours);
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let ok = got == [(b'E', Stage::Allocation as u8)] && libc::WEXITSTATUS(status) == 127;
        if ok {
            0
        } else {
            1
        }
    });
    assert_eq!(code, 0, "the allocation was not caught");
}

/// The real child, from [`spawn`] to the exec of `/bin/true`, with a Landlock ruleset and
/// a seccomp filter (one that allows everything, with a listener), under srt's allocator
/// with the guard on: it sends the listener and execs, and never [`Stage::Allocation`].
/// This holds for the child's own steps; it proved nothing about the landlock crate's
/// `restrict_self`, which the child called before and no longer calls.
#[test]
fn the_vfork_child_allocates_nothing_on_its_way_to_exec() {
    use landlock::{Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, ABI};
    if crate::fs::landlock::kernel_abi() == 0 {
        return; // no Landlock: nothing of it to enter (the rest is covered by every run)
    }
    let code = in_own_process(|| {
        let (ours, theirs) = setup_pair();
        let ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rule(PathBeneath::new(PathFd::new("/").unwrap(), AccessFs::from_read(ABI::V1))))
            .unwrap();
        // SAFETY: an all-zero sigset is a valid empty mask.
        let mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        let argv = vec![CString::new("true").unwrap()];
        let mut spec = ChildSpec::new(CString::new("/bin/true").unwrap(), argv, Vec::new(), theirs.as_raw_fd(), mask);
        spec.landlock = Landlock::Planned(ruleset);
        // BPF_RET|BPF_K SECCOMP_RET_ALLOW
        spec.filter = vec![SockFilter { code: 0x06, jt: 0, jf: 0, k: 0x7fff_0000 }];
        let pid = spawn(spec).unwrap();
        drop(theirs);
        let got = messages(&ours);
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        if got.contains(&(b'E', Stage::Allocation as u8)) {
            2
        } else if got.len() == 1 && got[0].0 == b'L' && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            0
        } else {
            1
        }
    });
    assert_ne!(code, 2, "the child allocated");
    assert_eq!(code, 0, "the child did not get to exec /bin/true");
}
