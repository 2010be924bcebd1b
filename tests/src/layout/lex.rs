//! A small Rust lexer: just enough to find module paths. Comments are dropped, so a path in
//! a doc link is not an import; string contents are kept only for `#[path = "..."]`.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Str(String),
    /// `::`
    Sep,
    Punct(char),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            let start = line;
            let (s, next) = string(&c, i + 1, &mut line);
            out.push(Token { tok: Tok::Str(s), line: start });
            i = next;
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            if at(i + 1) == '\\' {
                // past the escaped character, which may itself be a quote ('\'')
                let mut j = i + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                out.push(Token { tok: Tok::Punct('\''), line });
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token { tok: Tok::Sep, line });
            i += 2;
        } else if ch == '$' && ident_char(at(i + 1)) {
            let mut j = i + 1;
            while j < c.len() && ident_char(c[j]) {
                j += 1;
            }
            out.push(Token { tok: Tok::Ident(c[i..j].iter().collect()), line });
            i = j;
        } else if ident_char(ch) {
            let mut j = i;
            while j < c.len() && ident_char(c[j]) {
                j += 1;
            }
            let word: String = c[i..j].iter().collect();
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            let str_prefix = matches!(word.as_str(), "b" | "c");
            if raw_prefix && (at(j) == '"' || at(j) == '#') {
                let mut hashes = 0;
                let mut k = j;
                while at(k) == '#' {
                    hashes += 1;
                    k += 1;
                }
                if at(k) == '"' {
                    let start = line;
                    let (s, next) = raw_string(&c, k + 1, hashes, &mut line);
                    out.push(Token { tok: Tok::Str(s), line: start });
                    i = next;
                    continue;
                }
                if word == "r" && hashes == 1 && ident_char(at(k)) {
                    // r#ident: a raw identifier.
                    let mut e = k;
                    while e < c.len() && ident_char(c[e]) {
                        e += 1;
                    }
                    out.push(Token { tok: Tok::Ident(c[k..e].iter().collect()), line });
                    i = e;
                    continue;
                }
            }
            if str_prefix && at(j) == '"' {
                let start = line;
                let (s, next) = string(&c, j + 1, &mut line);
                out.push(Token { tok: Tok::Str(s), line: start });
                i = next;
                continue;
            }
            if word == "b" && at(j) == '\'' {
                let mut k = j + 1;
                if at(k) == '\\' {
                    k += 1;
                }
                k += 1;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
                continue;
            }
            out.push(Token { tok: Tok::Ident(word), line });
            i = j;
        } else {
            out.push(Token { tok: Tok::Punct(ch), line });
            i += 1;
        }
    }
    out
}

/// Reads a string body from `i` (after the quote); returns its text and the index after it.
fn string(c: &[char], mut i: usize, line: &mut usize) -> (String, usize) {
    let mut s = String::new();
    while i < c.len() && c[i] != '"' {
        if c[i] == '\n' {
            *line += 1;
        }
        if c[i] == '\\' {
            i += 1;
            if c.get(i) == Some(&'\n') {
                *line += 1;
            }
        } else {
            s.push(c[i]);
        }
        i += 1;
    }
    (s, i + 1)
}

fn raw_string(c: &[char], mut i: usize, hashes: usize, line: &mut usize) -> (String, usize) {
    let mut s = String::new();
    while i < c.len() {
        if c[i] == '"' && (1..=hashes).all(|h| c.get(i + h) == Some(&'#')) {
            return (s, i + 1 + hashes);
        }
        if c[i] == '\n' {
            *line += 1;
        }
        s.push(c[i]);
        i += 1;
    }
    (s, i)
}
