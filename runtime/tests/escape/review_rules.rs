//! Outside review, findings 2, 3 and 6: where the filesystem rules themselves are wrong.
//! A concurrent process swapping a directory and a symlink makes the next launch grant
//! write rights to the symlink's target (2); a `denyRead` file inside allowWrite can be
//! read through write-opens, renames and links (3); a protected name whose parent is
//! missing at launch is not protected once a symlink (or a hard link of one) provides
//! that parent (6).

use serde_json::json;

use super::harness::{no_process_with, Env, Scenario};
use crate::escapes;

// ---- finding 2 ----------------------------------------------------------------------

/// Swaps two names with renameat2(RENAME_EXCHANGE) until killed, for at most 25 s. The
/// last argument only marks the process for `no_process_with`.
const EXCHANGER: &str = r#"
import ctypes, sys, time
l = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
end = time.time() + 25
while time.time() < end:
    l.renameat2(-100, a, -100, b, 2)
"#;

/// W/sub (a directory) and W/lnk (a symlink to O), swapped continuously by a host process
/// running as the scenario's user, while srt is launched in W up to 150 times (at most
/// 20 s; one launch in ten or so wins the race today). The wrapper exits 0 when O/pwn
/// appeared.
fn exchange_race() -> Scenario {
    Scenario::new("for i in 1 2 3 4 5 6 7 8 9 10; do (echo x > sub/pwn) 2>/dev/null; (echo x > lnk/pwn) 2>/dev/null; done; exit 0")
        .setup(|e| {
            e.dir(&e.w("sub"));
            std::os::unix::fs::symlink(&e.o, e.w("lnk")).unwrap();
            e.own_tree(&e.w("lnk"));
            e.file(&e.o("exchange.py"), EXCHANGER);
        })
        .wrap(
            r#"marker="srt-escape-exchanger-$W"
            /usr/bin/python3 "$O/exchange.py" "$W/sub" "$W/lnk" "$marker" </dev/null >/dev/null 2>&1 &
            x=$!
            trap 'kill $x 2>/dev/null; wait $x 2>/dev/null' EXIT
            sleep 0.2
            for i in $(seq 150); do
              [ "$SECONDS" -lt 20 ] || break
              "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" </dev/null >/dev/null 2>&1
              if [ -e "$O/pwn" ]; then echo "ESCAPED on launch $i"; exit 0; fi
            done
            exit 1"#,
        )
        .fails()
        .lacks("ESCAPED")
        .absent("o/pwn")
        .check(|e, _| no_process_with(&format!("srt-escape-exchanger-{}", e.w.display())))
}

// ---- finding 3 ----------------------------------------------------------------------

fn env_secret(cmd: &str) -> Scenario {
    Scenario::new(cmd)
        .with("filesystem.denyRead", json!(["{W}/.env"]))
        .setup(|e| {
            e.file(&e.w(".env"), "ENVSECRET\n");
            e.dir(&e.w("sub"));
        })
        .lacks("ENVSECRET")
}

// ---- finding 6 ----------------------------------------------------------------------

fn workflows_denied(cmd: &str) -> Scenario {
    Scenario::new(cmd).with("filesystem.denyWrite", json!(["./.github/workflows"])).fails().check(|e: &Env, _| {
        match std::fs::read_to_string(e.w(".github/workflows/ci.yml")) {
            Ok(s) => Err(format!("W/.github/workflows/ci.yml exists on the host: {s:?}")),
            Err(_) => Ok(()),
        }
    })
}

fn claude_commands(cmd: &str) -> Scenario {
    Scenario::new(cmd).fails().check(|e: &Env, _| match std::fs::read_to_string(e.w(".claude/commands/c.md")) {
        Ok(s) => Err(format!("W/.claude/commands/c.md exists on the host: {s:?}")),
        Err(_) => Ok(()),
    })
}

escapes! {
    // finding 2: the planner classifies by readdir type, the rule builder follows symlinks
    swapped_dir_and_symlink_widen_next_launch => exchange_race();

    // finding 3: a read-write open is a write the supervisor performs, reading included
    deny_read_in_allow_write_rw_open => env_secret("cat <>.env").fails().holds("w/.env", "ENVSECRET\n");
    // finding 3
    deny_read_in_allow_write_python_r_plus => env_secret(r#"/usr/bin/python3 -c 'print(open(".env", "r+").read())'"#)
        .fails().holds("w/.env", "ENVSECRET\n");
    // finding 3: renamed out of the denied name, it is an ordinary file
    deny_read_in_allow_write_rename_to_tmp => env_secret(r#"mv .env "$TMPDIR/x" && cat "$TMPDIR/x""#)
        .fails().holds("w/.env", "ENVSECRET\n");
    // finding 3
    deny_read_in_allow_write_rename_to_subdir => env_secret("mv .env sub/x && cat sub/x")
        .fails().holds("w/.env", "ENVSECRET\n");
    // finding 3: a second name in W (Landlock keeps new entries of W unreadable) ...
    deny_read_in_allow_write_hardlink => env_secret("ln .env x && cat x").fails().holds("w/.env", "ENVSECRET\n");
    // finding 3: ... unless opened read-write
    deny_read_in_allow_write_hardlink_rw_open => env_secret("ln .env x && cat <>x")
        .fails().holds("w/.env", "ENVSECRET\n");
    // finding 3: a second name in a subdirectory, which is readable
    deny_read_in_allow_write_hardlink_subdir => env_secret("ln .env sub/x && cat sub/x")
        .fails().holds("w/.env", "ENVSECRET\n");

    // finding 6: .claude missing at launch; a symlink provides it
    claude_commands_via_symlink => claude_commands("ln -s x .claude && mkdir -p x/commands && echo evil > x/commands/c.md");
    // finding 6: the same, with the symlink made last
    claude_commands_via_late_symlink => claude_commands("mkdir -p x/commands && echo evil > x/commands/c.md && ln -s x .claude");
    // finding 6: a user denyWrite whose parent is missing at launch
    deny_write_workflows_via_symlink => workflows_denied("ln -s x .github && mkdir -p x/workflows && echo evil > x/workflows/ci.yml");
    // finding 6: a hard link of a symlink (ln without -L links the symlink itself)
    deny_write_workflows_via_hardlinked_symlink => workflows_denied(
        "ln -s x s && ln s .github && mkdir -p x/workflows && echo evil > x/workflows/ci.yml");
}
