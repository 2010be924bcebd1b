//! Researched data: the variables whose value at launch names something a later host
//! program runs or loads, and how their values name paths (options, lists, paths written
//! from the home). Split from [`super::home`]'s list of home files.

/// Variables whose value at launch names a file or directory some later host program
/// runs; what they name is protected like the entries above when it lies in a writable
/// tree. `PATH` is the widest: every directory in it that the command can write is a
/// place to plant a program under a common name.
#[rustfmt::skip]
pub const ENV_NAMED: &[(&str, &str)] = &[
    ("PATH", "every directory: a later shell runs what is there by name"),
    ("ENV", "sh/dash/ksh interactive startup file (dash(1) Invocation)"),
    ("BASH_ENV", "file every non-interactive bash sources (bash(1) INVOCATION)"),
    ("ZDOTDIR", "directory of zsh's startup files"),
    ("INPUTRC", "readline init file"),
    ("PYTHONSTARTUP", "file the interactive python runs (python3(1))"),
    ("PYTHONUSERBASE", "base of the user site-packages"),
    ("LESSKEYIN", "less key file with #env"),
    ("RIPGREP_CONFIG_PATH", "ripgrep config"),
    ("GIT_CONFIG_GLOBAL", "git global config"),
    ("XDG_CONFIG_HOME", "base of every .config entry above"),
    ("XDG_DATA_HOME", "base of every .local/share entry above"),
    ("CARGO_HOME", "cargo config, credentials and bin"),
    ("RUSTUP_HOME", "rustup toolchains and settings"),
    ("GOENV", "go env file"),
    ("GNUPGHOME", "gpg-agent.conf and keys"),
    ("NPM_CONFIG_USERCONFIG", "npm user config"),
    ("GRADLE_USER_HOME", "gradle init scripts and properties"),
    ("COMPOSER_HOME", "composer global config and scripts"),
    ("DOCKER_CONFIG", "docker config and cli-plugins"),
    ("KUBECONFIG", "kubeconfig files (exec plugins)"),
    ("AWS_CONFIG_FILE", "aws config (credential_process)"),
    ("CLAUDE_CONFIG_DIR", "Claude Code user configuration"),
    ("CODEX_HOME", "Codex configuration"),
    ("COPILOT_HOME", "Copilot CLI configuration"),
    // code that later programs load by path (ld.so(8), python3(1), node(1), perlrun(1),
    // ruby(1), gem(1), java(1), git(1)): a writable entry is a place to plant code that
    // runs in every such host program
    ("LD_PRELOAD", "libraries ld.so loads into every dynamically linked program"),
    ("LD_LIBRARY_PATH", "directories ld.so searches before the system's"),
    ("PYTHONPATH", "directories python imports from before the standard library"),
    ("PYTHONHOME", "the python installation every python3 runs"),
    ("NODE_PATH", "directories node's require searches"),
    ("PERL5LIB", "directories perl loads modules from"),
    ("PERLLIB", "as PERL5LIB, where that is unset"),
    ("RUBYLIB", "directories ruby requires from"),
    ("GEM_HOME", "gems (and their executables) installed and loaded"),
    ("GEM_PATH", "directories gems are loaded from"),
    ("CLASSPATH", "classes and jars java loads"),
    ("GIT_TEMPLATE_DIR", "hooks copied into every new repository"),
    ("GIT_EXEC_PATH", "git's own programs (git-*)"),
    ("GIT_CONFIG_SYSTEM", "git's system config"),
    ("PYTHONPYCACHEPREFIX", "where every python reads compiled bytecode, the standard library's too"),
    // programs named in options and commands (each absolute path in the value)
    ("NODE_OPTIONS", "--require/--import files every node loads"),
    ("JAVA_TOOL_OPTIONS", "-javaagent jars every JVM loads"),
    ("_JAVA_OPTIONS", "as JAVA_TOOL_OPTIONS"),
    ("JDK_JAVA_OPTIONS", "as JAVA_TOOL_OPTIONS, for the java launcher"),
    ("RUBYOPT", "-r files every ruby requires"),
    ("PERL5OPT", "-M modules every perl loads"),
    ("GIT_SSH_COMMAND", "the ssh git runs for every remote"),
    ("GIT_SSH", "as GIT_SSH_COMMAND"),
    ("GIT_ASKPASS", "program git runs for credentials"),
    ("SSH_ASKPASS", "program ssh runs for passphrases"),
    ("SUDO_ASKPASS", "program sudo -A runs"),
    ("EDITOR", "the editor git commit and others start"),
    ("VISUAL", "as EDITOR"),
    ("GIT_EDITOR", "as EDITOR, for git"),
    ("PAGER", "the pager man, git and others start"),
    ("GIT_PAGER", "as PAGER, for git"),
    ("LESSOPEN", "the input preprocessor less runs on every file"),
    ("BROWSER", "the browser programs open links with"),
    ("PROMPT_COMMAND", "bash code run before every prompt (the files it sources)"),
];

/// The variables of [`ENV_NAMED`] whose value is options or a command line: every absolute
/// path in it (`--require /x.js`, `-javaagent:/a.jar=opts`, `vim -u /rc`) is protected.
pub const ENV_OPTIONS: &[&str] = &[
    "NODE_OPTIONS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "RUBYOPT",
    "PERL5OPT",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "PAGER",
    "GIT_PAGER",
    "LESSOPEN",
    "BROWSER",
    "PROMPT_COMMAND",
];

/// The variables of [`ENV_NAMED`] that hold a list, and what separates their entries:
/// each entry is judged on its own (a project's `PYTHONPATH=/w/src` beside a writable
/// `/tmp/lib`).
pub const ENV_LISTS: &[(&str, &[u8])] = &[
    ("PATH", b":"),
    ("LD_PRELOAD", b": "),
    ("LD_LIBRARY_PATH", b":;"),
    ("PYTHONPATH", b":"),
    ("NODE_PATH", b":"),
    ("PERL5LIB", b":"),
    ("PERLLIB", b":"),
    ("RUBYLIB", b":"),
    ("GEM_PATH", b":"),
    ("CLASSPATH", b":"),
];

/// The entries a variable of [`ENV_NAMED`] names: the paths in an [`ENV_OPTIONS`] value,
/// else split by [`ENV_LISTS`]'s separators
/// (on bytes: a path need not be UTF-8), empty entries dropped. An entry written from the
/// home (`~/`, `$HOME/`, `${HOME}/`) is read in this process's home (`$HOME`, else the
/// password database's): a shell expands those when it runs the variable (`sh -c` for
/// `GIT_SSH_COMMAND`, `EDITOR`, `PROMPT_COMMAND`; bash looks a `PATH` entry's `~` up
/// itself), so `ssh -F ~/w/ssh_config` names `$HOME/w/ssh_config`.
pub fn env_entries(name: &str, value: &std::ffi::OsStr) -> Vec<std::path::PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(crate::paths::passwd_home)
    };
    env_entries_in(name, value, home)
}

/// [`env_entries`] with the home `~` and `$HOME` stand for, asked only when an entry needs it.
pub(crate) fn env_entries_in(
    name: &str,
    value: &std::ffi::OsStr,
    home: impl Fn() -> Option<std::path::PathBuf>,
) -> Vec<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = value.as_bytes();
    let entries: Vec<&[u8]> = if ENV_OPTIONS.contains(&name) {
        // shell-like words (quotes keep spaces in), then the parts of `key=value`,
        // `-opt:path` and `a,b` forms that are paths
        let mut words: Vec<&[u8]> = Vec::new();
        let (mut start, mut quote) = (None::<usize>, None::<u8>);
        for (i, &c) in bytes.iter().enumerate() {
            match (quote, c) {
                (Some(q), c) if c == q => {
                    words.extend(start.take().map(|s| &bytes[s..i]));
                    quote = None;
                }
                (Some(_), _) => {}
                (None, b'\'' | b'"') => {
                    words.extend(start.take().map(|s| &bytes[s..i]));
                    quote = Some(c);
                    start = Some(i + 1);
                }
                (None, b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>') => {
                    words.extend(start.take().map(|s| &bytes[s..i]));
                }
                (None, _) => {
                    start.get_or_insert(i);
                }
            }
        }
        words.extend(start.map(|s| &bytes[s..]));
        words
            .into_iter()
            .flat_map(|w| w.split(|b| b"=:,".contains(b)))
            // a path glued to a short option (`-I/lib` for perl and ruby, `-F/cfg` for ssh)
            .map(|w| match w.first() {
                Some(b'-') => &w[w.iter().take_while(|c| **c == b'-' || c.is_ascii_alphabetic()).count()..],
                _ => w,
            })
            .filter(|w| w.first() == Some(&b'/') || from_home(w).is_some())
            .collect()
    } else {
        match ENV_LISTS.iter().find(|(n, _)| *n == name) {
            Some((_, seps)) => bytes.split(|b| seps.contains(b)).collect(),
            None => vec![bytes],
        }
    };
    let mut home_dir = None;
    entries
        .into_iter()
        .filter(|e| !e.is_empty())
        .filter_map(|e| match from_home(e) {
            Some(rest) => {
                home_dir.get_or_insert_with(&home).as_ref().map(|h| h.join(std::ffi::OsStr::from_bytes(rest)))
            }
            None => Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(e))),
        })
        .collect()
}

/// What follows a home prefix (`~/`, `$HOME/`, `${HOME}/`), without leading `/`s; `None`
/// if there is none, or nothing after it: a bare `~` names the home itself, whose entries
/// the home rules judge one by one (denying it whole would also close what they allow).
fn from_home(w: &[u8]) -> Option<&[u8]> {
    let rest = [&b"~/"[..], b"$HOME/", b"${HOME}/"].iter().find_map(|p| w.strip_prefix(*p))?;
    let rest = &rest[rest.iter().take_while(|c| **c == b'/').count()..];
    (!rest.is_empty()).then_some(rest)
}
