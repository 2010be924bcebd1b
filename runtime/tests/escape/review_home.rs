//! Delayed host execution, the issue-19 reviews of home and project files: started in
//! `$HOME`, the files home tools run later (shells, git's XDG config, ssh, PATH
//! directories, python `.pth`, package managers, editors, systemd, agents) are refused,
//! and so are the project files coding agents, editors and hook managers run. The lists
//! and their sources are `runtime/src/protected_names/`.

use super::harness::Scenario;
use crate::escapes;

/// Started in `$HOME` (W is the home): the file is refused, made or changed.
fn in_home(file: &'static str) -> Scenario {
    Scenario::new(&format!(
        r#"mkdir -p "$(dirname '{file}')" 2>/dev/null; printf 'touch "%s/pwned"\n' "$O" >> '{file}'"#
    ))
    .env("HOME", "{W}")
    .fails()
    .absent_w(file)
}

/// In a project directory (W), not the home.
fn in_project(file: &'static str) -> Scenario {
    Scenario::new(&format!(r#"mkdir -p "$(dirname '{file}')" 2>/dev/null; echo '{{"hooks":{{}}}}' > '{file}'"#))
        .fails()
        .absent_w(file)
}

/// `var` at launch names `{O}/...`, a second writable tree: planting `file` there (or in
/// the directory the entry names) is refused.
fn env_names(var: &'static str, value: &'static str, file: &'static str) -> Scenario {
    let rel = file.trim_start_matches("o/");
    Scenario::new(&format!(r#"mkdir -p "$(dirname "$O/{rel}")" 2>/dev/null; echo 'planted' > "$O/{rel}""#))
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .env(var, value)
        .fails()
        .absent(file)
}

/// `pkg` existed at launch; the command fills `x` with an editor's tasks and tries to
/// give it (or a symlink to it) the name `pkg/.vscode`.
fn project_dir_name(cmd: &str) -> Scenario {
    Scenario::new(&format!(r#"mkdir x && echo '{{"tasks":[]}}' > x/tasks.json && {cmd}"#))
        .setup(|e| e.dir(&e.w("pkg")))
        .fails()
        .check(|e, _| match e.w("pkg/.vscode").symlink_metadata() {
            Ok(m) if m.is_dir() || m.file_type().is_symlink() => Err("pkg/.vscode is a directory or a symlink".into()),
            _ => Ok(()),
        })
}

/// `fchmod(fd, 0755)` on `path` opened for reading only: refused, the host file keeps
/// no execute bit.
fn fchmod_x(path: &'static str, host: &'static str) -> Scenario {
    Scenario::new(&format!(
        r#"/usr/bin/python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fchmod(fd, 0o755)' "{path}""#
    ))
    .fails()
    .check(move |e, _| {
        use std::os::unix::fs::PermissionsExt;
        let p = match host.split_once('/') {
            Some(("w", r)) => e.w(r),
            Some((_, r)) => e.o(r),
            None => e.w(host),
        };
        match std::fs::metadata(&p) {
            Ok(m) if m.permissions().mode() & 0o111 != 0 => Err(format!("{host} was made executable")),
            Ok(_) => Ok(()),
            Err(err) => Err(format!("{host}: {err}")),
        }
    })
}

escapes! {
    // finding 3 and the second review: $HOME's program-running files, started in $HOME
    home_xdg_git_config => in_home(".config/git/config");
    home_bash_login => in_home(".bash_login");
    home_bash_logout => in_home(".bash_logout");
    home_bash_aliases => in_home(".bash_aliases");
    home_zshenv => in_home(".zshenv");
    home_ssh_config => in_home(".ssh/config");
    home_ssh_authorized_keys => in_home(".ssh/authorized_keys");
    home_local_bin => in_home(".local/bin/ls");
    home_python_pth => in_home(".local/lib/python3.11/site-packages/evil.pth");
    home_npmrc => in_home(".npmrc");
    home_cargo_config => in_home(".cargo/config.toml");
    home_mavenrc => in_home(".mavenrc");
    home_gradle_init => in_home(".gradle/init.d/evil.gradle");
    home_vimrc => in_home(".vimrc");
    home_nvim_init => in_home(".config/nvim/init.lua");
    home_tmux_conf => in_home(".tmux.conf");
    home_docker_plugin => in_home(".docker/cli-plugins/docker-evil");
    home_kube_config => in_home(".kube/config");
    home_aws_config => in_home(".aws/config");
    home_systemd_unit => in_home(".config/systemd/user/evil.service");
    home_autostart => in_home(".config/autostart/evil.desktop");
    home_claude_settings => in_home(".claude/settings.json");
    home_lesskey => in_home(".lesskey");
    home_new_dot_entry => in_home(".someapp/init.sh");
    // the second review: project-level agent and tool configs
    project_claude_settings => in_project(".claude/settings.json");
    project_claude_settings_local => in_project(".claude/settings.local.json");
    project_gemini => in_project(".gemini/settings.json");
    project_codex => in_project(".codex/config.toml");
    project_cursor_mcp => in_project(".cursor/mcp.json");
    project_roo_mcp => in_project(".roo/mcp.json");
    project_continue => in_project(".continue/mcpServers/evil.yaml");
    project_pre_commit => in_project(".pre-commit-config.yaml");
    project_devcontainer => in_project(".devcontainer/devcontainer.json");
    project_husky => in_project(".husky/pre-commit");
    project_envrc => in_project(".envrc");
    // a protected directory name made deeper in the tree, where nothing existed at launch
    project_nested_vscode => in_project("pkg/.vscode/tasks.json");
    project_nested_claude => in_project("src/.claude/settings.json");
    // the second attacker pass: variables naming code later host programs load, each
    // entry of a list judged on its own ({O} is a second writable tree)
    env_pythonpath_entry => env_names("PYTHONPATH", "/nonexistent:{O}/lib", "o/lib/sitecustomize.py");
    env_ld_library_path_entry => env_names("LD_LIBRARY_PATH", "{O}/lib;/usr/lib", "o/lib/libc.so.6");
    env_ld_preload_file => env_names("LD_PRELOAD", "/usr/lib/x.so {O}/pre.so", "o/pre.so");
    env_node_path_entry => env_names("NODE_PATH", "{O}/node", "o/node/lodash/index.js");
    env_perl5lib_entry => env_names("PERL5LIB", "{O}/perl", "o/perl/strict.pm");
    env_git_template_dir => env_names("GIT_TEMPLATE_DIR", "{O}/tpl", "o/tpl/hooks/post-checkout");
    env_git_exec_path => env_names("GIT_EXEC_PATH", "{O}/gitexec", "o/gitexec/git-status");
    // the third attacker pass: bytecode every python reads, options naming files, and
    // the installation prefix of a PATH directory (conda's python loads its lib/)
    env_pycache_prefix => env_names("PYTHONPYCACHEPREFIX", "{O}/pyc", "o/pyc/usr/lib/python3.11/json/__init__.cpython-311.pyc");
    env_node_options_require => env_names("NODE_OPTIONS", "--max-old-space-size=100 --require {O}/hook.js", "o/hook.js");
    env_path_prefix_lib => env_names("PATH", "{O}/conda/bin:/usr/bin:/bin", "o/conda/lib/python3.12/site-packages/evil.pth");
    home_nvim_trust => in_home(".local/state/nvim/trust");
    // the fourth attacker pass: options with a path glued to them, and files tools find
    // by walking up from any project below the home
    env_perl5opt_glued_include => env_names("PERL5OPT", "-I{O}/plib -MEvil", "o/plib/Evil.pm");
    home_cargo_toml => in_home("Cargo.toml");
    home_package_json => in_home("package.json");
    home_conftest => in_home("conftest.py");
    // a project's own entry stays writable: its build writes it
    env_project_pythonpath_writable => Scenario::new("mkdir -p src && echo 'x=1' > src/mod.py")
        .env("PYTHONPATH", "{W}/src")
        .check(|_, o| if o.code == 0 { Ok(()) } else { Err(format!("project PYTHONPATH entry refused: {}", o.text)) })
        .holds("w/src/mod.py", "x=1\n");
    // a home with more entries than the Landlock plan splits around: the supervisor
    // judges it whole, so no dot-entry is left to the rules' mercy
    huge_home_dot_entries => Scenario::new(r#"for i in $(seq -w 0 19); do echo planted > .app$i/init.sh; done 2>/dev/null; ls .app*/init.sh 2>/dev/null | grep -q . && exit 0 || exit 1"#)
        .env("HOME", "{W}")
        .setup(|e| {
            for i in 0..5_000 {
                std::fs::write(e.w(&format!("f{i:04}")), "").unwrap();
            }
            for i in 0..20 {
                std::fs::create_dir(e.w(&format!(".app{i:02}"))).unwrap();
            }
            e.own_tree(&e.w);
        })
        .fails()
        .check(|e, _| {
            let planted: Vec<String> = (0..20).map(|i| format!(".app{i:02}/init.sh")).filter(|f| e.w(f).exists()).collect();
            if planted.is_empty() { Ok(()) } else { Err(format!("planted in the home: {planted:?}")) }
        });
    // an XDG base set outside $HOME stands for it: an unlisted tool's config there is a
    // dot-entry's content
    xdg_config_home_elsewhere => Scenario::new(r#"mkdir -p "$O/cfg/sometool" && echo planted > "$O/cfg/sometool/config""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .env("XDG_CONFIG_HOME", "{O}/cfg")
        .setup(|e| e.dir(&e.o("cfg")))
        .fails()
        .absent("o/cfg/sometool/config");
    // the second attacker pass: a protected directory name made as a symlink to a
    // directory the command filled, made, hard-linked, moved in, or swapped in
    project_dir_name_symlink => project_dir_name("ln -s ../x pkg/.vscode");
    project_dir_name_symlink_moved => project_dir_name("ln -s ../x l && mv -T l pkg/.vscode");
    project_dir_name_symlink_hard_linked => project_dir_name("ln -s ../x l && ln -P l pkg/.vscode");
    project_dir_name_exchanged => project_dir_name(&format!(
        "touch pkg/.vscode && {}",
        crate::escape::harness::py_syscall(316, ", -100, b\"pkg/.vscode\", -100, b\"x\", 2")
    ));
    // the second attacker pass: an execute bit set through a descriptor opened for
    // reading switches on a file the command may not write (landlock mode left fchmod
    // without group/other write bits to the kernel)
    disabled_hook_enabled_by_fchmod => fchmod_x(".git/hooks/pre-commit", "w/.git/hooks/pre-commit")
        .setup(|e| {
            crate::escape::review_git::host_repo(e);
            e.file(&e.w(".git/hooks/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n");
        });
    path_program_enabled_by_fchmod => fchmod_x("$O/bin/tool", "o/bin/tool")
        .env("PATH", "{O}/bin:/usr/bin:/bin")
        .setup(|e| e.file(&e.o("bin/tool"), "#!/bin/sh\necho planted\n"));
    // what a home keeps writable
    home_history_stays_writable => Scenario::new("echo 'ls' >> .bash_history && echo 'x' > notes.txt")
        .env("HOME", "{W}")
        .check(|_, o| if o.code == 0 { Ok(()) } else { Err(format!("history or a plain file refused: {}", o.text)) })
        .holds("w/notes.txt", "x\n");
}
