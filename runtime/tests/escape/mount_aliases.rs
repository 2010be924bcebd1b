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

    // ---- attack8: second names the first version missed ----
    // The repository's own `.git` bound elsewhere in the tree: `config` is guarded by the
    // git rules (not a `denyWrite` path), and must be through the second name too.
    git_dir_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo '[core] fsmonitor = evil' >> g/config"#)
            .setup(|e: &Env| {
                e.dir(&e.w(".git/hooks"));
                e.file(&e.w(".git/config"), "[core]\n");
                e.file(&e.w(".git/HEAD"), "ref: refs/heads/main\n");
                e.dir(&e.w("g"));
                bind(&e.w(".git"), &e.w("g"));
            })
            .fails()
            .check(|e, _| {
                unmount(e, "g");
                match std::fs::read_to_string(e.w(".git/config")) {
                    Ok(s) if s == "[core]\n" => Ok(()),
                    other => Err(format!(".git/config written through W/g: {other:?}")),
                }
            });
    // A part of a git directory (its `config` file) bound onto a file in the tree: the
    // rules would not know which part it is, so it is denied whole.
    git_config_file_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo '[alias] x = !evil' >> cfg"#)
            .setup(|e: &Env| {
                e.dir(&e.w(".git/hooks"));
                e.file(&e.w(".git/config"), "[core]\n");
                e.file(&e.w(".git/HEAD"), "ref: refs/heads/main\n");
                e.file(&e.w("cfg"), "");
                bind(&e.w(".git/config"), &e.w("cfg"));
            })
            .fails()
            .check(|e, _| {
                unmount(e, "cfg");
                match std::fs::read_to_string(e.w(".git/config")) {
                    Ok(s) if s == "[core]\n" => Ok(()),
                    other => Err(format!(".git/config written through W/cfg: {other:?}")),
                }
            });
    // A project entry (`.claude`) bound elsewhere in the tree: its settings file is judged
    // by the project rules by name.
    project_entry_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo '{"hooks":"evil"}' > c/settings.json"#)
            .setup(|e: &Env| {
                e.dir(&e.w(".claude"));
                e.dir(&e.w("c"));
                bind(&e.w(".claude"), &e.w("c"));
            })
            .fails()
            .check(|e, _| {
                unmount(e, "c");
                if e.w(".claude/settings.json").exists() {
                    Err("W/.claude/settings.json made through W/c".into())
                } else {
                    Ok(())
                }
            });
    // The tree bound inside itself: `m/.claude` is the tree's own `.claude`, which a
    // command may not make, though no `.claude` exists yet to be denied by name.
    project_tree_bind_mounted_inside_itself =>
        Scenario::new(r#"mkdir m/.claude; echo '{"hooks":"evil"}' > m/.claude/settings.json"#)
            .setup(|e: &Env| {
                e.dir(&e.w("m"));
                bind(&e.w(""), &e.w("m"));
            })
            .check(|e, _| {
                unmount(e, "m");
                if e.w(".claude").exists() {
                    Err("W/.claude made through W/m".into())
                } else {
                    Ok(())
                }
            });
    // The working directory reached through a bind of the home: below the second name,
    // not in it. `~/.ssh` as the project is refused by name; through `O/hv` too.
    working_directory_inside_a_bind_of_the_home =>
        Scenario::new(r#"echo "ssh-ed25519 AAAA attacker" >> authorized_keys"#)
            .setup(|e: &Env| {
                e.dir(&e.o("h/.ssh"));
                e.dir(&e.o("hv"));
                bind(&e.o("h"), &e.o("hv"));
            })
            .env("HOME", "{O}/h")
            .wrap(r#"cd "$O/hv/.ssh" && "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
            .fails()
            .check(|e, _| {
                let _ = std::process::Command::new("umount").arg(e.o("hv")).status();
                if e.o("h/.ssh/authorized_keys").exists() {
                    Err("authorized_keys made from a working directory inside a bind of the home".into())
                } else {
                    Ok(())
                }
            });
    // ...while a project the home rules allow by name (`~/.config/foo` as the working
    // directory) stays writable through the same bind.
    project_inside_a_bind_of_the_home_stays_writable =>
        Scenario::new(r#"echo data > f && cat f"#)
            .setup(|e: &Env| {
                e.dir(&e.o("h/.config/foo"));
                e.dir(&e.o("hv"));
                bind(&e.o("h"), &e.o("hv"));
            })
            .env("HOME", "{O}/h")
            .wrap(r#"cd "$O/hv/.config/foo" && "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
            .prints("data")
            .check(|e, _| {
                let _ = std::process::Command::new("umount").arg(e.o("hv")).status();
                match std::fs::read_to_string(e.o("h/.config/foo/f")) {
                    Ok(s) if s == "data\n" => Ok(()),
                    other => Err(format!("the project was not written: {other:?}")),
                }
            });
    // A single file of the home (`~/.bashrc`) bound onto a file in the tree.
    home_file_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo evil >> rc"#)
            .setup(|e: &Env| {
                e.file(&e.o("h/.bashrc"), "orig\n");
                e.file(&e.w("rc"), "");
                bind(&e.o("h/.bashrc"), &e.w("rc"));
            })
            .env("HOME", "{O}/h")
            .fails()
            .check(|e, _| {
                unmount(e, "rc");
                match std::fs::read_to_string(e.o("h/.bashrc")) {
                    Ok(s) if s == "orig\n" => Ok(()),
                    other => Err(format!("~/.bashrc written through W/rc: {other:?}")),
                }
            });
    // A parent of the home bound into the tree: the home lies below the mount point.
    home_parent_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo evil >> x/h/.bashrc; mkdir -p x/h/.ssh; echo k >> x/h/.ssh/authorized_keys"#)
            .setup(|e: &Env| {
                e.file(&e.o("h/.bashrc"), "orig\n");
                e.dir(&e.w("x"));
                bind(&e.o(""), &e.w("x"));
            })
            .env("HOME", "{O}/h")
            .check(|e, _| {
                unmount(e, "x");
                match (std::fs::read_to_string(e.o("h/.bashrc")).ok(), e.o("h/.ssh/authorized_keys").exists()) {
                    (Some(s), false) if s == "orig\n" => Ok(()),
                    other => Err(format!("the home written through W/x: {other:?}")),
                }
            });
    // A mount point whose name needs mountinfo's escapes (space, backslash, newline).
    home_part_bind_mounted_at_an_escaped_name =>
        Scenario::new(r#"for d in a*; do echo k >> "$d/authorized_keys"; done"#)
            .setup(|e: &Env| {
                e.dir(&e.o("h/.ssh"));
                e.dir(&e.w("a b\\c\nd"));
                bind(&e.o("h/.ssh"), &e.w("a b\\c\nd"));
            })
            .env("HOME", "{O}/h")
            .check(|e, _| {
                unmount(e, "a b\\c\nd");
                if e.o("h/.ssh/authorized_keys").exists() {
                    Err("authorized_keys made through an escaped mount point".into())
                } else {
                    Ok(())
                }
            });
    // A writable tree that lies below a second name of a denied directory: the denial of
    // the whole directory covers it, whatever the tree's own name.
    write_tree_inside_a_second_name_of_a_denied_directory =>
        Scenario::new(r#"echo new > "$V/made""#)
            .with("filesystem.denyWrite", json!(["{O}/locked"]))
            .with("filesystem.allowWrite", json!([".", "{O}/view/sub"]))
            .setup(|e: &Env| {
                e.dir(&e.o("locked/sub"));
                e.dir(&e.o("view"));
                bind(&e.o("locked"), &e.o("view"));
            })
            .env("V", "{O}/view/sub")
            .fails()
            .check(|e, _| {
                let _ = std::process::Command::new("umount").arg(e.o("view")).status();
                if e.o("locked/sub/made").exists() {
                    Err("the denied directory was written through O/view/sub".into())
                } else {
                    Ok(())
                }
            });
    // The command cannot make a second name itself: a mount namespace of its own (user
    // namespace) is refused, or its bind cannot be written through.
    command_cannot_bind_mount_the_git_dir =>
        Scenario::new(r#"mkdir -p g; unshare -Urm sh -c 'mount --bind .git g && echo "[core] fsmonitor = evil" >> g/config'"#)
            .setup(|e: &Env| {
                e.dir(&e.w(".git/hooks"));
                e.file(&e.w(".git/config"), "[core]\n");
                e.file(&e.w(".git/HEAD"), "ref: refs/heads/main\n");
            })
            .fails()
            .holds("w/.git/config", "[core]\n");

    // ---- attack9: second names of what the home rules protect outside the home ----
    // `XDG_CONFIG_HOME` moved out of the home and out of every writable tree, bound into
    // the tree: git reads `$XDG_CONFIG_HOME/git/config`, so through the bind it is
    // `~/.config/git/config` and judged as such.
    xdg_config_base_bind_mounted_into_the_tree =>
        Scenario::new(r#"mkdir -p c/git; echo '[core] fsmonitor = evil' >> c/git/config; echo 'x' >> c/fish/config.fish"#)
            .setup(|e: &Env| {
                e.file(&e.o("cfg/git/config"), "[user]\n");
                e.file(&e.o("cfg/fish/config.fish"), "");
                e.dir(&e.o("h"));
                e.dir(&e.w("c"));
                bind(&e.o("cfg"), &e.w("c"));
            })
            .env("HOME", "{O}/h")
            .env("XDG_CONFIG_HOME", "{O}/cfg")
            .check(|e, _| {
                unmount(e, "c");
                match (std::fs::read_to_string(e.o("cfg/git/config")).ok(), std::fs::read_to_string(e.o("cfg/fish/config.fish")).ok()) {
                    (Some(g), Some(f)) if g == "[user]\n" && f.is_empty() => Ok(()),
                    other => Err(format!("the XDG config base written through W/c: {other:?}")),
                }
            });
    // ...while a project inside the same bind (`$XDG_CONFIG_HOME/foo`, like `~/.config/foo`)
    // stays writable.
    project_inside_a_bind_of_the_xdg_base_stays_writable =>
        Scenario::new(r#"echo data > f && cat f"#)
            .setup(|e: &Env| {
                e.dir(&e.o("cfg/foo"));
                e.own(&e.o("cfg/foo"));
                e.dir(&e.o("h"));
                e.dir(&e.o("cv"));
                bind(&e.o("cfg"), &e.o("cv"));
            })
            .env("HOME", "{O}/h")
            .env("XDG_CONFIG_HOME", "{O}/cfg")
            .wrap(r#"cd "$O/cv/foo" && "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
            .prints("data")
            .check(|e, _| {
                let _ = std::process::Command::new("umount").arg(e.o("cv")).status();
                match std::fs::read_to_string(e.o("cfg/foo/f")) {
                    Ok(s) if s == "data\n" => Ok(()),
                    other => Err(format!("the project was not written: {other:?}")),
                }
            });
    // A `PATH` directory outside the writable trees bound into the tree: protected whole
    // where it may be written, so through its second name too.
    path_directory_bind_mounted_into_the_tree =>
        Scenario::new(r#"printf '#!/bin/sh\necho evil\n' > b/git"#)
            .setup(|e: &Env| {
                e.dir(&e.o("bin"));
                e.own(&e.o("bin"));
                e.dir(&e.w("b"));
                bind(&e.o("bin"), &e.w("b"));
            })
            .env("PATH", "{O}/bin:/usr/local/bin:/usr/bin:/bin")
            .check(|e, _| {
                unmount(e, "b");
                if e.o("bin/git").exists() {
                    Err("a PATH directory written through W/b".into())
                } else {
                    Ok(())
                }
            });
    // An overlay mounted in the tree whose upper directory is `~/.ssh`: its writes land
    // there, though the overlay is a filesystem of its own (another `major:minor`). The
    // check takes its upper directory as what it shows (attack9 found it missed).
    overlay_with_a_protected_upper_directory =>
        Scenario::new(r#"echo "ssh-ed25519 AAAA attacker" >> ov/authorized_keys"#)
            .setup(|e: &Env| {
                assert!(is_root(), "the overlay mount needs root");
                for d in ["h/.ssh", "lower", "work"] {
                    e.dir(&e.o(d));
                }
                e.dir(&e.w("ov"));
                let opts = format!(
                    "lowerdir={},upperdir={},workdir={}",
                    e.o("lower").display(),
                    e.o("h/.ssh").display(),
                    e.o("work").display()
                );
                let ok = std::process::Command::new("mount")
                    .args(["-t", "overlay", "overlay", "-o", &opts])
                    .arg(e.w("ov"))
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "mount -t overlay");
            })
            .env("HOME", "{O}/h")
            .check(|e, _| {
                unmount(e, "ov");
                if e.o("h/.ssh/authorized_keys").exists() {
                    Err("authorized_keys made through an overlay in the tree".into())
                } else {
                    Ok(())
                }
            });
    // The git directory a `.git` file names (a worktree's or submodule's, kept outside
    // the tree) bound into the tree: recognised by its shape, so its config and hooks
    // keep the git rules.
    gitdir_of_a_git_file_bind_mounted_into_the_tree =>
        Scenario::new(r#"echo '[core] fsmonitor = evil' >> g/config; echo 'echo evil' > g/hooks/pre-commit"#)
            .setup(|e: &Env| {
                for d in ["repo.git/hooks", "repo.git/objects", "repo.git/refs/heads"] {
                    e.dir(&e.o(d));
                }
                e.file(&e.o("repo.git/config"), "[core]\n");
                e.file(&e.o("repo.git/HEAD"), "ref: refs/heads/main\n");
                e.file(&e.w(".git"), &format!("gitdir: {}\n", e.o("repo.git").display()));
                e.dir(&e.w("g"));
                bind(&e.o("repo.git"), &e.w("g"));
            })
            .check(|e, _| {
                unmount(e, "g");
                match (std::fs::read_to_string(e.o("repo.git/config")).ok(), e.o("repo.git/hooks/pre-commit").exists()) {
                    (Some(c), false) if c == "[core]\n" => Ok(()),
                    other => Err(format!("the git directory written through W/g: {other:?}")),
                }
            });
    // A single unprotected file bound onto a file in the tree (an `/etc/hosts`-style
    // volume) stays writable.
    unprotected_file_bind_stays_writable =>
        Scenario::new(r#"echo data >> hosts && cat hosts"#)
            .setup(|e: &Env| {
                e.file(&e.o("hosts"), "");
                e.own(&e.o("hosts"));
                e.file(&e.w("hosts"), "");
                bind(&e.o("hosts"), &e.w("hosts"));
            })
            .prints("data")
            .check(|e, _| {
                unmount(e, "hosts");
                match std::fs::read_to_string(e.o("hosts")) {
                    Ok(s) if s == "data\n" => Ok(()),
                    other => Err(format!("the unprotected file was not written: {other:?}")),
                }
            });
    // The working directory is another filesystem mounted over a second name of the
    // home (`O/hv/.foo`, a tmpfs, not the home's `.foo`): it opens nothing in the home,
    // whose dot-entries stay protected although the home is writable.
    mount_over_a_second_name_of_the_home_opens_nothing =>
        Scenario::new(r#"echo planted > "$O/h/.foo/planted""#)
            .with("filesystem.allowWrite", json!([".", "{O}/h"]))
            .setup(|e: &Env| {
                e.dir(&e.o("h/.foo"));
                e.own(&e.o("h"));
                e.own(&e.o("h/.foo"));
                e.dir(&e.o("hv"));
                bind(&e.o("h"), &e.o("hv"));
                let ok = std::process::Command::new("mount")
                    .args(["-t", "tmpfs", "-o", "size=64k", "scratch"])
                    .arg(e.o("hv/.foo"))
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "mount -t tmpfs");
            })
            .env("HOME", "{O}/h")
            .wrap(r#"cd "$O/hv/.foo" && "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
            .fails()
            .check(|e, _| {
                let _ = std::process::Command::new("umount").arg(e.o("hv/.foo")).status();
                let _ = std::process::Command::new("umount").arg(e.o("hv")).status();
                if e.o("h/.foo/planted").exists() {
                    Err("~/.foo opened by a working directory mounted over its second name".into())
                } else {
                    Ok(())
                }
            });
}
