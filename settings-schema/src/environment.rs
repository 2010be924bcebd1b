//! srt-rs's `environment` key: which of srt's own environment variables the command
//! inherits. srt 0.0.83 passes its whole environment on (model API keys, cloud
//! credentials, tokens); here a policy decides, and names that look like credentials stay
//! out unless the settings name them (the runtime's `env_policy` applies it).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The command's environment. Absent: `inherit: all`, no patterns, nothing set, and
/// credential-looking names dropped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Environment {
    /// Where the command's environment starts: `all` of srt's variables (default),
    /// `core` (PATH, HOME, USER, LOGNAME, USERNAME, SHELL, LANG, LANGUAGE, LC_*, TERM,
    /// COLORTERM, TERMINFO, TZ, PWD, HOSTNAME, TMP, TEMP) or `none`. Credential-looking
    /// names are dropped from every start unless `include` names them exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherit: Option<Inherit>,
    /// Name patterns (`*` any run of characters, `?` one; case-sensitive) never passed on.
    /// Wins over `inherit` and `include`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Name patterns passed on in addition to `inherit`'s start. A credential-looking
    /// variable is passed on only when an entry is its exact name (no `*` or `?`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Variables given these values, whatever srt's environment holds (srt's own
    /// variables, such as the proxy URLs and TMPDIR, cannot be set here; a GIT_SSH_COMMAND
    /// set here gets srt's ssh options appended).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
}

/// Where the command's environment starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    /// Every variable srt has.
    #[default]
    All,
    /// Only the core set: the user, the locale, the terminal, the search path.
    Core,
    /// Nothing: only `include`, `set` and srt's own variables.
    None,
}

impl Inherit {
    pub fn as_str(self) -> &'static str {
        match self {
            Inherit::All => "all",
            Inherit::Core => "core",
            Inherit::None => "none",
        }
    }
}

/// The core set of `inherit: core`, as name patterns.
pub const CORE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "USERNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "TERMINFO",
    "TZ",
    "PWD",
    "HOSTNAME",
    "TMP",
    "TEMP",
];

/// Variables srt sets for every command itself (the sandbox marker, the private TMPDIR,
/// the proxy's variables, the resolver option of landlock mode). They replace any
/// inherited value of the same name and cannot be set in `environment.set`, but for
/// [`SRT_EXTENDED`].
pub const SRT_OWN: &[&str] = &[
    "SANDBOX_RUNTIME",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "GRPC_PROXY",
    "grpc_proxy",
    "DOCKER_HTTP_PROXY",
    "DOCKER_HTTPS_PROXY",
    "FTP_PROXY",
    "ftp_proxy",
    "RSYNC_PROXY",
    "NO_PROXY",
    "no_proxy",
    "GIT_CONFIG_PARAMETERS",
    "GIT_SSH_COMMAND",
    "CLOUDSDK_PROXY_TYPE",
    "CLOUDSDK_PROXY_ADDRESS",
    "CLOUDSDK_PROXY_PORT",
    "CLOUDSDK_PROXY_USERNAME",
    "CLOUDSDK_PROXY_PASSWORD",
    "RES_OPTIONS",
];

/// srt's variables that keep the user's own value, inherited or `set`, and add srt's after
/// it instead of replacing it. `GIT_SSH_COMMAND`: a user's command (its key, its
/// known_hosts file, a wrapper) with srt's ssh options appended; they still win over every
/// ssh config file, and the command could drop them itself, so keeping the user's part
/// loses no protection (docs/settings.md, The command's environment).
pub const SRT_EXTENDED: &[&str] = &["GIT_SSH_COMMAND"];

impl Environment {
    pub fn inherit(&self) -> Inherit {
        self.inherit.unwrap_or_default()
    }
}

/// `pattern` matches all of `name`: `*` any run of bytes (also none), `?` one byte,
/// everything else itself. Iterative with one backtrack point, so no pattern costs more
/// than `pattern.len() * name.len()` steps.
pub fn matches(pattern: &[u8], name: &[u8]) -> bool {
    matches_by(pattern, name, |p, n| p == n)
}

/// [`matches`] with `same(pattern byte, name byte)` deciding what a literal byte matches
/// (the credential rule's upper-case patterns ignore the name's case).
pub(crate) fn matches_by(pattern: &[u8], name: &[u8], same: impl Fn(u8, u8) -> bool) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || same(c, name[n]) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// A pattern without `*` or `?`: an exact name.
pub fn is_exact(pattern: &str) -> bool {
    !pattern.contains(['*', '?'])
}

/// Problems with `environment`, as (path below `environment`, message).
pub fn check(env: &Environment) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (list, entries) in [("exclude", &env.exclude), ("include", &env.include)] {
        for (i, p) in entries.iter().enumerate() {
            if let Some(why) = bad_name(p) {
                out.push((format!("{list}.{i}"), format!("\"{p}\": {why}")));
            }
        }
    }
    for (name, value) in &env.set {
        let path = format!("set.{name}");
        if let Some(why) = bad_name(name) {
            out.push((path, format!("\"{name}\": {why}")));
        } else if !is_exact(name) {
            out.push((path, format!("\"{name}\": set takes variable names, not patterns")));
        } else if SRT_OWN.contains(&name.as_str()) && !SRT_EXTENDED.contains(&name.as_str()) {
            out.push((
                path,
                format!(
                    "srt sets {name} itself for every command (the sandbox's proxy, TMPDIR and marker variables \
                     always win); remove it from environment.set"
                ),
            ));
        } else if value.contains('\0') {
            out.push((path, "the value contains a NUL character, which no environment variable can hold".into()));
        }
    }
    out
}

fn bad_name(p: &str) -> Option<&'static str> {
    if p.is_empty() {
        return Some("empty; write a variable name or a pattern such as \"MYAPP_*\"");
    }
    if p.contains('=') {
        return Some("a variable name cannot contain '='; write only the name");
    }
    if p.bytes().any(|b| !(0x21..0x7f).contains(&b)) {
        return Some("only printable ASCII without spaces is allowed in variable names");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        let m = |p: &str, n: &str| matches(p.as_bytes(), n.as_bytes());
        assert!(m("PATH", "PATH"));
        assert!(!m("PATH", "PATHS"));
        assert!(!m("PATH", "XPATH"));
        assert!(m("LC_*", "LC_ALL"));
        assert!(m("LC_*", "LC_"));
        assert!(!m("LC_*", "LANG"));
        assert!(m("*KEY*", "OPENAI_API_KEY"));
        assert!(m("*_KEY", "OPENAI_API_KEY"));
        assert!(!m("*_KEY", "OPENAI_API_KEY_ID"));
        assert!(m("A?C", "ABC"));
        assert!(!m("A?C", "AC"));
        assert!(m("*", ""));
        assert!(m("a*b*c", "aXXbYYbc"));
        assert!(!m("a*b*c", "aXXbYYb"));
        assert!(m("**", "x"));
    }

    #[test]
    fn only_names_srt_does_not_own_can_be_set() {
        let env = Environment {
            set: BTreeMap::from([
                ("HTTPS_PROXY".into(), "http://elsewhere:1".into()),
                ("TMPDIR".into(), "/x".into()),
                ("A*".into(), "1".into()),
                ("GOOD".into(), "1".into()),
                ("GIT_SSH_COMMAND".into(), "ssh -i /keys/deploy".into()),
            ]),
            include: vec!["".into(), "A=B".into(), "MYAPP_*".into()],
            exclude: vec!["WITH SPACE".into()],
            ..Environment::default()
        };
        let issues = check(&env);
        let paths: Vec<&str> = issues.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["exclude.0", "include.0", "include.1", "set.A*", "set.HTTPS_PROXY", "set.TMPDIR"],
            "{issues:?}"
        );
        assert!(issues[4].1.contains("srt sets HTTPS_PROXY itself"), "{issues:?}");
    }
}
