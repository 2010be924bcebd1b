//! Files relative to a project directory. The line drawn: a project file is protected
//! when a host program runs what it says *without being asked to build or run the
//! project*: on opening the folder in an editor or agent, on `git commit`, on `cd`.
//! Build and test files (Makefile, package.json scripts, build.rs, .cargo/config.toml,
//! .npmrc, .yarnrc.yml) are the project's own code: the user runs them on purpose, the
//! command was asked to write them, and every build runs such code anyway, so protecting
//! a few of them would change nothing about what the next build runs.

use super::entry::Kind::{self, Dir as D, File as F};
use super::entry::{Decision, Entry};

const fn e(path: &'static str, kind: Kind, runs: &'static str, source: &'static str) -> Entry {
    Entry { path, kind, runs, source }
}

const fn no(path: &'static str, why: &'static str, source: &'static str) -> Decision {
    Decision { path, why, source }
}

const CLAUDE: &str = "https://docs.anthropic.com/en/docs/claude-code/settings";
const SRT: &str = "docs/how-it-works.md (srt 0.0.83 DANGEROUS_FILES, DANGEROUS_DIRS)";
const LEFTHOOK: &str = "https://lefthook.dev/configuration";
const MISE: &str = "https://mise.jdx.dev/configuration.html; https://mise.jdx.dev/cli/trust.html";
const HUSKY: &str = "https://typicode.github.io/husky/get-started.html";
const OPENCODE: &str = "https://opencode.ai/docs/config/";
const VSCODE: &str = "https://code.visualstudio.com/docs/editing/workspaces/workspace-trust";
const DEVCONTAINER: &str = "https://containers.dev/implementors/json_reference/";

#[rustfmt::skip]
pub const PROJECT: &[Entry] = &[
    // coding agents that run commands or MCP servers from the project
    e(".claude", D, "Claude Code: settings(.local).json hooks, apiKeyHelper, statusLine, enableAllProjectMcpServers; commands, agents, skills, hook scripts", CLAUDE),
    e(".mcp.json", F, "Claude Code project MCP servers (in srt 0.0.83's list)", "https://docs.anthropic.com/en/docs/claude-code/mcp"),
    e(".gemini", D, "Gemini CLI: settings.json mcpServers and hooks, .env, commands with !{shell}", "https://geminicli.com/docs/reference/configuration"),
    e(".codex", D, "Codex: config.toml mcp_servers in a trusted project", "https://developers.openai.com/codex/mcp"),
    e(".cursor", D, "Cursor: mcp.json, hooks.json, rules", "https://cursor.com/docs/mcp"),
    e(".roo", D, "Roo Code: mcp.json (project MCP servers), rules", "https://docs.roocode.com/features/mcp/using-mcp-in-roo"),
    e(".roomodes", F, "Roo Code custom modes (tool groups they may use)", "https://docs.roocode.com/features/custom-modes"),
    e(".continue", D, "Continue: mcpServers/ blocks, config", "https://docs.continue.dev/customize/deep-dives/mcp"),
    e(".clinerules", D, "Cline: hooks/ scripts run at task and tool events; rules", "https://docs.cline.bot/customization/hooks"),
    e(".windsurf", D, "Windsurf: hooks.json (pre_run_command...), rules, workflows", "https://docs.rs/crate/agent-config/0.3.3/source/docs/agents/windsurf.md (.windsurf/hooks.json)"),
    e(".github/hooks", D, "Copilot CLI loads *.json hooks from the working directory", "https://docs.github.com/en/copilot/reference/hooks-reference"),
    e(".github/mcp.json", F, "Copilot CLI: workspace MCP servers it starts", "https://docs.github.com/en/copilot/reference/cli-command-reference"),
    e(".github/copilot", D, "Copilot CLI repository settings (settings*.json)", "https://docs.github.com/en/copilot/reference/cli-command-reference"),
    e(".aider.conf.yml", F, "aider (git root and cwd): lint-cmd/test-cmd with auto-lint/auto-test", "https://aider.chat/docs/config/aider_conf.html"),
    e("opencode.json", F, "opencode project config (found up to the git root): mcp, formatter and lsp commands", OPENCODE),
    e("opencode.jsonc", F, "as opencode.json", OPENCODE),
    e(".opencode", D, "opencode: plugins (JavaScript it runs), agents, commands", OPENCODE),
    e(".amazonq", D, "Amazon Q Developer (IDE and CLI): mcp.json, default.json MCP servers", "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/mcp-ide.html"),
    e(".kiro", D, "Kiro: settings/mcp.json, hooks", "https://kiro.dev/docs/mcp/configuration/"),
    e(".zed", D, "Zed project settings: language servers, context servers, tasks", "https://zed.dev/docs/configuring-zed"),
    e(".qwen", D, "Qwen Code: settings.json mcpServers and hooks, commands", "https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings/"),
    e(".factory", D, "Factory Droid: settings.json and hooks.json hooks, mcp.json MCP servers", "https://docs.factory.ai/cli/configuration/settings; https://docs.factory.ai/reference/hooks-reference"),
    e(".kilocode", D, "Kilo Code: mcp.json (project MCP servers), rules, workflows", "https://kilocode.ai/docs/features/mcp/using-mcp-in-kilo-code"),
    e(".kilo", D, "Kilo CLI: kilo.jsonc (mcp, formatter and lsp commands), plugins", "https://kilo.ai/docs/cli"),
    e("kilo.json", F, "Kilo CLI project config: as .kilo/kilo.jsonc", "https://kilo.ai/docs/cli"),
    e("kilo.jsonc", F, "Kilo CLI project config: as .kilo/kilo.jsonc", "https://kilo.ai/docs/cli"),
    e("crush.json", F, "Crush project config: mcp servers and lsp commands it starts", "https://github.com/charmbracelet/crush#configuration"),
    e(".crush.json", F, "as crush.json", "https://github.com/charmbracelet/crush#configuration"),
    // editors and IDEs that run project configuration when the folder is opened
    e(".vscode", D, "VS Code: tasks.json runOn folderOpen, settings (terminal profiles, interpreter paths), mcp.json (in srt 0.0.83's list)", VSCODE),
    e("*.code-workspace", F, "VS Code workspace file: the same settings and tasks", VSCODE),
    e(".idea", D, "JetBrains: run configurations, startup tasks, external tools (in srt 0.0.83's list)", "https://www.jetbrains.com/help/idea/settings-tools-startup-tasks.html"),
    e(".devcontainer", D, "devcontainer.json initializeCommand runs on the host", DEVCONTAINER),
    e(".devcontainer.json", F, "initializeCommand runs on the host", DEVCONTAINER),
    // git hooks outside .git/hooks, run by the next host git commit
    e(".pre-commit-config.yaml", F, "the installed pre-commit hook runs its entries (repo: local runs any command)", "https://pre-commit.com/#2-add-a-pre-commit-configuration"),
    e(".husky", D, "husky sets core.hooksPath to .husky/_; the hooks are these files", HUSKY),
    e(".huskyrc*", F, "husky v4 hook commands, read at every hook run", "https://github.com/typicode/husky/tree/v4.3.8#install"),
    e("husky.config.js", F, "husky v4 hook commands", "https://github.com/typicode/husky/tree/v4.3.8#install"),
    e("lefthook.*", F, "lefthook reads it at every hook run", LEFTHOOK),
    e(".lefthook.*", F, "lefthook main config", LEFTHOOK),
    e("lefthook-local.*", F, "lefthook local config, merged", LEFTHOOK),
    e(".lefthook-local.*", F, "lefthook local config, merged", LEFTHOOK),
    e(".config/lefthook.*", F, "lefthook main config", LEFTHOOK),
    e(".config/lefthook-local.*", F, "lefthook local config, merged", LEFTHOOK),
    e(".lefthook", D, "lefthook source_dir: scripts run by hooks", LEFTHOOK),
    e(".lefthook-local", D, "lefthook source_dir_local", LEFTHOOK),
    // shells entering the directory
    e(".envrc", F, "direnv runs it on cd (needs direnv allow, except in directories direnv.toml whitelists)", "https://direnv.net/man/direnv.toml.1.html"),
    e("mise.toml", F, "mise (activated in the shell): env, hooks, templates; trust is by path, not content", MISE),
    e(".mise.toml", F, "as mise.toml", MISE),
    e(".mise.local.toml", F, "as mise.toml", MISE),
    e(".mise", D, "mise config directory", MISE),
    e(".config/mise.toml", F, "as mise.toml", MISE),
    e(".config/mise", D, "mise config directory", MISE),
    e("mise", D, "mise config directory (mise/config.toml, mise/config.local.toml)", MISE),
    e("mise.*.toml", F, "mise.local.toml and the environment configs (mise.{env}.toml), as mise.toml", MISE),
    // srt 0.0.83's list: shell rc files and git config matter when the directory is $HOME
    e(".gitconfig", F, "git global config when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".gitmodules", F, "submodule URLs and paths a later git submodule update uses (in srt 0.0.83's list)", SRT),
    e(".bashrc", F, "bash rc when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".bash_profile", F, "bash login rc when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".zshrc", F, "zsh rc when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".zprofile", F, "zsh login rc when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".profile", F, "login rc when the directory is $HOME (in srt 0.0.83's list)", SRT),
    e(".ripgreprc", F, "ripgrep config named by RIPGREP_CONFIG_PATH (in srt 0.0.83's list)", SRT),
];

/// srt 0.0.83's mandatory names, for the test that the list above is a superset.
pub const SRT_0_0_83: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".claude/commands",
    ".claude/agents",
];

const BUILD: &str = "the project's own build: run on purpose by the user, as every build runs project code";

#[rustfmt::skip]
pub const PROJECT_NOT_PROTECTED: &[Decision] = &[
    no("Makefile", BUILD, "https://www.gnu.org/software/make/manual/make.html"),
    no("build.rs", BUILD, "https://doc.rust-lang.org/cargo/reference/build-scripts.html"),
    no("package.json", "scripts and lifecycle scripts (preinstall, prepare) run by npm commands the user types; husky v4 and lint-staged configs inside it run at commit: a limit", "https://docs.npmjs.com/cli/v10/using-npm/scripts"),
    no(".npmrc", "project npm settings apply to npm commands in the project, which run its scripts anyway", "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc"),
    no(".yarnrc.yml", "yarnPath names the yarn release the project vendors (.yarn/releases), itself project code every yarn runs; a copy in a parent directory ($HOME) is protected as a home file", "https://yarnpkg.com/configuration/yarnrc"),
    no(".cargo/config.toml", "runs with cargo build, which runs the project's build.rs and proc macros anyway", "https://doc.rust-lang.org/cargo/reference/config.html"),
    no("rust-toolchain.toml", "picks the compiler of the project's own builds; in $HOME it is protected as a home file", "https://rust-lang.github.io/rustup/overrides.html"),
    no(".mvn", "maven.config, jvm.config and extensions.xml of the project's own builds", "https://maven.apache.org/configure.html"),
    no("gradle", "the wrapper's distributionUrl: the project's own build", "https://docs.gradle.org/current/userguide/gradle_wrapper.html"),
    no(".github/workflows", "CI runs on the forge's runners after a push, not on this host; review it as code before pushing", "https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions"),
    no(".gitlab-ci.yml", "CI, not this host", "https://docs.gitlab.com/ci/yaml/"),
    no(".gitattributes", "selects filter, diff and merge drivers only among those the (protected) git configs define", "gitattributes(5)"),
    no(".lfsconfig", "git-lfs reads only a safe subset of keys (URLs, fetch settings) from it", "git-lfs-config(5) LFSCONFIG (https://man.archlinux.org/man/git-lfs-config.5.en)"),
    no(".overcommit.yml", "overcommit refuses a changed config until overcommit --sign, whose signature lives in .git/config, which the command may not set", "https://github.com/sds/overcommit#security"),
    no(".simple-git-hooks.json", "read only when simple-git-hooks installs hooks into the protected .git/hooks; its other names and the package.json key alike", "https://github.com/toplenboren/simple-git-hooks#usage"),
    no(".pre-commit-hooks.yaml", "defines hooks for repositories that pin this one by rev; runs nothing here", "https://pre-commit.com/#creating-new-hooks"),
    no(".env", "data for the project's own code; agents often write it. A limit: Gemini CLI, aider and direnv (load_dotenv in a whitelisted directory) load it into the environment of commands they run; add it to denyWrite when using them", "https://aider.chat/docs/config/dotenv.html"),
    no(".tool-versions", "versions only; asdf and mise install from plugins the user added", "https://asdf-vm.com/manage/configuration.html"),
    no(".python-version", "a version name; pyenv validates it since 2.3.3 (CVE-2022-35861)", "https://github.com/pyenv/pyenv/pull/2412"),
    no(".nvmrc", "a node version name nvm installs from its own mirror", "https://github.com/nvm-sh/nvm#nvmrc"),
    no(".editorconfig", "formatting settings, no program", "https://editorconfig.org/"),
    no("eslint.config.js", "linter configs are code run by linters the user, an IDE with workspace trust or a commit hook starts: a limit, as for all project code", "https://eslint.org/docs/latest/use/configure/configuration-files"),
];

/// Instruction files: text a coding agent reads at its next start in the directory. srt
/// 0.0.83 protects none of them (only `.claude/commands` and `.claude/agents`), and
/// neither does this list: a model reads them like any other file of the project, so
/// they steer the next agent the way a README, a code comment or a test's output can;
/// what the next agent then does runs inside its own sandbox. Those inside protected
/// directories (`.claude/CLAUDE.md`, `.cursor/rules`) are protected with them.
#[rustfmt::skip]
pub const INSTRUCTION_FILES: &[Decision] = &[
    no("CLAUDE.md", "Claude Code memory, read from the directory and its parents", "https://docs.anthropic.com/en/docs/claude-code/memory"),
    no("CLAUDE.local.md", "Claude Code local memory", "https://docs.anthropic.com/en/docs/claude-code/memory"),
    no("AGENTS.md", "Codex, opencode, Cursor, Copilot and others", "https://agents.md/"),
    no("GEMINI.md", "Gemini CLI context file", "https://geminicli.com/docs/reference/configuration"),
    no(".cursorrules", "Cursor legacy rules", "https://cursor.com/docs/context/rules"),
    no(".windsurfrules", "Windsurf legacy rules", "https://docs.windsurf.com/windsurf/cascade/memories"),
    no(".github/copilot-instructions.md", "Copilot repository instructions", "https://docs.github.com/en/copilot/how-tos/configure-custom-instructions"),
    no(".github/instructions", "Copilot path-specific instructions", "https://docs.github.com/en/copilot/how-tos/configure-custom-instructions"),
    no(".goosehints", "goose hints", "https://block.github.io/goose/docs/guides/context-engineering/using-goosehints"),
    no("CONVENTIONS.md", "aider conventions (when configured with read:)", "https://aider.chat/docs/usage/conventions.html"),
];
