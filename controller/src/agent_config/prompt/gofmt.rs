//! Go's fmt as a template reaches it: how an action prints its value (`fmt.Fprint`), and
//! `print`, `printf` and `println` (`fmt.Sprint`, `Sprintf`, `Sprintln`) over the values of
//! [`Value`]: verbs, flags, width and precision, and fmt's in-band complaints
//! (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`, `%!(NOVERB)`).

use super::quote;
use super::value::{Value, CONTEXT_TYPE, FIELDS};

/// What Go's fmt formats but srt-controller does not, named.
#[derive(Debug, PartialEq)]
pub struct Refused(pub String);

type Fmt = Result<(), Refused>;

#[derive(Default, Clone, Copy)]
struct Flags {
    sharp: bool,
    zero: bool,
    plus: bool,
    minus: bool,
    space: bool,
    sharp_v: bool,
    plus_v: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

#[derive(Default)]
struct Printer {
    out: String,
    f: Flags,
}

impl Printer {
    fn write_padding(&mut self, n: usize) -> Fmt {
        if n == 0 {
            return Ok(());
        }
        if self.f.zero {
            // Go pads strings with zeros here; newer releases may not: not guessed at.
            return Err(Refused("the 0 flag on a value that is not a number".into()));
        }
        self.out.extend(std::iter::repeat_n(' ', n));
        Ok(())
    }

    /// fmt's `pad`/`padString`: to the width in runes, left unless `-`.
    fn pad(&mut self, s: &str) -> Fmt {
        let n = self.f.wid.unwrap_or(0).saturating_sub(s.chars().count());
        if self.f.minus {
            self.out.push_str(s);
            self.write_padding(n)
        } else {
            self.write_padding(n)?;
            self.out.push_str(s);
            Ok(())
        }
    }

    fn truncate<'s>(&self, s: &'s str) -> &'s str {
        match self.f.prec.and_then(|p| s.char_indices().nth(p)) {
            Some((i, _)) => &s[..i],
            None => s,
        }
    }

    fn bad_verb(&mut self, verb: char, v: &Value) -> Fmt {
        self.out.push_str("%!");
        self.out.push(verb);
        self.out.push('(');
        if matches!(v, Value::Nil) {
            self.out.push_str("<nil>");
        } else {
            self.out.push_str(v.type_name());
            self.out.push('=');
            self.print_arg(v, 'v')?;
        }
        self.out.push(')');
        Ok(())
    }

    fn print_arg(&mut self, v: &Value, verb: char) -> Fmt {
        match v {
            Value::Nil if verb == 'T' || verb == 'v' => return self.pad("<nil>"),
            Value::Nil => return self.bad_verb(verb, v),
            _ if verb == 'T' => {
                let t = self.truncate(v.type_name());
                return self.pad(t);
            }
            Value::List(_) if verb == 'p' => return Err(Refused("%p (a list's address)".into())),
            _ if verb == 'p' => return self.bad_verb(verb, v),
            _ => {}
        }
        match v {
            Value::Bool(b) if verb == 't' || verb == 'v' => self.pad(if *b { "true" } else { "false" }),
            Value::Int(i) => self.integer(*i as u64, true, verb, v),
            Value::Byte(b) => self.integer(u64::from(*b), false, verb, v),
            Value::Str(s) => self.string(s, verb, v),
            Value::List(items) => {
                if self.f.sharp_v {
                    self.out.push_str("[]string");
                    if items.is_empty() {
                        self.out.push_str("(nil)");
                        return Ok(());
                    }
                }
                self.out.push(if self.f.sharp_v { '{' } else { '[' });
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                    }
                    self.string(item, verb, &Value::str(item))?;
                }
                self.out.push(if self.f.sharp_v { '}' } else { ']' });
                Ok(())
            }
            Value::Context(_) => {
                if self.f.sharp_v {
                    self.out.push_str(CONTEXT_TYPE);
                }
                self.out.push('{');
                for (i, name) in FIELDS.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                    }
                    if self.f.plus_v || self.f.sharp_v {
                        self.out.push_str(name);
                        self.out.push(':');
                    }
                    self.print_arg(&v.field(name).unwrap_or(Value::Nil), verb)?;
                }
                self.out.push('}');
                Ok(())
            }
            _ => self.bad_verb(verb, v),
        }
    }

    fn string(&mut self, s: &str, verb: char, v: &Value) -> Fmt {
        match verb {
            'v' if self.f.sharp_v => self.quoted(s),
            'v' | 's' => {
                let t = self.truncate(s);
                self.pad(t)
            }
            'x' | 'X' => self.hex_bytes(s.as_bytes(), verb == 'X'),
            'q' => self.quoted(s),
            _ => self.bad_verb(verb, v),
        }
    }

    fn quoted(&mut self, s: &str) -> Fmt {
        let s = self.truncate(s);
        if self.f.sharp && quote::can_backquote(s) {
            return self.pad(&format!("`{s}`"));
        }
        let q = quote::quote(s, self.f.plus);
        self.pad(&q)
    }

    /// fmt's `fmtSbx`: a string's bytes in hex, `% x` spaced, `%#x` prefixed.
    fn hex_bytes(&mut self, b: &[u8], upper: bool) -> Fmt {
        let length = self.f.prec.map_or(b.len(), |p| p.min(b.len()));
        let wid = self.f.wid.unwrap_or(0);
        if length == 0 {
            return self.write_padding(wid);
        }
        let mut width = 2 * length;
        if self.f.space {
            if self.f.sharp {
                width *= 2;
            }
            width += length - 1;
        } else if self.f.sharp {
            width += 2;
        }
        if wid > width && !self.f.minus {
            self.write_padding(wid - width)?;
        }
        let prefix = if upper { "0X" } else { "0x" };
        if self.f.sharp {
            self.out.push_str(prefix);
        }
        for (i, byte) in b[..length].iter().enumerate() {
            if self.f.space && i > 0 {
                self.out.push(' ');
                if self.f.sharp {
                    self.out.push_str(prefix);
                }
            }
            self.out.push_str(&if upper { format!("{byte:02X}") } else { format!("{byte:02x}") });
        }
        if wid > width && self.f.minus {
            self.write_padding(wid - width)?;
        }
        Ok(())
    }

    fn integer(&mut self, u: u64, signed: bool, verb: char, v: &Value) -> Fmt {
        match verb {
            'v' if self.f.sharp_v && !signed => {
                let sharp = self.f.sharp;
                self.f.sharp = true;
                let r = self.digits(u, 16, signed, verb, false);
                self.f.sharp = sharp;
                r
            }
            'v' | 'd' => self.digits(u, 10, signed, verb, false),
            'b' => self.digits(u, 2, signed, verb, false),
            'o' | 'O' => self.digits(u, 8, signed, verb, false),
            'x' | 'X' => self.digits(u, 16, signed, verb, verb == 'X'),
            'c' => {
                let c = u32::try_from(u).ok().and_then(char::from_u32).unwrap_or('\u{fffd}');
                self.pad(c.encode_utf8(&mut [0; 4]))
            }
            'q' => {
                let q = quote::quote_rune(u, self.f.plus);
                self.pad(&q)
            }
            'U' => {
                let mut s = format!("U+{u:0width$X}", width = self.f.prec.filter(|p| *p > 4).unwrap_or(4));
                let printable = u32::try_from(u).ok().and_then(char::from_u32).filter(|c| quote::is_print(*c));
                if let Some(c) = printable.filter(|_| self.f.sharp) {
                    s.push_str(&format!(" '{c}'"));
                }
                self.unpadded_zero(|p| p.pad(&s))
            }
            _ => self.bad_verb(verb, v),
        }
    }

    fn unpadded_zero(&mut self, f: impl FnOnce(&mut Self) -> Fmt) -> Fmt {
        let zero = self.f.zero;
        self.f.zero = false;
        let r = f(self);
        self.f.zero = zero;
        r
    }

    /// fmt's `fmtInteger`: precision or `0` as leading zeros, `#` prefixes, the sign.
    fn digits(&mut self, u: u64, base: u32, signed: bool, verb: char, upper: bool) -> Fmt {
        let negative = signed && (u as i64) < 0;
        let u = if negative { u.wrapping_neg() } else { u };
        let mut prec = 0;
        if let Some(p) = self.f.prec {
            prec = p;
            if p == 0 && u == 0 {
                let wid = self.f.wid.unwrap_or(0);
                return self.unpadded_zero(|s| s.write_padding(wid));
            }
        } else if let Some(wid) = self.f.wid.filter(|_| self.f.zero) {
            prec = if negative || self.f.plus || self.f.space { wid.saturating_sub(1) } else { wid };
        }
        let mut digits = match (base, upper) {
            (2, _) => format!("{u:b}"),
            (8, _) => format!("{u:o}"),
            (16, false) => format!("{u:x}"),
            (16, true) => format!("{u:X}"),
            _ => u.to_string(),
        };
        if digits.len() < prec {
            digits.insert_str(0, &"0".repeat(prec - digits.len()));
        }
        let mut s = String::new();
        if negative {
            s.push('-');
        } else if self.f.plus {
            s.push('+');
        } else if self.f.space {
            s.push(' ');
        }
        if verb == 'O' {
            s.push_str("0o");
        }
        if self.f.sharp {
            match base {
                2 => s.push_str("0b"),
                8 if !digits.starts_with('0') => s.push('0'),
                16 => s.push_str(if upper { "0X" } else { "0x" }),
                _ => {}
            }
        }
        s.push_str(&digits);
        self.unpadded_zero(|p| p.pad(&s))
    }
}

/// `fmt.Sprint`: a space between operands when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut p = Printer::default();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, Value::Str(_));
        if i > 0 && !is_string && !prev_string {
            p.out.push(' ');
        }
        // %v without flags refuses nothing.
        let _ = p.print_arg(a, 'v');
        prev_string = is_string;
    }
    p.out
}

/// `fmt.Sprintln`.
pub fn sprintln(args: &[Value]) -> String {
    let mut p = Printer::default();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            p.out.push(' ');
        }
        let _ = p.print_arg(a, 'v');
    }
    p.out.push('\n');
    p.out
}

/// Digits at `format[i..]`, as fmt's `parsenum`: (number, present, index after).
fn parse_num(format: &[u8], mut i: usize) -> (usize, bool, usize) {
    let mut num = 0usize;
    let mut present = false;
    while let Some(d) = format.get(i).filter(|b| b.is_ascii_digit()) {
        if num > 1_000_000 {
            return (0, false, format.len());
        }
        num = num * 10 + usize::from(d - b'0');
        present = true;
        i += 1;
    }
    (num, present, i)
}

/// `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> Result<String, Refused> {
    let b = format.as_bytes();
    let end = b.len();
    let mut p = Printer::default();
    let mut arg = 0;
    let mut i = 0;
    while i < end {
        let start = i;
        while i < end && b[i] != b'%' {
            i += 1;
        }
        p.out.push_str(&format[start..i]);
        if i >= end {
            break;
        }
        i += 1;
        p.f = Flags::default();
        while let Some(&c) = b.get(i) {
            match c {
                b'#' => p.f.sharp = true,
                b'0' => p.f.zero = !p.f.minus,
                b'+' => p.f.plus = true,
                b'-' => {
                    p.f.minus = true;
                    p.f.zero = false;
                }
                b' ' => p.f.space = true,
                _ => break,
            }
            i += 1;
        }
        let refuse_index = |i: usize| match b.get(i) {
            Some(b'[') => Err(Refused("printf argument index ([n])".into())),
            Some(b'*') => Err(Refused("printf width or precision from an argument (*)".into())),
            _ => Ok(()),
        };
        refuse_index(i)?;
        let (wid, present, next) = parse_num(b, i);
        p.f.wid = present.then_some(wid);
        i = next;
        if i + 1 < end && b[i] == b'.' {
            i += 1;
            refuse_index(i)?;
            let (prec, _, next) = parse_num(b, i);
            p.f.prec = Some(prec);
            i = next;
        }
        refuse_index(i)?;
        let Some(verb) = format.get(i..).and_then(|rest| rest.chars().next()) else {
            p.out.push_str("%!(NOVERB)");
            break;
        };
        i += verb.len_utf8();
        match (verb, args.get(arg)) {
            ('%', _) => p.out.push('%'),
            (_, None) => {
                p.out.push_str("%!");
                p.out.push(verb);
                p.out.push_str("(MISSING)");
            }
            (_, Some(a)) => {
                if verb == 'v' {
                    p.f.sharp_v = p.f.sharp;
                    p.f.sharp = false;
                    p.f.plus_v = p.f.plus;
                    p.f.plus = false;
                }
                p.print_arg(a, verb)?;
                arg += 1;
            }
        }
    }
    if arg < args.len() {
        p.f = Flags::default();
        p.out.push_str("%!(EXTRA ");
        for (n, a) in args[arg..].iter().enumerate() {
            if n > 0 {
                p.out.push_str(", ");
            }
            if matches!(a, Value::Nil) {
                p.out.push_str("<nil>");
            } else {
                p.out.push_str(a.type_name());
                p.out.push('=');
                p.print_arg(a, 'v')?;
            }
        }
        p.out.push(')');
    }
    Ok(p.out)
}
