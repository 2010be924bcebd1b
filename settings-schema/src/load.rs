//! Reading and validating a settings file. Every failure names the file, the JSON path and
//! the reason, and says what to change.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::domain::{DomainPattern, ListKind};
use crate::model::{PathEntry, Settings};
use crate::suggest::nearest;

/// One problem at one JSON path (`network.allowedDomains.0`, `(root)` for the top).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0} does not exist.")]
    NotFound(PathBuf),
    #[error("{0} is empty. Delete it, or put a config in it.")]
    Empty(PathBuf),
    #[error("{path} could not be read ({source}).")]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid JSON: {message} at line {line} column {column}")]
    Json { path: PathBuf, message: String, line: usize, column: usize },
    #[error("{path} does not hold a valid config — {}", join(.issues))]
    Invalid { path: PathBuf, issues: Vec<Issue> },
}

fn join(issues: &[Issue]) -> String {
    issues.iter().map(Issue::to_string).collect::<Vec<_>>().join("; ")
}

impl SettingsError {
    pub fn issues(&self) -> &[Issue] {
        match self {
            SettingsError::Invalid { issues, .. } => issues,
            _ => &[],
        }
    }
}

/// Reads and validates `path`.
pub fn load_file(path: &Path) -> Result<Settings, SettingsError> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(SettingsError::NotFound(path.to_path_buf())),
        Err(source) => return Err(SettingsError::Unreadable { path: path.to_path_buf(), source }),
    };
    let text = String::from_utf8(text).map_err(|_| SettingsError::Json {
        path: path.to_path_buf(),
        message: "the file is not UTF-8".into(),
        line: 1,
        column: 1,
    })?;
    parse_str(&text, path)
}

/// Parses and validates settings text; `origin` is only used in messages.
pub fn parse_str(text: &str, origin: &Path) -> Result<Settings, SettingsError> {
    if text.trim().is_empty() {
        return Err(SettingsError::Empty(origin.to_path_buf()));
    }
    let invalid = |issues| SettingsError::Invalid { path: origin.to_path_buf(), issues };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SettingsError::Json {
        path: origin.to_path_buf(),
        message: strip_position(&e.to_string()),
        line: e.line(),
        column: e.column(),
    })?;
    if !value.is_object() {
        return Err(invalid(vec![Issue { path: "(root)".into(), message: "expected an object".into() }]));
    }
    let settings: Settings = serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = render_path(e.path());
        invalid(vec![describe_serde_error(&path, &e.inner().to_string())])
    })?;
    let issues = validate(&settings);
    if issues.is_empty() {
        Ok(settings)
    } else {
        Err(invalid(issues))
    }
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn render_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let parts: Vec<String> = p
        .iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect();
    if parts.is_empty() {
        "(root)".into()
    } else {
        parts.join(".")
    }
}

/// Turns serde's message into one that says what to change: unknown keys get the nearest
/// known key, missing ones are called required, type errors say what was expected.
fn describe_serde_error(path: &str, msg: &str) -> Issue {
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (key, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
        let message = match nearest(key, &known) {
            Some(s) => format!("unknown key \"{key}\"; did you mean \"{s}\"?"),
            None => format!("unknown key \"{key}\"; known keys here: {}", known.join(", ")),
        };
        // serde_path_to_error's path already ends with the offending key.
        return Issue { path: path.into(), message };
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        let path = if path == "(root)" { key.to_string() } else { format!("{path}.{key}") };
        return Issue { path, message: "Required".into() };
    }
    if msg.starts_with("data did not match any variant of untagged enum PathEntry") {
        return Issue {
            path: path.into(),
            message: "expected a path string or {\"path\": \"...\", \"literal\": true}".into(),
        };
    }
    Issue { path: path.into(), message: msg.replace("invalid type: ", "wrong type: ") }
}

/// Checks that the types alone cannot express.
pub fn validate(s: &Settings) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut push = |path: String, message: String| issues.push(Issue { path, message });
    let net = &s.network;
    let other = net.allow_other_protocols.clone().unwrap_or_default();
    for (list, kind, name) in [
        (&net.allowed_domains, ListKind::Allowed, "allowedDomains"),
        (&net.denied_domains, ListKind::Denied, "deniedDomains"),
        (&other, ListKind::Denied, "allowOtherProtocols"),
    ] {
        for (i, entry) in list.iter().enumerate() {
            if let Err(e) = DomainPattern::parse(entry, kind) {
                push(format!("network.{name}.{i}"), format!("invalid domain pattern \"{entry}\": {e}"));
            }
        }
    }
    if let Some(t) = net.first_flight_timeout.filter(|t| !(1..=3600).contains(t)) {
        push("network.firstFlightTimeout".into(), format!("{t} is not between 1 and 3600 seconds"));
    }
    if let Some(reasons) = &net.denied_domain_reasons {
        for (k, v) in reasons {
            if !net.denied_domains.contains(k) {
                push(
                    format!("network.deniedDomainReasons.{k}"),
                    format!("\"{k}\" is not an entry of deniedDomains; keys must match an entry exactly"),
                );
            }
            if v.trim().is_empty() {
                push(format!("network.deniedDomainReasons.{k}"), "reason must not be empty".into());
            }
        }
    }
    for (i, a) in net.denied_resolved_addresses.iter().flatten().enumerate() {
        if crate::cidr::Cidr::parse(a).is_none() {
            push(
                format!("network.deniedResolvedAddresses.{i}"),
                format!("\"{a}\" is not an IP address or CIDR range (IPv6 unbracketed, e.g. \"fd00::/8\")"),
            );
        }
    }
    for (key, port) in [("httpProxyPort", net.http_proxy_port), ("socksProxyPort", net.socks_proxy_port)] {
        if port == Some(0) {
            push(format!("network.{key}"), "port must be from 1 to 65535".into());
        }
    }
    for (key, present) in [
        ("mitmProxy", net.mitm_proxy.is_some()),
        ("tlsTerminate", net.tls_terminate.is_some()),
        ("parentProxy", net.parent_proxy.is_some()),
        ("filterRequest", net.filter_request.is_some()),
    ] {
        if present {
            push(format!("network.{key}"), unsupported(key));
        }
    }
    if s.credentials.is_some() {
        push("credentials".into(), unsupported("credentials"));
    }
    if s.allow_nested_user_namespaces == Some(true) {
        push(
            "allowNestedUserNamespaces".into(),
            "letting the command create namespaces is not supported; remove the key or set it to false".into(),
        );
    }
    if let Some(d) = s.mandatory_deny_search_depth {
        if !(1..=10).contains(&d) {
            push("mandatoryDenySearchDepth".into(), format!("{d} is out of range; use 1 to 10"));
        }
    }
    if let Some(env) = &s.environment {
        for (path, message) in crate::environment::check(env) {
            push(format!("environment.{path}"), message);
        }
    }
    let fs = &s.filesystem;
    let lists: [(&str, &[PathEntry], bool); 5] = [
        ("denyRead", &fs.deny_read, true),
        ("allowRead", fs.allow_read.as_deref().unwrap_or(&[]), true),
        ("listable", fs.listable.as_deref().unwrap_or(&[]), true),
        ("allowWrite", &fs.allow_write, false),
        ("denyWrite", &fs.deny_write, false),
    ];
    for (name, entries, globs_ok) in lists {
        for (i, e) in entries.iter().enumerate() {
            if let Err(msg) = crate::paths::check_entry(e, globs_ok, name == "denyRead") {
                push(format!("filesystem.{name}.{i}"), msg);
            }
        }
    }
    issues
}

fn unsupported(key: &str) -> String {
    format!(
        "\"{key}\" is an srt feature this launcher does not implement; remove it rather than run with \
         less protection than it implies"
    )
}
