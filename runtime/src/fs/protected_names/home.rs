//! Files and directories relative to `$HOME` that a later host program runs, loads as
//! code or configuration that runs programs, puts on `PATH`, or trusts for access. Most
//! are dot-entries (covered anyway when `$HOME` is writable and its dot-entries are
//! protected by default); they are listed so that they stay protected when only part of
//! the home directory is writable (`allowWrite: ["~/.config"]`) and so that `srt explain`
//! and the README can say why. Entries not starting with `.` are not dot-entries and need
//! protecting by name ([`super::non_dot_home_entries`]).

use super::entry::Entry;
use super::entry::Kind::{self, Dir as D, File as F};

const fn e(path: &'static str, kind: Kind, runs: &'static str, source: &'static str) -> Entry {
    Entry { path, kind, runs, source }
}

const BASH: &str = "bash(1) INVOCATION";
const DEB_SKEL: &str = "/etc/skel/.bashrc and /etc/skel/.profile of Debian's bash package";
const ZSH: &str = "https://zsh.sourceforge.io/Doc/Release/Files.html";
const FISH: &str = "https://fishshell.com/docs/current/language.html#configuration";
const TCSH: &str = "tcsh(1) Startup and shutdown (https://manpages.ubuntu.com/manpages/kinetic/man1/tcsh.1.html)";
const XSESSION: &str = "Xsession(5)";
const GIT: &str = "git-config(1) FILES; gitattributes(5)";
const SSH: &str = "ssh(1) FILES; ssh_config(5) ProxyCommand, LocalCommand, KnownHostsCommand, Match exec";
const K5: &str = "https://web.mit.edu/kerberos/krb5-latest/doc/user/user_config/k5login.html";
const PY_SITE: &str = "https://docs.python.org/3/library/site.html";
const PIP: &str = "https://pip.pypa.io/en/stable/topics/configuration/";
const JUPYTER: &str = "https://jupyter-client.readthedocs.io/en/stable/kernels.html#kernel-specs";
const NPM: &str = "https://docs.npmjs.com/cli/v10/using-npm/config (script-shell, node-options, init-module, prefix)";
const YARN1: &str = "https://classic.yarnpkg.com/en/docs/yarnrc (yarn-path), /en/docs/cli/global";
const BUN: &str = "https://bun.sh/docs/runtime/bunfig (preload)";
const NODE: &str = "https://nodejs.org/api/modules.html#loading-from-the-global-folders";
const CARGO: &str = "https://doc.rust-lang.org/cargo/reference/config.html";
const CARGO_HOME: &str = "https://doc.rust-lang.org/cargo/guide/cargo-home.html";
const RUSTUP: &str = "https://rust-lang.github.io/rustup/overrides.html";
const GO: &str = "https://pkg.go.dev/cmd/go#hdr-Environment_variables";
const GRADLE: &str = "https://docs.gradle.org/userguide/init_scripts.html";
const COMPOSER: &str = "https://getcomposer.org/doc/03-cli.md#composer-home";
const MSBUILD: &str = "https://learn.microsoft.com/en-us/visualstudio/msbuild/customize-by-directory";
const R: &str = "https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html";
const VIM: &str = "https://vimhelp.org/starting.txt.html#initialization";
const NVIM: &str = "https://neovim.io/doc/user/starting.html#initialization";
const EMACS: &str = "https://www.gnu.org/software/emacs/manual/html_node/emacs/Init-File.html";
const VSCODE: &str = "https://code.visualstudio.com/docs/configure/settings#_settings-file-locations";
const JETBRAINS: &str =
    "https://www.jetbrains.com/help/idea/directories-used-by-the-ide-to-store-settings-caches-plugins-and-logs.html";
const TMUX: &str = "tmux(1) -f, run-shell";
const LESS: &str = "less(1) KEY BINDINGS, ENVIRONMENT VARIABLES; lesskey(1) #env (LESSOPEN)";
const CURL: &str = "curl(1) -K, --config";
const DIRENV: &str = "https://direnv.net/man/direnv.toml.1.html";
const MISE: &str = "https://mise.jdx.dev/cli/trust.html";
const SYSTEMD: &str = "systemd.unit(5) Unit File Load Path";
const PIPEWIRE: &str = "https://docs.pipewire.org/page_man_pipewire_conf_5.html (context.exec)";
const NIX: &str = "https://nix.dev/manual/nix/latest/command-ref/files/profiles";
const CLAUDE: &str = "https://docs.anthropic.com/en/docs/claude-code/settings";
const CODEX: &str = "https://developers.openai.com/codex/mcp";
const GEMINI: &str = "https://geminicli.com/docs/reference/configuration";
const CURSOR: &str = "https://cursor.com/docs/mcp";
const CONTINUE: &str = "https://docs.continue.dev/customize/deep-dives/mcp";
const AIDER: &str = "https://aider.chat/docs/config/aider_conf.html, /docs/config/dotenv.html";
const OPENCODE: &str = "https://opencode.ai/docs/config/";
const CLINE: &str = "https://docs.cline.bot/customization/hooks, /mcp/configuring-mcp-servers";

#[rustfmt::skip]
pub const HOME: &[Entry] = &[
    // shells
    e(".bashrc", F, "bash: every interactive shell; the skeleton .profile sources it", BASH),
    e(".bash_profile", F, "bash login shells (first of .bash_profile, .bash_login, .profile)", BASH),
    e(".bash_login", F, "bash login shells when there is no .bash_profile", BASH),
    e(".profile", F, "sh/dash login shells, bash when neither file above exists, display managers", BASH),
    e(".bash_logout", F, "bash: when a login shell exits", BASH),
    e(".bash_aliases", F, "sourced by Debian's and Ubuntu's skeleton .bashrc", DEB_SKEL),
    e(".bashrc.d", D, "every *.bashrc in it is sourced by Fedora's skeleton .bashrc", "https://hotsechu.com/blog/page/2 (Fedora 39 /etc/skel/.bashrc)"),
    e(".inputrc", F, "readline (bash, python, psql...): a macro bound to a key types commands", "bash(1) READLINE, Readline Initialization"),
    e(".zshenv", F, "every zsh, scripts included", ZSH),
    e(".zprofile", F, "zsh login shells", ZSH),
    e(".zshrc", F, "zsh interactive shells", ZSH),
    e(".zlogin", F, "zsh login shells, after .zshrc", ZSH),
    e(".zlogout", F, "zsh: when a login shell exits", ZSH),
    e(".zcompdump*", F, "compinit sources the completion dump it finds", "https://zsh.sourceforge.io/Doc/Release/Completion-System.html#Use-of-compinit"),
    e(".config/zsh", D, "a usual $ZDOTDIR (set in .zshenv): zsh's startup files are read there", ZSH),
    e(".oh-my-zsh", D, "oh-my-zsh and its plugins, sourced by .zshrc", "https://ohmyz.sh/#install"),
    e(".config/fish", D, "fish: config.fish and conf.d/*.fish at start; functions/ autoloaded", FISH),
    e(".local/share/fish", D, "fish: generated_completions/ are scripts autoloaded on Tab", FISH),
    e(".tcshrc", F, "tcsh: every shell", TCSH),
    e(".cshrc", F, "csh: every shell; tcsh when there is no .tcshrc", TCSH),
    e(".login", F, "csh/tcsh login shells", TCSH),
    e(".logout", F, "csh/tcsh: when a login shell exits", TCSH),
    e(".config/nushell", D, "nushell: env.nu and config.nu at start", "https://www.nushell.sh/book/configuration.html"),
    e(".xonshrc", F, "xonsh: Python run at start", "https://xon.sh/xonshrc.html"),
    e(".pam_environment", F, "pam_env (user_readenv=1): variables such as LD_PRELOAD for later logins", "pam_env(7)"),
    e(".config/environment.d", D, "variables (PATH, LD_PRELOAD) of every systemd user service", "environment.d(5)"),
    e(".xprofile", F, "sourced by display managers at graphical login", "https://wiki.archlinux.org/title/Xprofile"),
    e(".xsessionrc", F, "sourced by Debian's Xsession at graphical login", XSESSION),
    e(".xsession", F, "run as the session by Xsession", XSESSION),
    e(".xinitrc", F, "run by startx/xinit", "https://wiki.archlinux.org/title/Xinit"),
    e(".forward", F, "mail delivery: a |command line runs on the next message", "https://www.postfix.org/local.8.html"),
    e(".procmailrc", F, "procmail runs its | recipes on delivery", "procmailrc(5) (https://manpages.debian.org/procmailrc)"),
    // git
    e(".gitconfig", F, "git global config: core.fsmonitor, core.pager, alias.*, filter.*, credential.helper...", GIT),
    e(".config/git", D, "git XDG global config (same keys), attributes (pick drivers), ignore, credentials", GIT),
    e(".git-credentials", F, "git-credential-store: credentials sent to hosts", "https://git-scm.com/docs/git-credential-store"),
    // logins, keys, trust
    e(".ssh", D, "ssh config (ProxyCommand, Match exec...), authorized_keys, rc (sshd runs it), environment, known_hosts", SSH),
    e(".rhosts", F, "rsh and host-based ssh: hosts trusted to log in", SSH),
    e(".shosts", F, "host-based ssh: hosts trusted to log in", SSH),
    e(".k5login", F, "Kerberos principals that may log in as this user", K5),
    e(".k5users", F, "Kerberos principals that may run commands as this user (ksu)", "https://web.mit.edu/kerberos/krb5-latest/doc/user/user_config/k5users.html"),
    e(".google_authenticator", F, "pam_google_authenticator: the second factor of logins", "https://github.com/google/google-authenticator-libpam"),
    e(".config/Yubico", D, "pam_u2f authfile u2f_keys: keys accepted for login and sudo", "https://developers.yubico.com/pam-u2f/"),
    e(".yubico", D, "pam_yubico authorized_yubikeys", "https://developers.yubico.com/yubico-pam/"),
    e(".gnupg", D, "gpg-agent.conf pinentry-program/scdaemon-program run; keys, trust, gpg.conf", "gpg-agent(1) --pinentry-program"),
    e(".password-store", D, "pass: .gpg-id picks who new secrets are encrypted to; extensions run", "https://www.passwordstore.org/"),
    e(".pki", D, "NSS database: CAs Chromium and other NSS programs trust", "https://chromium.googlesource.com/chromium/src/+/HEAD/docs/linux/cert_management.md"),
    e(".netrc", F, "credentials curl, git and ftp send; ftp runs a macdef init at login", "curl(1) --netrc; https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html"),
    // PATH and toolchains
    e(".local/bin", D, "first on the skeleton .profile's PATH; pipx and uv tool links", DEB_SKEL),
    e("bin", D, "on the skeleton .profile's PATH when it exists", DEB_SKEL),
    e(".cargo/bin", D, "cargo install and rustup proxies, on PATH", CARGO_HOME),
    e(".cargo/env", F, "sourced by the .profile/.bashrc lines rustup's installer adds", "https://rust-lang.github.io/rustup/installation/index.html"),
    e(".rustup", D, "toolchains every cargo/rustc proxy runs; settings.toml directory overrides", "https://rust-lang.github.io/rustup/configuration.html"),
    e("go/bin", D, "GOBIN's default ($GOPATH/bin), usually on PATH", GO),
    e(".npm-global", D, "the npm prefix npm's docs suggest for global installs; bin/ on PATH", "https://docs.npmjs.com/resolving-eacces-permissions-errors-when-installing-packages-globally"),
    e(".local/share/pnpm", D, "PNPM_HOME: pnpm's global bin directory, on PATH", "https://pnpm.io/installation"),
    e(".yarn/bin", D, "yarn v1 global binaries", YARN1),
    e(".config/yarn", D, "yarn v1 global packages (config/yarn/global)", YARN1),
    e(".bun", D, "bun's install; ~/.bun/bin on PATH", "https://bun.sh/docs/installation"),
    e(".deno", D, "deno install root; ~/.deno/bin on PATH", "https://docs.deno.com/runtime/reference/cli/install/"),
    e(".volta", D, "volta shims on PATH", "https://docs.volta.sh/advanced/installers"),
    e(".nvm", D, "nvm.sh sourced by .bashrc; node versions on PATH", "https://github.com/nvm-sh/nvm#installing-and-updating"),
    e(".pyenv", D, "pyenv init sourced by rc files; shims on PATH", "https://github.com/pyenv/pyenv#set-up-your-shell-environment-for-pyenv"),
    e(".rbenv", D, "rbenv shims on PATH", "https://github.com/rbenv/rbenv#how-it-works"),
    e(".asdf", D, "asdf.sh sourced by rc files; shims on PATH", "https://asdf-vm.com/guide/getting-started.html"),
    e(".sdkman", D, "sdkman-init.sh sourced by rc files; candidates on PATH", "https://sdkman.io/install"),
    e(".local/share/mise", D, "mise installs and shims on PATH", "https://mise.jdx.dev/directories.html"),
    e(".local/state/mise", D, "mise's records of trusted config files", MISE),
    e(".config/mise", D, "mise global config: env, hooks, tasks", "https://mise.jdx.dev/configuration.html"),
    e(".dotnet/tools", D, "dotnet global tools, on PATH", "https://learn.microsoft.com/en-us/dotnet/core/tools/global-tools"),
    e(".krew", D, "kubectl plugins; ~/.krew/bin on PATH", "https://krew.sigs.k8s.io/docs/user-guide/setup/install/"),
    e(".nix-profile", F, "the Nix user profile (a link); bin/ on PATH", NIX),
    e(".local/state/nix", D, "Nix profiles ~/.nix-profile points into", NIX),
    e(".ghcup", D, "ghcup env sourced; bin/ on PATH", "https://www.haskell.org/ghcup/install/"),
    e(".opam", D, "opam-init sourced by rc files; switches on PATH", "https://opam.ocaml.org/doc/Install.html"),
    e("perl5", D, "local::lib: lib/perl5 on PERL5LIB, bin/ on PATH", "https://metacpan.org/pod/local::lib"),
    e(".local/share/uv", D, "uv tools and managed Pythons behind ~/.local/bin links", "https://docs.astral.sh/uv/concepts/tools/"),
    e(".local/share/pipx", D, "pipx environments behind ~/.local/bin links", "https://pipx.pypa.io/stable/installation/"),
    e(".jdks", D, "JDKs IntelliJ downloads, run by builds", "https://www.jetbrains.com/help/idea/sdk.html"),
    // languages and package managers
    e(".local/lib/python*/site-packages", D, "user site: *.pth import lines and usercustomize run at every python start", PY_SITE),
    e(".config/pip", D, "pip.conf: index-url and friends pick where installed code comes from", PIP),
    e(".pip", D, "legacy pip.conf location, still read", PIP),
    e(".pydistutils.cfg", F, "distutils/setuptools per-user build and install options", "https://docs.python.org/3.11/install/index.html#location-and-names-of-config-files"),
    e(".pypirc", F, "repositories and credentials for uploads", "https://packaging.python.org/en/latest/specifications/pypirc/"),
    e(".config/uv", D, "uv.toml: indexes and build settings for every uv command", "https://docs.astral.sh/uv/concepts/configuration-files/"),
    e(".config/pypoetry", D, "poetry config: repositories, virtualenv location", "https://python-poetry.org/docs/configuration/"),
    e(".condarc", F, "conda channels: where packages come from", "https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html"),
    e(".conda", D, "conda environments, run when activated", "https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html"),
    e(".ipython", D, "profile_default/startup/*.py and ipython_config.py run at every IPython start", "https://ipython.readthedocs.io/en/stable/interactive/tutorial.html#startup-files"),
    e(".jupyter", D, "jupyter_*_config.py run by every Jupyter server", "https://docs.jupyter.org/en/latest/use/config.html"),
    e(".local/share/jupyter", D, "kernels/*/kernel.json argv runs when a notebook starts that kernel", JUPYTER),
    e(".npmrc", F, "npm: script-shell, node-options, prefix, git: programs every npm runs", NPM),
    e(".npm-init.js", F, "init-module: run by npm init", NPM),
    e(".yarnrc", F, "yarn v1: yarn-path runs that script for every yarn", YARN1),
    e(".yarnrc.yml", F, "yarn 2+: yarnPath, plugins; also read in parent directories of projects", "https://yarnpkg.com/configuration/yarnrc"),
    e(".bunfig.toml", F, "bun global config: preload scripts run before code", BUN),
    e(".config/.bunfig.toml", F, "bun global config at $XDG_CONFIG_HOME", BUN),
    e(".node_modules", D, "searched by every require()", NODE),
    e(".node_libraries", D, "searched by every require()", NODE),
    e("node_modules", D, "require() walks up parent directories: ~/node_modules serves every project under ~", "https://nodejs.org/api/modules.html#loading-from-node_modules-folders"),
    e(".cargo/config.toml", F, "cargo: build.rustc-wrapper, target runner/linker, aliases", CARGO),
    e(".cargo/config", F, "cargo's older name for config.toml, still read", CARGO),
    e(".cargo/credentials.toml", F, "registry tokens; credential-provider runs a program", "https://doc.rust-lang.org/cargo/reference/registry-authentication.html"),
    e(".cargo/credentials", F, "older name of credentials.toml", CARGO),
    e("rust-toolchain.toml", F, "rustup walks up: a toolchain file in ~ (path = ...) picks the compiler below ~", RUSTUP),
    e("rust-toolchain", F, "older name of rust-toolchain.toml", RUSTUP),
    e(".config/go/env", F, "GOENV: GOFLAGS (-toolexec), CC, GOTOOLCHAIN for every go command", GO),
    e("go.work", F, "go looks for go.work in parent directories: ~/go.work rewires every module under ~", "https://go.dev/ref/mod#workspaces"),
    e(".m2/settings.xml", F, "maven mirrors and repositories: where plugins come from", "https://maven.apache.org/settings.html"),
    e(".m2/toolchains.xml", F, "JDKs maven runs", "https://maven.apache.org/guides/mini/guide-using-toolchains.html"),
    e(".mavenrc", F, "sourced by the mvn script", "https://maven.apache.org/ref/3-LATEST/apache-maven"),
    e(".gradle/init.gradle*", F, "init script run before every build", GRADLE),
    e(".gradle/init.d", D, "*.init.gradle(.kts) run before every build", GRADLE),
    e(".gradle/gradle.properties", F, "org.gradle.jvmargs (-javaagent) and system properties for every build", "https://docs.gradle.org/current/userguide/build_environment.html"),
    e(".sbt", D, "global plugins and settings compiled into every sbt build", "https://www.scala-sbt.org/1.x/docs/Global-Settings.html"),
    e(".lein", D, "profiles.clj: plugins and injections for every lein run", "https://leiningen.org/profiles.html"),
    e(".gemrc", F, "gem defaults: sources and install options", "https://guides.rubygems.org/command-reference/#gem-environment"),
    e(".bundle", D, "bundle config: mirrors, build options, paths for every bundle", "https://bundler.io/man/bundle-config.1.html"),
    e(".irbrc", F, "Ruby run at every irb start", "https://docs.ruby-lang.org/en/master/IRB.html"),
    e(".pryrc", F, "Ruby run at every pry start", "https://github.com/pry/pry/wiki/Pry-rc"),
    e(".config/composer", D, "COMPOSER_HOME: global scripts, vendor/bin on PATH, auth", COMPOSER),
    e(".composer", D, "older COMPOSER_HOME", COMPOSER),
    e(".nuget/NuGet", D, "NuGet.Config: package sources for every restore", "https://learn.microsoft.com/en-us/nuget/consume-packages/configuring-nuget-behavior"),
    e("Directory.Build.props", F, "MSBuild imports the nearest one up the tree: ~ reaches every project under ~", MSBUILD),
    e("Directory.Build.targets", F, "as Directory.Build.props", MSBUILD),
    e("Directory.Build.rsp", F, "MSBuild reads response files up the tree: a -logger: line loads a DLL", "https://learn.microsoft.com/en-us/visualstudio/msbuild/msbuild-response-files"),
    e("nuget.config", F, "NuGet merges config files from every parent folder: package sources and their credentials", "https://learn.microsoft.com/en-us/nuget/consume-packages/configuring-nuget-behavior"),
    e("NuGet.Config", F, "as nuget.config", "https://learn.microsoft.com/en-us/nuget/consume-packages/configuring-nuget-behavior"),
    // found by walking up from any project below ~ (the third and fourth reviews)
    e("Cargo.toml", F, "cargo searches parent directories for a workspace root: ~/Cargo.toml's [workspace] and [patch] swap in crates whose build.rs runs on every build below ~", "https://doc.rust-lang.org/cargo/reference/workspaces.html#root-package"),
    e("package.json", F, "npm install in a directory below ~ without a package.json of its own uses the nearest one up: its install scripts run", "https://docs.npmjs.com/cli/v10/configuring-npm/folders#more-information"),
    e("pnpm-workspace.yaml", F, "pnpm takes the nearest one up as the workspace root", "https://pnpm.io/pnpm-workspace_yaml"),
    e("deno.json", F, "deno finds its config in parent directories: tasks and import maps", "https://docs.deno.com/runtime/fundamentals/configuration/"),
    e("deno.jsonc", F, "as deno.json", "https://docs.deno.com/runtime/fundamentals/configuration/"),
    e("pyproject.toml", F, "pytest, uv and other tools find their config up the tree (pytest's rootdir and addopts, uv sources)", "https://docs.pytest.org/en/stable/reference/customize.html#finding-the-rootdir"),
    e("pytest.ini", F, "pytest's rootdir search: addopts (-p plugins) for every run below ~", "https://docs.pytest.org/en/stable/reference/customize.html#finding-the-rootdir"),
    e("tox.ini", F, "as pytest.ini ([pytest] section)", "https://docs.pytest.org/en/stable/reference/customize.html#finding-the-rootdir"),
    e("setup.cfg", F, "as pytest.ini ([tool:pytest] section)", "https://docs.pytest.org/en/stable/reference/customize.html#finding-the-rootdir"),
    e("conftest.py", F, "pytest imports conftest.py files from the rootdir down: Python run by every test run below ~", "https://docs.pytest.org/en/stable/how-to/writing_plugins.html#conftest-py-local-per-directory-plugins"),
    e("uv.toml", F, "uv reads uv.toml from parent directories: index URLs and build settings", "https://docs.astral.sh/uv/concepts/configuration-files/"),
    e(".Rprofile", F, "R code run at every R start", R),
    e(".Renviron", F, "R_PROFILE_USER and library paths for every R", R),
    e("R", D, "R's default user library: packages every R session loads", R),
    e(".julia", D, "config/startup.jl and packages", "https://docs.julialang.org/en/v1/manual/command-line-interface/#Startup-file"),
    e(".ghci", F, "ghci commands at start", "https://downloads.haskell.org/ghc/latest/docs/users_guide/ghci.html#the-ghci-files"),
    e(".perldb", F, "Perl run by the Perl debugger at start", "https://perldoc.perl.org/perldebug#Debugger-Customization"),
    e(".cpan", D, "CPAN/MyConfig.pm: Perl run by cpan", "https://metacpan.org/pod/CPAN#CONFIGURATION"),
    e(".psqlrc", F, "psql runs it at start (\\! runs shell commands)", "psql(1) FILES"),
    e(".sqliterc", F, "sqlite3 runs it at start (.shell, .system)", "sqlite3(1)"),
    e(".my.cnf", F, "mysql client options (pager runs a program) and credentials", "https://dev.mysql.com/doc/refman/8.0/en/option-files.html"),
    e(".mongoshrc.js", F, "JavaScript run by mongosh at start", "https://www.mongodb.com/docs/mongodb-shell/mongoshrc/"),
    e(".gdbinit", F, "gdb commands and Python at start", "https://sourceware.org/gdb/current/onlinedocs/gdb.html/Initialization-Files.html"),
    e(".config/gdb", D, "gdb's XDG init files", "https://sourceware.org/gdb/current/onlinedocs/gdb.html/Initialization-Files.html"),
    e(".lldbinit", F, "lldb commands at start", "https://lldb.llvm.org/man/lldb.html#configuration-files"),
    e(".ripgreprc", F, "ripgrep config (RIPGREP_CONFIG_PATH): --pre runs a program per file; in srt 0.0.83's list", "https://github.com/BurntSushi/ripgrep/blob/master/GUIDE.md#configuration-file"),
    // editors and terminals
    e(".vimrc", F, "vim init (git commit starts vi)", VIM),
    e(".vim", D, "vim: plugin/, pack/*/start/ and ftplugin/ loaded", VIM),
    e(".exrc", F, "vi/ex init; vim reads it without a .vimrc", VIM),
    e(".gvimrc", F, "Vim script run at every gvim start", VIM),
    e(".config/nvim", D, "nvim init.lua/init.vim and plugins", NVIM),
    e(".local/share/nvim", D, "nvim site/pack and plugin managers' checkouts, loaded at start", NVIM),
    e(".local/state/nvim/trust", F, "nvim's :trust records: a listed .nvim.lua, .nvimrc or .exrc runs without asking (exrc)", NVIM),
    e(".emacs", F, "Emacs Lisp run at every emacs start", EMACS),
    e(".emacs.el", F, "Emacs Lisp run at every emacs start", EMACS),
    e(".emacs.d", D, "emacs init.el, early-init.el, packages", EMACS),
    e(".config/emacs", D, "emacs XDG init directory", EMACS),
    e(".nanorc", F, "nano: speller, linter and formatter programs", "https://www.nano-editor.org/dist/latest/nanorc.5.html"),
    e(".config/nano", D, "nano's XDG nanorc", "https://www.nano-editor.org/dist/latest/nanorc.5.html"),
    e(".config/helix", D, "helix languages.toml: language servers run on open", "https://docs.helix-editor.com/languages.html"),
    e(".config/Code", D, "VS Code user settings, tasks, mcp.json; extension storage (Roo Code, Cline MCP settings)", VSCODE),
    e(".vscode", D, "VS Code extensions: code the editor runs", "https://code.visualstudio.com/docs/configure/extensions/extension-marketplace#_where-are-extensions-installed"),
    e(".vscode-server", D, "VS Code remote server and its extensions", "https://code.visualstudio.com/docs/remote/faq"),
    e(".vscode-oss", D, "VSCodium/Code OSS extensions", VSCODE),
    e(".config/JetBrains", D, "JetBrains IDE options: external tools, startup tasks", JETBRAINS),
    e(".local/share/JetBrains", D, "JetBrains plugins: code the IDE runs", JETBRAINS),
    e(".config/zed", D, "Zed settings: language servers, context servers, tasks", "https://zed.dev/docs/configuring-zed"),
    e(".tmux.conf", F, "tmux commands at server start (run-shell)", TMUX),
    e(".config/tmux", D, "tmux XDG config", TMUX),
    e(".tmux", D, "tmux plugin manager: plugins run from tmux.conf", "https://github.com/tmux-plugins/tpm"),
    e(".screenrc", F, "screen commands at start (exec)", "https://www.gnu.org/software/screen/manual/screen.html#Startup-Files"),
    e(".config/kitty", D, "kitty: shell, startup sessions, kittens (Python)", "https://sw.kovidgoyal.net/kitty/conf/"),
    e(".config/alacritty", D, "alacritty: the shell program it starts", "https://alacritty.org/config-alacritty.html"),
    e(".config/wezterm", D, "wezterm: Lua configuration run at start", "https://wezterm.org/config/files.html"),
    e(".wezterm.lua", F, "wezterm: Lua configuration run at start", "https://wezterm.org/config/files.html"),
    e(".lesskey", F, "less: #env LESSOPEN runs a program on every file less shows (git's pager)", LESS),
    e(".config/lesskey", F, "as ~/.lesskey", LESS),
    // network clients, cloud and containers
    e(".curlrc", F, "options of every curl: proxy, -k, headers", CURL),
    e(".config/.curlrc", F, "curl's XDG config file", CURL),
    e(".wgetrc", F, "wget: use_askpass runs a program; proxies and options of every wget", "wget(1) --use-askpass"),
    e(".mailcap", F, "commands mutt, w3m and run-mailcap run to show attachments", "https://www.rfc-editor.org/rfc/rfc1524"),
    e(".muttrc", F, "mutt: source \"cmd|\", editor and pager commands", "http://www.mutt.org/doc/manual/#configuration-files"),
    e(".mutt", D, "mutt config directory", "http://www.mutt.org/doc/manual/#configuration-files"),
    e(".config/mutt", D, "mutt XDG config directory", "http://www.mutt.org/doc/manual/#configuration-files"),
    e(".docker", D, "config.json credsStore/credHelpers run docker-credential-*; cli-plugins run as subcommands", "https://docs.docker.com/reference/cli/docker/login/#credential-helpers"),
    e(".kube", D, "kubeconfig users[].exec runs a credential plugin on every kubectl", "https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins"),
    e(".aws", D, "config credential_process runs a program; cli/alias shell aliases", "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-sourcing-external.html"),
    e(".config/gcloud", D, "gcloud configurations and application default credentials", "https://cloud.google.com/docs/authentication/application-default-credentials"),
    e(".azure", D, "az configuration and cliextensions (Python az loads)", "https://learn.microsoft.com/en-us/cli/azure/azure-cli-extensions-overview"),
    e(".config/gh", D, "gh aliases (--shell runs a shell), editor/pager/browser commands, tokens", "https://cli.github.com/manual/gh_alias_set"),
    e(".terraformrc", F, "provider_installation dev_overrides: provider binaries terraform runs", "https://developer.hashicorp.com/terraform/cli/config/config-file"),
    e(".terraform.d", D, "provider plugins and credentials", "https://developer.hashicorp.com/terraform/cli/config/config-file"),
    e(".ansible.cfg", F, "ansible config: plugin and collection paths", "https://docs.ansible.com/ansible/latest/reference_appendices/config.html"),
    e(".ansible", D, "collections and plugins ansible loads", "https://docs.ansible.com/ansible/latest/reference_appendices/config.html"),
    e(".vagrant.d", D, "plugins and a global Vagrantfile loaded by every vagrant", "https://developer.hashicorp.com/vagrant/docs/vagrantfile#load-order-and-merging"),
    e(".config/containers", D, "containers.conf/registries.conf: hooks_dir, runtimes, registries", "https://github.com/containers/common/blob/main/docs/containers.conf.5.md"),
    e(".config/helm", D, "helm repositories: where charts come from", "https://helm.sh/docs/topics/plugins/"),
    e(".local/share/helm", D, "helm plugins, run as helm subcommands", "https://helm.sh/docs/topics/plugins/"),
    e(".config/direnv", D, "direnvrc sourced before every .envrc; direnv.toml [whitelist] trusts directories", DIRENV),
    e(".local/share/direnv", D, "direnv's allow records: an allowed .envrc runs on cd", "https://direnv.net/man/direnv.1.html"),
    // desktop session
    e(".config/systemd", D, "systemd user units (login, timers, sockets) and user.conf", SYSTEMD),
    e(".local/share/systemd/user", D, "systemd user units", SYSTEMD),
    e(".config/autostart", D, "XDG autostart: Exec of each .desktop at graphical login", "https://specifications.freedesktop.org/autostart-spec/latest/"),
    e(".config/autostart-scripts", D, "KDE: scripts run at login", "startkde(1) Autostart folder (https://manpages.ubuntu.com/manpages/trusty/man1/startkde.1.html), ~/.config/autostart-scripts since Plasma 5"),
    e(".config/plasma-workspace", D, "KDE: env/*.sh sourced at login, shutdown/ scripts run at logout", "startkde(1) env/*.sh and shutdown/ (https://manpages.ubuntu.com/manpages/trusty/man1/startkde.1.html), under ~/.config/plasma-workspace since Plasma 5"),
    e(".local/share/applications", D, "desktop entries: Exec runs when a file type or URL is opened", "https://specifications.freedesktop.org/mime-apps-spec/latest/"),
    e(".config/mimeapps.list", F, "which desktop entry opens which type", "https://specifications.freedesktop.org/mime-apps-spec/latest/"),
    e(".local/share/dbus-1", D, "session bus activation: services/*.service Exec runs on demand", "dbus-daemon(1) session service directories"),
    e(".local/share/gnome-shell/extensions", D, "GNOME Shell extensions: JavaScript in the shell", "https://gjs.guide/extensions/overview/anatomy.html"),
    e(".config/pipewire", D, "context.exec runs programs when PipeWire starts", PIPEWIRE),
    e(".config/wireplumber", D, "WirePlumber Lua scripts", PIPEWIRE),
    e(".config/i3", D, "exec lines at session start", "https://i3wm.org/docs/userguide.html#exec"),
    e(".config/sway", D, "exec lines at session start", "sway(5) (https://man.archlinux.org/man/sway.5)"),
    e(".config/hypr", D, "exec-once lines and hyprland.start handlers at session start", "https://wiki.hypr.land/Configuring/Basics/Autostart/"),
    e(".mozilla", D, "Firefox profiles: extensions, user.js, certificate store", "https://support.mozilla.org/en-US/kb/profiles-where-firefox-stores-user-data"),
    e(".config/google-chrome", D, "Chrome profiles: extensions, preferences", "https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"),
    e(".config/chromium", D, "Chromium profiles: extensions, preferences", "https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"),
    // coding agents
    e(".claude", D, "Claude Code user settings.json (hooks, apiKeyHelper, statusLine), commands, agents, skills, plugins, CLAUDE.md", CLAUDE),
    e(".claude.json", F, "Claude Code: user and per-project MCP servers, folder trust", "https://docs.anthropic.com/en/docs/claude-code/mcp"),
    e(".codex", D, "Codex config.toml (mcp_servers, notify, trusted projects), AGENTS.md", CODEX),
    e(".gemini", D, "Gemini CLI settings.json (mcpServers, hooks), .env, commands, extensions, trustedFolders.json", GEMINI),
    e(".env", F, "Gemini CLI (fallback) and aider load it into the environment of the commands they run", GEMINI),
    e(".aider.conf.yml", F, "aider: lint-cmd/test-cmd with auto-lint/auto-test run commands", AIDER),
    e(".continue", D, "Continue config.yaml mcpServers, mcpServers/ blocks", CONTINUE),
    e(".cursor", D, "Cursor mcp.json, extensions, CLI permissions", CURSOR),
    e(".config/Cursor", D, "Cursor user settings (VS Code layout)", CURSOR),
    e(".codeium", D, "Windsurf windsurf/mcp_config.json", "https://docs.windsurf.com/windsurf/cascade/mcp"),
    e(".config/opencode", D, "opencode global config: mcp, plugins, formatters", OPENCODE),
    e("opencode.json", F, "opencode looks in parent directories: one in ~ applies to every project under ~", OPENCODE),
    e("opencode.jsonc", F, "as opencode.json", OPENCODE),
    e(".opencode", D, "opencode's install directory (bin/ on PATH)", OPENCODE),
    e(".config/goose", D, "goose config.yaml extensions: stdio commands", "https://block.github.io/goose/docs/guides/config-files"),
    e(".copilot", D, "Copilot CLI hooks/, mcp-config.json, lsp-config.json, settings", "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference"),
    e(".cline", D, "Cline CLI data/settings/cline_mcp_settings.json", CLINE),
    e("Documents/Cline", D, "Cline global Hooks/, Rules, Workflows and MCP server checkouts", CLINE),
    e(".kiro", D, "Kiro settings/mcp.json and hooks", "https://kiro.dev/docs/mcp/configuration/"),
    e(".srt-settings.json", F, "srt's own default settings (already never writable)", "docs/settings.md"),
];

/// Keys of the global git config whose value names a file or directory of more git
/// configuration or hooks (git-config(1)): protect what they name when it is writable.
pub const GIT_GLOBAL_PATH_KEYS: &[&str] =
    &["core.hooksPath", "init.templateDir", "include.path", "includeIf.*.path", "core.attributesFile"];
