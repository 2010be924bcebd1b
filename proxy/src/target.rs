//! Request targets, parsed once and canonicalised once: everything after this (matching,
//! dialing, logging, the forwarded Host header) uses the canonical value.

use std::fmt;

use settings_schema::domain::parse_port;
use settings_schema::CanonicalHost;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: CanonicalHost,
    pub port: u16,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Why a target is malformed (answered with 400; never a policy decision).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("empty target")]
    Empty,
    #[error("user info in the target")]
    UserInfo,
    #[error("a port is required")]
    MissingPort,
    #[error("invalid port")]
    BadPort,
    #[error("control, space, '%' or non-ASCII characters in the host")]
    BadChars,
    #[error("invalid host: {0}")]
    BadHost(String),
    #[error("only http:// URLs can be forwarded; use CONNECT for https")]
    Scheme,
    #[error("origin-form request: this is a proxy, send an absolute URL or CONNECT")]
    OriginForm,
}

fn check_chars(raw: &str) -> Result<(), TargetError> {
    if raw.bytes().any(|b| b <= b' ' || b >= 0x7f || b == b'%' || b == b'\\') {
        return Err(TargetError::BadChars);
    }
    Ok(())
}

fn host(h: &str) -> Result<CanonicalHost, TargetError> {
    if h.is_empty() {
        return Err(TargetError::Empty);
    }
    CanonicalHost::parse(h).map_err(|e| TargetError::BadHost(e.to_string()))
}

/// `host:port` / `[v6]:port` (CONNECT's authority-form; SOCKS domain targets use `host`).
pub fn parse_authority(raw: &str, default_port: Option<u16>) -> Result<Target, TargetError> {
    if raw.is_empty() {
        return Err(TargetError::Empty);
    }
    check_chars(raw)?;
    if raw.contains('@') {
        return Err(TargetError::UserInfo);
    }
    let (h, p) = if raw.starts_with('[') {
        match raw.find(']') {
            Some(i) => {
                let rest = &raw[i + 1..];
                match rest.strip_prefix(':') {
                    Some(p) => (&raw[..=i], Some(p)),
                    None if rest.is_empty() => (&raw[..=i], None),
                    None => return Err(TargetError::BadHost(raw.into())),
                }
            }
            None => return Err(TargetError::BadHost(raw.into())),
        }
    } else {
        match raw.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (raw, None),
        }
    };
    let port = match (p, default_port) {
        (Some(p), _) => parse_port(p).map_err(|_| TargetError::BadPort)?,
        (None, Some(d)) => d,
        (None, None) => return Err(TargetError::MissingPort),
    };
    Ok(Target { host: host(h)?, port })
}

/// An absolute-form request target: only `http://`, default port 80.
pub fn parse_absolute(uri: &hyper::Uri) -> Result<Target, TargetError> {
    match uri.scheme_str() {
        None => return Err(TargetError::OriginForm),
        Some(s) if s.eq_ignore_ascii_case("http") => {}
        Some(_) => return Err(TargetError::Scheme),
    }
    let auth = uri.authority().ok_or(TargetError::Empty)?;
    parse_authority(auth.as_str(), Some(80))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every CONNECT row of the reference catalogue (§1.1, §1.14).
    #[test]
    fn authority_table() {
        let ok: &[(&str, &str)] = &[
            ("example.com:443", "example.com:443"),
            ("EXAMPLE.com.:443", "example.com:443"),
            ("[::1]:443", "[::1]:443"),
            ("[::ffff:127.0.0.1]:80", "127.0.0.1:80"),
            ("2130706433:8080", "127.0.0.1:8080"),
            ("0x7f.1:8080", "127.0.0.1:8080"),
            ("127.1:8080", "127.0.0.1:8080"),
            ("a_b.example.com:1", "a_b.example.com:1"),
            ("localhost:65535", "localhost:65535"),
        ];
        for (raw, want) in ok {
            assert_eq!(parse_authority(raw, None).unwrap().to_string(), *want, "{raw}");
        }
        let bad: &[(&str, TargetError)] = &[
            ("", TargetError::Empty),
            ("example.com", TargetError::MissingPort),
            ("example.com:99999", TargetError::BadPort),
            ("example.com:0", TargetError::BadPort),
            ("example.com:+443", TargetError::BadPort),
            ("example.com:0443", TargetError::BadPort),
            ("example.com:", TargetError::BadPort),
            ("u@127.0.0.1:8080", TargetError::UserInfo),
            ("allowed.com:80@evil.com:80", TargetError::UserInfo),
            (":443", TargetError::Empty),
            ("b\u{fc}cher.example:443", TargetError::BadChars),
            ("evil.com\0.x:443", TargetError::BadChars),
            ("evil.com\r\n:443", TargetError::BadChars),
            ("[fe80::1%eth0]:443", TargetError::BadChars),
            ("::ffff:127.0.0.1%x.allowed.com:443", TargetError::BadChars),
            ("a.com%2eevil.com:80", TargetError::BadChars),
            ("evil.com\\@allowed.com:80", TargetError::BadChars),
            ("exa mple.com:443", TargetError::BadChars),
        ];
        for (raw, want) in bad {
            assert_eq!(parse_authority(raw, None).unwrap_err(), *want, "{raw:?}");
        }
        for raw in ["a..b:443", ".a.com:443", "-a.com:443", "999.1.1.1:80", "::1:443", "[::1", "[nope]:1", "[::1]x"] {
            assert!(matches!(parse_authority(raw, None), Err(TargetError::BadHost(_))), "{raw}");
        }
        let long = format!("{}.com:443", "a".repeat(64));
        assert!(parse_authority(&long, None).is_err());
    }

    #[test]
    fn absolute_form() {
        let t = |s: &str| parse_absolute(&s.parse::<hyper::Uri>().unwrap());
        assert_eq!(t("http://Example.COM/x?y").unwrap().to_string(), "example.com:80");
        assert_eq!(t("http://127.0.0.1:8080/").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(t("https://example.com/").unwrap_err(), TargetError::Scheme);
        assert_eq!(t("ftp://example.com/").unwrap_err(), TargetError::Scheme);
        assert_eq!(t("/just/a/path").unwrap_err(), TargetError::OriginForm);
        assert_eq!(t("http://user:pw@example.com/").unwrap_err(), TargetError::UserInfo);
        assert_eq!(t("http://allowed.com:80@evil.com/").unwrap_err(), TargetError::UserInfo);
    }
}
