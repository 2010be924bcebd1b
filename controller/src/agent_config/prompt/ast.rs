//! The parse tree, shaped as Go's `text/template/parse` nodes, with their positions (byte
//! offsets, for error locations) and their text as Go writes it in errors (`at <.Foo>`).

use std::fmt;

#[derive(Debug)]
pub enum Node {
    Text(String),
    Action(Pipe),
    If(Branch),
    Range(Branch),
    With(Branch),
    Break,
    Continue,
}

#[derive(Debug)]
pub struct Branch {
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Debug)]
pub struct Pipe {
    pub pos: usize,
    pub is_assign: bool,
    pub decl: Vec<Variable>,
    pub cmds: Vec<Command>,
}

#[derive(Debug)]
pub struct Variable {
    pub pos: usize,
    /// `$x` then the fields after it: `$x.A.B` is `["$x", "A", "B"]`.
    pub ident: Vec<String>,
}

#[derive(Debug)]
pub struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// An integer constant: its value, or `None` when it fits only in a `uint64` (which Go
/// refuses when it is evaluated: "overflows int").
#[derive(Debug)]
pub struct Number {
    pub text: String,
    pub value: Option<i64>,
}

#[derive(Debug)]
pub enum Arg {
    Dot(usize),
    Nil(usize),
    Bool(usize, bool),
    Number(usize, Number),
    Str {
        pos: usize,
        quoted: String,
        text: String,
    },
    /// `.A.B` as `["A", "B"]`.
    Field(usize, Vec<String>),
    Variable(Variable),
    Identifier(usize, String),
    Pipe(Box<Pipe>),
    Chain(usize, Box<Arg>, Vec<String>),
}

impl Arg {
    pub fn pos(&self) -> usize {
        match self {
            Arg::Dot(p) | Arg::Nil(p) | Arg::Bool(p, _) | Arg::Number(p, _) | Arg::Str { pos: p, .. } => *p,
            Arg::Field(p, _) | Arg::Identifier(p, _) | Arg::Chain(p, _, _) => *p,
            Arg::Variable(v) => v.pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl fmt::Display for Variable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.ident.join("."))
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            let names: Vec<String> = self.decl.iter().map(ToString::to_string).collect();
            write!(f, "{} := ", names.join(", "))?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match a {
                Arg::Pipe(p) => write!(f, "({p})")?,
                _ => write!(f, "{a}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Bool(_, b) => write!(f, "{b}"),
            Arg::Number(_, n) => f.write_str(&n.text),
            Arg::Str { quoted, .. } => f.write_str(quoted),
            Arg::Field(_, ident) => ident.iter().try_for_each(|i| write!(f, ".{i}")),
            Arg::Variable(v) => write!(f, "{v}"),
            Arg::Identifier(_, name) => f.write_str(name),
            Arg::Pipe(p) => write!(f, "{p}"),
            Arg::Chain(_, node, fields) => {
                match node.as_ref() {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    n => write!(f, "{n}")?,
                }
                fields.iter().try_for_each(|i| write!(f, ".{i}"))
            }
        }
    }
}
