//! `/dev/shm`: every run has its own (issue 36). Python's `multiprocessing` failed with
//! `PermissionError` in both modes because `/dev/shm` was closed; srt 0.0.83 gives each run
//! a private, writable one. Now namespace mode mounts a fresh tmpfs there and landlock
//! mode lets the command make entries in the host's and use only those. Here: real work
//! runs, the host's and another run's segments stay out of reach, and nothing the run made
//! is left, also when srt and its auditor are killed.

use super::harness::{Env, Output};
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
}
