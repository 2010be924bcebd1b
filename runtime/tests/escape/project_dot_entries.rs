//! The top of a writable tree fails closed for new dot-entries (round 7's M3): agent
//! configs missing from the list (`.qwen/settings.json`, `.factory/hooks.json`, ...) were
//! written with `allowWrite: ["."]` and survived the run. The named agents stay protected
//! as the floor; an invented one is refused by default; caches and build output named as
//! such are still written.

use super::harness::Scenario;
use crate::escapes;

/// In the project (W): the file cannot be made.
fn agent_config(file: &'static str) -> Scenario {
    Scenario::new(&format!(
        r#"mkdir -p "$(dirname '{file}')" 2>/dev/null; echo '{{"mcpServers":{{"x":{{"command":"touch"}}}}}}' > '{file}'"#
    ))
    .fails()
    .absent_w(file)
}

escapes! {
    qwen_settings => agent_config(".qwen/settings.json");
    factory_settings => agent_config(".factory/settings.json");
    factory_hooks => agent_config(".factory/hooks.json");
    factory_mcp => agent_config(".factory/mcp.json");
    kilocode_mcp => agent_config(".kilocode/mcp.json");
    kilo_dir_config => agent_config(".kilo/kilo.jsonc");
    kilo_config => agent_config("kilo.jsonc");
    crush_config => agent_config("crush.json");
    crush_dot_config => agent_config(".crush.json");
    // Copilot CLI's MCP servers and settings below an allowed `.github`, an unnamed file
    // there, and mise's other names (round 7's second review)
    github_mcp => agent_config(".github/mcp.json");
    github_copilot_settings => agent_config(".github/copilot/settings.json");
    github_unnamed => agent_config(".github/agent.json");
    mise_dir_config => agent_config("mise/config.toml");
    mise_env_config => agent_config("mise.dev.toml");
    // the next agent, on no list
    new_agent_settings => agent_config(".newagent/settings.json");
    new_agent_file => agent_config(".newagentrc");
    // made elsewhere and moved to the top
    new_agent_moved_in => Scenario::new("mkdir -p x && echo '{}' > x/settings.json && mv x .newagent")
        .fails()
        .absent_w(".newagent");
    // below a dot-directory no list names that existed at launch
    new_file_in_existing_dot_dir => Scenario::new("echo '{}' > .oldagent/hooks.json")
        .setup(|e| e.dir(&e.w(".oldagent")))
        .fails()
        .absent_w(".oldagent/hooks.json");
    // at the top of a second writable tree too
    second_root => Scenario::new(r#"mkdir -p "$O/.newagent" && echo '{}' > "$O/.newagent/settings.json""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .fails()
        .absent("o/.newagent");
}

mod tops_of_every_root {
    use super::*;

    escapes! {
    // a root missing at launch is a top all the same (landlock mode makes it; namespace
    // mode cannot)
    root_made_during_the_run => Scenario::new(
        r#"mkdir -p "$O/new" && cd "$O/new" && { mkdir .newagent; echo x > .envrc; echo x > .mcp.json; true; }"#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}/new"]))
        .absent("o/new/.newagent")
        .absent("o/new/.envrc")
        .absent("o/new/.mcp.json");
    // a project made sticky and writable by all is not shared scratch space: the next run
    // in it still fails closed
    sticky_project_top => Scenario::new("chmod 1777 . ; true")
        .then("mkdir .newagent && echo '{}' > .newagent/settings.json")
        .absent_w(".newagent");
    }
}

/// What real builds and tests make at the top keeps working, and a dot-file that existed
/// at launch stays writable.
mod still_allowed {
    use super::*;

    escapes! {
        github_what_the_forge_reads => Scenario::new(
            "mkdir -p .github/workflows .github/ISSUE_TEMPLATE && echo ok > .github/workflows/ci.yml && \
             echo ok > .github/ISSUE_TEMPLATE/bug.md && echo ok > .github/CODEOWNERS && cat .github/CODEOWNERS > out.txt")
            .holds("w/out.txt", "ok\n");
        caches_and_envs => Scenario::new(
            "mkdir -p .venv/bin .pytest_cache/v .next .turbo && echo ok > .venv/bin/marker && \
             echo ok > .eslintcache && echo ok > .coverage && echo ok > .env.local && cat .venv/bin/marker > out.txt")
            .holds("w/out.txt", "ok\n");
        existing_dot_file => Scenario::new("echo '{}' > .prettierrc")
            .setup(|e| e.file(&e.w(".prettierrc"), "{\"semi\":false}\n"))
            .holds("w/.prettierrc", "{}\n");
        named_in_allow_write => Scenario::new("mkdir -p .terraform/providers && echo ok > .terraform/providers/p")
            .with("filesystem.allowWrite", serde_json::json!([".", "./.terraform"]))
            .holds("w/.terraform/providers/p", "ok\n");
    }
}
