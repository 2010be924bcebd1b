//! The parser: Go text/template's grammar (Go 1.26's, so `{{else with}}` too) over the
//! lexer's items, with Go's parse errors, and the constructs srt-controller refuses
//! (`{{define}}`, `{{template}}`, `{{block}}`, `call`, floating-point and complex
//! constants, `{{range $x = ...}}`) named where they stand.

use super::ast::{Arg, Branch, Command, Node, Number, Pipe, Variable};
use super::error::ParseError;
use super::item::{Item, Kind};
use super::lex::lex;
use super::number::{is_float, parse_int, parse_uint};
use super::quote::{self, Unquoted};

/// kagent's function map plus text/template's builtins (funcs.go `builtins()`).
pub const FUNCTIONS: &[&str] = &[
    "include", "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println",
    "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

enum Parsed {
    Node(Node),
    End,
    Else,
}

impl Parsed {
    fn name(&self) -> &'static str {
        match self {
            Parsed::End => "{{end}}",
            _ => "{{else}}",
        }
    }
}

/// How deep actions and parentheses may nest: deeper would risk the controller's stack.
const MAX_DEPTH: usize = 100;

struct Parser {
    depth: usize,
    items: Vec<Item>,
    cur: usize,
    furthest: usize,
    vars: Vec<String>,
    range_depth: usize,
    action_line: usize,
}

type R<T> = Result<T, ParseError>;

impl Parser {
    fn at(&mut self, i: usize) -> Item {
        let i = i.min(self.items.len().saturating_sub(1));
        self.furthest = self.furthest.max(i);
        self.items.get(i).cloned().unwrap_or(Item { kind: Kind::Eof, pos: 0, val: String::new(), line: 1 })
    }

    fn next(&mut self) -> Item {
        let item = self.at(self.cur);
        self.cur += 1;
        item
    }

    fn backup(&mut self) {
        self.cur -= 1;
    }

    fn peek(&mut self) -> Item {
        self.at(self.cur)
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let item = self.next();
            if item.kind != Kind::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let item = self.next_non_space();
        self.backup();
        item
    }

    /// Go's `errorf`: the line is that of the last item read.
    fn error<T>(&self, msg: impl Into<String>) -> R<T> {
        let line = self.items.get(self.furthest).map_or(1, |i| i.line);
        Err(ParseError { line, msg: msg.into(), unsupported: false })
    }

    fn refuse<T>(&self, line: usize, what: impl Into<String>) -> R<T> {
        Err(ParseError { line, msg: what.into(), unsupported: true })
    }

    fn unexpected<T>(&self, item: &Item, context: &str) -> R<T> {
        if item.kind == Kind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != item.line {
                let skip = if item.val.ends_with(" action") { " in action".len() } else { 0 };
                extra = format!(" in action started at systemMessage:{}", self.action_line)[skip..].to_string();
            }
            return self.error(format!("{item}{extra}"));
        }
        self.error(format!("unexpected {item} in {context}"))
    }

    fn expect(&mut self, kind: Kind, context: &str) -> R<Item> {
        let item = self.next_non_space();
        if item.kind != kind {
            return self.unexpected(&item, context);
        }
        Ok(item)
    }

    fn parse(&mut self) -> R<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let save = self.cur;
                self.next();
                let keyword = self.next_non_space();
                if keyword.kind == Kind::Define {
                    return self.refuse(keyword.line, "{{define}}");
                }
                self.cur = save;
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                other => return self.error(format!("unexpected {}", other.name())),
            }
        }
        Ok(root)
    }

    fn item_list(&mut self) -> R<(Vec<Node>, Parsed)> {
        let mut list = Vec::new();
        while self.peek_non_space().kind != Kind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
        self.error("unexpected EOF")
    }

    fn text_or_action(&mut self) -> R<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            Kind::Text => Ok(Parsed::Node(Node::Text(item.val))),
            Kind::LeftDelim => {
                self.action_line = item.line;
                let r = self.action();
                self.action_line = 0;
                r
            }
            _ => self.unexpected(&item, "input"),
        }
    }

    fn action(&mut self) -> R<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            Kind::Block => self.refuse(item.line, "{{block}}"),
            Kind::Template => self.refuse(item.line, "{{template}}"),
            Kind::Break | Kind::Continue => {
                let name = if item.kind == Kind::Break { "{{break}}" } else { "{{continue}}" };
                let next = self.next_non_space();
                if next.kind != Kind::RightDelim {
                    return self.unexpected(&next, name);
                }
                if self.range_depth == 0 {
                    return self.error(format!("{name} outside {{{{range}}}}"));
                }
                Ok(Parsed::Node(if item.kind == Kind::Break { Node::Break } else { Node::Continue }))
            }
            Kind::Else => {
                if !matches!(self.peek_non_space().kind, Kind::If | Kind::With) {
                    self.expect(Kind::RightDelim, "else")?;
                }
                Ok(Parsed::Else)
            }
            Kind::End => {
                self.expect(Kind::RightDelim, "end")?;
                Ok(Parsed::End)
            }
            Kind::If => Ok(Parsed::Node(Node::If(self.control("if")?))),
            Kind::With => Ok(Parsed::Node(Node::With(self.control("with")?))),
            Kind::Range => Ok(Parsed::Node(Node::Range(self.control("range")?))),
            _ => {
                self.backup();
                Ok(Parsed::Node(Node::Action(self.pipeline("command", Kind::RightDelim)?)))
            }
        }
    }

    fn control(&mut self, context: &str) -> R<Branch> {
        self.deeper()?;
        let branch = self.control_here(context);
        self.depth -= 1;
        branch
    }

    fn control_here(&mut self, context: &str) -> R<Branch> {
        let vars = self.vars.len();
        let line = self.peek().line;
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if context == "range" && pipe.is_assign {
            return self.refuse(line, "{{range}} with = assignment");
        }
        self.range_depth += usize::from(context == "range");
        let (list, next) = self.item_list()?;
        self.range_depth -= usize::from(context == "range");
        let mut else_list = None;
        if let Parsed::Else = next {
            let nested = self.peek().kind;
            if (context == "if" && nested == Kind::If) || (context == "with" && nested == Kind::With) {
                self.next();
                let branch = self.control(context)?;
                else_list = Some(vec![if context == "if" { Node::If(branch) } else { Node::With(branch) }]);
            } else {
                let (list, next) = self.item_list()?;
                if !matches!(next, Parsed::End) {
                    return self.error(format!("expected end; found {}", next.name()));
                }
                else_list = Some(list);
            }
        }
        self.vars.truncate(vars);
        Ok(Branch { pipe, list, else_list })
    }

    /// Enters one more level of nesting (an action's body or parentheses).
    fn deeper(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let line = self.peek().line;
            return self.refuse(line, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> R<Pipe> {
        self.deeper()?;
        let pipe = self.pipeline_here(context, end);
        self.depth -= 1;
        pipe
    }

    fn pipeline_here(&mut self, context: &str, end: Kind) -> R<Pipe> {
        let pos = self.peek_non_space().pos;
        let mut pipe = Pipe { pos, is_assign: false, decl: Vec::new(), cmds: Vec::new() };
        while self.peek_non_space().kind == Kind::Variable {
            let save = self.cur;
            let v = self.next();
            let next = self.peek_non_space();
            match next.kind {
                Kind::Assign | Kind::Declare => {
                    pipe.is_assign = next.kind == Kind::Assign;
                    self.next_non_space();
                    pipe.decl.push(Variable { pos: v.pos, ident: vec![v.val.clone()] });
                    self.vars.push(v.val);
                }
                Kind::Char if next.val == "," => {
                    self.next_non_space();
                    pipe.decl.push(Variable { pos: v.pos, ident: vec![v.val.clone()] });
                    self.vars.push(v.val);
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            Kind::Variable | Kind::RightDelim | Kind::RightParen => continue,
                            _ => return self.error("range can only initialize variables"),
                        }
                    }
                    return self.error(format!("too many declarations in {context}"));
                }
                _ => self.cur = save,
            }
            break;
        }
        loop {
            let item = self.next_non_space();
            if item.kind == end {
                return self.check_pipeline(pipe, context);
            }
            match item.kind {
                Kind::Bool
                | Kind::CharConstant
                | Kind::Complex
                | Kind::Dot
                | Kind::Field
                | Kind::Identifier
                | Kind::Number
                | Kind::Nil
                | Kind::RawString
                | Kind::String
                | Kind::Variable
                | Kind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&item, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: Pipe, context: &str) -> R<Pipe> {
        if pipe.cmds.is_empty() {
            return self.error(format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(Arg::Bool(..) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(..) | Arg::Str { .. })
            ) {
                return self.error(format!("non executable command in pipeline stage {}", i + 1));
            }
        }
        Ok(pipe)
    }

    fn command(&mut self) -> R<Command> {
        let pos = self.peek_non_space().pos;
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(arg) = self.operand()? {
                args.push(arg);
            }
            let item = self.next();
            match item.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return self.unexpected(&item, "operand"),
            }
            break;
        }
        if args.is_empty() {
            return self.error("empty command");
        }
        Ok(Command { pos, args })
    }

    fn operand(&mut self) -> R<Option<Arg>> {
        let Some(node) = self.term()? else { return Ok(None) };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().kind == Kind::Field {
            fields.push(self.next().val[1..].to_string());
        }
        Ok(Some(match node {
            Arg::Field(_, mut ident) => {
                ident.extend(fields);
                Arg::Field(pos, ident)
            }
            Arg::Variable(mut v) => {
                v.ident.extend(fields);
                Arg::Variable(Variable { pos, ident: v.ident })
            }
            Arg::Bool(..) | Arg::Str { .. } | Arg::Number(..) | Arg::Nil(_) | Arg::Dot(_) => {
                return self.error(format!("unexpected . after term {}", quote::quote(&node.to_string(), false)));
            }
            other => Arg::Chain(pos, Box::new(other), fields),
        }))
    }

    fn term(&mut self) -> R<Option<Arg>> {
        let item = self.next_non_space();
        let pos = item.pos;
        Ok(Some(match item.kind {
            Kind::Identifier if !FUNCTIONS.contains(&item.val.as_str()) => {
                return self.error(format!("function {} not defined", quote::quote(&item.val, false)));
            }
            Kind::Identifier if item.val == "call" => return self.refuse(item.line, "the call function"),
            Kind::Identifier => Arg::Identifier(pos, item.val),
            Kind::Dot => Arg::Dot(pos),
            Kind::Nil => Arg::Nil(pos),
            Kind::Variable => {
                let ident: Vec<String> = item.val.split('.').map(String::from).collect();
                if !self.vars.iter().any(|v| Some(v) == ident.first()) {
                    return self.error(format!("undefined variable {}", quote::quote(&ident[0], false)));
                }
                Arg::Variable(Variable { pos, ident })
            }
            Kind::Field => Arg::Field(pos, vec![item.val[1..].to_string()]),
            Kind::Bool => Arg::Bool(pos, item.val == "true"),
            Kind::CharConstant => match quote::unquote_rune(&item.val) {
                Ok(v) => Arg::Number(pos, Number { text: item.val, value: Some(v) }),
                Err(e) => return self.error(e),
            },
            Kind::Complex => return self.refuse(item.line, format!("complex constant {}", item.val)),
            Kind::Number => Arg::Number(pos, self.number(&item)?),
            Kind::LeftParen => Arg::Pipe(Box::new(self.pipeline("parenthesized pipeline", Kind::RightParen)?)),
            Kind::String | Kind::RawString => match quote::unquote(&item.val) {
                Ok(Unquoted::Text(text)) => Arg::Str { pos, quoted: item.val, text },
                Ok(Unquoted::NotUtf8) => {
                    return self.refuse(item.line, format!("string constant {} (its bytes are not UTF-8)", item.val));
                }
                Err(e) => return self.error(e),
            },
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }

    fn number(&self, item: &Item) -> R<Number> {
        let text = &item.val;
        let unsigned = text.trim_start_matches(['+', '-']);
        if text.ends_with('i') {
            return self.refuse(item.line, format!("complex constant {text}"));
        }
        // Go's `idealConstant` makes a float64 of any number with `.eEpP` that is not an
        // unsigned hex integer (so `-0xE` too, which prints as -14 but is no int to printf).
        let hex_int = (text.starts_with("0x") || text.starts_with("0X")) && !text.contains(['p', 'P']);
        let float_like = !hex_int && text.contains(['.', 'e', 'E', 'p', 'P']);
        if float_like && (is_float(unsigned) || parse_int(text).is_some()) {
            return self.refuse(item.line, format!("floating-point constant {text}"));
        }
        if let Some(v) = parse_int(text) {
            return Ok(Number { text: text.clone(), value: Some(v) });
        }
        if !text.starts_with('-') && parse_uint(unsigned).is_some() {
            return Ok(Number { text: text.clone(), value: None });
        }
        let decimal = unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'_') && !unsigned.is_empty();
        let what = if decimal { "integer overflow" } else { "illegal number syntax" };
        self.error(format!("{what}: {}", quote::quote(text, false)))
    }
}

/// Parses a template.
pub fn parse(text: &str) -> Result<Vec<Node>, ParseError> {
    let mut p = Parser {
        items: lex(text),
        cur: 0,
        furthest: 0,
        vars: vec!["$".to_string()],
        depth: 0,
        range_depth: 0,
        action_line: 0,
    };
    p.parse()
}
