//! The home allow-list names data, never a whole tool's directory (round 7's H1):
//! `~/.local/state/nvim` was writable whole, and lazy.nvim sources `lazy/pkg-cache.lua`
//! there at every nvim start (also the one `git commit` opens). Both modes take the list
//! from one source: every entry is walked in each, and what it grants must agree.

use super::harness::Scenario;
use crate::escapes;
use srt_runtime::fs::protected_names::{Kind, HOME_ALLOW};

/// Started in `$HOME` (W) whose `~/.local/state/nvim` exists: `file` cannot be made.
fn nvim_code(file: &'static str) -> Scenario {
    Scenario::new(&format!(
        r#"mkdir -p "$(dirname '{file}')" 2>/dev/null; echo 'os.execute("touch /tmp/p")' > '{file}'"#
    ))
    .env("HOME", "{W}")
    .setup(|e| e.dir(&e.w(".local/state/nvim/shada")))
    .fails()
    .absent_w(file)
}

/// Every entry on by default, made on the host first (a user who runs those tools has
/// them): the command writes each, and a name beside each inside a protected directory
/// stays refused. One run per mode and user, the same expectation in both modes.
fn every_entry() -> Scenario {
    let mut cmd = String::from("set -u; bad=0\n");
    for a in HOME_ALLOW.iter().filter(|a| a.default) {
        let write = match a.kind {
            Kind::File => format!("echo data >> '{}'", a.path),
            Kind::Dir => format!("echo data > '{}/srt-entry'", a.path),
        };
        cmd.push_str(&format!("{write} || {{ echo 'refused: {}'; bad=1; }}\n", a.path));
        let beside = std::path::Path::new(a.path).parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = beside {
            cmd.push_str(&format!(
                "echo code > '{}/srt-beside' 2>/dev/null && {{ echo 'written beside: {}'; bad=1; }}\n",
                dir.display(),
                a.path
            ));
        }
    }
    cmd.push_str("exit $bad\n");
    Scenario::new(&cmd)
        .env("HOME", "{W}")
        .setup(|e| {
            for a in HOME_ALLOW.iter().filter(|a| a.default) {
                match a.kind {
                    Kind::File => e.file(&e.w(a.path), ""),
                    Kind::Dir => e.dir(&e.w(a.path)),
                }
            }
        })
        .check(|_, o| if o.code == 0 { Ok(()) } else { Err(format!("exit {}: {}", o.code, o.text)) })
}

escapes! {
    nvim_lazy_pkg_cache => nvim_code(".local/state/nvim/lazy/pkg-cache.lua");
    nvim_view => nvim_code(".local/state/nvim/view/~=+notes.txt=");
    nvim_sessions => nvim_code(".local/state/nvim/sessions/proj.vim");
    nvim_new_plugin_state => nvim_code(".local/state/nvim/someplugin/init.lua");
    every_default_entry_in_both_modes => every_entry();
    // GNU stow and hand-made dotfiles: a home entry that is a link at launch protects the
    // place it leads to as well (round 7's second review)
    stowed_dotfiles => Scenario::new(
        "echo evil >> .ssh/authorized_keys; echo evil >> .config/nvim/init.lua; echo evil >> .zshenv; \
         echo evil >> dotfiles/ssh/authorized_keys; echo evil >> dotfiles/zshenv")
        .env("HOME", "{W}")
        .setup(|e| {
            e.file(&e.w("dotfiles/ssh/authorized_keys"), "k\n");
            e.file(&e.w("dotfiles/zshenv"), "#z\n");
            e.dir(&e.w("dotfiles/nvim"));
            e.dir(&e.w(".config"));
            for (name, to) in [(".ssh", "dotfiles/ssh"), (".zshenv", "dotfiles/zshenv"), (".config/nvim", "../dotfiles/nvim")] {
                std::os::unix::fs::symlink(to, e.w(name)).unwrap();
                e.own_tree(&e.w(name));
            }
        })
        .fails()
        .holds("w/dotfiles/ssh/authorized_keys", "k\n")
        .holds("w/dotfiles/zshenv", "#z\n")
        .absent_w("dotfiles/nvim/init.lua");
    // per-file links inside protected home directories that exist (stow's unfolded
    // layout), the command working in the dotfiles repository itself (the home is W's
    // parent, not writable)
    stowed_per_file_links => Scenario::new(
        "echo evil >> ssh/config; echo evil >> git/config; echo evil >> bin/x; echo evil >> fish/ls.fish")
        .env("HOME", "{W}/..")
        .setup(|e| {
            for (f, body) in [("ssh/config", "Host x\n"), ("git/config", "[user]\n"), ("bin/x", "#!/bin/sh\n"), ("fish/ls.fish", "fn\n")] {
                e.file(&e.w(f), body);
            }
            for d in [".ssh", ".config/git", ".local/bin", ".config/fish"] {
                std::fs::create_dir_all(e.root.join(d)).unwrap();
            }
            let w = e.w.file_name().unwrap().to_str().unwrap().to_string();
            for (name, to) in [
                (".ssh/config", format!("../{w}/ssh/config")),
                (".config/git/config", format!("../../{w}/git/config")),
                (".local/bin/x", format!("../../{w}/bin/x")),
                (".config/fish/functions", format!("../../{w}/fish")),
            ] {
                std::os::unix::fs::symlink(to, e.root.join(name)).unwrap();
            }
        })
        .fails()
        .holds("w/ssh/config", "Host x\n")
        .holds("w/git/config", "[user]\n")
        .holds("w/bin/x", "#!/bin/sh\n")
        .holds("w/fish/ls.fish", "fn\n");
}
