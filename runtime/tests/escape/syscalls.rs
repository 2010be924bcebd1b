//! Kernel interfaces the command must not reach.

use super::harness::{py, py_syscall, Scenario};
use crate::escapes;

fn nr(name: &str) -> i64 {
    match name {
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "ptrace" => libc::SYS_ptrace,
        "bpf" => libc::SYS_bpf,
        "userfaultfd" => libc::SYS_userfaultfd,
        "add_key" => libc::SYS_add_key,
        "clone3" => libc::SYS_clone3,
        "perf_event_open" => libc::SYS_perf_event_open,
        "unshare" => libc::SYS_unshare,
        "setns" => libc::SYS_setns,
        _ => unreachable!(),
    }
}

escapes! {
    io_uring => Scenario::new(&py_syscall(nr("io_uring_setup"), ", 1, ctypes.create_string_buffer(120)"))
        .fails().prints("errno 1\n");
    ptrace_traceme => Scenario::new(&py_syscall(nr("ptrace"), ", 0, 0, 0, 0")).fails().prints("errno 1\n");
    bpf => Scenario::new(&py_syscall(nr("bpf"), ", 0, 0, 0")).fails().prints("errno 1\n");
    userfaultfd => Scenario::new(&py_syscall(nr("userfaultfd"), ", 0")).fails().prints("errno 1\n");
    keyring => Scenario::new(&py_syscall(nr("add_key"), ", b\"user\", b\"k\", b\"v\", 1, -3")).fails().prints("errno 1\n");
    perf_event_open => Scenario::new(&py_syscall(nr("perf_event_open"), ", 0, 0, -1, -1, 0")).fails().prints("errno 1\n");
    clone3_is_unavailable => Scenario::new(&py_syscall(nr("clone3"), ", 0, 0")).fails().prints("errno 38\n");
    unshare_user_namespace => Scenario::new("unshare -U true || unshare -Ur true").fails();
    unshare_syscall_all_namespaces => Scenario::new(&py_syscall(nr("unshare"), ", 0x7e020000")).fails().prints("errno 1\n");
    setns => Scenario::new(&py_syscall(nr("setns"), ", 0, 0")).fails().prints("errno 1\n");
    mount_tmpfs => Scenario::new("mkdir -p m && mount -t tmpfs none m && echo MOUNTED").fails().lacks("MOUNTED")
        .check(|e, _| {
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
            if mounts.contains(e.w("m").to_str().unwrap()) { Err("a tmpfs got mounted on the host".into()) } else { Ok(()) }
        });
    tiocsti_injection => Scenario::new(&py(
        "import os,fcntl,termios,sys; m,s=os.openpty(); \
         r=0\ntry:\n fcntl.ioctl(s, termios.TIOCSTI, b\"x\")\nexcept OSError as e:\n print(\"errno\", e.errno); r=1\nsys.exit(r)"))
        .fails().prints("errno 1\n");
    tiocsti_high_bits => Scenario::new(&py(
        "import os,ctypes,termios,sys; l=ctypes.CDLL(None,use_errno=True); m,s=os.openpty(); c=ctypes.c_char(b\"x\"); \
         r=l.ioctl(s, ctypes.c_ulong(termios.TIOCSTI | (1<<32)), ctypes.byref(c)); print(\"errno\", ctypes.get_errno()); sys.exit(0 if r==0 else 1)"))
        .fails().prints("errno 1\n");
}
