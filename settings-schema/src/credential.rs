//! What counts as a credential in an environment variable, by its name or its value. The
//! runtime drops such variables from the commands srt runs (unless the settings name them
//! exactly); the controller excludes the ones it can see in an agent's pod by name. One
//! rule for both, so what the README promises holds in either place.

use crate::environment::matches;

/// Why a variable counts as a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its name (see [`credential_name`]).
    Name,
    /// Its value: a URL or connection string carrying a password, a credential field
    /// (`Authorization=...`, `"password": ...`), or a token in a provider's known format.
    Value,
}

/// Why `name=value` looks like a credential, if it does.
pub fn credential(name: &[u8], value: &[u8]) -> Option<Why> {
    if credential_name(name) {
        Some(Why::Name)
    } else if value_holds_credential(value) {
        Some(Why::Value)
    } else {
        None
    }
}

/// Stems that mean a secret wherever they appear in a name (`PGPASSWORD`,
/// `AZURE_CLIENT_SECRET`, `GOOGLE_APPLICATION_CREDENTIALS`, `NGROK_AUTHTOKEN`,
/// `AZURE_STORAGE_CONNECTION_STRING`, `HTTP_AUTHORIZATION`). Matched case-insensitively.
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
    "AUTHORIZATION",
];

/// Short words that mean a secret only as a whole word: `OPENAI_API_KEY`, `GITHUB_TOKEN`,
/// `SMTP_PASS`, `AZURE_DEVOPS_EXT_PAT`, `CI_JOB_JWT`, `DB_CREDS`, but not `KEYTIMEOUT`,
/// `TOKENIZERS_PARALLELISM`, `TIKTOKEN_CACHE_DIR`, `GIT_ASKPASS` or `PATH`.
const WORDS: &[&str] = &["KEY", "KEYS", "TOKEN", "PASS", "PAT", "JWT", "CREDS", "BEARER"];

/// Credential names no rule above catches, from the tools' own documentation
/// (`OP_SESSION_*`: 1Password CLI sessions; `OTEL_EXPORTER_OTLP_*HEADERS`: OpenTelemetry's
/// exporter headers, where observability vendors take their API keys; `PGPASSFILE` and
/// `NETRC`: libpq's and Go's password files).
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
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_*_HEADERS",
    "PGPASSFILE",
    "NETRC",
];

/// The name's words, in upper case: split at every character that is not a letter or a
/// digit (`github-token`, `app.key`), where lower case meets upper case (`githubToken`) and
/// where letters meet digits (`API_KEY2`, `GH_TOKEN1`).
fn words(name: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut prev: Option<u8> = None;
    for &c in name {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let camel = p.is_ascii_lowercase() && c.is_ascii_uppercase();
            let digits = p.is_ascii_digit() != c.is_ascii_digit();
            if (camel || digits) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_uppercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The name looks like a credential's: a [`STEMS`] stem anywhere, a [`WORDS`] word, `PWD` as
/// a word of a longer name (`MYSQL_PWD`; `PWD` alone is the working directory), or one of
/// [`NAMES`]; all case-insensitive (`npm_config__auth`, `TF_TOKEN_app_terraform_io`).
pub fn credential_name(name: &[u8]) -> bool {
    let upper = name.to_ascii_uppercase();
    // `_` is a separator a stem may span (`CONNECTION_STRING`); other separators are not
    let squeezed: Vec<u8> = upper.iter().copied().filter(|c| c.is_ascii_alphanumeric() || *c == b'_').collect();
    if STEMS.iter().any(|s| contains(&upper, s.as_bytes()) || contains(&squeezed, s.as_bytes())) {
        return true;
    }
    let words = words(name);
    if words.iter().any(|w| WORDS.iter().any(|c| c.as_bytes() == w.as_slice())) {
        return true;
    }
    if words.len() > 1 && words.iter().any(|w| w == b"PWD") {
        return true;
    }
    NAMES.iter().any(|n| matches(n.as_bytes(), &upper))
}

/// The value carries a credential: a URL with a password in its user info, or a known
/// token as its user (`https://ghp_...@github.com/...`); a credential field of a
/// connection string, query, header list or JSON object (`Password=...`, `password = ...`,
/// `Authorization=Bearer ...`, `"api_key": ...`); or a token in a provider's published
/// format anywhere in it (`sk-ant-...`, `ghp_...`, `AKIA...`, a JWT, a PEM private key).
pub fn value_holds_credential(v: &[u8]) -> bool {
    value_holds_password(v) || credential_field(v) || known_token(v)
}

/// A URL with a password in its user info (`postgres://app:pw@db/x`, `redis://:pw@cache`,
/// `https://oauth2:glpat-...@gitlab.com/...`), or a `password=`/`pwd=`/`passwd=` field of a
/// connection string or query (`Server=db;User Id=a;Password=...`, `jdbc:...?password=...`).
pub fn value_holds_password(v: &[u8]) -> bool {
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

/// A `key=value`, JSON `"key": value` or header `Key: value` field whose key is a
/// credential's name (`password = x` as libpq allows, `Authorization=Basic ...` as
/// OpenTelemetry's header lists, `Authorization: Bearer ...` as `ANTHROPIC_CUSTOM_HEADERS`,
/// `api-key=...`, `"token": "..."`). Keys start the value or follow one of
/// `?&;, \t\n{`, so `PATH`-like lists (`/opt/keys:/bin`) and `LS_COLORS` entries are not
/// read as fields.
fn credential_field(v: &[u8]) -> bool {
    let key_char = |c: u8| c.is_ascii_alphanumeric() || b"_.-".contains(&c);
    let mut i = 0;
    while i < v.len() {
        let starts = i == 0 || b"?&;, \t\n{".contains(&v[i - 1]);
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let quoted = v.get(j).is_some_and(|c| *c == b'"' || *c == b'\'');
        if quoted {
            j += 1;
        }
        let key_start = j;
        while j < v.len() && key_char(v[j]) {
            j += 1;
        }
        let key = &v[key_start..j];
        if quoted && v.get(j).is_some_and(|c| *c == b'"' || *c == b'\'') {
            j += 1;
        }
        while v.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
            j += 1;
        }
        // `key=`, JSON's `"key":`, a header's `Key: ` (not `a:b` of PATH-like lists)
        let colon = v.get(j) == Some(&b':') && (quoted || v.get(j + 1).is_some_and(|c| *c == b' ' || *c == b'\t'));
        let sep = v.get(j) == Some(&b'=') || colon;
        if sep && !key.is_empty() {
            let upper = key.to_ascii_uppercase();
            if credential_name(key) || upper == b"PWD" {
                return true;
            }
        }
        i = j.max(i + 1);
    }
    false
}

/// Tokens in the formats their issuers publish, each with the shortest body a real one has:
/// (prefix, minimum length of what follows, whether that may hold `-` and `_`). Bodies of
/// letters and digits only where the format has no others, so a host name such as
/// `sk-agent-7d9f8b6c5-x2k4p` is not taken for a key.
const TOKEN_PREFIXES: &[(&str, usize, bool)] = &[
    ("sk-ant-", 20, true),   // Anthropic
    ("sk-proj-", 20, true),  // OpenAI project keys
    ("sk-or-v1-", 32, true), // OpenRouter
    ("sk-", 32, false),      // OpenAI's older keys, DeepSeek and other compatible providers
    ("github_pat_", 20, true),
    ("ghp_", 30, false), // GitHub personal, OAuth, user, server and refresh tokens
    ("gho_", 30, false),
    ("ghu_", 30, false),
    ("ghs_", 30, false),
    ("ghr_", 30, false),
    ("glpat-", 20, true), // GitLab
    ("xoxb-", 10, true),  // Slack bot, user, legacy and app-level tokens
    ("xoxp-", 10, true),
    ("xoxa-", 10, true),
    ("xapp-", 10, true),
    ("hf_", 30, false),  // Hugging Face
    ("npm_", 30, false), // npm
    ("pypi-AgE", 30, true),
    ("AIza", 35, true), // Google API keys
];

/// A token of [`TOKEN_PREFIXES`], an AWS access key id (`AKIA`/`ASIA` and 16 more), a JWT
/// (`eyJ...` `.` `eyJ...` `.`), or a PEM private key, starting at a word boundary.
fn known_token(v: &[u8]) -> bool {
    if contains(v, b"PRIVATE KEY-----") {
        return true;
    }
    for i in 0..v.len() {
        if i > 0 && v[i - 1].is_ascii_alphanumeric() {
            continue; // not at a word's start
        }
        let rest = &v[i..];
        for (prefix, min, dashes) in TOKEN_PREFIXES {
            if let Some(tail) = rest.strip_prefix(prefix.as_bytes()) {
                let n = tail
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || (*dashes && (**c == b'_' || **c == b'-')))
                    .count();
                if n >= *min {
                    return true;
                }
            }
        }
        if rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA") {
            let n = rest[4..].iter().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit()).count();
            if n == 16 {
                return true;
            }
        }
        if rest.starts_with(b"eyJ") {
            let b64 = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
            let head = rest.iter().take_while(|c| b64(c)).count();
            if rest.get(head) == Some(&b'.') && rest[head + 1..].starts_with(b"eyJ") {
                let claims = rest[head + 1..].iter().take_while(|c| b64(c)).count();
                if rest.get(head + 1 + claims) == Some(&b'.') {
                    return true;
                }
            }
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
