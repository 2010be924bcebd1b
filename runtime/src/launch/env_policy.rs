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

pub use settings_schema::credential::{credential, credential_name, Why};

impl Report {
    pub fn is_empty(&self) -> bool {
        self.credentials.is_empty() && self.excluded.is_empty() && self.not_inherited.is_empty()
    }
}

/// Builds the command's environment from `vars` (srt's own environment) under `policy`;
/// `own` (srt's variables) replaces any of the same name and always comes last, but for
/// [`environment::SRT_EXTENDED`]: a value of those the policy let through, or `set` gave,
/// comes first and srt's after it.
pub fn build(policy: &Environment, vars: Vec<(OsString, OsString)>, own: &[(String, String)]) -> Built {
    let inherit = policy.inherit();
    let mut report = Report::default();
    let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(vars.len() + own.len() + policy.set.len());
    let extended = |k: &[u8]| environment::SRT_EXTENDED.iter().any(|e| e.as_bytes() == k);
    for (k, v) in vars {
        let (k, v) = (k.into_vec(), v.into_vec());
        let replaced = own.iter().any(|(o, _)| o.as_bytes() == k) && !extended(&k);
        if replaced || policy.set.contains_key(&*String::from_utf8_lossy(&k)) {
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
    for (k, v) in own {
        let users = if extended(k.as_bytes()) {
            kept.iter().position(|(u, _)| u == k.as_bytes()).map(|i| kept.remove(i).1)
        } else {
            None
        };
        let value = match users {
            Some(user) => extend(&user, v.as_bytes()),
            None => v.clone().into_bytes(),
        };
        kept.push((k.clone().into_bytes(), value));
    }
    let envp = kept
        .into_iter()
        .filter_map(|(k, v)| {
            // one allocation, already the size CString needs with its NUL
            let mut entry = Vec::with_capacity(k.len() + v.len() + 2);
            entry.extend_from_slice(&k);
            entry.push(b'=');
            entry.extend_from_slice(&v);
            CString::new(entry).ok()
        })
        .collect();
    Built { envp, report }
}

/// srt's `GIT_SSH_COMMAND` after a user's: the user's program and options first, srt's
/// options (`ssh` dropped) after them, where git appends the host and the remote command.
/// ssh takes the first value of most options, so one the user gave (`-o ProxyCommand=`,
/// `-J`) stands over srt's, as it would if the command set its own; srt's still stand over
/// every ssh config file, which is read after the command line. An empty user value, or an
/// srt value that is not `ssh` and options, leaves srt's alone.
fn extend(user: &[u8], srt: &[u8]) -> Vec<u8> {
    let user = user.trim_ascii_end();
    match srt.strip_prefix(b"ssh ") {
        Some(options) if !user.trim_ascii_start().is_empty() => [user, b" ", options].concat(),
        _ => srt.to_vec(),
    }
}

/// The dropped credentials' names, those dropped for their value marked so.
fn credential_names(r: &Report) -> Vec<String> {
    r.credentials
        .iter()
        .map(|(n, why)| match why {
            Why::Name => n.clone(),
            Why::Value => format!("{n} (its value holds a credential)"),
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
        "  PASS, PAT, JWT, CREDS, ...) or stem (SECRET, PASSWORD, CREDENTIAL, APIKEY, ...), and values holding a password,"
    );
    let _ = writeln!(
        w,
        "  a credential field (Authorization=, password =, \"api_key\":) or a known token (sk-ant-, ghp_, AKIA, a JWT)"
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
    let _ = writeln!(w, "  extended: LD_PRELOAD (srt's create preload last), ASAN_OPTIONS (verify_asan_link_order=0),");
    let _ = writeln!(w, "  GIT_SSH_COMMAND (a user's own command, inherited or set, with srt's ssh options after it)");
}

#[cfg(test)]
#[path = "env_policy_tests.rs"]
mod tests;
