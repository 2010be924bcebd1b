//! The command's environment: srt's own, filtered by the settings' `environment` policy,
//! with srt's variables (proxy, TMPDIR, marker) on top. srt 0.0.83 passes everything on,
//! so a prompt-injected `env | curl` sends the agent's model key to any allowed host; here
//! variables whose name or value looks like a credential stay out unless the settings
//! name them exactly. What is dropped is reported by name, never by value.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStringExt;

use settings_schema::environment::{self, Environment, Inherit, CORE};

/// The environment the command gets, and what srt left out of it.
pub struct Built {
    pub envp: Vec<CString>,
    pub report: Report,
}

/// Names srt did not pass on (never values).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Looked like a credential and no `include` entry named it exactly: (name, why).
    pub credentials: Vec<(String, Why)>,
    /// Matched an `exclude` pattern.
    pub excluded: Vec<String>,
    /// Outside the start `inherit` chose and not matched by `include`.
    pub not_inherited: Vec<String>,
}

/// Why a variable counts as a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its name (see [`credential_name`]).
    Name,
    /// Its value: a URL or connection string carrying a password.
    Value,
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.credentials.is_empty() && self.excluded.is_empty() && self.not_inherited.is_empty()
    }
}

/// Builds the command's environment from `vars` (srt's own environment) under `policy`;
/// `own` (srt's variables) replaces any of the same name and always comes last.
pub fn build(policy: &Environment, vars: Vec<(OsString, OsString)>, own: &[(String, String)]) -> Built {
    let inherit = policy.inherit();
    let mut report = Report::default();
    let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(vars.len() + own.len() + policy.set.len());
    for (k, v) in vars {
        let (k, v) = (k.into_vec(), v.into_vec());
        if own.iter().any(|(o, _)| o.as_bytes() == k) || policy.set.contains_key(&*String::from_utf8_lossy(&k)) {
            continue; // replaced below, not dropped
        }
        let shown = || String::from_utf8_lossy(&k).into_owned();
        if policy.exclude.iter().any(|p| environment::matches(p.as_bytes(), &k)) {
            report.excluded.push(shown());
            continue;
        }
        let started = match inherit {
            Inherit::All => true,
            Inherit::Core => CORE.iter().any(|p| environment::matches(p.as_bytes(), &k)),
            Inherit::None => false,
        };
        if !started && !policy.include.iter().any(|p| environment::matches(p.as_bytes(), &k)) {
            report.not_inherited.push(shown());
            continue;
        }
        if let Some(why) = credential(&k, &v) {
            // only an exact name brings a credential back: `include: ["*"]` must not
            if !policy.include.iter().any(|p| p.as_bytes() == k) {
                report.credentials.push((shown(), why));
                continue;
            }
        }
        kept.push((k, v));
    }
    kept.extend(policy.set.iter().map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes())));
    kept.extend(own.iter().map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes())));
    let envp = kept
        .into_iter()
        .filter_map(|(mut k, v)| {
            k.push(b'=');
            k.extend(v);
            CString::new(k).ok()
        })
        .collect();
    Built { envp, report }
}

/// The dropped credentials' names, those dropped for their value marked so.
fn credential_names(r: &Report) -> Vec<String> {
    r.credentials
        .iter()
        .map(|(n, why)| match why {
            Why::Name => n.clone(),
            Why::Value => format!("{n} (its value holds a password)"),
        })
        .collect()
}

/// One line naming what was left out, by name only (`-d`).
pub fn describe(r: &Report) -> String {
    let mut parts = Vec::new();
    if !r.credentials.is_empty() {
        parts.push(format!(
            "credential-looking, dropped: {} (name one in environment.include to pass it on)",
            credential_names(r).join(", ")
        ));
    }
    if !r.excluded.is_empty() {
        parts.push(format!("excluded by environment.exclude: {}", r.excluded.join(", ")));
    }
    if !r.not_inherited.is_empty() {
        parts.push(format!("not inherited: {}", r.not_inherited.join(", ")));
    }
    parts.join("; ")
}

/// `srt explain`'s section: the policy, and what it leaves out of srt's environment right
/// now (names only, never values).
pub fn explain(w: &mut String, policy: &Environment) {
    use std::fmt::Write;
    let own: Vec<(String, String)> = environment::SRT_OWN.iter().map(|n| (n.to_string(), String::new())).collect();
    let built = build(policy, std::env::vars_os().collect(), &own);
    let r = &built.report;
    let start = match policy.inherit() {
        Inherit::All => "all of srt's variables".to_string(),
        Inherit::Core => format!("the core set ({})", CORE.join(", ")),
        Inherit::None => "nothing".to_string(),
    };
    let _ = writeln!(w, "\nenvironment (names only, never values):");
    let _ = writeln!(w, "  start: {start} (environment.inherit: {})", policy.inherit().as_str());
    let _ = writeln!(
        w,
        "  dropped unless environment.include names them exactly: names with a credential word (KEY, TOKEN,"
    );
    let _ = writeln!(
        w,
        "  PASS, PAT, JWT, ...) or stem (SECRET, PASSWORD, CREDENTIAL, APIKEY, ...), and values holding a password"
    );
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    let _ = writeln!(w, "  dropped here as credentials: {}", list(&credential_names(r)));
    if !policy.exclude.is_empty() {
        let _ = writeln!(w, "  exclude {}: dropped here: {}", policy.exclude.join(", "), list(&r.excluded));
    }
    if policy.inherit() != Inherit::All {
        let _ = writeln!(w, "  not inherited here: {}", list(&r.not_inherited));
    }
    if !policy.include.is_empty() {
        let _ = writeln!(w, "  include: {}", policy.include.join(", "));
    }
    if !policy.set.is_empty() {
        let names: Vec<&str> = policy.set.keys().map(String::as_str).collect();
        let _ = writeln!(w, "  set: {}", names.join(", "));
    }
    let _ = writeln!(
        w,
        "  srt's own, replacing inherited ones: SANDBOX_RUNTIME, TMPDIR (private), the proxy variables, RES_OPTIONS"
    );
    let _ = writeln!(w, "  (landlock mode); a dropped variable the command reads is simply unset");
}

/// Why `name=value` looks like a credential, if it does.
pub fn credential(name: &[u8], value: &[u8]) -> Option<Why> {
    if credential_name(name) {
        Some(Why::Name)
    } else if value_holds_password(value) {
        Some(Why::Value)
    } else {
        None
    }
}

/// Stems that mean a secret wherever they appear in a name (`PGPASSWORD`,
/// `AZURE_CLIENT_SECRET`, `GOOGLE_APPLICATION_CREDENTIALS`, `NGROK_AUTHTOKEN`,
/// `AZURE_STORAGE_CONNECTION_STRING`). Matched case-insensitively.
const STEMS: &[&str] = &[
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "ACCESSKEY",
    "AUTHTOKEN",
    "ACCESSTOKEN",
    "PRIVATEKEY",
    "CONNECTIONSTRING",
    "CONNECTION_STRING",
];

/// Short words that mean a secret only as a whole `_`-separated word: `OPENAI_API_KEY`,
/// `GITHUB_TOKEN`, `SMTP_PASS`, `AZURE_DEVOPS_EXT_PAT`, `CI_JOB_JWT`, but not
/// `KEYTIMEOUT`, `TOKENIZERS_PARALLELISM`, `TIKTOKEN_CACHE_DIR`, `GIT_ASKPASS` or `PATH`.
const WORDS: &[&str] = &["KEY", "KEYS", "TOKEN", "PASS", "PAT", "JWT"];

/// Credential names no rule above catches, from the tools' own documentation
/// (`OP_SESSION_*`: 1Password CLI sessions).
const NAMES: &[&str] = &[
    "KUBECONFIG",
    "DOCKER_AUTH_CONFIG",
    "REDISCLI_AUTH",
    "SSHPASS",
    "NPM_CONFIG__AUTH",
    "BW_SESSION",
    "OP_SESSION_*",
    "KRB5CCNAME",
    "AZURE_CLIENT_CERTIFICATE_PATH",
];

/// The name looks like a credential's: a [`STEMS`] stem anywhere, a [`WORDS`] word, `PWD` as
/// a word of a longer name (`MYSQL_PWD`; `PWD` alone is the working directory), or one of
/// [`NAMES`]; all case-insensitive (`npm_config__auth`, `TF_TOKEN_app_terraform_io`).
pub fn credential_name(name: &[u8]) -> bool {
    let upper = name.to_ascii_uppercase();
    if STEMS.iter().any(|s| contains(&upper, s.as_bytes())) {
        return true;
    }
    let words: Vec<&[u8]> = upper.split(|&c| c == b'_').filter(|w| !w.is_empty()).collect();
    if words.iter().any(|w| WORDS.iter().any(|c| c.as_bytes() == *w)) {
        return true;
    }
    if words.len() > 1 && words.contains(&&b"PWD"[..]) {
        return true;
    }
    NAMES.iter().any(|n| environment::matches(n.as_bytes(), &upper))
}

/// A URL with a password in its user info (`postgres://app:pw@db/x`, `redis://:pw@cache`,
/// `https://oauth2:glpat-...@gitlab.com/...`), or a `password=`/`pwd=`/`passwd=` field of a
/// connection string or query (`Server=db;User Id=a;Password=...`, `jdbc:...?password=...`).
fn value_holds_password(v: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = find(&v[i..], b"://") {
        let rest = &v[i + at + 3..];
        let end = rest.iter().position(|c| b"/?#".contains(c) || c.is_ascii_whitespace()).unwrap_or(rest.len());
        let authority = &rest[..end];
        if let Some(userinfo_end) = authority.iter().rposition(|&c| c == b'@') {
            if authority[..userinfo_end].contains(&b':') {
                return true;
            }
        }
        i += at + 3;
    }
    for field in [&b"PASSWORD="[..], b"PASSWD=", b"PWD="] {
        let mut from = 0;
        while let Some(at) = find_ignore_case(&v[from..], field) {
            let pos = from + at;
            if pos == 0 || b"?&; \t\n".contains(&v[pos - 1]) {
                return true;
            }
            from = pos + 1;
        }
    }
    false
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
#[path = "env_policy_tests.rs"]
mod tests;
