//! Go's `strconv` quoting rules as text/template and fmt use them: string and character
//! constants in a template, `%q`, `%#v`, and the `html`, `js` and `urlquery` escapers.

/// Go's `strconv.IsPrint`, approximated without Unicode tables: ASCII `' '..='~'`,
/// and every other character except controls, spaces other than U+0020, format characters,
/// private-use characters and non-characters. Go also counts unassigned code points as
/// not printable; here they count as printable (they only change how `%q` escapes them).
pub fn is_print(c: char) -> bool {
    let u = u32::from(c);
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    const FORMAT: &[(u32, u32)] = &[
        (0xad, 0xad),
        (0x600, 0x605),
        (0x61c, 0x61c),
        (0x6dd, 0x6dd),
        (0x70f, 0x70f),
        (0x890, 0x891),
        (0x8e2, 0x8e2),
        (0x180e, 0x180e),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x206f),
        (0xd800, 0xf8ff),
        (0xfdd0, 0xfdef),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x1343f),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0000, 0xe0fff),
        (0xf0000, 0x10ffff),
    ];
    if FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&u)) {
        return false;
    }
    // U+xxFFFE and U+xxFFFF are non-characters in every plane.
    u & 0xfffe != 0xfffe
}

const LOWER_HEX: &[u8; 16] = b"0123456789abcdef";

fn escaped_rune(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    let printable = if ascii_only { c.is_ascii() && is_print(c) } else { is_print(c) };
    if printable {
        out.push(c);
        return;
    }
    let u = u32::from(c);
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        _ if u < 0x20 || u == 0x7f => {
            out.push_str("\\x");
            out.push(char::from(LOWER_HEX[(u >> 4) as usize]));
            out.push(char::from(LOWER_HEX[(u & 0xf) as usize]));
        }
        _ if u < 0x10000 => out.push_str(&format!("\\u{u:04x}")),
        _ => out.push_str(&format!("\\U{u:08x}")),
    }
}

/// `strconv.Quote` (or `QuoteToASCII` with `ascii_only`).
pub fn quote(s: &str, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        escaped_rune(&mut out, c, '"', ascii_only);
    }
    out.push('"');
    out
}

/// `strconv.QuoteRune` (or `QuoteRuneToASCII`); a value that is no rune quotes U+FFFD.
pub fn quote_rune(r: u64, ascii_only: bool) -> String {
    let c = u32::try_from(r).ok().and_then(char::from_u32).unwrap_or('\u{fffd}');
    let mut out = String::from("'");
    escaped_rune(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}

/// `strconv.CanBackquote`.
pub fn can_backquote(s: &str) -> bool {
    s.chars().all(|c| c != '\u{feff}' && c != '`' && c != '\x7f' && (c >= ' ' || c == '\t'))
}

/// Why a quoted constant is not a Go constant (`strconv.ErrSyntax`'s text).
pub const SYNTAX: &str = "invalid syntax";

fn hex_value(b: u8) -> Option<u32> {
    char::from(b).to_digit(16)
}

/// One character or byte of a quoted constant, `strconv.UnquoteChar`: the value, whether it
/// is a byte (`\x`, octal) rather than a rune, and the rest of the input.
fn unquote_char(s: &str, quote: u8) -> Result<(u32, bool, &str), &'static str> {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else { return Err(SYNTAX) };
    if first == quote && (quote == b'\'' || quote == b'"') {
        return Err(SYNTAX);
    }
    if first != b'\\' {
        let c = s.chars().next().ok_or(SYNTAX)?;
        return Ok((u32::from(c), false, &s[c.len_utf8()..]));
    }
    let Some(&kind) = bytes.get(1) else { return Err(SYNTAX) };
    let rest = &s[2..];
    let simple = match kind {
        b'a' => Some(7),
        b'b' => Some(8),
        b'f' => Some(12),
        b'n' => Some(10),
        b'r' => Some(13),
        b't' => Some(9),
        b'v' => Some(11),
        b'\\' => Some(u32::from(b'\\')),
        b'\'' | b'"' if kind == quote => Some(u32::from(kind)),
        _ => None,
    };
    if let Some(v) = simple {
        return Ok((v, false, rest));
    }
    let (digits, radix) = match kind {
        b'x' => (2, 16),
        b'u' => (4, 16),
        b'U' => (8, 16),
        b'0'..=b'7' => (3, 8),
        _ => return Err(SYNTAX),
    };
    let all = if radix == 8 { &s[1..] } else { rest };
    let text = all.get(..digits).ok_or(SYNTAX)?;
    let mut v = 0u32;
    for b in text.bytes() {
        let d = if radix == 8 { char::from(b).to_digit(8) } else { hex_value(b) }.ok_or(SYNTAX)?;
        v = v * radix + d;
    }
    let rest = &all[digits..];
    match kind {
        b'x' => Ok((v, true, rest)),
        b'0'..=b'7' if v > 255 => Err(SYNTAX),
        b'0'..=b'7' => Ok((v, true, rest)),
        _ if char::from_u32(v).is_none() => Err(SYNTAX),
        _ => Ok((v, false, rest)),
    }
}

/// What a quoted constant in a template holds.
pub enum Unquoted {
    Text(String),
    /// Valid in Go, but its bytes are not UTF-8 (`"\xff"`).
    NotUtf8,
}

/// `strconv.Unquote` of a `"..."` or `` `...` `` constant.
pub fn unquote(quoted: &str) -> Result<Unquoted, &'static str> {
    if let Some(raw) = quoted.strip_prefix('`') {
        let body = raw.strip_suffix('`').ok_or(SYNTAX)?;
        if body.contains('`') {
            return Err(SYNTAX);
        }
        return Ok(Unquoted::Text(body.replace('\r', "")));
    }
    let body = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')).ok_or(SYNTAX)?;
    if body.contains('\n') {
        return Err(SYNTAX);
    }
    let mut bytes = Vec::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        let (v, is_byte, tail) = unquote_char(rest, b'"')?;
        if is_byte {
            bytes.push(v as u8);
        } else {
            let c = char::from_u32(v).ok_or(SYNTAX)?;
            bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        rest = tail;
    }
    Ok(String::from_utf8(bytes).map(Unquoted::Text).unwrap_or(Unquoted::NotUtf8))
}

/// A character constant (`'a'`, `'\n'`) as its rune value.
pub fn unquote_rune(quoted: &str) -> Result<i64, String> {
    let body = quoted.strip_prefix('\'').ok_or(SYNTAX)?;
    let (v, _, tail) = unquote_char(body, b'\'')?;
    if tail != "'" {
        return Err(format!("malformed character constant: {quoted}"));
    }
    Ok(i64::from(v))
}

/// `template.HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{fffd}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// `template.JSEscapeString` (non-printable characters by [`is_print`]).
pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            _ if c < ' ' => out.push_str(&format!("\\u00{:02X}", u32::from(c))),
            _ if c.is_ascii() || is_print(c) => out.push(c),
            _ => out.push_str(&format!("\\u{:04X}", u32::from(c))),
        }
    }
    out
}

/// `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(char::from(b)),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_follows_strconv() {
        assert_eq!(quote("a\"b\\\t\x01é\u{a0}\u{1f600}", false), "\"a\\\"b\\\\\\t\\x01é\\u00a0😀\"");
        assert_eq!(quote("é\u{1f600}", true), "\"\\u00e9\\U0001f600\"");
        assert_eq!(quote_rune(97, false), "'a'");
        assert_eq!(quote_rune(u64::MAX, false), "'�'");
        assert!(can_backquote("a\tb") && !can_backquote("a`b") && !can_backquote("a\nb"));
    }

    #[test]
    fn unquoting_follows_strconv() {
        let text = |q: &str| match unquote(q) {
            Ok(Unquoted::Text(t)) => t,
            _ => panic!("{q}"),
        };
        assert_eq!(text(r#""a\tb\u00e9\x41\101""#), "a\tbéAA");
        assert_eq!(text("`raw\\n\r`"), "raw\\n");
        assert_eq!(text(r#""\xc3\xa9""#), "é");
        assert!(matches!(unquote(r#""\xff""#), Ok(Unquoted::NotUtf8)));
        assert!(unquote(r#""\q""#).is_err() && unquote(r#""\'""#).is_err() && unquote(r#""\777""#).is_err());
        assert_eq!(unquote_rune("'a'"), Ok(97));
        assert_eq!(unquote_rune(r"'\n'"), Ok(10));
        assert_eq!(unquote_rune("'ab'"), Err("malformed character constant: 'ab'".into()));
    }

    #[test]
    fn escapers() {
        assert_eq!(html_escape("<a href='x'>&\"\0"), "&lt;a href=&#39;x&#39;&gt;&amp;&#34;\u{fffd}");
        assert_eq!(js_escape("it's <\t>\u{a0}é"), "it\\'s \\u003C\\u0009\\u003E\\u00A0é");
        assert_eq!(query_escape("a b&c=d/e?f~g"), "a+b%26c%3Dd%2Fe%3Ff~g");
    }
}
