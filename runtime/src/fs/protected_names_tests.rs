use super::*;
use std::collections::HashSet;

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// Every list's paths, named for the failure message.
fn all_paths() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    out.extend(HOME.iter().map(|e| ("HOME", e.path)));
    out.extend(PROJECT.iter().map(|e| ("PROJECT", e.path)));
    out.extend(PROJECT_NOT_PROTECTED.iter().map(|d| ("PROJECT_NOT_PROTECTED", d.path)));
    out.extend(INSTRUCTION_FILES.iter().map(|d| ("INSTRUCTION_FILES", d.path)));
    out.extend(HOME_ALLOW.iter().map(|a| ("HOME_ALLOW", a.path)));
    out.extend(SRT_0_0_83.iter().map(|s| ("SRT_0_0_83", *s)));
    out
}

/// A man page section (`name(5)`), a URL, a distribution file or this README.
fn is_source(s: &str) -> bool {
    let man = s.char_indices().any(|(i, c)| c == '(' && s[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
    s.contains("https://") || s.contains("http://") || man || s.starts_with("/etc/") || s.starts_with("docs/")
}

#[test]
fn paths_are_well_formed_relative_patterns() {
    for (list, path) in all_paths() {
        assert!(well_formed(path), "{list}: {path:?} is not a well-formed relative pattern");
    }
    for bad in ["", "/etc/x", "a//b", "a/", "./a", "a/../b", "a/**", " a", "a\\b", "a/\tb"] {
        assert!(!well_formed(bad), "{bad:?} accepted");
    }
    assert!(well_formed(".local/lib/python*/site-packages"));
}

#[test]
fn no_duplicates_and_no_entry_hidden_by_another() {
    for (name, list) in [
        ("HOME", HOME.iter().map(|e| e.path).collect::<Vec<_>>()),
        ("PROJECT", PROJECT.iter().map(|e| e.path).collect()),
        ("HOME_ALLOW", HOME_ALLOW.iter().map(|a| a.path).collect()),
        ("PROJECT_NOT_PROTECTED", PROJECT_NOT_PROTECTED.iter().map(|d| d.path).collect()),
        ("INSTRUCTION_FILES", INSTRUCTION_FILES.iter().map(|d| d.path).collect()),
    ] {
        let mut seen = HashSet::new();
        for path in &list {
            assert!(seen.insert(*path), "{name}: {path} twice");
            // an entry below another of the same list says nothing the first does not
            // (allow entries may nest: .npm/_logs is on by default, .npm only when asked)
            if name != "HOME_ALLOW" {
                for other in &list {
                    assert!(other == path || !covers(other, p(path)), "{name}: {path} is already covered by {other}");
                }
            }
        }
    }
}

#[test]
fn every_entry_says_why_and_where_that_is_documented() {
    for e in HOME.iter().chain(PROJECT) {
        assert!(e.runs.len() >= 10, "{}: no reason", e.path);
        assert!(is_source(e.source), "{}: source {:?} is not a man page, URL or file", e.path, e.source);
    }
    for d in PROJECT_NOT_PROTECTED.iter().chain(INSTRUCTION_FILES) {
        assert!(d.why.len() >= 10, "{}: no reason", d.path);
        assert!(is_source(d.source), "{}: source {:?}", d.path, d.source);
    }
    for a in HOME_ALLOW {
        assert!(a.risk.len() >= 10 && !a.tool.is_empty(), "{}: no tool or risk", a.path);
    }
    for (var, what) in ENV_NAMED.iter().chain(CACHE_ENV) {
        assert!(!var.is_empty() && !what.is_empty());
    }
}

#[test]
fn allow_list_and_protected_list_overlap_only_where_documented() {
    let documented: HashSet<(&str, &str)> =
        ALLOW_OVERLAPS.iter().chain(PROTECTED_IN_ALLOWED).map(|(a, p, _)| (*a, *p)).collect();
    let mut found = HashSet::new();
    for a in HOME_ALLOW {
        for e in HOME {
            if overlap(a.path, e.path) {
                assert!(
                    documented.contains(&(a.path, e.path)),
                    "allow entry {} overlaps protected {} without a documented reason",
                    a.path,
                    e.path
                );
                found.insert((a.path, e.path));
            }
        }
    }
    assert_eq!(found, documented, "a documented overlap no longer exists: remove it");
    for (a, e, why) in ALLOW_OVERLAPS {
        assert!(covers(e, p(a)) && *a != *e, "{a} must lie strictly inside {e}");
        assert!(why.len() >= 10);
    }
    for (a, e, why) in PROTECTED_IN_ALLOWED {
        assert!(covers(a, p(e)) && *a != *e, "{e} must lie strictly inside {a}");
        assert!(why.len() >= 10);
        let rule = home_rule(p(e), HomeSettings { allow: &[], deny: &[] });
        assert!(matches!(rule, HomeRule::Protected(_)), "{e} inside the allowed {a} is protected: {rule:?}");
    }
}

#[test]
fn project_list_is_a_superset_of_srt_0_0_83() {
    for name in SRT_0_0_83.iter() {
        assert!(project_entry(p(name)).is_some(), "{name} (srt 0.0.83) is not protected by PROJECT");
    }
}

#[test]
fn decisions_do_not_contradict_the_protected_list() {
    for d in PROJECT_NOT_PROTECTED.iter().chain(INSTRUCTION_FILES) {
        assert!(project_entry(p(d.path)).is_none(), "{} is both protected and decided not protected", d.path);
    }
    // the findings of the issue are covered
    for must in [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".cursor/mcp.json",
        ".roo/mcp.json",
        ".continue/mcpServers/x.yaml",
        ".pre-commit-config.yaml",
        ".devcontainer/devcontainer.json",
        ".husky/pre-commit",
        "lefthook.yml",
        ".lefthook-local.json",
        ".github/hooks/x.json",
        "x.code-workspace",
    ] {
        assert!(project_entry(p(must)).is_some(), "{must} not protected");
    }
    for open in [".github/workflows/ci.yml", "Makefile", "src/main.rs", ".yarnrc.yml", "lefthook", "CLAUDE.md"] {
        assert!(project_entry(p(open)).is_none(), "{open} should stay writable");
    }
}

#[test]
fn the_issue_findings_in_home_are_covered() {
    for must in [
        ".config/git/config",
        ".bash_login",
        ".zshenv",
        ".ssh/config",
        ".ssh/authorized_keys",
        ".ssh/rc",
        ".local/bin/ls",
        ".local/lib/python3.12/site-packages/evil.pth",
        ".local/lib/python3.12/site-packages/usercustomize.py",
        ".bash_aliases",
        ".bash_logout",
        ".npmrc",
        ".cargo/config.toml",
        ".mavenrc",
        ".gradle/init.d/x.init.gradle",
        ".gradle/init.gradle.kts",
        ".vimrc",
        ".config/nvim/init.lua",
        ".tmux.conf",
        ".docker/cli-plugins/docker-x",
        ".kube/config",
        ".aws/config",
        ".config/systemd/user/x.service",
        ".config/autostart/x.desktop",
        ".claude/settings.json",
        ".claude.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".cursor/mcp.json",
        ".aider.conf.yml",
        ".lesskey",
        ".zcompdump-host-5.9",
        "bin/git",
        "go/bin/x",
    ] {
        assert!(home_entry(p(must)).is_some(), "~/{must} not protected");
    }
    let explicit: Vec<&str> = non_dot_home_entries().map(|e| e.path).collect();
    assert!(explicit.contains(&"bin") && explicit.contains(&"go/bin") && explicit.contains(&"node_modules"));
    assert!(explicit.iter().all(|e| !e.starts_with('.')));
}

#[test]
fn patterns_match_whole_components() {
    assert!(covers(".local/lib/python*/site-packages", p(".local/lib/python3.11/site-packages/a.pth")));
    assert!(!covers(".local/lib/python*/site-packages", p(".local/lib/perl5/site-packages/a")));
    assert!(covers("*.code-workspace", p("app.code-workspace")));
    assert!(!covers("*.code-workspace", p("app.code-workspace.bak")));
    assert!(covers("lefthook.*", p("lefthook.yml")) && !covers("lefthook.*", p("lefthook-local.yml")));
    assert!(covers("a*b*c", p("axxbyyc")) && !covers("a*b*c", p("axxbyy")) && !covers("a*b*c", p("abc-d")));
    assert!(!covers(".cargo/config", p(".cargo/config.toml")));
    assert!(!covers(".bashrc", p(".bashrc.d/x")));
    assert!(!covers(".ssh", p("/home/u/.ssh")), "absolute paths are never relative matches");
    assert!(!covers(".ssh", p("../.ssh")));
    assert!(covers(".ssh", p("./.ssh/config")));
    assert!(lies_below(".config/git", p(".config")) && !lies_below(".config/git", p(".config/git")));
    assert!(home_protected_below(p(".cargo")) && !home_protected_below(p(".cargo/registry")));
    assert!(is_dot_entry(p(".cache/x")) && !is_dot_entry(p("projects/.git")));
}

#[test]
fn home_rules_when_home_is_writable() {
    let none = HomeSettings::default();
    assert!(matches!(home_rule(p(".bashrc"), none), HomeRule::Protected(e) if e.path == ".bashrc"));
    assert!(matches!(home_rule(p(".config/git/config"), none), HomeRule::Protected(_)));
    assert!(matches!(home_rule(p(".bash_history"), none), HomeRule::Allowed(Some(a)) if a.default));
    assert_eq!(home_rule(p(".cache/pip/http/x"), none), HomeRule::DotEntry, "trusted caches are off by default");
    assert_eq!(home_rule(p(".config/unknown-tool/x"), none), HomeRule::DotEntry);
    assert_eq!(home_rule(p("projects/app/src/main.rs"), none), HomeRule::Open);
    assert!(matches!(home_rule(p("bin/ls"), none), HomeRule::Protected(_)), "non-dot entries by name");
    assert_eq!(home_rule(p("go/src/x.go"), none), HomeRule::Open);
    // a documented overlap: the history inside a protected directory
    assert!(matches!(home_rule(p(".local/share/fish/fish_history"), none), HomeRule::Allowed(Some(_))));
    assert!(matches!(home_rule(p(".local/share/fish/generated_completions/ls.fish"), none), HomeRule::Protected(_)));
    assert!(matches!(home_rule(p(".claude/debug/log.txt"), none), HomeRule::Allowed(Some(_))));
    assert!(matches!(home_rule(p(".claude/settings.json"), none), HomeRule::Protected(_)));
    // an opt-in overlap stays protected until asked for
    assert!(matches!(home_rule(p(".local/share/pnpm/store/v3/x"), none), HomeRule::Protected(_)));

    let allow = [".cache/pip", ".cargo", ".config/mytool"];
    let user = HomeSettings { allow: &allow, deny: &[] };
    assert!(matches!(home_rule(p(".cache/pip/http/x"), user), HomeRule::Allowed(Some(a)) if !a.default));
    assert!(matches!(home_rule(p(".cargo/registry/src/x"), user), HomeRule::Allowed(Some(_))), "a parent enables");
    assert!(matches!(home_rule(p(".cargo/bin/cargo"), user), HomeRule::Protected(_)), "protected entries stay");
    assert_eq!(home_rule(p(".config/mytool/state"), user), HomeRule::Allowed(None));
    assert_eq!(home_rule(p(".cache/go-build/x"), user), HomeRule::DotEntry);

    let deny = [".bash_history", ".local/share/fish"];
    let user = HomeSettings { allow: &[], deny: &deny };
    assert_eq!(home_rule(p(".bash_history"), user), HomeRule::UserDenied);
    assert!(matches!(home_rule(p(".local/share/fish/fish_history"), user), HomeRule::Protected(_)));
}

#[test]
fn a_user_allow_cannot_reopen_the_protected_list() {
    assert!(check_user_allow(".bashrc").is_err());
    assert_eq!(check_user_allow(".ssh/known_hosts").map_err(|e| e.path), Err(".ssh"));
    assert!(check_user_allow(".local/lib/python3.12/site-packages").is_err());
    assert!(check_user_allow(".cache/go-build").is_ok());
    assert!(check_user_allow(".cargo").is_ok(), "a parent: what is protected inside stays protected");
    assert!(check_user_allow(".local/share/fish/fish_history").is_ok(), "documented overlap");
    assert!(check_user_allow(".local/share/pnpm/store").is_ok(), "documented overlap");
}

#[test]
fn xdg_variables_move_entries_only_when_absolute() {
    let home = p("/home/u");
    let env = |v: &str| match v {
        "XDG_CONFIG_HOME" => Some(OsString::from("/cfg")),
        "XDG_DATA_HOME" => Some(OsString::from("relative/data")),
        _ => None,
    };
    assert_eq!(xdg_location(".config/git", home, env), p("/cfg/git"));
    assert_eq!(xdg_location(".local/share/fish", home, env), p("/home/u/.local/share/fish"));
    assert_eq!(xdg_location(".cache/pip", home, env), p("/home/u/.cache/pip"));
    assert_eq!(xdg_location(".bashrc", home, env), p("/home/u/.bashrc"));
    assert_eq!(xdg_location(".configx/y", home, env), p("/home/u/.configx/y"));
}

#[test]
fn list_variables_are_split_entry_by_entry_on_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let v = std::ffi::OsStr::from_bytes(b"/a/b::/c\xff/d");
    assert_eq!(
        env_entries("PYTHONPATH", v),
        vec![PathBuf::from("/a/b"), PathBuf::from(std::ffi::OsStr::from_bytes(b"/c\xff/d"))]
    );
    assert_eq!(env_entries("LD_PRELOAD", "/x.so /y.so:/z.so".as_ref()).len(), 3);
    assert_eq!(env_entries("LD_LIBRARY_PATH", "/l1;/l2:/l3".as_ref()).len(), 3);
    let opts = env_entries("JAVA_TOOL_OPTIONS", "-Xmx1g -javaagent:/t/a.jar=x,y --x=/t/b".as_ref());
    assert_eq!(opts, vec![PathBuf::from("/t/a.jar"), PathBuf::from("/t/b")]);
    assert_eq!(env_entries("EDITOR", "vim".as_ref()), Vec::<PathBuf>::new(), "a program name is not a path");
    assert_eq!(env_entries("PERL5OPT", "-I/w2/plib -MEvil".as_ref()), vec![PathBuf::from("/w2/plib")]);
    assert_eq!(env_entries("GIT_SSH_COMMAND", "ssh -F/h/cfg".as_ref()), vec![PathBuf::from("/h/cfg")]);
    assert_eq!(env_entries("NODE_OPTIONS", "--require '/w/x y.js'".as_ref()), vec![PathBuf::from("/w/x y.js")]);
    assert_eq!(env_entries("PROMPT_COMMAND", "source \"/h/p.sh\";x".as_ref()), vec![PathBuf::from("/h/p.sh")]);
    // a single-path variable keeps its separators as part of the path
    assert_eq!(env_entries("BASH_ENV", "/a:b c".as_ref()), vec![PathBuf::from("/a:b c")]);
    for (name, _) in ENV_LISTS {
        assert!(ENV_NAMED.iter().any(|(n, _)| n == name), "{name} is split but not protected");
    }
}

/// A shell expands `~/`, `$HOME/` and `${HOME}/` when it runs a command variable (git runs
/// `GIT_SSH_COMMAND` with `sh -c`), so what they name is `$HOME`'s: `ssh -F ~/w/ssh_config`
/// names `/h/w/ssh_config`. Other `~` forms, and the home itself, are not entries.
#[test]
fn paths_written_from_the_home_are_read_in_it() {
    let home = || Some(PathBuf::from("/h"));
    let entries = |name: &str, v: &str| environment::env_entries_in(name, v.as_ref(), home);
    let one = |s: &str| vec![PathBuf::from(s)];
    for v in [
        "ssh -F ~/w/ssh_config",
        "ssh -F $HOME/w/ssh_config",
        "ssh -F ${HOME}/w/ssh_config",
        "ssh -F \"$HOME/w/ssh_config\"",
        "ssh -F '~/w/ssh_config'",
        "ssh -F~/w/ssh_config",
        "ssh -F ~//w/ssh_config",
    ] {
        assert_eq!(entries("GIT_SSH_COMMAND", v), one("/h/w/ssh_config"), "{v}");
    }
    // `--opt=~/x`, `-o Key=~/x`, `-javaagent:~/x`, as the absolute forms are read
    assert_eq!(entries("NODE_OPTIONS", "--require=~/hook.js"), one("/h/hook.js"));
    assert_eq!(entries("GIT_SSH_COMMAND", "ssh -o IdentityFile=~/.ssh/k"), one("/h/.ssh/k"));
    assert_eq!(entries("JAVA_TOOL_OPTIONS", "-javaagent:$HOME/a.jar=x"), one("/h/a.jar"));
    assert_eq!(entries("PROMPT_COMMAND", "source ~/p.sh; history -a"), one("/h/p.sh"));
    // lists and single paths: bash looks a PATH entry's `~` up, BASH_ENV is expanded
    assert_eq!(entries("PATH", "~/bin:/usr/bin"), vec![PathBuf::from("/h/bin"), PathBuf::from("/usr/bin")]);
    assert_eq!(entries("BASH_ENV", "$HOME/.bash_env"), one("/h/.bash_env"));
    // not the home's: another user's, a variable that only starts like HOME, a bare `~`
    // (the home itself, judged entry by entry), a relative path
    for v in ["ssh -F ~root/cfg", "ssh -F $HOMEDIR/cfg", "ssh -F ~", "cd $HOME", "ssh -F ~/", "ssh -F w/cfg"] {
        assert_eq!(entries("GIT_SSH_COMMAND", v), Vec::<PathBuf>::new(), "{v}");
    }
    // without a home to read them in, nothing (and the home is asked only when needed)
    assert_eq!(environment::env_entries_in("GIT_SSH_COMMAND", "ssh -F ~/x".as_ref(), || None), Vec::<PathBuf>::new());
    let asked = std::cell::Cell::new(0);
    let counted = || {
        asked.set(asked.get() + 1);
        Some(PathBuf::from("/h"))
    };
    assert_eq!(environment::env_entries_in("PATH", "/usr/bin:/bin".as_ref(), counted).len(), 2);
    assert_eq!(asked.get(), 0);
    assert_eq!(environment::env_entries_in("PATH", "~/a:~/b".as_ref(), counted).len(), 2);
    assert_eq!(asked.get(), 1);
}

/// Round 7's H1: `~/.local/state/nvim` was allowed whole, and lazy.nvim sources
/// `lazy/pkg-cache.lua` there at every nvim start. The allow-list names nvim's data only;
/// what nvim or its plugins source from the same directory stays protected.
#[test]
fn nvim_state_is_allowed_by_its_data_only() {
    let rule = |rel: &str| home_rule(p(rel), HomeSettings { allow: &[], deny: &[] });
    for code in [
        ".local/state/nvim/lazy/pkg-cache.lua",
        ".local/state/nvim/lazy/state.json",
        ".local/state/nvim/view/~=+notes.txt=",
        ".local/state/nvim/sessions/%home%u%proj.vim",
        ".local/state/nvim/trust",
        ".local/state/nvim/new-plugin-dir/init.lua",
        ".local/state/nvim",
    ] {
        assert!(!matches!(rule(code), HomeRule::Allowed(_)), "{code}: {:?}", rule(code));
    }
    for data in [
        ".local/state/nvim/shada/main.shada",
        ".local/state/nvim/shada/main.shada.tmp.a",
        ".local/state/nvim/swap/%home%u%notes.txt.swp",
        ".local/state/nvim/undo/%home%u%notes.txt",
        ".local/state/nvim/log",
    ] {
        assert!(matches!(rule(data), HomeRule::Allowed(Some(_))), "{data}: {:?}", rule(data));
    }
    // no default entry is a whole tool's directory that also holds protected files
    for a in HOME_ALLOW.iter().filter(|a| a.default) {
        assert!(!HOME.iter().any(|e| lies_below(e.path, p(a.path))), "{} holds protected entries", a.path);
    }
}

/// A file entry of the allow-list names that file: made as a directory, what goes below it
/// is no history or log (round 7's second review).
#[test]
fn file_entries_allow_nothing_below_them() {
    let rule = |rel: &str| home_rule(p(rel), HomeSettings { allow: &[], deny: &[] });
    assert!(matches!(rule(".local/state/nvim/log"), HomeRule::Allowed(Some(_))));
    assert!(matches!(rule(".bash_history"), HomeRule::Allowed(Some(_))));
    for below in [".local/state/nvim/log/init.lua", ".bash_history/x", ".viminfo/plugin.vim"] {
        assert!(!matches!(rule(below), HomeRule::Allowed(_)), "{below}: {:?}", rule(below));
    }
    assert!(matches!(rule(".npm/_logs/x/y.log"), HomeRule::Allowed(Some(_))), "directory entries cover their tree");
}
