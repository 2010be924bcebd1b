//! The executor: walks the tree as Go's `text/template` exec.go does (dot, variables and
//! their scopes, `if`/`with`/`range` with `else`, `break`/`continue`, pipelines, fields,
//! function calls and their argument checks), and reports errors where Go does, naming
//! the node Go names (`at <.Foo>`).

use std::collections::BTreeMap;

use super::ast::{Arg, Branch, Command, Node, Pipe, Variable};
use super::error::TemplateError;
use super::funcs::{self, CallError, Param};
use super::gofmt::sprint;
use super::value::Value;

/// Where evaluation is, for error messages (Go's `state.node`).
#[derive(Clone, Copy)]
enum Cur<'t> {
    Start,
    Pipe(&'t Pipe),
    Cmd(&'t Command),
    Arg(&'t Arg),
}

enum Flow {
    Normal,
    Break,
    Continue,
}

/// Bounds on what one template may make: a prompt goes into a ConfigMap (1 MiB).
const MAX_OUTPUT: usize = 1 << 20;
const MAX_STEPS: usize = 1_000_000;

pub struct Exec<'t> {
    text: &'t str,
    lookup: &'t BTreeMap<String, String>,
    vars: Vec<(String, Value)>,
    out: String,
    cur: Cur<'t>,
    steps: usize,
}

type X<T> = Result<T, TemplateError>;

impl<'t> Exec<'t> {
    pub fn new(text: &'t str, lookup: &'t BTreeMap<String, String>, data: Value) -> Exec<'t> {
        Exec { text, lookup, vars: vec![("$".into(), data)], out: String::new(), cur: Cur::Start, steps: 0 }
    }

    fn location(&self) -> (usize, usize, String) {
        let (pos, context) = match self.cur {
            Cur::Start => (0, String::new()),
            Cur::Pipe(p) => (p.pos, p.to_string()),
            Cur::Cmd(c) => (c.pos, c.to_string()),
            Cur::Arg(a) => (a.pos(), a.to_string()),
        };
        let before = &self.text[..pos.min(self.text.len())];
        let line = 1 + before.matches('\n').count();
        let col = before.rfind('\n').map_or(pos, |nl| pos - nl - 1);
        (line, col, context)
    }

    fn error<T>(&self, msg: impl Into<String>) -> X<T> {
        let (line, col, context) = self.location();
        Err(TemplateError::Exec { line, col, context, msg: msg.into() })
    }

    fn refuse<T>(&self, what: String) -> X<T> {
        Err(TemplateError::Unsupported { line: self.location().0, what })
    }

    fn step(&mut self) -> X<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(TemplateError::Limit(format!("{MAX_STEPS} steps")));
        }
        if self.out.len() > MAX_OUTPUT {
            return Err(TemplateError::Limit(format!("{MAX_OUTPUT} bytes of output")));
        }
        Ok(())
    }

    /// Runs the template and returns what it wrote.
    pub fn run(mut self, dot: &Value, nodes: &'t [Node]) -> X<String> {
        self.list(dot, nodes)?;
        Ok(self.out)
    }

    fn list(&mut self, dot: &Value, nodes: &'t [Node]) -> X<Flow> {
        for node in nodes {
            self.step()?;
            let flow = match node {
                Node::Text(t) => {
                    self.out.push_str(t);
                    Flow::Normal
                }
                Node::Action(pipe) => {
                    let v = self.pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        match v {
                            Value::Nil => self.out.push_str("<no value>"),
                            v => self.out.push_str(&sprint(&[v])),
                        }
                    }
                    Flow::Normal
                }
                Node::If(b) => self.if_or_with(false, dot, b)?,
                Node::With(b) => self.if_or_with(true, dot, b)?,
                Node::Range(b) => self.range(dot, b)?,
                Node::Break => Flow::Break,
                Node::Continue => Flow::Continue,
            };
            if !matches!(flow, Flow::Normal) {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn if_or_with(&mut self, with: bool, dot: &Value, b: &'t Branch) -> X<Flow> {
        let mark = self.vars.len();
        let val = self.pipeline(dot, &b.pipe)?;
        let flow = if val.truth() {
            self.list(if with { &val } else { dot }, &b.list)?
        } else if let Some(e) = &b.else_list {
            self.list(dot, e)?
        } else {
            Flow::Normal
        };
        self.vars.truncate(mark);
        Ok(flow)
    }

    fn range(&mut self, dot: &Value, b: &'t Branch) -> X<Flow> {
        let outer = self.vars.len();
        let val = self.pipeline(dot, &b.pipe)?;
        let mark = self.vars.len();
        let (count, items): (i64, Box<dyn Iterator<Item = (Value, Value)>>) = match &val {
            Value::List(l) => {
                let (n, l) = (l.len(), l.clone());
                (n as i64, Box::new((0..n).map(move |i| (Value::Int(i as i64), Value::str(&l[i])))))
            }
            Value::Int(_) | Value::Byte(_) if b.pipe.decl.len() > 1 => {
                return self.error(format!("can't use {} to iterate over more than one variable", sprint(&[val])));
            }
            Value::Int(n) => (*n, Box::new((0..*n).map(|i| (Value::Nil, Value::Int(i))))),
            Value::Byte(n) => (i64::from(*n), Box::new((0..*n).map(|i| (Value::Nil, Value::Byte(i))))),
            Value::Nil => (0, Box::new(std::iter::empty())),
            _ => return self.error(format!("range can't iterate over {}", sprint(&[val]))),
        };
        let mut flow = Flow::Normal;
        if count <= 0 {
            if let Some(e) = &b.else_list {
                // A {{break}} there ends this range (Go recovers it here); {{continue}} goes on.
                flow = match self.list(dot, e)? {
                    Flow::Break => Flow::Normal,
                    f => f,
                };
            }
        }
        for (index, elem) in items {
            self.step()?;
            let n = self.vars.len();
            if let Some(top) = (!b.pipe.decl.is_empty()).then(|| self.vars.get_mut(n - 1)).flatten() {
                top.1 = elem.clone();
            }
            if let Some(second) = (b.pipe.decl.len() > 1).then(|| self.vars.get_mut(n - 2)).flatten() {
                second.1 = index;
            }
            let f = self.list(&elem, &b.list)?;
            self.vars.truncate(mark);
            if matches!(f, Flow::Break) {
                break;
            }
        }
        self.vars.truncate(outer);
        Ok(flow)
    }

    fn pipeline(&mut self, dot: &Value, pipe: &'t Pipe) -> X<Value> {
        self.cur = Cur::Pipe(pipe);
        let mut value = None;
        for cmd in &pipe.cmds {
            value = Some(self.command(dot, cmd, value)?);
        }
        let value = value.unwrap_or(Value::Nil);
        for v in &pipe.decl {
            let name = &v.ident[0];
            if pipe.is_assign {
                match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.clone(),
                    None => return self.error(format!("undefined variable: {name}")),
                }
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], final_: &Option<Value>) -> X<()> {
        if args.len() > 1 || final_.is_some() {
            return self.error(format!("can't give argument to non-function {}", args[0]));
        }
        Ok(())
    }

    fn command(&mut self, dot: &Value, cmd: &'t Command, final_: Option<Value>) -> X<Value> {
        let first = &cmd.args[0];
        match first {
            Arg::Field(_, ident) => {
                self.cur = Cur::Arg(first);
                self.field_chain(dot.clone(), ident, cmd.args.len(), final_)
            }
            Arg::Chain(..) => self.chain(dot, first, cmd.args.len(), final_),
            Arg::Identifier(_, name) => {
                self.cur = Cur::Arg(first);
                self.call(dot, name, Cur::Cmd(cmd), &cmd.args[1..], final_)
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &final_)?;
                self.pipeline(dot, p)
            }
            Arg::Variable(v) => self.variable(first, v, &cmd.args, final_),
            _ => {
                self.cur = Cur::Arg(first);
                self.not_a_function(&cmd.args, &final_)?;
                match first {
                    Arg::Nil(_) => self.error("nil is not a command"),
                    _ => self.constant(dot, first),
                }
            }
        }
    }

    /// A constant (or dot) where any value will do (Go's `evalEmptyInterface`).
    fn constant(&mut self, dot: &Value, arg: &'t Arg) -> X<Value> {
        self.cur = Cur::Arg(arg);
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Bool(_, b) => Ok(Value::Bool(*b)),
            Arg::Str { text, .. } => Ok(Value::str(text)),
            Arg::Number(_, n) => match n.value {
                Some(i) => Ok(Value::Int(i)),
                None => self.error(format!("{} overflows int", n.text)),
            },
            _ => Ok(Value::Nil),
        }
    }

    fn variable(&mut self, node: &'t Arg, v: &Variable, args: &[Arg], f: Option<Value>) -> X<Value> {
        self.cur = Cur::Arg(node);
        let name = &v.ident[0];
        let value = match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, value)) => value.clone(),
            None => return self.error(format!("undefined variable: {name}")),
        };
        if v.ident.len() == 1 {
            if !args.is_empty() {
                self.not_a_function(args, &f)?;
            }
            return Ok(value);
        }
        self.field_chain(value, &v.ident[1..], args.len(), f)
    }

    fn chain(&mut self, dot: &Value, node: &'t Arg, nargs: usize, final_: Option<Value>) -> X<Value> {
        let Arg::Chain(_, inner, fields) = node else { return Ok(Value::Nil) };
        self.cur = Cur::Arg(node);
        // Go does not come back to the chain here: a field's error names the last node evaluated.
        let receiver = self.arg(dot, None, inner)?;
        self.field_chain(receiver, fields, nargs, final_)
    }

    /// `.A.B` on `receiver`; `nargs` counts the node itself among its command's words.
    fn field_chain(&mut self, mut receiver: Value, ident: &[String], nargs: usize, final_: Option<Value>) -> X<Value> {
        for (i, name) in ident.iter().enumerate() {
            if matches!(receiver, Value::Nil) {
                return Ok(Value::Nil);
            }
            let last = i + 1 == ident.len();
            receiver = match receiver.field(name) {
                Some(_) if last && (nargs > 1 || final_.is_some()) => {
                    return self.error(format!("{name} has arguments but cannot be invoked as function"));
                }
                Some(v) => v,
                None => return self.error(format!("can't evaluate field {name} in type {}", receiver.type_name())),
            };
        }
        Ok(receiver)
    }

    /// Calls `name` with `args` (and the previous command's value as the last one).
    fn call(&mut self, dot: &Value, name: &str, node: Cur<'t>, args: &'t [Arg], final_: Option<Value>) -> X<Value> {
        let (fixed, variadic) = funcs::signature(name);
        let num_in = args.len() + usize::from(final_.is_some());
        if variadic.is_some() && num_in < fixed.len() {
            return self.error(format!(
                "wrong number of args for {name}: want at least {} got {}",
                fixed.len(),
                args.len()
            ));
        }
        if variadic.is_none() && num_in != fixed.len() {
            return self.error(format!("wrong number of args for {name}: want {} got {num_in}", fixed.len()));
        }
        if name == "and" || name == "or" {
            let mut v = Value::Nil;
            for a in args {
                v = self.arg(dot, Some(Param::Value), a)?;
                if v.truth() == (name == "or") {
                    return Ok(v);
                }
            }
            return Ok(final_.unwrap_or(v));
        }
        let param = |i: usize| fixed.get(i).copied().or(variadic).unwrap_or(Param::Any);
        let mut argv = Vec::with_capacity(num_in);
        for (i, a) in args.iter().enumerate() {
            argv.push(self.arg(dot, Some(param(i)), a)?);
        }
        if let Some(f) = final_ {
            argv.push(self.validate(f, param(num_in - 1))?);
        }
        match funcs::call(name, &argv, self.lookup) {
            Ok(v) => Ok(v),
            Err(CallError::Go(msg)) => {
                self.cur = node;
                self.error(format!("error calling {name}: {msg}"))
            }
            Err(CallError::Refused(what)) => {
                self.cur = node;
                self.refuse(what)
            }
        }
    }

    /// Checks a value against a parameter's type (Go's `validateType`).
    fn validate(&self, v: Value, param: Param) -> X<Value> {
        match (param, &v) {
            (Param::Str, Value::Nil) => self.error("invalid value; expected string"),
            (Param::Str, Value::Str(_)) | (Param::Value | Param::Any, _) => Ok(v),
            (Param::Str, other) => {
                self.error(format!("wrong type for value; expected string; got {}", other.type_name()))
            }
        }
    }

    /// An argument's value for a parameter of type `param` (`None`: any, unchecked).
    fn arg(&mut self, dot: &Value, param: Option<Param>, a: &'t Arg) -> X<Value> {
        self.cur = Cur::Arg(a);
        let p = param.unwrap_or(Param::Any);
        let v = match a {
            Arg::Dot(_) => dot.clone(),
            Arg::Nil(_) if p == Param::Str => return self.error("cannot assign nil to string"),
            Arg::Nil(_) => Value::Nil,
            Arg::Field(_, ident) => self.field_chain(dot.clone(), ident, 1, None)?,
            Arg::Variable(v) => self.variable(a, v, &[], None)?,
            Arg::Pipe(pipe) => self.pipeline(dot, pipe)?,
            Arg::Identifier(_, name) => self.call(dot, name, Cur::Arg(a), &[], None)?,
            Arg::Chain(..) => self.chain(dot, a, 0, None)?,
            Arg::Str { text, .. } => Value::str(text),
            _ if p == Param::Str => return self.error(format!("expected string; found {a}")),
            _ => self.constant(dot, a)?,
        };
        self.validate(v, p)
    }
}
