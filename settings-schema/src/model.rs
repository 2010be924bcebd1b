//! The srt 0.0.83 `srt-settings.json` model (Linux-relevant fields), strict: an unknown key
//! is an error, so a typo can never silently drop a rule. Keys that only matter on macOS,
//! Windows or to srt's own implementation are accepted and ignored; security features we
//! do not implement are accepted by the parser only so validation can refuse them by name.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "srt-settings.json")]
pub struct Settings {
    /// Egress policy. `allowedDomains: []` means no network at all.
    pub network: Network,
    /// Filesystem policy: reads are allowed except `denyRead`; writes are denied except
    /// `allowWrite`, minus `denyWrite` and the mandatory denies.
    pub filesystem: Filesystem,
    /// Command pattern ("*" = all) to paths whose violations are not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_violations: Option<BTreeMap<String, Vec<String>>>,
    /// Opt in to running with weaker enforcement when a kernel feature is missing
    /// (srt: for unprivileged Docker). Same as `srt --allow-weaker`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_weaker_nested_sandbox: Option<bool>,
    /// Must be false or absent: letting the command create namespaces is not supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_nested_user_namespaces: Option<bool>,
    /// How many directory levels below the working directory are searched for
    /// dangerous files (`.git/hooks`, `.bashrc`, ...). 1 to 10, default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandatory_deny_search_depth: Option<u8>,
    /// `git.safeDirectories`: emitted as `safe.directory` git config for the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitSettings>,
    /// srt-rs: which of srt's environment variables the command inherits. Credential-looking
    /// names (API keys, tokens, passwords, cloud credentials) are dropped unless `include`
    /// names them exactly; srt's own variables (proxy URLs, TMPDIR) always win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::Environment>,
    /// Unsupported (credential masking needs TLS termination): refused when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<Value>,
    /// macOS only; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_weaker_network_isolation: Option<Value>,
    /// macOS only; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_apple_events: Option<Value>,
    /// macOS only; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_pty: Option<Value>,
    /// srt's ripgrep binary for the mandatory-deny scan; accepted and ignored (we scan in-process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ripgrep: Option<Value>,
    /// srt's apply-seccomp helper; accepted and ignored (seccomp is built in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp: Option<Value>,
    /// srt's bubblewrap path; accepted and ignored (no bubblewrap needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwrap_path: Option<Value>,
    /// srt's socat path; accepted and ignored (no socat needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socat_path: Option<Value>,
    /// srt's Java proxy agent; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_agent_jar_path: Option<Value>,
    /// Windows only; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Network {
    /// Hosts the command may reach: `example.com`, `*.example.com`, IPv4, `[IPv6]`,
    /// each with an optional `:port`.
    pub allowed_domains: Vec<String>,
    /// Hosts that are always refused, checked first. Also accepts `*` and `*:port`.
    pub denied_domains: Vec<String>,
    /// Reason text per exact `deniedDomains` entry, sent in the 403.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied_domain_reasons: Option<BTreeMap<String, String>>,
    /// No effect in the CLI (there is no ask-callback); accepted for compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict_allowlist: Option<bool>,
    /// Extra IPs / CIDRs an allowed hostname may not resolve to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied_resolved_addresses: Option<Vec<String>>,
    /// Unix socket paths the command may connect to (stream and seqpacket sockets; judged
    /// by the socket the path reaches). `/var/run/docker.sock` here hands over the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_unix_sockets: Option<Vec<String>>,
    /// Let the command create AF_UNIX sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_all_unix_sockets: Option<bool>,
    /// Let the command's servers bind any address (`0.0.0.0`, the host's addresses) as it
    /// asks. Without it, landlock mode puts them on a loopback address of the run's own;
    /// namespace mode's servers are always inside the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_local_binding: Option<bool>,
    /// macOS only; accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_mach_lookup: Option<Value>,
    /// Use an existing HTTP proxy on this loopback port instead of starting one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_proxy_port: Option<u16>,
    /// Use an existing SOCKS5 proxy on this loopback port instead of starting one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socks_proxy_port: Option<u16>,
    /// srt-rs: let TLS tunnels through whose ClientHello names no server (no SNI) or
    /// hides it (Encrypted Client Hello). Default false: such tunnels to a host name are
    /// refused, since the server they reach cannot be checked against the allowlist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_tls_without_sni: Option<bool>,
    /// srt-rs: hosts (allowedDomains patterns, and `*` or `*:port`) whose tunnels may carry
    /// protocols other than TLS and HTTP: SSH, git://, databases. Those name no host the
    /// proxy could check against the allowlist, so they pass unjudged, and only here (a
    /// host must still be in allowedDomains). Default `[]`: a tunnel's first bytes must be a
    /// TLS ClientHello or an HTTP request naming an allowed host, e.g. `["github.com:22"]`
    /// for git over ssh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_other_protocols: Option<Vec<String>>,
    /// srt-rs: seconds (1-3600) a tunnel's client has to send its first bytes (a TLS
    /// ClientHello, an HTTP request head, another protocol's opening) before the tunnel
    /// is closed. Default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_flight_timeout: Option<u64>,
    /// srt-rs: clients that ignore the proxy variables still reach allowed hosts: the
    /// command's DNS is answered by srt and its direct connections go through the proxy.
    /// Default true; `false` leaves only the proxy variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent: Option<bool>,
    /// Unsupported: refused when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitm_proxy: Option<Value>,
    /// Unsupported: refused when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_terminate: Option<Value>,
    /// Unsupported: refused when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_proxy: Option<Value>,
    /// Unsupported (a library callback in srt): refused when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_request: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Filesystem {
    /// Paths (globs allowed) the command may not read. `[]` = read everything.
    pub deny_read: Vec<PathEntry>,
    /// Paths (globs allowed) re-allowed inside `denyRead`; a deeper deny still wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_read: Option<Vec<PathEntry>>,
    /// The only places the command may write (literal paths; a trailing `/**` is dropped).
    pub allow_write: Vec<PathEntry>,
    /// Never writable, even inside `allowWrite` (deny wins). Missing paths stay uncreatable.
    pub deny_write: Vec<PathEntry>,
    /// srt-rs: paths (globs allowed, as in denyRead) below which directories may be listed
    /// although denyRead forbids reading them: names are visible, contents are not. Without
    /// it a denied directory cannot be listed, and neither can the directories above it
    /// (beside `denyRead: ["/var/run/secrets"]`, `ls /` fails). srt-controller sets it for
    /// the credential directories it denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listable: Option<Vec<PathEntry>>,
    /// Allow writing `.git/config` (hooks stay protected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_git_config: Option<bool>,
    /// No filesystem policy at all (no mandatory denies). A deliberate weakening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

/// A path entry: a string (`~` expands to `$HOME`, relative paths resolve against the
/// launcher's working directory) or `{"path": P, "literal": true}` (never a glob).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PathEntry {
    Plain(String),
    Literal(LiteralPath),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiteralPath {
    pub path: String,
    pub literal: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitSettings {
    #[serde(default)]
    pub safe_directories: Vec<String>,
}

impl PathEntry {
    pub fn as_str(&self) -> &str {
        match self {
            PathEntry::Plain(s) => s,
            PathEntry::Literal(l) => &l.path,
        }
    }
    pub fn is_literal(&self) -> bool {
        matches!(self, PathEntry::Literal(l) if l.literal)
    }
}

impl Settings {
    /// The policy used when no settings file exists: the one kagent documents
    /// (no network, writes only in `.` and `/tmp`, reads unrestricted).
    pub fn embedded_default() -> Self {
        Settings {
            network: Network::default(),
            filesystem: Filesystem {
                allow_write: vec![PathEntry::Plain(".".into()), PathEntry::Plain("/tmp".into())],
                ..Filesystem::default()
            },
            ..Settings::default()
        }
    }

    pub fn search_depth(&self) -> u8 {
        self.mandatory_deny_search_depth.unwrap_or(3)
    }

    pub fn weaker_opt_in(&self) -> bool {
        self.enable_weaker_nested_sandbox.unwrap_or(false)
    }

    /// The environment policy (the default one when the key is absent).
    pub fn environment(&self) -> std::borrow::Cow<'_, crate::environment::Environment> {
        match &self.environment {
            Some(e) => std::borrow::Cow::Borrowed(e),
            None => std::borrow::Cow::Owned(crate::environment::Environment::default()),
        }
    }
}
