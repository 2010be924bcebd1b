//! Outside review, findings 8 and 11: srt itself as the target. A write-open of a fifo
//! with no reader blocks the single-threaded supervisor, so srt never exits and ignores
//! SIGTERM (8); the settings file srt reads can be rewritten by the command when it lies
//! inside allowWrite, weakening the next run (11).

use std::time::Duration;

use super::harness::{no_process_with, nothing_left_in_tmp, private_tmp, Env, Output, Scenario};
use crate::escapes;

// ---- finding 8 ----------------------------------------------------------------------

/// The marker the blocked writer runs under, so survivors can be found.
fn no_writer_left(e: &Env, _: &Output) -> Result<(), String> {
    no_process_with(&format!("srt-escape-fifo-{}", e.w.display()))
}

fn fifo(cmd: &str, wrapper: &str) -> Scenario {
    Scenario::new(cmd).setup(private_tmp).wrap(wrapper).check(nothing_left_in_tmp).check(no_writer_left)
}

// ---- finding 11 ---------------------------------------------------------------------

/// Settings that turn the filesystem rules off.
const WEAKER: &str = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#;

fn settings_kept(e: &Env, _: &Output) -> Result<(), String> {
    let p = e.w("srt-settings.json");
    match std::fs::read_to_string(&p) {
        Ok(s) if s.contains("disabled") => Err(format!("the command rewrote its settings file: {s}")),
        Ok(s) if serde_json::from_str::<serde_json::Value>(&s).is_ok() => Ok(()),
        Ok(s) => Err(format!("the settings file no longer parses: {s:?}")),
        Err(err) => Err(format!("the settings file is gone: {err}")),
    }
}

fn rewrite(cmd: &str) -> Scenario {
    Scenario::new(&cmd.replace("{WEAKER}", WEAKER)).settings_in_w().fails().check(settings_kept)
}

escapes! {
    // finding 8 (a): the blocked writer is killed after 2 s, srt must then finish
    fifo_open_does_not_hang_srt => fifo(
        r#"mkfifo ff; timeout 2 bash -c 'exec -a "srt-escape-fifo-$W" bash -c "echo x > ff"'; exit 0"#,
        r#"export TMPDIR="$HOME/tmp"; exec "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
        .within(Duration::from_secs(10));
    // finding 8 (b): SIGTERM while the open is pending: srt must be gone within 8 s
    fifo_open_sigterm_ends_srt => fifo(
        r#"mkfifo ff; exec -a "srt-escape-fifo-$W" bash -c 'echo x > ff'"#,
        r#"export TMPDIR="$HOME/tmp"
        "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" & pid=$!
        for i in $(seq 50); do [ -p "$W/ff" ] && break; sleep 0.1; done
        sleep 0.5
        kill -TERM $pid
        for i in $(seq 80); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
        if kill -0 $pid 2>/dev/null; then echo SRT-IGNORED-SIGTERM; kill -KILL $pid; fi
        wait $pid
        exit 0"#)
        .lacks("SRT-IGNORED-SIGTERM");

    // finding 11: `-s W/srt-settings.json`, overwritten in place
    settings_file_in_w_overwritten => rewrite("echo '{WEAKER}' > srt-settings.json");
    // finding 11: replaced by a rename
    settings_file_in_w_replaced => rewrite("echo '{WEAKER}' > new.json && mv -f new.json srt-settings.json");
    // finding 11: found through $SRT_SETTINGS_PATH
    settings_env_path_in_w_overwritten => rewrite("echo '{WEAKER}' > srt-settings.json")
        .no_settings_flag().env("SRT_SETTINGS_PATH", "{W}/srt-settings.json");
    // finding 11: no settings file at all and HOME=W: the command creates ~/.srt-settings.json
    home_settings_file_created => Scenario::new(&format!("echo '{WEAKER}' > ~/.srt-settings.json"))
        .no_settings_file().env("HOME", "{W}").fails().absent("w/.srt-settings.json");
}
