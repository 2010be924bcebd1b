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
    // what a home keeps writable
    home_history_stays_writable => Scenario::new("echo 'ls' >> .bash_history && echo 'x' > notes.txt")
        .env("HOME", "{W}")
        .check(|_, o| if o.code == 0 { Ok(()) } else { Err(format!("history or a plain file refused: {}", o.text)) })
        .holds("w/notes.txt", "x\n");
}
