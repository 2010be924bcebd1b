//! What tools may keep writing below `$HOME` when `$HOME` is writable and its dot-entries
//! are otherwise protected. On by default: histories, logs and editor state, which a
//! later host program reads back as data the user sees, never as code. Off by default:
//! caches and stores a later host tool *trusts* (it runs, links or imports what is there
//! without checking it again), so that planting there is delayed execution as surely as
//! planting in `.bashrc`; the user may allow them knowing that, or point the tool at a
//! cache of the sandbox's own ([`CACHE_ENV`]).

use super::entry::Allowed;
use super::entry::Kind::{self, Dir as D, File as F};

const fn on(path: &'static str, kind: Kind, tool: &'static str, risk: &'static str) -> Allowed {
    Allowed { path, kind, default: true, tool, risk }
}

const fn off(path: &'static str, kind: Kind, tool: &'static str, risk: &'static str) -> Allowed {
    Allowed { path, kind, default: false, tool, risk }
}

const HISTORY: &str = "a planted line is only recalled (Up, Ctrl-R, !!); it runs if the user runs it again";

#[rustfmt::skip]
pub const HOME_ALLOW: &[Allowed] = &[
    on(".bash_history", F, "bash", HISTORY),
    on(".zsh_history", F, "zsh (oh-my-zsh's HISTFILE)", HISTORY),
    on(".zhistory", F, "zsh (prezto's HISTFILE)", HISTORY),
    on(".histfile", F, "zsh (zsh-newuser-install's HISTFILE)", HISTORY),
    on(".local/share/fish/fish_history", F, "fish", HISTORY),
    on(".python_history", F, "python REPL", HISTORY),
    on(".node_repl_history", F, "node REPL", HISTORY),
    on(".psql_history", F, "psql", HISTORY),
    on(".sqlite_history", F, "sqlite3", HISTORY),
    on(".mysql_history", F, "mysql", HISTORY),
    on(".lesshst", F, "less", "search and shell-command history of less: recalled, run only if the user runs it again"),
    on(".local/share/lesshst", F, "less (XDG_DATA_HOME)", "as .lesshst"),
    on(".local/state/lesshst", F, "less (XDG_STATE_HOME)", "as .lesshst"),
    on(".wget-hsts", F, "wget", "HSTS records: removing one lets a later wget use plain HTTP for that host"),
    on(".viminfo", F, "vim", "registers, marks and command history: text a user may replay (@:), never run by itself"),
    // nvim's state directory by its data only: lazy.nvim sources lazy/pkg-cache.lua there at
    // every start, :loadview sources view/, persistence.nvim sessions/ (round 7's H1)
    on(".local/state/nvim/shada", D, "nvim (ShaDa: main.shada and its temporary copies)", "read at start as registers, marks, histories and saved variables: text recalled or shown, as .viminfo; nvim never sources it"),
    on(".local/state/nvim/swap", D, "nvim (swap files)", "read only when the user answers (R)ecover: the text of a buffer, never sourced"),
    on(".local/state/nvim/undo", D, "nvim (persistent undo, 'undofile')", "read when the file is opened, as undo history of its text; nothing in it is run"),
    on(".local/state/nvim/log", F, "nvim (log file, 0.9)", "nvim appends to it and never reads it back"),
    on(".local/state/nvim/nvim.log", F, "nvim (log file, 0.10+)", "nvim appends to it and never reads it back"),
    on(".local/state/nvim/lsp.log", F, "nvim's LSP client", "appended to, read only by :LspLog, which shows it"),
    on(".npm/_logs", D, "npm (writable in srt 0.0.83 too)", "npm writes its debug logs there and never reads them back"),
    on(".claude/debug", D, "Claude Code (writable in srt 0.0.83 too)", "debug logs; not read as configuration"),
    off(".cache/pip", D, "pip", "a later host pip install may install a planted wheel or cached response (hashes are checked only with --require-hashes)"),
    off(".cache/uv", D, "uv", "a later host uv installs cached wheels and built distributions without rebuilding"),
    off(".cache/pypoetry", D, "poetry", "virtualenvs/ are the environments poetry run and poetry shell execute"),
    off(".local/share/virtualenvs", D, "pipenv", "the environments pipenv run executes"),
    off(".cache/go-build", D, "go", "a later host go build links cached results without recompiling"),
    off("go/pkg/mod", D, "go", "go.sum is checked when a module is downloaded, not when the cached copy is built; go mod verify finds changes"),
    off(".cargo/registry", D, "cargo", "extracted crate sources (build.rs, proc macros) a later host cargo build compiles and runs"),
    off(".cargo/git", D, "cargo", "checkouts of git dependencies a later host cargo build compiles and runs"),
    off(".npm", D, "npm", "npx runs packages from its cache (_npx); cache index entries decide what a later install unpacks"),
    off(".cache/yarn", D, "yarn v1", "packages a later host yarn install links"),
    off(".yarn/berry", D, "yarn 2+", "the global cache a later host yarn install links"),
    off(".local/share/pnpm/store", D, "pnpm", "the content store a later host pnpm install links; its integrity records live beside it"),
    off(".cache/node/corepack", D, "corepack", "the package manager releases the yarn and pnpm shims run"),
    off(".cache/node-gyp", D, "node-gyp", "headers compiled into every native addon a later host build makes"),
    off(".cache/pre-commit", D, "pre-commit", "hook repositories and their environments, run by the next host git commit in every repository using pre-commit"),
    off(".m2/repository", D, "maven", "artifacts and plugins a later host build runs; checksums are checked on download only"),
    off(".gradle/caches", D, "gradle", "dependencies and compiled build scripts a later host build runs (unless dependency verification is on)"),
    off(".gradle/wrapper", D, "gradle wrapper", "the Gradle distributions ./gradlew runs"),
    off(".nuget/packages", D, "dotnet/NuGet", "packages, with the MSBuild targets they carry, a later host build imports"),
    off(".gem", D, "gem --user-install", "gems a later host ruby loads"),
    off(".local/share/gem", D, "gem (XDG user install)", "gems a later host ruby loads"),
    off(".cache/composer", D, "composer", "package archives a later host install unpacks"),
    off(".cache/ms-playwright", D, "playwright", "browser binaries later host tests run"),
    off(".cache/puppeteer", D, "puppeteer", "browser binaries later host scripts run"),
    off(".cache/huggingface", D, "Hugging Face libraries", "model files (pickles) and trust_remote_code modules a later host load runs"),
    off(".cache/bazel", D, "bazel", "action outputs a later host build reuses"),
    off(".cache/ccache", D, "ccache", "object files a later host compile returns instead of compiling"),
    off(".ccache", D, "ccache (older default)", "as .cache/ccache"),
    off(".cache/sccache", D, "sccache", "as .cache/ccache"),
    off(".cache/deno", D, "deno", "remote modules a later host deno runs without a lock file"),
];

/// Allow entries inside a protected home entry, and why that is safe.
#[rustfmt::skip]
pub const ALLOW_OVERLAPS: &[(&str, &str, &str)] = &[
    (".local/share/fish/fish_history", ".local/share/fish", "the history file only; generated_completions/ stays protected"),
    (".claude/debug", ".claude", "srt 0.0.83 makes it writable too; Claude Code never reads it as configuration"),
    (".local/share/pnpm/store", ".local/share/pnpm", "the store only; the bin directory on PATH stays protected"),
];

/// Protected entries inside an allowed directory (the reverse of [`ALLOW_OVERLAPS`]): the
/// directory stays writable, the entry never is. None today: the allowed directories hold one
/// kind of data each, and `~/.local/state/nvim/trust` lies beside them.
pub const PROTECTED_IN_ALLOWED: &[(&str, &str, &str)] = &[];

/// Variables that move a tool's cache, so a sandbox can be given caches of its own that no
/// host tool reads: builds keep their speed and nothing the command leaves is trusted by
/// the host. `XDG_CACHE_HOME` moves most of `.cache`.
#[rustfmt::skip]
pub const CACHE_ENV: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", ".cache (pip, uv, go-build, pre-commit, yarn, corepack, playwright...)"),
    ("npm_config_cache", ".npm"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("GOCACHE", ".cache/go-build"),
    ("GOMODCACHE", "go/pkg/mod"),
    ("PRE_COMMIT_HOME", ".cache/pre-commit"),
    ("COREPACK_HOME", ".cache/node/corepack"),
    ("YARN_CACHE_FOLDER", ".cache/yarn"),
    ("NUGET_PACKAGES", ".nuget/packages"),
    ("PLAYWRIGHT_BROWSERS_PATH", ".cache/ms-playwright"),
    ("HF_HOME", ".cache/huggingface"),
    ("CCACHE_DIR", ".cache/ccache"),
    ("SCCACHE_DIR", ".cache/sccache"),
];
