//! A link is a write to where it leads (round 7's M2): `ln -s .bashrc ~/.bash_history`
//! made the next interactive bash append every typed command to `.bashrc`. Links made,
//! renamed or hard-linked into place are refused wherever they lead somewhere the command
//! may not write; what a directory rename sends elsewhere is moved aside after the run.

use super::harness::{Env, Scenario};
use crate::escapes;

/// `name` is not a symlink on the host after the run.
fn no_link(e: &Env, rel: &str) -> Result<(), String> {
    match e.w(rel).symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Err(format!("{rel} is a symlink on the host")),
        _ => Ok(()),
    }
}

/// Started in `$HOME` (W is the home, holding the rc files): `ln -s target name` fails and
/// leaves no link.
fn home_link(target: &'static str, name: &'static str) -> Scenario {
    Scenario::new(&format!(r#"mkdir -p "$(dirname '{name}')" 2>/dev/null; ln -s "{target}" '{name}'"#))
        .env("HOME", "{W}")
        .setup(|e| {
            for rc in [".bashrc", ".zshrc", ".gitconfig"] {
                e.file(&e.w(rc), "# rc\n");
            }
            e.dir(&e.w(".local/state/nvim/shada"));
            e.dir(&e.w(".npm/_logs"));
        })
        .fails()
        .check(move |e, _| no_link(e, name))
        .holds("w/.bashrc", "# rc\n")
}

/// A link the host made before the run (`prep -> .bashrc`, in W, the home) given an
/// allow-listed name by `cmd`.
/// `absolute`: the link names `W/.bashrc` whole, so it leads there from anywhere.
fn prepared_link(cmd: &'static str, name: &'static str, absolute: bool) -> Scenario {
    Scenario::new(cmd)
        .env("HOME", "{W}")
        .setup(move |e| {
            e.file(&e.w(".bashrc"), "# rc\n");
            let to = if absolute { e.w(".bashrc") } else { ".bashrc".into() };
            std::os::unix::fs::symlink(to, e.w("prep")).unwrap();
            e.own_tree(&e.w("prep"));
        })
        .fails()
        .check(move |e, _| no_link(e, name))
}

escapes! {
    // allow-listed history and data names made as links into the rc files
    bash_history_to_bashrc => home_link(".bashrc", ".bash_history");
    zsh_history_to_zshrc => home_link(".zshrc", ".zsh_history");
    python_history_to_gitconfig => home_link(".gitconfig", ".python_history");
    fish_history_to_bashrc => home_link("../../../.bashrc", ".local/share/fish/fish_history");
    viminfo_absolute_to_bashrc => home_link("$HOME/.bashrc", ".viminfo");
    nvim_shada_to_zshrc => home_link("../../../../.zshrc", ".local/state/nvim/shada/main.shada");
    npm_log_to_gitconfig => home_link("../../.gitconfig", ".npm/_logs/debug.log");
    // an ordinary name in the home, and one through a chain of directories
    notes_to_bashrc => home_link(".bashrc", "notes.txt");
    dotdot_chain_to_bashrc => home_link("sub/../.bashrc", "rc-link");
    // a link to a directory with protected paths below it
    link_to_the_home => home_link(".", "out");
    // a prepared link renamed or hard-linked onto an allow-listed name
    renamed_onto_history => prepared_link("mv prep .bash_history", ".bash_history", false);
    hard_linked_onto_history => prepared_link("ln -P prep .zsh_history", ".zsh_history", false);
    renamed_into_a_subdirectory => prepared_link("mkdir d && mv prep d/x", "d/x", true);

    // a link in a second writable tree leading into $HOME (W, writable: its dot-entries
    // are protected)
    second_root_into_home => Scenario::new(r#"ln -s "$HOME/.bashrc" "$O/build.log""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .env("HOME", "{W}")
        .setup(|e| e.file(&e.w(".bashrc"), "# rc\n"))
        .fails()
        .absent("o/build.log");
    // ... and into a home no writable tree holds, which the host user may write
    second_root_into_unwritable_home => Scenario::new(r#"ln -s "$HOME/.profile" "$O/out.txt""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .env("HOME", "{W}/../h")
        .setup(|e| e.file(&e.root.join("h/.profile"), "# profile\n"))
        .fails()
        .absent("o/out.txt");
    // a link allowed where it was made leads elsewhere once its directory moves: moved
    // aside by the check after the run
    relative_link_moved_by_its_directory => Scenario::new(
        "mkdir -p a/b/c && ln -s ../../../x a/b/c/l && mv a/b/c d && test -L d/l")
        .check(|e, _| no_link(e, "d/l"))
        .check(|e, _| match e.w("d/l.srt-quarantined").symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => Ok(()),
            _ => Err("d/l was not moved aside to d/l.srt-quarantined".into()),
        });
}

/// Round 7's second review: a link allowed where it was made, re-aimed later by replacing
/// a link on its way (`b`), must not survive the run, also when it got its name by a hard
/// link (the journal missed those) and when it leads to a project name at the top.
/// `in_home`: W is `$HOME` (else a project the home rules do not cover).
fn re_aimed(cmd: &'static str, name: &'static str, in_home: bool) -> Scenario {
    let s = Scenario::new(cmd);
    let s = if in_home { s.env("HOME", "{W}") } else { s };
    s.setup(|e| e.file(&e.w(".bashrc"), "# rc\n")).check(move |e, _| no_link(e, name)).holds("w/.bashrc", "# rc\n")
}

mod re_aimed {
    use super::*;

    escapes! {
    hard_linked_link_re_aimed => re_aimed(
        r#"mkdir -p d1/d2/d3/d4/d5/d6 && ln -s d1/d2/d3/d4/d5/d6 b &&
           ln -s "b/../../../../../..$HOME/.bashrc" L && ln -P L .bash_history && rm L && rm b && ln -s d1 b"#,
        ".bash_history", true);
    link_re_aimed_at_a_project_name => re_aimed(
        r#"mkdir -p d1/d2/x d1/x && ln -s d1/d2/x b && ln -s b/../../.mcp.json L && rm b && ln -s d1/x b"#,
        "L", false);
    link_re_aimed_at_a_new_dot_entry => re_aimed(
        r#"mkdir -p d1/d2/x d1/x sub && ln -s d1/d2/x b && ln -s ../b/../../.newagent sub/L && rm b && ln -s d1/x b"#,
        "sub/L", false);
    // what a link through /proc or /dev/fd leads to depends on the process that follows it
    proc_self_cwd => home_link("/proc/self/cwd/notes.txt", ".bash_history");
    dev_fd => home_link("/dev/fd/1", "notes.log");
    }
}

/// What still works: links inside the writable tree, and (for a user who is not root)
/// links to files the host user cannot write either, as a venv's interpreter.
mod still_allowed {
    use super::*;

    escapes! {
        relative_links_inside_the_tree => Scenario::new(
            "mkdir -p node_modules/.bin pkg && echo '#!/bin/sh' > pkg/cli.js && \
             ln -s ../../pkg/cli.js node_modules/.bin/cli && mv node_modules/.bin/cli node_modules/.bin/cli2 && \
             readlink node_modules/.bin/cli2 > out.txt")
            .holds("w/out.txt", "../../pkg/cli.js\n");
        links_to_srt_devices => Scenario::new("ln -s /dev/null log && echo x > log && readlink log > out.txt")
            .holds("w/out.txt", "/dev/null\n");
    }
}

/// Round 7's second review: links srt could not follow to their end as the kernel does, and
/// links to files another user owns, for a run as root.
mod hard_to_follow {
    use super::*;

    /// Seventeen directories of 250-character names nested by renames (each call's own
    /// path stays short): the link's way through them passes PATH_MAX, where a look by path
    /// fails and must not be taken for a missing name.
    const DEEP: &str = r#"
import os, sys
W = os.getcwd(); H = os.environ["HOME"]
N = lambda i: ("B%02d" % i) + "x" * 240
os.mkdir("x"); os.mkdir(N(1)); os.symlink(W + "/x", N(1) + "/s")
for i in range(2, 18):
    os.mkdir(N(i)); os.rename(N(i - 1), N(i) + "/" + N(i - 1))
os.symlink("/".join(N(i) for i in range(17, 8, -1)), "T1")
text = "T1/" + "/".join(N(i) for i in range(8, 0, -1)) + "/s/../.bashrc"
try:
    os.symlink(text, "L")
    print("LINKED to", os.path.realpath("L"))
except OSError as e:
    print("refused:", e)
"#;

    escapes! {
        past_path_max => Scenario::new(&format!("python3 -c '{}'", DEEP.replace('\'', "\"")))
            .env("HOME", "{W}")
            .setup(|e| e.file(&e.w(".bashrc"), "# rc\n"))
            .prints("refused:")
            .check(|e, _| no_link(e, "L"))
            .holds("w/.bashrc", "# rc\n");
        // a file of a third user: root writes it, so a root run may not link to it; uid
        // 65534 cannot write it either, and may
        other_users_file => Scenario::new(r#"ln -s "$O/victim/.bashrc" L1; ln -s "$O/victim/new" L2; true"#)
            .setup(|e| {
                std::fs::create_dir_all(e.o("victim")).unwrap();
                std::fs::write(e.o("victim/.bashrc"), "# victim\n").unwrap();
                for p in [e.o("victim"), e.o("victim/.bashrc")] {
                    std::os::unix::fs::chown(&p, Some(12345), Some(12345)).unwrap();
                }
            })
            .check(|e, _| {
                if e.uid.is_some() {
                    return Ok(());
                }
                no_link(e, "L1").and_then(|()| no_link(e, "L2"))
            });
        // a rename that leaves a whiteout (a 0:0 device) where the source was
        whiteout_in_a_git_directory => Scenario::new(
            "git init -q . && echo x > f && git add f && git -c user.email=a@b -c user.name=a commit -qm x && mkdir d && \
             python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); \
             sys.exit(0 if l.renameat2(-100,b\".git/logs/HEAD\",-100,b\"d/moved\",4)==0 else 1)'")
            .fails()
            .check(|e, _| match e.w(".git/logs/HEAD").symlink_metadata() {
                Ok(m) if m.is_file() => Ok(()),
                Ok(_) => Err(".git/logs/HEAD is no longer a file".into()),
                Err(err) => Err(format!(".git/logs/HEAD: {err}")),
            });
    }
}
