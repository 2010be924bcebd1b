//! `/dev/shm`: every run has its own (issue 36). Python's `multiprocessing` failed with
//! `PermissionError` in both modes because `/dev/shm` was closed; srt 0.0.83 gives each run
//! a private, writable one. Now namespace mode mounts a fresh tmpfs there and landlock
//! mode lets the command make entries in the host's and use only those. Here: real work
//! runs, the host's and another run's segments stay out of reach, and nothing the run made
//! is left, also when srt and its auditor are killed.

use serde_json::json;

use super::harness::{Env, Output, Scenario};
use super::pod::python;
use crate::escapes;

/// Everything that needs `/dev/shm`: a `Lock`, a `Queue`, a `Pool`, a
/// `ProcessPoolExecutor`, a `SharedMemory` attached by name in a spawned child, a
/// semaphore a spawned child opens by name (`sem_open(name, 0)`), `mkstemp` and a rename
/// there. The names it made go to W/shm-names (none unlinked: the run's end must).
const WORK: &str = r#"
import concurrent.futures, multiprocessing as mp, os, tempfile
from multiprocessing import shared_memory
def attach(name, q):
    s = shared_memory.SharedMemory(name=name); q.put(bytes(s.buf[:5])); s.close()
def take(lock, q):
    with lock: q.put("locked")
if __name__ == "__main__":
    l = mp.Lock(); l.acquire(); l.release()
    q = mp.Queue(); q.put(1); assert q.get() == 1
    with mp.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
    with concurrent.futures.ProcessPoolExecutor(2) as ex: assert list(ex.map(abs, [-3])) == [3]
    spawn = mp.get_context("spawn")
    shm = shared_memory.SharedMemory(create=True, size=4096); shm.buf[:5] = b"hello"
    q = spawn.Queue(); c = spawn.Process(target=attach, args=(shm.name, q)); c.start()
    assert q.get(timeout=30) == b"hello"; c.join()
    lock = spawn.Lock()
    c = spawn.Process(target=take, args=(lock, q)); c.start()
    assert q.get(timeout=30) == "locked"; c.join()
    fd, path = tempfile.mkstemp(dir="/dev/shm"); os.write(fd, b"x"); os.close(fd)
    os.rename(path, path + ".renamed")
    names = [shm.name.lstrip("/"), "sem." + lock._semlock.name.lstrip("/"), os.path.basename(path) + ".renamed"]
    assert all(os.path.exists("/dev/shm/" + n) for n in names), names
    open("shm-names", "w").write("\n".join(names))
    shm.close()
    print("made", len(names), "entries; SHM-WORKS")
"#;

/// Every name the run listed in W/shm-names is gone from the host's `/dev/shm`.
fn nothing_left(e: &Env, _: &Output) -> Result<(), String> {
    let names = std::fs::read_to_string(e.w("shm-names")).map_err(|err| format!("no W/shm-names: {err}"))?;
    let left: Vec<&str> =
        names.lines().filter(|n| !n.is_empty() && std::path::Path::new("/dev/shm").join(n).exists()).collect();
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("left in /dev/shm after the run: {left:?}"))
    }
}

const HOST_SECRET: &str = "HOSTSHMSECRET";

/// Setup: a host program's segment in /dev/shm holding a secret; its name in O/shm-name.
fn host_segment(e: &Env) {
    let name = format!("srt-escape-host-{}", e.root.file_name().unwrap().to_string_lossy());
    let p = std::path::Path::new("/dev/shm").join(&name);
    std::fs::write(&p, HOST_SECRET).unwrap();
    e.own(&p);
    e.file(&e.o("shm-name"), &name);
}

/// The host's segment is what it was, and goes (the test made it).
fn host_segment_intact(e: &Env, _: &Output) -> Result<(), String> {
    let name = std::fs::read_to_string(e.o("shm-name")).unwrap();
    let p = std::path::Path::new("/dev/shm").join(name);
    let got = std::fs::read_to_string(&p);
    let _ = std::fs::remove_file(&p);
    match got {
        Ok(s) if s == HOST_SECRET => Ok(()),
        other => Err(format!("the host's segment changed: {other:?}")),
    }
}

/// Every way at the host's segment: read, open for writing, shm_open, truncate, chmod,
/// unlink, rename away, rename over, link it to a new name. Namespace mode does not even
/// see it (its `/dev/shm` is a fresh tmpfs): there the names are the command's own, and
/// making them is no escape.
const AT_HOST: &str = r#"
import ctypes, os, sys
name = open(sys.argv[1]).read(); p = "/dev/shm/" + name
visible = os.path.exists(p); print("host segment visible:", visible)
libc = ctypes.CDLL(None, use_errno=True)
def attempt(what, f):
    try:
        r = f(); print("GOT" if visible else "made in its own /dev/shm:", what, r)
    except OSError as e:
        print("refused", what, e.errno)
attempt("read", lambda: open(p).read())
attempt("write", lambda: open(p, "r+").write("PLANTED"))
attempt("shm_open", lambda: os.close(os.open(p, os.O_RDWR)) or "opened")
attempt("truncate", lambda: os.truncate(p, 0))
attempt("chmod", lambda: os.chmod(p, 0o666))
attempt("unlink", lambda: os.unlink(p))
attempt("rename away", lambda: os.rename(p, "/dev/shm/mine-now"))
open("/dev/shm/own-" + name, "w").write("own")
attempt("rename over", lambda: os.rename("/dev/shm/own-" + name, p))
attempt("link", lambda: os.link(p, "/dev/shm/second-" + name))
attempt("symlink", lambda: os.symlink(p, "/dev/shm/sym-" + name))
attempt("mkdir", lambda: os.mkdir("/dev/shm/dir-" + name))
r = libc.shm_open(("/" + name).encode(), os.O_RDWR, 0o600)
print(("GOT" if visible else "own") + " shm_open()" if r >= 0 else "refused shm_open() %d" % ctypes.get_errno())
print("AT-HOST-DONE")
"#;

/// Run A: a segment of its own, its name in W/a-shm; waits for run B.
const RUN_A: &str = r#"
import os, time
from multiprocessing import shared_memory
s = shared_memory.SharedMemory(create=True, size=64); s.buf[:8] = b"A-SECRET"
open("a.tmp", "w").write(s.name); os.rename("a.tmp", "a-shm")
for i in range(200):
    if os.path.exists("b-done"): break
    time.sleep(0.05)
print("run A done", flush=True)
"#;

/// Run B: at run A's segment by name.
const RUN_B: &str = r#"
import os
from multiprocessing import shared_memory
name = open("a-shm").read()
for what, f in [("attach", lambda: bytes(shared_memory.SharedMemory(name=name).buf[:8])),
                ("read", lambda: open("/dev/shm/" + name.lstrip("/"), "rb").read(8)),
                ("unlink", lambda: os.unlink("/dev/shm/" + name.lstrip("/")))]:
    try:
        print("B-GOT", what, f())
    except OSError as e:
        print("run B refused", what, e.errno)
open("b-done", "w").close()
"#;

/// Makes segments, says so, and sleeps until killed.
const MAKE_AND_WAIT: &str = r#"
import os, time
from multiprocessing import shared_memory
made = [shared_memory.SharedMemory(create=True, size=64) for _ in range(3)]
open("shm-names", "w").write("\n".join(s.name.lstrip("/") for s in made))
open("ready", "w").close()
time.sleep(30)
"#;

/// srt and its auditor both SIGKILLed mid-run; the next run finishes the dead one's check.
const KILL_BOTH_THEN_NEXT: &str = r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
for i in $(seq 200); do [ -e "$W/ready" ] && break; sleep 0.05; done
a=$(cat /proc/$pid/task/$pid/children)
kill -STOP $pid $a; kill -9 $a $pid; wait $pid 2>/dev/null; sleep 0.3
pkill -9 -f "$O/make.py" 2>/dev/null
"$SRT" "$MODE" -s "$SETTINGS" -c true
exit 0"#;

/// Round 8's M2: links raced against renames of their source name by another thread,
/// with several supervisor receivers at work (slow connects to a listener whose backlog is
/// full make the watchdog add them): names the journal held with another of the run's
/// files were left behind. Names carry the scenario's prefix (argv[1]).
const LINK_RACE: &str = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/socket.h>
#include <netinet/in.h>
static volatile int stop; static const char *pre;
static void *swap(void *x) { char c[256], a[256]; snprintf(c, 256, "/dev/shm/%s-c", pre); snprintf(a, 256, "/dev/shm/%s-a", pre);
  while (!stop) { close(open(c, O_CREAT | O_EXCL | O_RDWR, 0600)); rename(c, a); } return 0; }
int main(int argc, char **argv) {
  pre = argv[1];
  int L = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in s = {AF_INET, 0, {htonl(0x7f000001)}}; socklen_t l = sizeof s;
  bind(L, (void *)&s, l); listen(L, 0); getsockname(L, (void *)&s, &l);
  for (int i = 0; i < 6; i++) { if (!fork()) { connect(socket(AF_INET, SOCK_STREAM, 0), (void *)&s, l); sleep(2); _exit(0); } usleep(80000); }
  for (int i = 0; i < 6; i++) accept4(L, 0, 0, SOCK_NONBLOCK);
  char a[256], b[256]; snprintf(a, 256, "/dev/shm/%s-a", pre); close(open(a, O_CREAT | O_RDWR, 0600));
  pthread_t t; pthread_create(&t, 0, swap, 0);
  for (int i = 0; i < 2000; i++) { snprintf(b, 256, "/dev/shm/%s-b%d", pre, i); link(a, b); }
  stop = 1; pthread_join(t, 0); puts("RACE-DONE"); return 0; }
"#;

/// Setup: LINK_RACE built in O (gcc, as the test runs).
fn link_race(e: &Env) {
    e.build_c("race", LINK_RACE);
}

/// This scenario's prefix for names in /dev/shm: its root directory's name.
fn prefix(e: &Env) -> String {
    format!("srt-race-{}", e.root.file_name().unwrap().to_string_lossy())
}

/// Nothing with the scenario's prefix is left in the host's /dev/shm.
fn no_prefixed_left(e: &Env, _: &Output) -> Result<(), String> {
    let pre = prefix(e);
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&pre))
        .collect();
    for n in &left {
        let _ = std::fs::remove_file(std::path::Path::new("/dev/shm").join(n));
    }
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("{} entries left in /dev/shm after the run, e.g. {:?}", left.len(), &left[..left.len().min(3)]))
    }
}

/// Round 8's M3, the host's side: a program of the same uid that makes its fixed name anew
/// with `O_EXCL` and checks its object is still its own; the command meanwhile renames its
/// own files onto that name. Prints HOST-OBJECT-REPLACED if a rename replaced what the host
/// made.
const HOST_FIXED_NAME: &str = r#"
import os, sys, time
p = "/dev/shm/" + sys.argv[1]; w = sys.argv[2]
for i in range(200):
    if os.path.exists(w + "/started"): break
    time.sleep(0.05)
replaced = made = 0
for i in range(4000):
    try: os.unlink(p)
    except FileNotFoundError: pass
    try: fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    except FileExistsError: continue
    os.write(fd, b"HOST"); made += 1; ino = os.fstat(fd).st_ino; os.close(fd)
    time.sleep(0.0002)
    try:
        if os.stat(p).st_ino != ino and open(p, "rb").read(4) == b"EVIL": replaced += 1
    except OSError: pass
open(w + "/stop", "w").close()
try: os.unlink(p)
except OSError: pass
print("host made", made, "replaced", replaced)
if replaced: print("HOST-OBJECT-REPLACED")
"#;

/// The command's side: its own file renamed onto the host's name, again and again.
const RENAME_ONTO: &str = r#"
import os, sys, time
name = sys.argv[1]; open("started", "w").close(); end = time.time() + 20; n = 0
while not os.path.exists("stop") and time.time() < end:
    try:
        fd = os.open("/dev/shm/" + name + "-evil", os.O_CREAT | os.O_RDWR, 0o600); os.write(fd, b"EVIL"); os.close(fd)
        os.rename("/dev/shm/" + name + "-evil", "/dev/shm/" + name); n += 1
    except OSError: pass
print("renames", n)
"#;

/// Setup: the host side's script and the fixed name, in O.
fn host_fixed_name(e: &Env) {
    e.file(&e.o("host.py"), HOST_FIXED_NAME);
    e.file(&e.o("name"), &format!("srt-fixed-{}", e.root.file_name().unwrap().to_string_lossy()));
}

/// Round 8, second pass (F4): the host's /dev/shm mounted a second time inside the project
/// (as a pod might mount the same memory volume twice). Root makes the mount in setup and
/// removes it in the last check.
fn shm_bound_into_w(e: &Env) {
    let at = e.w("shmb");
    std::fs::create_dir_all(&at).unwrap();
    let ok =
        std::process::Command::new("mount").args(["--bind", "/dev/shm"]).arg(&at).status().is_ok_and(|s| s.success());
    assert!(ok, "mount --bind /dev/shm (the escape tests run as root)");
}

fn unmount_shm_bound(e: &Env, _: &Output) -> Result<(), String> {
    let ok = std::process::Command::new("umount").arg(e.w("shmb")).status().is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err("could not unmount W/shmb".into())
    }
}

/// At the host's segment through the second mount.
const THROUGH_SECOND_MOUNT: &str = r#"
import os, sys
name = open(sys.argv[1]).read(); p = "shmb/" + name
for what, f in [("read", lambda: open(p).read()), ("write", lambda: open(p, "r+").write("PLANTED")),
                ("create", lambda: open("shmb/new-" + name, "w").write("x"))]:
    try: print("GOT", what, f())
    except OSError as e: print("refused", what, e.errno)
print("SECOND-MOUNT-DONE")
"#;

/// `shm_open` with setuid, setgid and sticky bits asked: none reach the host's /dev/shm
/// (round 8: a root-owned 06755 file appeared there, which is not mounted nosuid).
const SETUID_MODE: &str = r#"
import os
fd = os.open("/dev/shm/srt-mode-probe-%d" % os.getpid(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o7755)
m = os.fstat(fd).st_mode & 0o7777; print("mode %o" % m); os.unlink("/dev/shm/srt-mode-probe-%d" % os.getpid())
# namespace mode's own tmpfs is mounted nosuid and goes with the run: the bits mean nothing there
nosuid = os.statvfs("/dev/shm").f_flag & os.ST_NOSUID
print("PRIVILEGE-BITS" if m & 0o7000 and not nosuid else "MODE-OK")
"#;

escapes! {
    multiprocessing_and_posix_shared_memory_work => python("work.py", WORK, "")
        .prints("SHM-WORKS").check(nothing_left);
    the_hosts_shared_memory_stays_out_of_reach => python("at-host.py", AT_HOST, r#""$O/shm-name""#)
        .setup(host_segment)
        .lacks("GOT").lacks(HOST_SECRET).prints("AT-HOST-DONE").check(host_segment_intact);
    another_runs_shared_memory_stays_out_of_reach => python("a.py", RUN_A, "")
        .setup(|e| e.file(&e.o("b.py"), RUN_B))
        .wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & a=$!
            for i in $(seq 100); do [ -e "$W/a-shm" ] && break; sleep 0.05; done
            "$SRT" "$MODE" -s "$SETTINGS" -c '/usr/bin/python3 "$O/b.py"'
            wait $a"#)
        .lacks("B-GOT").prints("run B refused attach").prints("run A done");
    shared_memory_goes_when_srt_and_its_auditor_are_killed => python("make.py", MAKE_AND_WAIT, "")
        .wrap(KILL_BOTH_THEN_NEXT)
        .check(nothing_left);
    // round 8's M1: `denyRead: ["/"]` with `/dev` allowed again opened the host's /dev/shm
    the_hosts_shared_memory_stays_out_of_reach_under_deny_all => python("at-host.py", AT_HOST, r#""$O/shm-name""#)
        .with("filesystem.denyRead", json!(["/"]))
        .with("filesystem.allowRead", json!(["/usr", "/bin", "/lib", "/lib64", "/etc", "/dev", "/proc", "{O}", "{W}"]))
        .setup(host_segment)
        .lacks("GOT").lacks(HOST_SECRET).prints("AT-HOST-DONE").check(host_segment_intact);
    // round 8's M2
    raced_links_leave_nothing_behind => Scenario::new(r#""$O/race" "$(cat "$O/prefix")""#)
        .setup(link_race)
        .setup(|e| e.file(&e.o("prefix"), &prefix(e)))
        .prints("RACE-DONE")
        .check(no_prefixed_left)
        .within(std::time::Duration::from_secs(60));
    // round 8's M3
    renames_never_replace_a_host_programs_new_entry => python("onto.py", RENAME_ONTO, r#""$(cat "$O/name")""#)
        .setup(host_fixed_name)
        .wrap(r#"/usr/bin/python3 "$O/host.py" "$(cat "$O/name")" "$W" & host=$!
            "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD"; wait $host"#)
        .prints("host made").lacks("HOST-OBJECT-REPLACED")
        .within(std::time::Duration::from_secs(60));
    no_setuid_bits_in_dev_shm => python("mode.py", SETUID_MODE, "").prints("MODE-OK");
    // round 8, second pass (F4)
    the_hosts_shared_memory_through_a_second_mount => python("second.py", THROUGH_SECOND_MOUNT, r#""$O/shm-name""#)
        .setup(host_segment)
        .setup(shm_bound_into_w)
        .lacks("GOT").lacks(HOST_SECRET).prints("SECOND-MOUNT-DONE")
        .check(unmount_shm_bound)
        .check(host_segment_intact);
}
