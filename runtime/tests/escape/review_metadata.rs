//! Outside review, findings 1 and 12: metadata of a file outside allowWrite changed
//! through objects the supervisor cannot resolve (`/proc/self/fd/N` names the supervisor
//! itself, a pipe swapped in for the file while the call is judged), and inode flags,
//! which neither Landlock nor the supervisor looks at (`FS_IOC_SETFLAGS`, `file_setattr`).
//!
//! O/target is owned by the scenario's user, so as uid 65534 plain DAC would allow every
//! one of these: only the sandbox stands in the way.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::Duration;

use super::harness::{Env, Output, Scenario};
use crate::escapes;

/// Mode of O/target: setuid, so even a no-op `chown` by its owner shows (it clears the bit).
const MODE: u32 = 0o4755;

fn target(e: &Env) {
    e.file(&e.o("target"), "orig\n");
    std::fs::set_permissions(e.o("target"), std::fs::Permissions::from_mode(MODE)).unwrap();
}

/// O/target still holds its content, mode, owner, timestamps and no `user.evil` xattr.
fn unchanged(e: &Env, _: &Output) -> Result<(), String> {
    let p = e.o("target");
    let m = std::fs::metadata(&p).map_err(|err| format!("O/target is gone: {err}"))?;
    let mut bad = Vec::new();
    if m.mode() & 0o7777 != MODE {
        bad.push(format!("mode is now {:o}", m.mode() & 0o7777));
    }
    if m.uid() != e.uid.unwrap_or(0) {
        bad.push(format!("owner is now {}", m.uid()));
    }
    if m.modified().unwrap().elapsed().map_or(true, |d| d > Duration::from_secs(3600)) {
        bad.push("mtime was changed".into());
    }
    if xattr_present(&p) {
        bad.push("xattr user.evil was set".into());
    }
    if std::fs::read_to_string(&p).ok().as_deref() != Some("orig\n") {
        bad.push("content changed".into());
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("O/target changed: {}", bad.join(", ")))
    }
}

fn xattr_present(p: &std::path::Path) -> bool {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: getxattr into a local buffer.
    unsafe { libc::getxattr(c.as_ptr(), c"user.evil".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) >= 0 }
}

/// `op` applied to O/target through a path naming an open descriptor of it (`proc`:
/// `/proc/self/fd/N`, `dev`: `/dev/fd/N`) or through the descriptor (`fd`). The path
/// forms try every free descriptor number below 64, so what the supervisor happens to
/// hold under the same number does not decide the outcome. Exits 0 when a call succeeded.
const VIA_FD: &str = r#"
import os, sys
op, form, target = sys.argv[1:4]
fd = os.open(target, os.O_RDONLY)
def apply(path):
    if op == "chmod":
        os.chmod(path, 0o4777)
    elif op == "chown":
        os.chown(path, os.getuid(), os.getgid())
    elif op == "utime":
        os.utime(path, (1, 1))
    elif op == "setxattr":
        os.setxattr(path, "user.evil", b"1")
fds = [fd]
if form != "fd":
    for n in range(3, 64):
        try:
            os.fstat(n)
        except OSError:
            os.dup2(fd, n); fds.append(n)
errors = set()
for n in fds:
    path = {"proc": "/proc/self/fd/%d" % n, "dev": "/dev/fd/%d" % n, "fd": n}[form]
    try:
        apply(path)
    except OSError as e:
        errors.add(e.strerror); continue
    print(op, form, n, "SUCCEEDED"); sys.exit(0)
print(op, form, "refused:", sorted(errors))
sys.exit(1)
"#;

/// Thread A swaps descriptor 7 between a pipe and O/target; thread B calls fchmod(7) until
/// the mode changes (bounded: 20000 calls or 5 s). Exits 0 when it changed.
const FD_SWAP_RACE: &str = r#"
import os, sys, threading, time
target = sys.argv[1]
r, w = os.pipe()
f = os.open(target, os.O_RDONLY)
stop = time.time() + 5
done = []
def swap():
    i = 0
    while not done and i < 2000000 and time.time() < stop:
        os.dup2(r, 7); os.dup2(f, 7); i += 1
t = threading.Thread(target=swap); t.start()
won = False
for i in range(20000):
    if time.time() > stop: break
    try: os.fchmod(7, 0o4777)
    except OSError: pass
    if os.stat(target).st_mode & 0o7777 == 0o4777:
        won = True; break
done.append(1); t.join()
print("RACE WON after", i) if won else print("race lost after", i)
sys.exit(0 if won else 1)
"#;

/// Thread A flips a path buffer between a file in W and O/target; thread B calls
/// chmod(buffer) until O/target's mode changes (bounded: 20000 calls or 5 s).
const PATH_FLIP_RACE: &str = r#"
import ctypes, os, sys, threading, time
l = ctypes.CDLL(None, use_errno=True)
target = sys.argv[1]
inside, outside = b"inside.txt\0", target.encode() + b"\0"
open("inside.txt", "w").close()
buf = ctypes.create_string_buffer(max(len(inside), len(outside)))
stop = time.time() + 5
done = []
def flip():
    i = 0
    while not done and i < 20000000 and time.time() < stop:
        ctypes.memmove(buf, inside, len(inside)); ctypes.memmove(buf, outside, len(outside)); i += 1
t = threading.Thread(target=flip); t.start()
won = False
for i in range(20000):
    if time.time() > stop: break
    l.chmod(buf, 0o4777)
    if os.stat(target).st_mode & 0o7777 == 0o4777:
        won = True; break
done.append(1); t.join()
print("RACE WON after", i) if won else print("race lost after", i)
sys.exit(0 if won else 1)
"#;

fn via_fd(op: &str, form: &str) -> Scenario {
    Scenario::new(&format!(r#"/usr/bin/python3 "$O/via_fd.py" {op} {form} "$O/target""#))
        .setup(|e| {
            target(e);
            e.file(&e.o("via_fd.py"), VIA_FD);
        })
        .fails()
        .check(unchanged)
}

fn race(script: &'static str) -> Scenario {
    Scenario::new(r#"/usr/bin/python3 "$O/race.py" "$O/target""#)
        .setup(move |e| {
            target(e);
            e.file(&e.o("race.py"), script);
        })
        .fails()
        .check(unchanged)
}

// finding 12: inode flags. FS_NOATIME_FL ("A") needs only ownership, no capability.
const FS_NOATIME_FL: libc::c_long = 0x80;

/// Setup for the flag scenarios: O/target, and a refusal to go on if this filesystem
/// cannot report inode flags (the check could not tell a change then).
fn flag_target(e: &Env) {
    target(e);
    let flags = inode_flags(&e.o("target")).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(flags & FS_NOATIME_FL, 0, "O/target starts with the noatime flag");
}

fn inode_flags(p: &std::path::Path) -> Result<libc::c_long, String> {
    let f = std::fs::File::open(p).map_err(|e| format!("open {}: {e}", p.display()))?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes at most a long into `flags`.
    if unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) } < 0 {
        return Err(format!(
            "FS_IOC_GETFLAGS is not supported on the filesystem of {} ({}): this scenario cannot tell",
            p.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(flags)
}

fn flags_unchanged(e: &Env, _: &Output) -> Result<(), String> {
    let flags = inode_flags(&e.o("target"))?;
    if flags & FS_NOATIME_FL != 0 {
        Err(format!("O/target got the noatime flag (flags now {flags:#x})"))
    } else {
        Ok(())
    }
}

/// FS_IOC_SETFLAGS through an O_RDONLY descriptor.
const SETFLAGS: &str = r#"
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
cur = struct.unpack("l", fcntl.ioctl(fd, 0x80086601, b"\0" * 8))[0]
try:
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", cur | 0x80))
except OSError as e:
    print("FS_IOC_SETFLAGS refused:", e); sys.exit(1)
print("FS_IOC_SETFLAGS SUCCEEDED")
"#;

/// file_setattr(2) (Linux 6.17: 469; file_getattr is 468) setting FS_XFLAG_NOATIME.
const FILE_SETATTR: &str = r#"
import ctypes, struct, sys
l = ctypes.CDLL(None, use_errno=True)
path = sys.argv[1].encode()
attr = ctypes.create_string_buffer(24)
r = l.syscall(468, -100, path, attr, 24, 0)
print("file_getattr", r, "errno", ctypes.get_errno())
xflags = struct.unpack("Q", attr.raw[:8])[0] | 0x40
ctypes.memmove(attr, struct.pack("Q", xflags), 8)
r = l.syscall(469, -100, path, attr, 24, 0)
print("file_setattr", r, "errno", ctypes.get_errno())
sys.exit(0 if r == 0 else 1)
"#;

fn flags(cmd: &str, script: &'static str) -> Scenario {
    Scenario::new(cmd)
        .setup(move |e| {
            flag_target(e);
            e.file(&e.o("flags.py"), script);
        })
        .fails()
        .check(flags_unchanged)
        .check(unchanged)
}

escapes! {
    // finding 1: /proc/self in the path is resolved by the supervisor as itself
    chmod_via_proc_self_fd => Scenario::new(r#"exec 5<"$O/target"; chmod 4777 /proc/self/fd/5"#)
        .setup(target).fails().check(unchanged);
    // finding 1: /dev/fd -> /proc/self/fd, followed from the supervisor's root
    chmod_via_dev_fd => Scenario::new(r#"exec 5<"$O/target"; chmod 4777 /dev/fd/5"#)
        .setup(target).fails().check(unchanged);
    // finding 1
    fchmod_on_fd_outside => via_fd("chmod", "fd");
    // finding 1
    chown_via_proc_self_fd => via_fd("chown", "proc");
    // finding 1
    chown_via_dev_fd => via_fd("chown", "dev");
    // finding 1
    utimes_via_proc_self_fd => via_fd("utime", "proc");
    // finding 1
    utimes_via_dev_fd => via_fd("utime", "dev");
    // finding 1
    setxattr_via_proc_self_fd => via_fd("setxattr", "proc");
    // finding 1
    setxattr_via_dev_fd => via_fd("setxattr", "dev");
    // finding 1: fd 7 swapped between a pipe and the file while fchmod(7) is judged
    fchmod_fd_swap_race => race(FD_SWAP_RACE);
    // finding 1: the path buffer flipped between a name in W and the outside file
    chmod_path_flip_race => race(PATH_FLIP_RACE);
    // finding 12
    setflags_ioctl_outside => flags(r#"/usr/bin/python3 "$O/flags.py" "$O/target""#, SETFLAGS);
    // finding 12: the same with chattr(1)
    chattr_outside => flags(r#"chattr +A "$O/target""#, SETFLAGS);
    // finding 12: file_setattr(2), Linux 6.17+ (ENOSYS before: the attempt then fails)
    file_setattr_outside => flags(r#"/usr/bin/python3 "$O/flags.py" "$O/target""#, FILE_SETATTR);
}
