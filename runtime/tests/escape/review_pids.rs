//! Issue 19, finding 2: the command acting on srt, on its auditor and on other host
//! processes of its uid by pid. In landlock mode the command shares the host's PID
//! namespace: `prlimit --pid $PPID --cpu=1:1` followed by a burst of supervised calls made
//! the kernel SIGKILL srt (exit 137) before its check, and renice, taskset, chrt and ionice
//! worked on srt and on unrelated processes. Namespace mode runs the same attempts: there
//! the PID namespace hides everything outside.
//!
//! Inside the command, `$A` and `$P` name the auditor and srt where they are visible (the
//! command's parent is the auditor in landlock mode; in namespace mode it is the
//! namespace's init and neither is visible), `$V` a `sleep` of the same uid the test
//! started on the host.

use std::os::unix::process::CommandExt;

use super::harness::{Env, Output, Scenario};
use crate::escapes;

/// A host process of the scenario's uid; its pid goes to O/victim.pid and what the
/// attempts could change to O/victim.before.
fn victim(e: &Env) {
    let mut c = std::process::Command::new("sleep");
    c.arg("60");
    if let Some(uid) = e.uid {
        c.uid(uid).gid(uid);
    }
    let child = c.spawn().unwrap();
    let pid = child.id() as i32;
    std::mem::forget(child);
    e.file(&e.o("victim.pid"), &pid.to_string());
    e.file(&e.o("victim.before"), &attributes(pid));
}

/// Limits, nice value, CPU affinity, scheduling policy, I/O priority, OOM score adjustment
/// and autogroup of `pid`.
fn attributes(pid: i32) -> String {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    let oom = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap_or_default();
    let autogroup = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).unwrap_or_default();
    // SAFETY: plain queries about a process, writing into locals.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, pid as libc::id_t);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        let cpus = (0..64).filter(|c| libc::CPU_ISSET(*c, &set)).count();
        let policy = libc::sched_getscheduler(pid);
        let ioprio = libc::syscall(libc::SYS_ioprio_get, 1, pid);
        format!("{limits}nice {nice} cpus {cpus} policy {policy} ioprio {ioprio} oom {oom}{autogroup}")
    }
}

fn victim_unchanged(e: &Env, _: &Output) -> Result<(), String> {
    let pid: i32 = std::fs::read_to_string(e.o("victim.pid")).unwrap().parse().unwrap();
    let before = std::fs::read_to_string(e.o("victim.before")).unwrap();
    let now = attributes(pid);
    // SAFETY: signal 0 checks existence; SIGKILL and waitpid clean up our own child.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    if !alive {
        return Err("the host process was killed".into());
    }
    if now != before {
        return Err(format!("the host process changed:\n{before}\n->\n{now}"));
    }
    Ok(())
}

/// Finds the auditor and srt from inside (landlock mode only: in namespace mode the
/// parent is the namespace's init, PID 1) and the host victim.
const TARGETS: &str = r#"A=; P=; V=$(cat "$O/victim.pid")
if [ "$(cat /proc/$PPID/comm)" = srt-auditor ]; then A=$PPID; P=$(cut -d' ' -f4 /proc/$PPID/stat)
elif [ "$PPID" != 1 ]; then P=$PPID; fi  # a launcher without an auditor: srt is the parent
attrs() { cat /proc/$1/limits /proc/$1/oom_score_adj /proc/$1/autogroup; cut -d' ' -f19 /proc/$1/stat; taskset -p $1; chrt -p $1; ionice -p $1; }
# nice values above the current one, so every renice below is one the kernel allows an
# unprivileged process on its own processes (srt may run under `nice`)
b=$(nice)
"#;

/// Every way to change another process that the kernel checks only by uid, against the
/// auditor, srt and the host process; then the same on the command's own processes, which
/// must keep working.
const ACT_ON_OTHERS: &str = r#"
for T in $A $P $V; do
  before=$(attrs $T 2>&1)
  for lim in --cpu=1:1 --nofile=3:3 --as=10000000 --data=10000000 --fsize=0 --stack=16384 --nproc=1; do
    prlimit --pid $T $lim 2>/dev/null && echo "SUCCEEDED: prlimit $lim on $T"
  done
  renice -n $((b+1)) -p $T >/dev/null 2>&1 && echo "SUCCEEDED: renice $T"
  taskset -p 1 $T >/dev/null 2>&1 && echo "SUCCEEDED: taskset $T"
  chrt -i -p 0 $T >/dev/null 2>&1 && echo "SUCCEEDED: chrt $T"
  chrt -b -p 0 $T >/dev/null 2>&1 && echo "SUCCEEDED: chrt -b $T"
  ionice -c 3 -p $T >/dev/null 2>&1 && echo "SUCCEEDED: ionice $T"
  after=$(attrs $T 2>&1)
  [ "$before" = "$after" ] || echo "CHANGED: $T"
done
# whole uids (in namespace mode they reach only the namespace's processes: allowed there,
# the host process must stay unchanged) and srt's process group
renice -n $((b+1)) -u "$(id -u)" >/dev/null 2>&1 && [ -n "$A" ] && echo "SUCCEEDED: renice -u"
ionice -c 3 -u "$(id -u)" >/dev/null 2>&1 && [ -n "$A" ] && echo "SUCCEEDED: ionice -u"
[ -n "$P" ] && renice -n $((b+1)) -g "$(cut -d' ' -f5 /proc/$P/stat)" >/dev/null 2>&1 && echo "SUCCEEDED: renice -g"
# the command's own processes: itself, a child, its group (nice only ever raised: lowering
# it needs CAP_SYS_NICE)
renice -n $((b+1)) -p $$ >/dev/null || echo "OWN-REFUSED: renice self"
sleep 5 & c=$!
prlimit --pid $c --cpu=4:4 || echo "OWN-REFUSED: prlimit child"
renice -n $((b+2)) -p $c >/dev/null || echo "OWN-REFUSED: renice child"
taskset -p 1 $c >/dev/null || echo "OWN-REFUSED: taskset child"
chrt -b -p 0 $c || echo "OWN-REFUSED: chrt child"
ionice -c 3 -p $c || echo "OWN-REFUSED: ionice child"
renice -n $((b+3)) -g "$(cut -d' ' -f5 /proc/$$/stat)" >/dev/null || echo "OWN-REFUSED: renice own group"
kill $c
exit 0
"#;

/// Syscalls that reach another process and that Landlock's ptrace and signal scoping must
/// refuse (not the supervisor: proved here, not assumed). Each prints SUCCEEDED if it worked.
const SCOPED: &str = r#"
import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *a):
    r = l.syscall(nr, *a)
    if r >= 0 and not name.startswith("pidfd_open"):
        print("SUCCEEDED:", name, a)
    return r, ctypes.get_errno()
for t in [int(x) for x in sys.argv[1:] if x]:
    call("kill 0", NR["kill"], t, 0)
    call("tkill 0", NR["tkill"], t, 0)
    call("tgkill 0", NR["tgkill"], t, t, 0)
    info = ctypes.create_string_buffer(128)
    ctypes.memmove(info, (ctypes.c_int * 3)(10, 0, -1), 12)
    call("rt_sigqueueinfo", NR["rt_sigqueueinfo"], t, 10, info)
    call("kcmp", NR["kcmp"], os.getpid(), t, 0, 0, 0)
    head = ctypes.c_void_p(); ln = ctypes.c_size_t()
    call("get_robust_list", NR["get_robust_list"], t, ctypes.byref(head), ctypes.byref(ln))
    mask = ctypes.c_ulong(1)
    call("migrate_pages", NR["migrate_pages"], t, 64, ctypes.byref(mask), ctypes.byref(mask))
    status = ctypes.c_int()
    call("move_pages", NR["move_pages"], t, 0, None, None, ctypes.byref(status), 0)
    try:
        f = open("/proc/%d/mem" % t, "rb"); print("SUCCEEDED: open mem", t); f.close()
    except OSError:
        pass
    pfd, e = call("pidfd_open (allowed: needs no permission)", NR["pidfd_open"], t, 0)
    if pfd >= 0:
        call("pidfd_send_signal", NR["pidfd_send_signal"], pfd, 0, None, 0)
        call("pidfd_getfd", NR["pidfd_getfd"], pfd, 0, 0)
        iov = (ctypes.c_void_p * 2)(0x10000, 4096)
        call("process_madvise", NR["process_madvise"], pfd, iov, 1, 20, 0)
        call("process_mrelease", NR["process_mrelease"], pfd, 0)
        os.close(pfd)
    # SIGIO to the target, turned into SIGKILL with F_SETSIG: Landlock scopes it too
    r, w = os.pipe()
    F_SETOWN, F_SETSIG, F_SETFL = 8, 10, 4
    l.fcntl(r, F_SETOWN, t); l.fcntl(r, F_SETSIG, 9); l.fcntl(r, F_SETFL, os.O_ASYNC)
    os.write(w, b"x")
    os.close(r); os.close(w)
print("scoped: done")
"#;

/// SCOPED with this architecture's syscall numbers, for `python3 -c '...' TARGETS`.
fn scoped() -> String {
    let nr = format!(
        "NR = dict(kill={}, tkill={}, tgkill={}, rt_sigqueueinfo={}, kcmp={}, pidfd_open={}, pidfd_send_signal={}, \
         pidfd_getfd={}, process_madvise={}, process_mrelease={}, migrate_pages={}, move_pages={}, get_robust_list={})",
        libc::SYS_kill,
        libc::SYS_tkill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_kcmp,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_pidfd_getfd,
        libc::SYS_process_madvise,
        libc::SYS_process_mrelease,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
        libc::SYS_get_robust_list,
    );
    let script = SCOPED.replacen("for t in", &format!("{nr}\nfor t in"), 1);
    assert!(!script.contains('\''));
    script
}

/// Creates and removes a file in `.` (each a supervisor call) until srt (`argv[2]`, when
/// visible) has used 1.5 s of CPU or 15 s pass; 1 s without srt to watch.
const BURST: &str = r#"import os, sys, time
name, srt = sys.argv[1], sys.argv[2]
def cpu():
    if not srt:
        return 0
    f = open("/proc/%s/stat" % srt).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
t = time.time()
while time.time() - t < (15 if srt else 1) and cpu() < 1.5:
    for i in range(200):
        open(name, "w").close(); os.unlink(name)"#;

/// Where Landlock cannot scope signals (ABI < 6; `SRT_TEST_WITHOUT_SIGNAL_SCOPE=1` makes a
/// debug srt run so here), the supervisor judges them: every signal path to the targets
/// (argv) must fail, to the command's own processes work. `kill(-1)` and srt's process
/// group only where the targets are visible (landlock mode).
const SIGNALS: &str = r#"
import ctypes, os, signal, sys, time
l = ctypes.CDLL(None, use_errno=True)
targets = [int(x) for x in sys.argv[1:] if x]
def attempt(what, f):
    try:
        r = f()
    except OSError:
        return
    if r is None or r >= 0:
        print("SUCCEEDED:", what)
info = ctypes.create_string_buffer(128)
ctypes.memmove(info, (ctypes.c_int * 3)(0, 0, -1), 12)
for t in targets:
    attempt("kill %d" % t, lambda: os.kill(t, 0))
    attempt("tkill %d" % t, lambda: l.syscall(NR["tkill"], t, 0))
    attempt("tgkill %d" % t, lambda: l.syscall(NR["tgkill"], t, t, 0))
    attempt("rt_sigqueueinfo %d" % t, lambda: l.syscall(NR["rt_sigqueueinfo"], t, 0, info))
    attempt("rt_tgsigqueueinfo %d" % t, lambda: l.syscall(NR["rt_tgsigqueueinfo"], t, t, 0, info))
    attempt("pidfd_send_signal %d" % t, lambda: signal.pidfd_send_signal(os.pidfd_open(t), 0))
    r, w = os.pipe()
    attempt("F_SETOWN %d" % t, lambda: l.fcntl(r, 8, t))
    l.fcntl(r, 10, 9); l.fcntl(r, 4, os.O_ASYNC); os.write(w, b"x"); os.close(r); os.close(w)
if len(targets) > 1:
    attempt("kill -1", lambda: os.kill(-1, 0))
    attempt("kill the srt group", lambda: os.kill(-os.getpgid(targets[1]), 0))
child = os.fork()
if child == 0:
    time.sleep(5); os._exit(0)
def own(what, f):
    try:
        f()
    except OSError as e:
        print("OWN-REFUSED:", what, e)
own("kill child", lambda: os.kill(child, 0))
own("kill own group", lambda: os.kill(0, 0))
own("killpg own group", lambda: os.killpg(os.getpgid(0), 0))
own("pidfd child", lambda: signal.pidfd_send_signal(os.pidfd_open(child), 0))
r, w = os.pipe()
def ok(rc):
    if rc < 0:
        raise OSError(ctypes.get_errno(), "failed")
own("F_SETOWN self", lambda: ok(l.fcntl(r, 8, os.getpid())))
own("tkill self", lambda: ok(l.syscall(NR["tkill"], os.getpid(), 0)))
os.kill(child, 9)
print("signals: done")
"#;

/// SIGNALS with this architecture's syscall numbers.
fn signals() -> String {
    let nr = format!(
        "NR = dict(tkill={}, tgkill={}, rt_sigqueueinfo={}, rt_tgsigqueueinfo={})",
        libc::SYS_tkill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo
    );
    let script = SIGNALS.replacen("targets =", &format!("{nr}\ntargets ="), 1);
    assert!(!script.contains('\''));
    script
}

fn with_targets(body: &str) -> String {
    format!("{TARGETS}{body}")
}

/// The hook a later host `git` would run: planted in a repository the command makes.
pub const PLANT: &str = r#"git init -q sub && git -C sub config core.fsmonitor "touch $O/evidence""#;

/// The planted hook is gone (moved aside by the check), and a host `git status` there, as
/// the scenario's user, runs nothing.
pub fn hook_disarmed(e: &Env, _: &Output) -> Result<(), String> {
    let config = std::fs::read_to_string(e.w("sub/.git/config")).unwrap_or_default();
    if config.contains("fsmonitor") {
        return Err(format!("the planted hook is still in sub/.git/config:\n{config}"));
    }
    if !e.w("sub/.git").exists() {
        return Err("the command did not plant anything (sub/.git missing): the scenario tested nothing".into());
    }
    let mut git = std::process::Command::new("git");
    git.args(["-c", "safe.directory=*", "-C"]).arg(e.w("sub")).arg("status").env("HOME", &e.root);
    git.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    if let Some(uid) = e.uid {
        git.uid(uid).gid(uid);
    }
    let _ = git.status();
    if e.o("evidence").exists() {
        return Err("a host `git status` ran the planted hook".into());
    }
    Ok(())
}

fn exits_with(code: i32) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |_, o| {
        if o.code == code {
            Ok(())
        } else {
            Err(format!("srt exited {} (expected {code}): {}", o.code, o.text))
        }
    }
}

escapes! {
    // prlimit on the auditor and srt, then supervised calls from two processes (files
    // created in `.`, which the supervisor performs) until srt has used 1.5 s of CPU:
    // before the fix srt was SIGKILLed at 1 s (exit 137) and its check never ran
    prlimit_cpu_on_srt_then_a_burst_of_supervised_calls => Scenario::new(&with_targets(&format!(r#"
        for T in $A $P; do prlimit --pid $T --cpu=1:1 && echo "SUCCEEDED: prlimit $T"; done
        {PLANT}
        for w in 1 2; do python3 -c '{BURST}' burst$w "$P" & done
        wait
        exit 0"#)))
        .setup(victim)
        .lacks("SUCCEEDED")
        .check(exits_with(0))
        .check(hook_disarmed)
        .check(victim_unchanged);
    renice_taskset_chrt_ionice_prlimit_on_srt_auditor_and_host_process => Scenario::new(&with_targets(ACT_ON_OTHERS))
        .setup(victim)
        .lacks("SUCCEEDED")
        .lacks("CHANGED")
        .lacks("OWN-REFUSED")
        .check(exits_with(0))
        .check(victim_unchanged);
    signals_ptrace_and_pidfd_calls_on_srt_auditor_and_host_process => Scenario::new(&with_targets(&format!(
        "python3 -c '{}' $A $P $V; sleep 0.2; exit 0", scoped()
    )))
        .setup(victim)
        .lacks("SUCCEEDED")
        .prints("scoped: done")
        .check(exits_with(0))
        .check(victim_unchanged);
    // with `/` writable, the files of srt, its auditor and a host process in /proc (an OOM
    // score that makes the OOM killer take srt and its auditor first, the nice value of
    // their autogroup): /proc is never writable in landlock mode, where it is the host's
    proc_files_of_others_with_the_root_writable => Scenario::new(&with_targets(r#"
        for T in $A $P $V; do
          before=$(attrs $T 2>&1)
          echo 1000 > /proc/$T/oom_score_adj 2>/dev/null && echo "SUCCEEDED: oom_score_adj $T"
          echo 19 > /proc/$T/autogroup 2>/dev/null && echo "SUCCEEDED: autogroup $T"
          after=$(attrs $T 2>&1)
          [ "$before" = "$after" ] || echo "CHANGED: $T"
        done
        exit 0"#))
        .with("filesystem.allowWrite", serde_json::json!(["/"]))
        // with `/` writable the user's own home is too: srt wants $HOME to name it
        .env("HOME", "/root")
        .setup(victim)
        .lacks("SUCCEEDED")
        .lacks("CHANGED")
        .check(exits_with(0))
        .check(victim_unchanged);
    // as on a kernel whose Landlock cannot scope signals (ABI < 6): the supervisor judges
    signals_where_landlock_cannot_scope_them => Scenario::new(&with_targets(&format!(
        "python3 -c '{}' $A $P $V; sleep 0.2; exit 0", signals()
    )))
        .env("SRT_TEST_WITHOUT_SIGNAL_SCOPE", "1")
        .setup(victim)
        .lacks("SUCCEEDED")
        .lacks("OWN-REFUSED")
        .prints("signals: done")
        .check(exits_with(0))
        .check(victim_unchanged);
}
