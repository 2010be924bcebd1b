//! The lexer's items: Go text/template's item types, keywords, and how the parser names an
//! item in its errors.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

#[derive(Debug, Clone)]
pub struct Item {
    pub kind: Kind,
    pub pos: usize,
    pub val: String,
    pub line: usize,
}

impl Kind {
    fn is_keyword(self) -> bool {
        self as u8 >= Kind::Block as u8
    }
}

impl fmt::Display for Item {
    /// As Go's parser names an item in its errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Eof => f.write_str("EOF"),
            Kind::Error => f.write_str(&self.val),
            k if k.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.len() > 10 => {
                let head: String = self.val.chars().take(10).collect();
                write!(f, "{}...", super::quote::quote(&head, false))
            }
            _ => f.write_str(&super::quote::quote(&self.val, false)),
        }
    }
}

pub fn keyword(word: &str) -> Option<Kind> {
    Some(match word {
        "." => Kind::Dot,
        "block" => Kind::Block,
        "break" => Kind::Break,
        "continue" => Kind::Continue,
        "define" => Kind::Define,
        "else" => Kind::Else,
        "end" => Kind::End,
        "if" => Kind::If,
        "range" => Kind::Range,
        "nil" => Kind::Nil,
        "template" => Kind::Template,
        "with" => Kind::With,
        _ => return None,
    })
}
