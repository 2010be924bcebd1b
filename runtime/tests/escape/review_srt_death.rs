//! Issue 19: the check after the run must happen whatever becomes of srt. Each scenario
//! plants a hook a later host `git` would run (`core.fsmonitor` in a repository the
//! command makes) and then stops srt from getting to its check: srt SIGKILLed mid-run
//! (the user, the OOM killer), srt and its auditor both SIGKILLed, the terminal's output
//! stopped before srt's exit messages, a TMPDIR nested 20,000 levels deep, and limits srt
//! inherits that used to make it die on its own writes, or fail to start. (The command
//! itself can no longer lower srt's limits: `review_pids`.)

use std::time::Duration;

use super::harness::{no_process_with, nothing_left_in_tmp, private_tmp, Env, Output, Scenario};
use super::review_pids::{hook_disarmed, PLANT};
use crate::escapes;

fn exits_with(code: i32) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |_, o| if o.code == code { Ok(()) } else { Err(format!("exited {} (expected {code}): {}", o.code, o.text)) }
}

/// The command: plants the hook, starts background processes (marked with W, so survivors
/// can be found), says it is ready, and sleeps.
fn planted_then_sleeps(background: bool) -> String {
    let bg = if background {
        r#"(exec -a "srt-escape-killed-$W" sleep 30 </dev/null >/dev/null 2>&1 &)
setsid bash -c 'exec -a "srt-escape-killed-$W" sleep 30' </dev/null >/dev/null 2>&1 &
"#
    } else {
        ""
    };
    format!("{PLANT}\n{bg}touch ready\nexec sleep 30")
}

fn no_survivor(e: &Env, _: &Output) -> Result<(), String> {
    no_process_with(&format!("srt-escape-killed-{}", e.w.display()))
}

/// Starts srt in the background, waits until the command is ready, then runs `$KILL`
/// (with `$pid` srt's pid); then waits up to 1.5 s for the planted hook to be moved
/// aside, and runs a host `git status` in the repository.
const KILL_MID_RUN: &str = r#"export TMPDIR="$HOME/tmp"
"$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
for i in $(seq 200); do [ -e "$W/ready" ] && break; sleep 0.05; done
[ -e "$W/ready" ] || echo "NEVER-READY"
eval "$KILL"
start=$(date +%s%N)
while grep -q fsmonitor "$W/sub/.git/config" 2>/dev/null; do
  if [ $(( ($(date +%s%N) - start) / 1000000 )) -gt 1500 ]; then echo "NOT-CHECKED-WITHIN-1.5s"; break; fi
  sleep 0.01
done
echo "checked after $(( ($(date +%s%N) - start) / 1000000 )) ms"
eval "$AFTER"
git -c safe.directory='*' -C "$W/sub" status >/dev/null 2>&1
wait $pid 2>/dev/null
exit 0"#;

/// srt alone, with `kill -9 <pid>`.
const KILL_SRT: &str = "kill -9 $pid";
/// srt and its auditor (srt's only child), both stopped first so that neither can start
/// the check before both are dead.
const KILL_BOTH: &str = r#"a=$(cat /proc/$pid/task/$pid/children)
kill -STOP $pid $a; kill -9 $a $pid; wait $pid 2>/dev/null; sleep 0.3
grep -q fsmonitor "$W/sub/.git/config" && echo "still planted while both are dead"
"#;
/// The auditor alone (srt's only child): srt gets the command's processes and ends the
/// run itself.
const KILL_AUDITOR: &str = r#"kill -9 $(cat /proc/$pid/task/$pid/children)"#;
/// The next run, after both were killed.
const NEXT_RUN: &str = r#""$SRT" "$MODE" -s "$SETTINGS" -c true"#;

/// A pty for srt (the command's stderr is the terminal), relaying its output; PTY-TIMEOUT
/// and a kill when srt is not done in time. Exits with srt's status.
const PTY: &str = r#"
import os, pty, sys, time, select, signal
deadline = time.time() + 20
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, status = b"", None
while time.time() < deadline:
    if select.select([fd], [], [], 0.05)[0]:
        try:
            out += os.read(fd, 4096)
        except OSError:
            pass
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        status = st
        break
sys.stdout.write(out.decode(errors="replace"))
if status is None:
    print("PTY-TIMEOUT: srt still running after 20 s")
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    sys.exit(99)
sys.exit(os.waitstatus_to_exitcode(status))
"#;

/// srt on a pty; the command asks srt's proxy for a host it refuses (so srt has an exit
/// hint to print), plants the hook, stops the terminal's output and exits 3.
fn stopped_terminal() -> Scenario {
    let cmd = format!(
        r#"curl -s -m 5 http://denied.example/ >/dev/null; {PLANT}
python3 -c "import termios; termios.tcflow(2, termios.TCOOFF)"; exit 3"#
    );
    Scenario::new(&cmd)
        .env("PTY", PTY)
        .wrap(r#"exec python3 -c "$PTY" "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
        .lacks("PTY-TIMEOUT")
        .check(exits_with(3))
        .check(hook_disarmed)
        .within(Duration::from_secs(40))
}

/// A TMPDIR 20,000 levels deep, made with renames so every path stays short.
const DEEP: &str = r#"python3 -c 'import os
os.chdir(os.environ["TMPDIR"]); os.mkdir("t")
for i in range(20000):
    os.mkdir("n"); os.rename("t", "n/t"); os.rename("n", "t")
print("made 20000 levels")'"#;

/// TMPDIR's base in /dev/shm where there is one (20,000 directories on a disk mounted with
/// `discard` take a synchronous discard each to remove; the depth is the point, not the
/// disk). /dev/shm is the run's own, so srt makes the run's TMPDIR in /tmp instead: both
/// places must be left empty.
const DEEP_WRAP: &str = r#"base=/dev/shm; [ -d "$base" ] && [ -w "$base" ] || base="$HOME"
export TMPDIR=$(mktemp -d "$base/srt-escape-deep.XXXXXX")
"$SRT" "$MODE" -s "$SETTINGS" -c "$CMD"; code=$?
left=$(ls -A "$TMPDIR"); [ -n "$left" ] && echo "LEFT-IN-TMPDIR: $left"
rm -rf "$TMPDIR"
exit $code"#;

/// srt with lowered soft limits of its own (`$LIMIT`), its stderr appended to a log that
/// is already past the file-size limit; the command reports the limits it got.
const LIMITED: &str = r#"export TMPDIR="$HOME/tmp"
head -c 65536 /dev/zero > "$O/srt.log"
eval "$LIMIT"
"$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" 2>>"$O/srt.log"; echo "srt exited $?"
tail -c +65537 "$O/srt.log" | tr -d '\0'"#;

fn limited(limit: &str, shows: &'static str) -> Scenario {
    // the command reports what it was given, then takes back the soft limits its own
    // tools need (up to the hard limits, as any process may)
    let cmd = format!(
        "echo \"given: fsize=$(ulimit -f) as=$(ulimit -v) data=$(ulimit -d) stack=$(ulimit -s)\"
        ulimit -S -s $(ulimit -H -s) -d $(ulimit -H -d) -v $(ulimit -H -v)
        {PLANT}; exit 7"
    );
    Scenario::new(&cmd)
        .setup(private_tmp)
        .env("LIMIT", limit)
        .wrap(LIMITED)
        .prints("srt exited 7")
        .prints(shows)
        .check(hook_disarmed)
        .check(nothing_left_in_tmp)
}

/// srt started with SIGCHLD ignored (a parent that ignores it passes that on): the kernel
/// reaped srt's children unseen and srt waited for the command forever, its check never
/// done. The command still gets SIGCHLD ignored.
const SIGCHLD_IGNORED: &str = r#"exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#;

escapes! {
    // srt SIGKILLed mid-run: its auditor kills everything of the command, removes the
    // TMPDIR and moves the hook aside within a second, before a host git runs it
    srt_sigkilled_mid_run_leaves_no_hook_and_no_process => Scenario::new(&planted_then_sleeps(true))
        .setup(private_tmp)
        .env("KILL", KILL_SRT)
        .env("AFTER", "")
        .wrap(KILL_MID_RUN)
        .lacks("NEVER-READY")
        .lacks("NOT-CHECKED")
        .check(|_, o| {
            eprintln!("{}", o.text.lines().find(|l| l.starts_with("checked after")).unwrap_or("no time measured"));
            Ok(())
        })
        .check(hook_disarmed)
        .check(no_survivor)
        .check(nothing_left_in_tmp);
    // srt and its auditor both SIGKILLed: the next srt run finishes the dead run's journal
    // (says so, moves the hook aside, removes the dead run's TMPDIR) before its command
    srt_and_auditor_sigkilled_next_run_finishes_the_check => Scenario::new(&planted_then_sleeps(false))
        .setup(private_tmp)
        .env("KILL", KILL_BOTH)
        .env("AFTER", NEXT_RUN)
        .wrap(KILL_MID_RUN)
        .lacks("NEVER-READY")
        .prints("still planted while both are dead")
        .prints("an earlier run ended before its check")
        .check(hook_disarmed)
        .check(no_survivor)
        .check(nothing_left_in_tmp);
    // the auditor SIGKILLed mid-run: srt, a subreaper too, ends the run in its place
    auditor_sigkilled_mid_run_srt_ends_the_run => Scenario::new(&planted_then_sleeps(true))
        .setup(private_tmp)
        .env("KILL", KILL_AUDITOR)
        .env("AFTER", "")
        .wrap(KILL_MID_RUN)
        .lacks("NEVER-READY")
        .lacks("NOT-CHECKED")
        .prints("srt ends the command and checks the run itself")
        .check(hook_disarmed)
        .check(no_survivor)
        .check(nothing_left_in_tmp);
    // output stopped on srt's terminal before its exit hint: srt used to block in write
    // forever (SIGTERM did not help) with its check still to come
    terminal_output_stopped_before_the_exit_messages => stopped_terminal();
    // a TMPDIR 20,000 levels deep: the recursive removal before the check overflowed (or
    // ran out of descriptors and left it all behind)
    tmpdir_twenty_thousand_levels_deep => Scenario::new(&format!("{PLANT}; {DEEP}; exit 5"))
        .wrap(DEEP_WRAP)
        .prints("made 20000 levels")
        .lacks("LEFT-IN-TMPDIR")
        .check(exits_with(5))
        .check(hook_disarmed)
        .within(Duration::from_secs(120));
    // RLIMIT_FSIZE below what srt's log already holds: srt died of SIGXFSZ on its own
    // warning; the command still gets the limit
    file_size_limit_on_srts_own_log => limited("ulimit -S -f 32", "given: fsize=32").prints("moved");
    // a data limit too small for srt's threads (it refused to run: "starting the proxy
    // thread: Resource temporarily unavailable"); the command still gets it
    data_limit_srt_inherits => limited("ulimit -S -d 2048", "data=2048");
    sigchld_ignored_where_srt_was_started => Scenario::new(&format!(
        "{PLANT}; python3 -c 'import signal; print(\"given: SIGCHLD\", int(signal.getsignal(signal.SIGCHLD)))'; exit 7"
    ))
        .wrap(SIGCHLD_IGNORED)
        .prints("given: SIGCHLD 1")
        .check(exits_with(7))
        .check(hook_disarmed)
        .within(Duration::from_secs(15));
    // a stack limit too small for srt (it died of SIGSEGV before the command); the
    // command still gets it
    stack_limit_srt_inherits => limited("ulimit -S -s 24", "stack=24");
}
