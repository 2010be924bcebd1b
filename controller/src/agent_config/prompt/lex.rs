//! The lexer: Go text/template's items, with its rules for `{{`/`}}`, trim markers
//! (`{{- ` and ` -}}`: the `-` must be followed, or preceded, by a space, tab, CR or
//! newline, and all such characters next to the action are dropped), comments,
//! constants and keywords.

use super::item::{keyword, Item, Kind};

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(char::from(b[1]))
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(char::from(b[0])) && b[1] == b'-'
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    paren_depth: i32,
    items: Vec<Item>,
    lines: usize,
    lines_at: usize,
}

enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    Inside,
    Space,
    Identifier,
    Field(Kind),
    Char,
    Number,
    Quote,
    RawQuote,
    Done,
}

impl<'a> Lexer<'a> {
    fn line_at(&mut self, pos: usize) -> usize {
        if pos < self.lines_at {
            self.lines = 1;
            self.lines_at = 0;
        }
        self.lines += self.input[self.lines_at..pos].matches('\n').count();
        self.lines_at = pos;
        self.lines
    }

    fn emit(&mut self, kind: Kind) {
        let line = self.line_at(self.start);
        let val = self.input[self.start..self.pos].to_string();
        self.items.push(Item { kind, pos: self.start, val, line });
        self.start = self.pos;
    }

    fn error(&mut self, msg: String) -> State {
        let line = self.line_at(self.start);
        self.items.push(Item { kind: Kind::Error, pos: self.start, val: msg, line });
        State::Done
    }

    fn peek(&self) -> Option<char> {
        self.input[self.pos..].chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    /// At `}}` (`Some(false)`) or ` -}}` (`Some(true)`).
    fn at_right_delim(&self) -> Option<bool> {
        let rest = self.rest();
        if has_right_trim(rest) && rest[2..].starts_with(RIGHT) {
            Some(true)
        } else if rest.starts_with(RIGHT) {
            Some(false)
        } else {
            None
        }
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) => is_space(c) || ".,|:()".contains(c) || self.rest().starts_with(RIGHT),
        }
    }

    fn text(&mut self) -> State {
        let Some(x) = self.rest().find(LEFT) else {
            self.pos = self.input.len();
            if self.pos > self.start {
                self.emit(Kind::Text);
            }
            self.emit(Kind::Eof);
            return State::Done;
        };
        self.pos += x;
        let text_end = if has_left_trim(&self.rest()[LEFT.len()..]) {
            self.input[self.start..self.pos].trim_end_matches(is_space).len() + self.start
        } else {
            self.pos
        };
        if text_end > self.start {
            let pos = self.pos;
            self.pos = text_end;
            self.emit(Kind::Text);
            self.pos = pos;
        }
        self.start = self.pos;
        State::LeftDelim
    }

    fn left_delim(&mut self) -> State {
        self.pos += LEFT.len();
        let after = if has_left_trim(self.rest()) { 2 } else { 0 };
        if self.rest()[after..].starts_with("/*") {
            self.pos += after;
            self.start = self.pos;
            return State::Comment;
        }
        self.emit(Kind::LeftDelim);
        self.pos += after;
        self.start = self.pos;
        self.paren_depth = 0;
        State::Inside
    }

    fn comment(&mut self) -> State {
        self.pos += 2;
        let Some(i) = self.rest().find("*/") else { return self.error("unclosed comment".into()) };
        self.pos += i + 2;
        let Some(trim) = self.at_right_delim() else {
            return self.error("comment ends before closing delimiter".into());
        };
        self.pos += if trim { 2 } else { 0 } + RIGHT.len();
        if trim {
            self.pos = self.input.len() - self.rest().trim_start_matches(is_space).len();
        }
        self.start = self.pos;
        State::Text
    }

    fn right_delim(&mut self) -> State {
        let trim = has_right_trim(self.rest());
        if trim {
            self.pos += 2;
            self.start = self.pos;
        }
        self.pos += RIGHT.len();
        self.emit(Kind::RightDelim);
        if trim {
            self.pos = self.input.len() - self.rest().trim_start_matches(is_space).len();
            self.start = self.pos;
        }
        State::Text
    }

    fn inside(&mut self) -> State {
        if self.at_right_delim().is_some() {
            if self.paren_depth == 0 {
                return State::RightDelim;
            }
            return self.error("unclosed left paren".into());
        }
        let Some(c) = self.next() else { return self.error("unclosed action".into()) };
        match c {
            _ if is_space(c) => {
                self.pos -= c.len_utf8();
                return State::Space;
            }
            '=' => self.emit(Kind::Assign),
            ':' => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(Kind::Declare);
            }
            '|' => self.emit(Kind::Pipe),
            '"' => return State::Quote,
            '`' => return State::RawQuote,
            '$' => return State::Field(Kind::Variable),
            '\'' => return State::Char,
            '.' if self.peek().is_some_and(|d| !d.is_ascii_digit()) => return State::Field(Kind::Field),
            '.' | '+' | '-' | '0'..='9' => {
                self.pos -= 1;
                return State::Number;
            }
            _ if is_alphanumeric(c) => {
                self.pos -= c.len_utf8();
                return State::Identifier;
            }
            '(' => {
                self.emit(Kind::LeftParen);
                self.paren_depth += 1;
            }
            ')' => {
                self.emit(Kind::RightParen);
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error("unexpected right paren U+0029 ')'".into());
                }
            }
            _ if c.is_ascii() && !c.is_ascii_control() => self.emit(Kind::Char),
            _ => return self.error(format!("unrecognized character in action: {}", unicode_name(c))),
        }
        State::Inside
    }

    fn space(&mut self) -> State {
        let mut spaces = 0;
        while self.peek().is_some_and(is_space) {
            self.next();
            spaces += 1;
        }
        let before = &self.input[self.pos - 1..];
        if has_right_trim(before) && before[2..].starts_with(RIGHT) {
            self.pos -= 1;
            if spaces == 1 {
                return State::RightDelim;
            }
        }
        self.emit(Kind::Space);
        State::Inside
    }

    fn identifier(&mut self) -> State {
        while self.peek().is_some_and(is_alphanumeric) {
            self.next();
        }
        if !self.at_terminator() {
            return self.bad_character();
        }
        let word = &self.input[self.start..self.pos];
        let kind = match keyword(word) {
            Some(k) => k,
            None if word == "true" || word == "false" => Kind::Bool,
            None => Kind::Identifier,
        };
        self.emit(kind);
        State::Inside
    }

    fn bad_character(&mut self) -> State {
        let c = self.peek().unwrap_or('\u{fffd}');
        self.error(format!("bad character {}", unicode_name(c)))
    }

    /// A field (`.Name`) or variable (`$name`, `$`); the `.` or `$` is past.
    fn field(&mut self, kind: Kind) -> State {
        if self.at_terminator() {
            self.emit(if kind == Kind::Variable { Kind::Variable } else { Kind::Dot });
            return State::Inside;
        }
        while self.peek().is_some_and(is_alphanumeric) {
            self.next();
        }
        if !self.at_terminator() {
            return self.bad_character();
        }
        self.emit(kind);
        State::Inside
    }

    fn quoted(&mut self, quote: char, kind: Kind, what: &str) -> State {
        loop {
            match self.next() {
                Some('\\') if !matches!(self.next(), None | Some('\n')) => {}
                None | Some('\n') | Some('\\') => return self.error(format!("unterminated {what}")),
                Some(c) if c == quote => break,
                _ => {}
            }
        }
        self.emit(kind);
        State::Inside
    }

    fn raw_quote(&mut self) -> State {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                _ => {}
            }
        }
        self.emit(Kind::RawString);
        State::Inside
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }

    fn number(&mut self) -> State {
        if !self.scan_number() {
            let text = super::quote::quote(&self.input[self.start..self.pos], false);
            return self.error(format!("bad number syntax: {text}"));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = super::quote::quote(&self.input[self.start..self.pos], false);
                return self.error(format!("bad number syntax: {text}"));
            }
            self.emit(Kind::Complex);
        } else {
            self.emit(Kind::Number);
        }
        State::Inside
    }
}

/// Go's `%#U`: `U+002D '-'`.
fn unicode_name(c: char) -> String {
    if super::quote::is_print(c) {
        format!("U+{:04X} '{c}'", u32::from(c))
    } else {
        format!("U+{:04X}", u32::from(c))
    }
}

/// The items of `input`, ending with `Eof` or at the first `Error`.
pub fn lex(input: &str) -> Vec<Item> {
    let mut l = Lexer { input, pos: 0, start: 0, paren_depth: 0, items: Vec::new(), lines: 1, lines_at: 0 };
    let mut state = State::Text;
    loop {
        state = match state {
            State::Text => l.text(),
            State::LeftDelim => l.left_delim(),
            State::Comment => l.comment(),
            State::RightDelim => l.right_delim(),
            State::Inside => l.inside(),
            State::Space => l.space(),
            State::Identifier => l.identifier(),
            State::Field(kind) => l.field(kind),
            State::Char => l.quoted('\'', Kind::CharConstant, "character constant"),
            State::Number => l.number(),
            State::Quote => l.quoted('"', Kind::String, "quoted string"),
            State::RawQuote => l.raw_quote(),
            State::Done => return l.items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, String)> {
        lex(s).into_iter().map(|i| (i.kind, i.val)).collect()
    }

    #[test]
    fn trim_markers_need_a_space() {
        use Kind::*;
        let t = |s: &str| (Text, s.to_string());
        let d = |k: Kind, s: &str| (k, s.to_string());
        assert_eq!(
            kinds("a \n{{- .X -}}\n b"),
            [t("a"), d(LeftDelim, "{{"), d(Field, ".X"), d(RightDelim, "}}"), t("b"), d(Eof, "")]
        );
        assert_eq!(kinds("a {{-3}}")[2], d(Number, "-3"));
        assert_eq!(
            kinds("a {{ 3 -}} b")[1..5],
            [d(LeftDelim, "{{"), d(Space, " "), d(Number, "3"), d(RightDelim, "}}")]
        );
        assert_eq!(kinds("a {{- /* c */ -}} b"), [t("a"), t("b"), d(Eof, "")]);
    }

    #[test]
    fn errors_and_lines() {
        let items = lex("a\n{{.X\n| len}}\n{{.Agent-Name}}");
        let last = items.last().map(|i| (i.kind, i.val.clone(), i.line));
        assert_eq!(last, Some((Kind::Error, "bad character U+002D '-'".into(), 4)));
        assert_eq!(items[4].line, 3);
        assert_eq!(lex("{{/* x }}").last().map(|i| i.val.clone()), Some("unclosed comment".into()));
    }
}
