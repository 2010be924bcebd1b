//! Issue 39, item 6: spots a read of the code found, tried from the command's side.
//!
//! srt started with descriptors 0-2 closed: without std's start-up (srt enters as a C
//! `main`) the first files srt kept open took those numbers, fd 2 among them the run's
//! journal, so srt's warnings were written into the journal, the check after the run could
//! not read it, and a git config the command planted stayed for host git.

use super::harness::{Env, Output, Scenario};
use super::review_git::{host_git, FSMONITOR};
use crate::escapes;

/// Plants an fsmonitor in a repository the command makes, and notes which of its own
/// descriptors 0-2 are open (each tested before anything is redirected).
const PLANT_AND_LOOK: &str = r#"git init -q x && fsmon x/.git/config pwned
for f in 0 1 2; do if [ -e /proc/$$/fd/$f ]; then echo "open $f" >> fds.txt; else echo "closed $f" >> fds.txt; fi; done"#;

/// No journal or spare in srt's state directory (`$XDG_STATE_HOME/srt/runs`, set to
/// `O/state` for both users) holds a message of srt's, and none was set aside as
/// unreadable.
fn journals_hold_no_message(e: &Env, _: &Output) -> Result<(), String> {
    let runs = e.o("state/srt/runs");
    for ent in std::fs::read_dir(&runs).map_err(|err| format!("{}: {err}", runs.display()))?.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(ent.path()).unwrap_or_default();
        if name.ends_with(".unreadable") || bytes.windows(5).any(|w| w == b"srt: ") {
            return Err(format!("{name} holds srt's messages: {}", String::from_utf8_lossy(&bytes)));
        }
    }
    Ok(())
}

escapes! {
    // the user's closed descriptors reach the command closed, and srt's warning (a /dev/shm
    // entry in allowWrite, said after the journal is open) goes nowhere
    stdio_closed_messages_stay_out_of_the_journal => Scenario::new(&format!("{FSMONITOR}; {PLANT_AND_LOOK}"))
        .with("filesystem.allowWrite", serde_json::json!([".", "/dev/shm"]))
        .wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" <&- >&- 2>&-; echo "srt exited $?""#)
        .env("XDG_STATE_HOME", "{O}/state")
        .prints("srt exited 0")
        .check(journals_hold_no_message)
        .check(|e, _| {
            let _ = host_git(e, &["-C", "x", "status"]);
            if e.o("pwned").exists() { Err("host git ran the planted fsmonitor: the check was not done".into()) } else { Ok(()) }
        })
        .check(|e, _| match std::fs::read_to_string(e.w("fds.txt")) {
            Ok(s) if s == "closed 0\nclosed 1\nclosed 2\n" => Ok(()),
            other => Err(format!("the command's descriptors 0-2: {other:?}")),
        });
}
