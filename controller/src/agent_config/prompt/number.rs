//! Integer and floating-point constants as Go's `strconv` reads them (base prefixes, `_`
//! separators, overflow), for the parser's number nodes.

/// Go's `strconv.underscoreOK`: `_` only between digits, or after a base prefix.
fn underscores_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let (mut i, mut saw, mut hex) = (0, b'^', false);
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        (i, saw, hex) = (2, b'0', b[1].eq_ignore_ascii_case(&b'x'));
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Whether Go's `strconv.ParseFloat` reads `s` (no sign): decimal, or hex with a `p` exponent.
pub fn is_float(s: &str) -> bool {
    if !underscores_ok(s) {
        return false;
    }
    let s = s.replace('_', "");
    let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) else {
        return s.bytes().any(|b| b.is_ascii_digit()) && s.parse::<f64>().is_ok();
    };
    let Some((mantissa, exp)) = hex.split_once(['p', 'P']) else { return false };
    let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    let digits = mantissa.replacen('.', "", 1);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_hexdigit())
        && !exp.is_empty()
        && exp.bytes().all(|b| b.is_ascii_digit())
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no sign).
pub fn parse_uint(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (radix, digits): (u32, &str) = match lower.as_bytes() {
        [b'0', b'x', _, ..] => (16, &s[2..]),
        [b'0', b'o', _, ..] => (8, &s[2..]),
        [b'0', b'b', _, ..] => (2, &s[2..]),
        [b'0', ..] => (8, &s[1..]),
        [] => return None,
        _ => (10, s),
    };
    let mut value: u64 = 0;
    for c in digits.chars().filter(|c| *c != '_') {
        value = value.checked_mul(u64::from(radix))?.checked_add(u64::from(c.to_digit(radix)?))?;
    }
    underscores_ok(s).then_some(value)
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int(s: &str) -> Option<i64> {
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(unsigned)?;
    if negative {
        0i64.checked_sub_unsigned(u).or((u == 1 << 63).then_some(i64::MIN))
    } else {
        i64::try_from(u).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_strconv_reads_them() {
        assert_eq!(parse_int("0x_1f"), Some(31));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int("1__0"), None);
        assert_eq!(parse_int("08"), None);
        assert_eq!(parse_uint("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_int("18446744073709551615"), None);
    }
}
