//! The value half of the credential rule: passwords in URLs and connection strings,
//! credential fields, and tokens in their issuers' published formats. One pass over the
//! value, each position tried only by the checks that can start there, because long
//! harmless values (`LS_COLORS`, `PATH`) are read on every launch.

use super::name::credential_name;

/// The value carries a credential: a URL with a password in its user info, or a known
/// token as its user (`https://ghp_...@github.com/...`); a Go MySQL DSN's password
/// (`app:pw@tcp(db:3306)/x`); a credential field of a connection string, query, header
/// list or JSON object (`Password=...`, `password = ...`, `Authorization=Bearer ...`,
/// `Authorization:Bearer ...`, `"api_key": ...`, an Azure SAS's `sig=`); an Oracle login
/// (`scott/tiger@orcl`, `jdbc:oracle:thin:scott/tiger@db:1521:orcl`); a webhook URL that is
/// its own credential (Slack, Discord, Teams); or a token in a provider's published format
/// anywhere in it (`sk-ant-...`, `ghp_...`, `hvs....`, `AKIA...`, a JWT, a PEM or PGP
/// private key).
///
/// The checks it calls are kept out of line (`#[inline(never)]`): inlined, they make the
/// loop over every byte a fifth slower (cachegrind, `env_policy`'s fixture).
pub fn value_holds_credential(v: &[u8]) -> bool {
    let mut may = WORD | FIELD | LOGIN;
    for (i, &c) in v.iter().enumerate() {
        if may == 0 && c != b':' && c != b'@' {
            may = AFTER[usize::from(c)];
            continue; // inside a word, as most bytes are
        }
        let here = &v[i..];
        let found = (may & WORD != 0 && TOKEN_SECOND[usize::from(c)] != 0 && token_at(here))
            || (may & FIELD != 0 && field_at(here))
            || (may & LOGIN != 0 && oracle_login_at(here))
            || (c == b':' && matches!(here.get(1), Some(b'/' | b't' | b'o')) && colon_credential_at(here))
            || (c == b'@' && go_dsn_password_around(&v[..i], &here[1..]))
            || (c == b'-'
                && may & WORD != 0
                && matches!(here.get(1), Some(b'-' | b'B' | b'E'))
                && private_key_armour_at(here));
        if found {
            return true;
        }
        may = AFTER[usize::from(c)];
    }
    false
}

/// At a `:`, by the byte after it (`LS_COLORS` has hundreds of `:`): a URL's password
/// ([`url_password_at`]), or the Oracle login of a JDBC URL (`jdbc:oracle:thin:scott/tiger@
/// db:1521:orcl`, `:oci:`, `:oci8:`), where a login follows the driver's name rather than
/// white space or `=`.
#[inline(never)]
fn colon_credential_at(v: &[u8]) -> bool {
    let driver = match v.get(1) {
        Some(b'/') => return url_password_at(v),
        Some(b't') => &b":thin:"[..],
        Some(b'o') if v.get(4) == Some(&b':') => b":oci:",
        Some(b'o') => b":oci8:",
        _ => return false,
    };
    v.strip_prefix(driver).is_some_and(oracle_login_at)
}

/// At the `@` of a Go MySQL DSN, `user:password@protocol(address)/db` or
/// `user:password@/db` (go-sql-driver/mysql's README, "DSN (Data Source Name)"):
/// `app:s3cret@tcp(db:3306)/x`, `root:pw@unix(/run/mysqld.sock)/x`, a password with an `@`
/// of its own (the driver splits at the last). `before` and `after` are the value on
/// either side of the `@`: the password is what follows the last `:` of the last word
/// before it (after white space or `/`). Read only at an `@` that a protocol or `/`
/// follows, which few values have.
#[inline(never)]
fn go_dsn_password_around(before: &[u8], after: &[u8]) -> bool {
    let name = after.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'-').count();
    let protocol = name > 0 && after[0].is_ascii_alphabetic() && after.get(name) == Some(&b'(');
    if !protocol && after.first() != Some(&b'/') {
        return false;
    }
    let word = before.iter().rposition(|c| c.is_ascii_whitespace() || *c == b'/').map_or(before, |s| &before[s + 1..]);
    word.iter().rposition(|c| *c == b':').is_some_and(|colon| colon + 1 < word.len())
}

/// A PEM or OpenPGP private key's armour line, `-----BEGIN <label>-----` or its `END`
/// line, whose label names a private key: `RSA PRIVATE KEY`, `OPENSSH PRIVATE KEY`,
/// `ENCRYPTED PRIVATE KEY`, `PGP PRIVATE KEY BLOCK` (RFC 7468 section 2, RFC 4880 section
/// 6.2), read from the first `-` of the five or from any after it.
#[inline(never)]
fn private_key_armour_at(v: &[u8]) -> bool {
    let dashes = v.iter().take_while(|c| **c == b'-').count();
    if dashes == 0 || dashes > 5 {
        return false;
    }
    let rest = &v[dashes..];
    let Some(label) = rest.strip_prefix(b"BEGIN ").or_else(|| rest.strip_prefix(b"END ")) else { return false };
    let n = label.iter().take(64).take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b' ').count();
    label[n..].starts_with(b"-----") && label[..n].windows(11).any(|w| w == b"PRIVATE KEY")
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
#[inline(never)]
fn url_password_at(v: &[u8]) -> bool {
    let Some(rest) = v.strip_prefix(b"://") else { return false };
    let end = rest.iter().position(|c| b"/?#".contains(c) || c.is_ascii_whitespace()).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.iter().rposition(|&c| c == b'@').is_some_and(|at| authority[..at].contains(&b':'))
}

/// A `key=value`, JSON `"key": value` or header `Key: value` field whose key is a
/// credential's name (`password = x` as libpq allows, `Authorization=Basic ...` as
/// OpenTelemetry's header lists, `Authorization: Bearer ...` as `ANTHROPIC_CUSTOM_HEADERS`,
/// `Authorization:Bearer ...` as HTTP allows too (RFC 9112 section 5: `field-name ":" OWS`,
/// the white space optional), `api-key=...`, `"token": "..."`), `PWD` (ODBC's password), or
/// `sig` (the signature that makes an Azure shared access signature a bearer credential:
/// `?sv=...&sig=...`, and with it a Logic Apps or Power Automate trigger URL, where Teams
/// workflows take their messages).
#[inline(never)]
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
    // `key=`, JSON's `"key":`, a header's `Key: `, and a header without the space when its
    // name is one (`Authorization:Bearer ...`, `X-Api-Key:...`; not `pwd:ls` of a
    // `HISTIGNORE` or `a:b` of PATH-like lists)
    let colon = v.get(j) == Some(&b':') && {
        let next = v.get(j + 1);
        let header = || key.contains(&b'-') || key.eq_ignore_ascii_case(b"AUTHORIZATION");
        quoted
            || next.is_some_and(|c| *c == b' ' || *c == b'\t')
            || (next.is_some_and(|c| !c.is_ascii_whitespace()) && header())
    };
    (v.get(j) == Some(&b'=') || colon)
        && (credential_name(key) || key.eq_ignore_ascii_case(b"PWD") || key.eq_ignore_ascii_case(b"SIG"))
}

/// An Oracle login as SQL*Plus, sqlldr's `userid=` and EZConnect take it:
/// `user/password@connect` (`scott/tiger@orcl`, `system/pw@//db:1521/XE`, a quoted
/// `"p@ss"`), as a whole word. Not a container digest or a version reference
/// (`org/image@sha256:...`, `actions/checkout@v4`), which have the same shape.
#[inline(never)]
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
    // Sentry organization auth tokens (base64 JSON, `_`, a signature) and user auth
    // tokens, 64 hex (docs.sentry.io/account/auth-tokens; gitleaks' sentry rules)
    (b"sntrys_", 50, b"+/=_"),
    (b"sntryu_", 64, b""),
    // Shopify access, shared secret, custom app and private app tokens, 32 hex (gitleaks'
    // shopify rules)
    (b"shpat_", 32, b""),
    (b"shpss_", 32, b""),
    (b"shpca_", 32, b""),
    (b"shppa_", 32, b""),
    // Notion's integration secrets before `ntn_`: 43 letters and digits (trufflehog's
    // notion detector, v1)
    (b"secret_", 43, b""),
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
    // Grafana service account tokens (32, `_`, 8 hex) and Grafana Cloud tokens (base64)
    // (gitleaks' grafana rules)
    (b"glsa_", 40, b"_"),
    (b"glc_", 32, b"+/="),
    (b"gsk_", 40, b""),     // Groq API keys, 48 letters and digits (gitleaks' groq rule)
    (b"xoxb-", 10, DASHES), // Slack bot, user, legacy and app-level tokens
    (b"xoxp-", 10, DASHES),
    (b"xoxa-", 10, DASHES),
    (b"xapp-", 10, DASHES),
    (b"xai-", 64, b""), // xAI API keys, 80 letters and digits (docs.x.ai; gitleaks' xai rule)
    (b"hf_", 30, b""),  // Hugging Face
    // HashiCorp Vault service, batch and recovery tokens since Vault 1.10 (its token
    // concepts page, "Token prefixes"): service tokens are 95 characters and more, batch
    // tokens 138 and more (gitleaks' vault rules)
    (b"hvs.", 80, DASHES),
    (b"hvb.", 100, DASHES),
    (b"hvr.", 20, DASHES),
    (b"npm_", 30, b""), // npm
    (b"ntn_", 40, b""), // Notion's secrets: 11 digits, 35 letters and digits (trufflehog v2)
    (b"pypi-AgE", 30, DASHES),
    (b"AIza", 35, DASHES),   // Google API keys
    (b"ya29.", 20, b"-_."),  // Google OAuth 2.0 access tokens
    (b"tskey-", 20, DASHES), // Tailscale auth, API and OAuth client keys
    // Stripe's webhook signing secrets (docs.stripe.com/webhooks, "endpoint secret"), and
    // Svix's (Standard Webhooks), whose body is base64
    (b"whsec_", 24, b"+/="),
    // a Teams incoming webhook, `https://<org>.webhook.office.com/webhookb2/<group>@<tenant>/
    // IncomingWebhook/<id>/<owner>` (Microsoft's "Create Incoming Webhooks"; shoutrrr's
    // teams service): the URL is the credential, as a Slack webhook's
    (b"webhook.office.com/webhookb2/", 40, b"-_/@"),
    // DigitalOcean personal access, OAuth access and refresh tokens, 64 hex (gitleaks'
    // digitalocean rules)
    (b"dop_v1_", 64, b""),
    (b"doo_v1_", 64, b""),
    (b"dor_v1_", 64, b""),
    // a Discord webhook, `https://discord.com/api/webhooks/<id>/<token>`, also on
    // `canary.`/`ptb.` and the older `discordapp.com` (twilight-util's webhook::parse)
    (b"discord.com/api/webhooks/", 40, b"-_/"),
    (b"discordapp.com/api/webhooks/", 40, b"-_/"),
    (b"lin_api_", 40, b""), // Linear API keys, 40 letters and digits (gitleaks' linear rule)
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

/// For each byte a token can start with, the second bytes it can have (a set of ASCII
/// bytes), so most positions are passed over at one lookup and most words starting with
/// such a byte at a second (`LS_COLORS`'s `so=`, `di=`, `*.svg`).
const TOKEN_SECOND: [u128; 256] = {
    let mut t = [0u128; 256];
    let mut i = 0;
    while i < TOKEN_PREFIXES.len() {
        let p = TOKEN_PREFIXES[i].0;
        t[p[0] as usize] |= 1 << p[1];
        i += 1;
    }
    t[b'A' as usize] |= 1 << b'K' | 1 << b'S'; // AKIA, ASIA
    t[b'e' as usize] |= 1 << b'y'; // a JWT's eyJ
    t[b'S' as usize] |= 1 << b'G'; // SendGrid's SG.
    t[b'h' as usize] |= 1 << b'o'; // hooks.slack.com
    t
};

/// A token of [`TOKEN_PREFIXES`], an AWS access key id (`AKIA`/`ASIA` and 16 more), a JWT
/// (`eyJ...` `.` `eyJ...` `.`), a SendGrid key (`SG.` 22 `.` 43), or a Slack incoming
/// webhook (the URL is the credential), at the start of `v`.
#[inline(never)]
fn token_at(v: &[u8]) -> bool {
    let b64 = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    let (Some(&first), Some(&second)) = (v.first(), v.get(1)) else { return false };
    if second >= 128 || TOKEN_SECOND[usize::from(first)] >> second & 1 == 0 {
        return false;
    }
    let (from, to) = TOKENS_BY_FIRST[usize::from(first)];
    let second = Some(&second);
    for (prefix, min, extra) in &TOKEN_PREFIXES[usize::from(from)..usize::from(to)] {
        // the second byte tells most prefixes of a group apart at one comparison
        if prefix.get(1) != second {
            continue;
        }
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
