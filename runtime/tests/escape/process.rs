//! Privilege, signals, /proc and process lifetime.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use super::harness::{no_process_with, Env, Scenario};
use crate::escapes;

/// A `sleep` outside the sandbox, running as the sandbox's own uid, with a secret in its
/// environment; its pid is written to O/victim.pid.
fn victim(e: &Env) {
    let mut c = std::process::Command::new("sleep");
    c.arg("30").env("VICTIM_SECRET", "VICTIMSECRET");
    if let Some(uid) = e.uid {
        c.uid(uid).gid(uid);
    }
    let child = c.spawn().unwrap();
    e.file(&e.o("victim.pid"), &child.id().to_string());
    std::mem::forget(child);
}

fn victim_alive(e: &Env) -> Result<(), String> {
    let pid: i32 = std::fs::read_to_string(e.o("victim.pid")).unwrap().parse().unwrap();
    // SAFETY: signal 0 only checks existence; SIGKILL then cleans up our own child.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let mut st = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    if alive {
        Ok(())
    } else {
        Err("the process outside the sandbox was killed".into())
    }
}

fn suid_copy(e: &Env) {
    let dst = e.o("suid-bash");
    std::fs::copy("/bin/bash", &dst).unwrap();
    std::os::unix::fs::chown(&dst, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o4755)).unwrap();
}

const CAPS_ZERO: &str = "for k in CapInh CapPrm CapEff CapAmb; do grep -q \"^$k:[[:space:]]*0000000000000000\" /proc/self/status || exit 0; done; exit 1";

escapes! {
    setuid_binary_does_not_elevate => Scenario::new(r#""$O/suid-bash" -p -c 'id -u; grep ^CapEff /proc/self/status'"#)
        .setup(suid_copy)
        .check(|e, o| {
            if !o.text.contains("CapEff:\t0000000000000000") { return Err(format!("capabilities gained: {}", o.text)); }
            if e.uid.is_some() && o.text.lines().next() == Some("0") { return Err("setuid gave uid 0".into()); }
            Ok(())
        });
    capabilities_are_all_dropped => Scenario::new(CAPS_ZERO).fails();
    no_new_privs_is_set => Scenario::new("grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status || exit 0; exit 1").fails();
    chown_outside_file => Scenario::new(r#"chown 12345 "$O/owned.txt""#)
        .setup(|e| e.file(&e.o("owned.txt"), "x"))
        .fails()
        .check(|e, _| {
            use std::os::unix::fs::MetadataExt;
            let uid = std::fs::metadata(e.o("owned.txt")).unwrap().uid();
            if uid == 12345 { Err("owner changed".into()) } else { Ok(()) }
        });
    signal_process_outside => Scenario::new(r#"kill -TERM "$(cat "$O/victim.pid")""#).setup(victim).fails().check(|e, _| victim_alive(e));
    read_environ_of_process_outside => Scenario::new(r#"cat "/proc/$(cat "$O/victim.pid")/environ""#)
        .setup(victim).fails().lacks("VICTIMSECRET").check(|e, _| victim_alive(e));
    read_environ_of_srt => Scenario::new(r#"tr '\0' '\n' < /proc/$PPID/environ"#)
        .env("SRT_PARENT_ONLY_SECRET", "PARENTSECRET").fails().lacks("SRT_PARENT_ONLY");
    background_job_killed_on_exit => Scenario::new(r#"(exec -a "srt-escape-bg-$W" sleep 30 </dev/null >/dev/null 2>&1) & disown; exit 0"#)
        .check(|e, _| no_process_with(&format!("srt-escape-bg-{}", e.w.display())));
    detached_session_killed_on_exit => Scenario::new(r#"setsid bash -c 'exec -a "srt-escape-setsid-$W" sleep 30' </dev/null >/dev/null 2>&1 & sleep 0.2; exit 0"#)
        .check(|e, _| no_process_with(&format!("srt-escape-setsid-{}", e.w.display())));
}
