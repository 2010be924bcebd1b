//! Second names made by mounts (`fs::mount_aliases`): a protected directory, or part of
//! the home, bind-mounted inside a writable tree is the same files under a name the rules
//! would not know. Each must get the protection of what it shows. (The home itself
//! bound into the tree is `review_startup.rs`'s `home_bind_mounted_into_the_project`;
//! `/tmp` bound into it, `native_create.rs`'s scenario for the state directory.)
//!
//! Each mount is made by the setup, as root, and removed by the check before the
//! harness removes the tree.

use serde_json::json;

use super::harness::{is_root, Env, Scenario};
use crate::escapes;

fn bind(from: &std::path::Path, to: &std::path::Path) {
    assert!(is_root(), "the bind mount needs root");
    let ok = std::process::Command::new("mount").arg("--bind").arg(from).arg(to).status().is_ok_and(|s| s.success());
    assert!(ok, "mount --bind {} {}", from.display(), to.display());
}

fn unmount(e: &Env, at: &str) {
    let _ = std::process::Command::new("umount").arg(e.w(at)).status();
}

escapes! {
    // A `denyWrite` directory outside the tree, mounted again inside it: its file cannot
    // be rewritten, nor a new one made, through the second name.
    denied_directory_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo changed > lb/kept; echo new > lb/made"#)
            .with("filesystem.denyWrite", json!(["{O}/locked"]))
            .setup(|e: &Env| {
                e.dir(&e.o("locked"));
                e.file(&e.o("locked/kept"), "kept\n");
                e.dir(&e.w("lb"));
                bind(&e.o("locked"), &e.w("lb"));
            })
            .fails()
            .check(|e, _| {
                unmount(e, "lb");
                match (std::fs::read_to_string(e.o("locked/kept")).ok(), e.o("locked/made").exists()) {
                    (Some(k), false) if k == "kept\n" => Ok(()),
                    other => Err(format!("the denied directory was written through W/lb: {other:?}")),
                }
            });
    // Part of the home (its `.ssh`) mounted inside the tree: judged by the home rules as
    // `~/.ssh`, so `authorized_keys` cannot be made through it.
    home_part_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo "ssh-ed25519 AAAA attacker" >> sb/authorized_keys; echo 'Host *' > sb/config"#)
            .setup(|e: &Env| {
                e.dir(&e.o("h/.ssh"));
                e.dir(&e.w("sb"));
                bind(&e.o("h/.ssh"), &e.w("sb"));
            })
            .env("HOME", "{O}/h")
            .fails()
            .check(|e, _| {
                unmount(e, "sb");
                let made: Vec<_> = ["h/.ssh/authorized_keys", "h/.ssh/config"].into_iter().filter(|r| e.o(r).exists()).collect();
                if made.is_empty() {
                    Ok(())
                } else {
                    Err(format!("written into the home through W/sb: {made:?}"))
                }
            });
    // An ordinary directory from outside mounted into the tree (a cache volume) is not
    // protected: writing through it works as before.
    unprotected_bind_mount_stays_writable =>
        Scenario::new(r#"echo data > cache/f && cat cache/f"#)
            .setup(|e: &Env| {
                e.dir(&e.o("cache"));
                e.own(&e.o("cache"));
                e.dir(&e.w("cache"));
                bind(&e.o("cache"), &e.w("cache"));
            })
            .prints("data")
            .check(|e, _| {
                unmount(e, "cache");
                match std::fs::read_to_string(e.o("cache/f")) {
                    Ok(s) if s == "data\n" => Ok(()),
                    other => Err(format!("the unprotected mount was not written: {other:?}")),
                }
            });
}
