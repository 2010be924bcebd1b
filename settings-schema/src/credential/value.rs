//! The value half of the credential rule: passwords in URLs and connection strings,
//! credential fields, and tokens in their issuers' published formats. One pass over the
//! value, each position tried only by the checks that can start there, because long
//! harmless values (`LS_COLORS`, `PATH`) are read on every launch.

use super::name::credential_name;

/// The value carries a credential: a URL with a password in its user info, or a known
/// token as its user (`https://ghp_...@github.com/...`); a credential field of a
/// connection string, query, header list or JSON object (`Password=...`, `password = ...`,
/// `Authorization=Bearer ...`, `"api_key": ...`, an Azure SAS's `sig=`); an Oracle login
/// (`scott/tiger@orcl`); or a token in a provider's published format anywhere in it
/// (`sk-ant-...`, `ghp_...`, `AKIA...`, a JWT, a PEM private key).
pub fn value_holds_credential(v: &[u8]) -> bool {
    let mut may = WORD | FIELD | LOGIN;
    for (i, &c) in v.iter().enumerate() {
        if may == 0 && c != b':' && c != b'P' {
            may = AFTER[usize::from(c)];
            continue; // inside a word, as most bytes are
        }
        let here = &v[i..];
        let found = (may & WORD != 0 && TOKEN_FIRST[usize::from(c)] && token_at(here))
            || (may & FIELD != 0 && field_at(here))
            || (may & LOGIN != 0 && oracle_login_at(here))
            || (c == b':' && url_password_at(here))
            || (c == b'P' && here.starts_with(b"PRIVATE KEY-----"));
        if found {
            return true;
        }
        may = AFTER[usize::from(c)];
    }
    false
}

/// What may start after a byte (and at the value's start): a token after one that is not a
/// letter or digit; a credential field's key after one of `?&;, \t\n{`, so `PATH`-like
/// lists (`/opt/keys:/bin`) and `LS_COLORS` entries are not read as fields; an Oracle login
/// after white space or `=`. Inside a word nothing does, and that costs one lookup.
const WORD: u8 = 1;
const FIELD: u8 = 2;
const LOGIN: u8 = 4;
const AFTER: [u8; 256] = {
    let mut t = [0; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if !c.is_ascii_alphanumeric() {
            t[b] |= WORD;
        }
        if matches!(c, b'?' | b'&' | b';' | b',' | b' ' | b'\t' | b'\n' | b'{') {
            t[b] |= FIELD;
        }
        if c.is_ascii_whitespace() || c == b'=' {
            t[b] |= LOGIN;
        }
        b += 1;
    }
    t
};

/// At `://`: an authority with a password in its user info (`postgres://app:pw@db/x`,
/// `redis://:pw@cache`, `https://oauth2:glpat-...@gitlab.com/...`).
fn url_password_at(v: &[u8]) -> bool {
    let Some(rest) = v.strip_prefix(b"://") else { return false };
    let end = rest.iter().position(|c| b"/?#".contains(c) || c.is_ascii_whitespace()).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.iter().rposition(|&c| c == b'@').is_some_and(|at| authority[..at].contains(&b':'))
}

/// A `key=value`, JSON `"key": value` or header `Key: value` field whose key is a
/// credential's name (`password = x` as libpq allows, `Authorization=Basic ...` as
/// OpenTelemetry's header lists, `Authorization: Bearer ...` as `ANTHROPIC_CUSTOM_HEADERS`,
/// `api-key=...`, `"token": "..."`), `PWD` (ODBC's password), or `sig` (the signature that
/// makes an Azure shared access signature a bearer credential: `?sv=...&sig=...`).
fn field_at(v: &[u8]) -> bool {
    let key_char = |c: u8| c.is_ascii_alphanumeric() || b"_.-".contains(&c);
    let quote = |c: Option<&u8>| c.is_some_and(|c| *c == b'"' || *c == b'\'');
    let quoted = quote(v.first());
    let mut j = usize::from(quoted);
    let key_start = j;
    while v.get(j).is_some_and(|c| key_char(*c)) {
        j += 1;
    }
    let key = &v[key_start..j];
    if key.is_empty() {
        return false;
    }
    if quoted && quote(v.get(j)) {
        j += 1;
    }
    while v.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
        j += 1;
    }
    // `key=`, JSON's `"key":`, a header's `Key: ` (not `a:b` of PATH-like lists)
    let colon = v.get(j) == Some(&b':') && (quoted || v.get(j + 1).is_some_and(|c| *c == b' ' || *c == b'\t'));
    (v.get(j) == Some(&b'=') || colon)
        && (credential_name(key) || key.eq_ignore_ascii_case(b"PWD") || key.eq_ignore_ascii_case(b"SIG"))
}

/// An Oracle login as SQL*Plus, sqlldr's `userid=` and EZConnect take it:
/// `user/password@connect` (`scott/tiger@orcl`, `system/pw@//db:1521/XE`, a quoted
/// `"p@ss"`), as a whole word. Not a container digest or a version reference
/// (`org/image@sha256:...`, `actions/checkout@v4`), which have the same shape.
fn oracle_login_at(v: &[u8]) -> bool {
    if !v.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let user = v.iter().take_while(|c| c.is_ascii_alphanumeric() || b"_$#".contains(c)).count();
    let Some(rest) = v[user..].strip_prefix(b"/") else { return false };
    // its length with the quotes; `user/@...` and `user/""@...` have none
    let password = match rest.strip_prefix(b"\"") {
        Some(quoted) => quoted.iter().position(|&c| c == b'"').filter(|n| *n > 0).map_or(0, |n| n + 2),
        None => rest.iter().take_while(|c| !c.is_ascii_whitespace() && !b"/@".contains(c)).count(),
    };
    if password == 0 {
        return false;
    }
    let Some(connect) = rest[password..].strip_prefix(b"@") else { return false };
    let version = connect.first() == Some(&b'v') && connect.get(1).is_some_and(u8::is_ascii_digit);
    let digest = connect.starts_with(b"sha256:") || connect.starts_with(b"sha512:");
    connect.first().is_some_and(|c| !c.is_ascii_whitespace()) && !version && !digest
}

/// Tokens in the formats their issuers publish, each with the shortest body a real one has:
/// (prefix, minimum length of what follows, what it may hold besides letters and digits).
/// Bodies of letters and digits only where the format has no others, so a host name such
/// as `sk-agent-7d9f8b6c5-x2k4p` is not taken for a key.
const TOKEN_PREFIXES: &[(&[u8], usize, &[u8])] = &[
    (b"sk-ant-", 20, DASHES),   // Anthropic
    (b"sk-proj-", 20, DASHES),  // OpenAI project keys
    (b"sk-or-v1-", 32, DASHES), // OpenRouter
    (b"sk-", 32, b""),          // OpenAI's older keys, DeepSeek and other compatible providers
    (b"sk_live_", 24, b""),     // Stripe secret and restricted keys, live and test mode
    (b"sk_test_", 24, b""),
    (b"rk_live_", 24, b""),
    (b"rk_test_", 24, b""),
    (b"github_pat_", 20, DASHES),
    (b"ghp_", 30, b""), // GitHub personal, OAuth, user, server and refresh tokens
    (b"gho_", 30, b""),
    (b"ghu_", 30, b""),
    (b"ghs_", 30, b""),
    (b"ghr_", 30, b""),
    (b"glpat-", 20, DASHES), // GitLab: personal, runner, deploy, trigger, CI job, feed, mail,
    (b"glrt-", 20, DASHES),  // agent, OAuth application and SCIM tokens
    (b"gldt-", 20, DASHES),
    (b"glptt-", 20, DASHES),
    (b"glcbt-", 20, DASHES),
    (b"glft-", 20, DASHES),
    (b"glimt-", 20, DASHES),
    (b"glagent-", 20, DASHES),
    (b"gloas-", 20, DASHES),
    (b"glsoat-", 20, DASHES),
    (b"xoxb-", 10, DASHES), // Slack bot, user, legacy and app-level tokens
    (b"xoxp-", 10, DASHES),
    (b"xoxa-", 10, DASHES),
    (b"xapp-", 10, DASHES),
    (b"hf_", 30, b""),  // Hugging Face
    (b"npm_", 30, b""), // npm
    (b"pypi-AgE", 30, DASHES),
    (b"AIza", 35, DASHES),   // Google API keys
    (b"ya29.", 20, b"-_."),  // Google OAuth 2.0 access tokens
    (b"tskey-", 20, DASHES), // Tailscale auth, API and OAuth client keys
];

/// Base64url's two, as most formats' bodies have.
const DASHES: &[u8] = b"-_";

/// For each byte, the [`TOKEN_PREFIXES`] that start with it (a range: the table keeps them
/// together, which building this checks), so a word is compared only with those.
const TOKENS_BY_FIRST: [(u8, u8); 256] = {
    let mut t = [(0u8, 0u8); 256];
    let mut i = 0;
    while i < TOKEN_PREFIXES.len() {
        let first = TOKEN_PREFIXES[i].0[0] as usize;
        if t[first].1 == 0 {
            t[first] = (i as u8, i as u8 + 1);
        } else if t[first].1 as usize == i {
            t[first].1 += 1;
        } else {
            panic!("TOKEN_PREFIXES: keep prefixes with the same first byte together");
        }
        i += 1;
    }
    t
};

/// The bytes a token can start with, so most positions are passed over at one lookup.
const TOKEN_FIRST: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = TOKENS_BY_FIRST[i].1 > 0;
        i += 1;
    }
    t[b'A' as usize] = true; // AKIA, ASIA
    t[b'e' as usize] = true; // a JWT's eyJ
    t[b'S' as usize] = true; // SendGrid's SG.
    t[b'h' as usize] = true; // hooks.slack.com
    t
};

/// A token of [`TOKEN_PREFIXES`], an AWS access key id (`AKIA`/`ASIA` and 16 more), a JWT
/// (`eyJ...` `.` `eyJ...` `.`), a SendGrid key (`SG.` 22 `.` 43), or a Slack incoming
/// webhook (the URL is the credential), at the start of `v`.
fn token_at(v: &[u8]) -> bool {
    let b64 = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    let Some(&first) = v.first() else { return false };
    let (from, to) = TOKENS_BY_FIRST[usize::from(first)];
    for (prefix, min, extra) in &TOKEN_PREFIXES[usize::from(from)..usize::from(to)] {
        if let Some(tail) = v.strip_prefix(*prefix) {
            if tail.iter().take_while(|c| c.is_ascii_alphanumeric() || extra.contains(c)).count() >= *min {
                return true;
            }
        }
    }
    if v.starts_with(b"AKIA") || v.starts_with(b"ASIA") {
        return v[4..].iter().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit()).count() == 16;
    }
    if let Some(tail) = v.strip_prefix(b"eyJ") {
        let head = 3 + tail.iter().take_while(|c| b64(c)).count();
        if let Some(claims) = v[head..].strip_prefix(b".eyJ") {
            let n = 4 + claims.iter().take_while(|c| b64(c)).count();
            return v.get(head + n) == Some(&b'.');
        }
    }
    if let Some(tail) = v.strip_prefix(b"SG.") {
        let id = tail.iter().take_while(|c| b64(c)).count();
        return id >= 20 && tail.get(id) == Some(&b'.') && tail[id + 1..].iter().take_while(|c| b64(c)).count() >= 20;
    }
    if let Some(tail) = v.strip_prefix(b"hooks.slack.com/services/") {
        return tail.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'/').count() >= 20;
    }
    false
}
