//! The start-up review (attack4): the home rules' loop skipped where no writable tree holds
//! the home or an XDG base, the proxy's thread started on the first client, and the
//! supervisor's watchdog ticked by srt's main thread. The home is `O/h`, outside every
//! writable tree, so the loop is skipped: what its XDG bases name in W must still be
//! refused through the later XDG rules, whatever spelling the variable uses.

use std::time::Duration;

use super::harness::{is_root, Env, Scenario};
use crate::escapes;

/// `XDG_CONFIG_HOME` set to `value` (W/cfg exists, O/cfglink links to it) while the home
/// is O/h: writing git's config below it is refused.
fn xdg_spelled(value: &'static str) -> Scenario {
    Scenario::new(r#"mkdir -p "$XDG_CONFIG_HOME/git" 2>/dev/null; printf '[core]\n\tfsmonitor = touch\n' > "$XDG_CONFIG_HOME/git/config""#)
        .setup(|e: &Env| {
            e.dir(&e.o("h"));
            e.dir(&e.w("cfg"));
            std::os::unix::fs::symlink(e.w("cfg"), e.o("cfglink")).unwrap();
        })
        .env("HOME", "{O}/h")
        .env("XDG_CONFIG_HOME", value)
        .fails()
        .absent_w("cfg/git/config")
}

/// O/h, the home, bind-mounted on W/hb: the same directory under a second name inside a
/// writable tree. The home rules judge names below `$HOME`, and Landlock's grant on W
/// covers everything reached through W, so `W/hb/.bashrc` is the home's `.bashrc`.
fn home_bind_mounted() -> Scenario {
    Scenario::new(r#"printf 'touch "%s/pwned"\n' "$O" >> "$W/hb/.bashrc""#)
        .setup(|e: &Env| {
            e.dir(&e.o("h"));
            e.dir(&e.w("hb"));
            assert!(is_root(), "the bind mount needs root");
            let ok = std::process::Command::new("mount")
                .arg("--bind")
                .arg(e.o("h"))
                .arg(e.w("hb"))
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mount --bind O/h W/hb");
        })
        .env("HOME", "{O}/h")
        .fails()
        .check(|e, _| {
            let written = e.o("h/.bashrc").symlink_metadata().is_ok();
            // before the harness removes the tree: never through the mount into O/h
            let _ = std::process::Command::new("umount").arg(e.w("hb")).status();
            if written {
                Err("O/h/.bashrc, the home's, was written through its bind mount W/hb".into())
            } else {
                Ok(())
            }
        })
}

/// The proxy's port as the command sees it.
const PORT: &str = r#"port=${HTTP_PROXY##*:}; port=${port%%/*}"#;

escapes! {
    xdg_base_with_dotdot_into_the_project => xdg_spelled("{O}/../w/cfg");
    xdg_base_with_trailing_slash => xdg_spelled("{W}/cfg/");
    xdg_base_with_double_slash => xdg_spelled("{W}//cfg");
    xdg_base_through_a_symlink_into_the_project => xdg_spelled("{O}/cfglink");
    // A second name for the home made by a bind mount inside the writable tree
    // (`fs::mount_aliases`): judged by the home rules as if it were `$HOME`.
    home_bind_mounted_into_the_project => home_bind_mounted();
    // Twenty clients wait in the backlog before the proxy's thread exists (none of them
    // sends anything); a request after them is still judged (403) and srt ends at once.
    clients_before_the_proxy_thread_do_not_open_the_network => Scenario::new(&format!(
        r#"{PORT}; for i in $(seq 20); do exec {{fd}}<>"/dev/tcp/127.0.0.1/$port" || echo "NOCONNECT $i"; done
           curl -sS --max-time 5 https://example.com/ -o /dev/null"#))
        .within(Duration::from_secs(30))
        .fails()
        .prints("CONNECT tunnel failed, response 403")
        .lacks("NOCONNECT");
    // A client that connects and leaves at once (the listener's first readiness has
    // nobody left to accept) does not keep the proxy from serving the next one.
    a_client_gone_before_the_proxy_starts => Scenario::new(&format!(
        r#"{PORT}; (exec 3<>"/dev/tcp/127.0.0.1/$port"); sleep 0.2
           curl -sS --max-time 5 https://example.com/ -o /dev/null"#))
        .within(Duration::from_secs(30))
        .fails()
        .prints("CONNECT tunnel failed, response 403");
}
