//! The functions a template can call: kagent's `include` (template.go:101-114) and
//! text/template's builtins, with their Go signatures (which decide how arguments are
//! checked and counted) and their Go error texts. `and` and `or` evaluate their arguments
//! lazily and live in the executor.

use std::collections::BTreeMap;

use super::gofmt::{self, sprint, sprintf, sprintln};
use super::quote;
use super::value::Value;

/// A parameter's Go type: `reflect.Value`, `string` or `any`.
#[derive(Clone, Copy, PartialEq)]
pub enum Param {
    Value,
    Str,
    Any,
}

/// (fixed parameters, variadic parameter).
pub fn signature(name: &str) -> (&'static [Param], Option<Param>) {
    use Param::*;
    match name {
        "include" => (&[Str], None),
        "printf" => (&[Str], Some(Any)),
        "print" | "println" | "html" | "js" | "urlquery" => (&[], Some(Any)),
        "len" | "not" => (&[Value], None),
        "ne" | "lt" | "le" | "gt" | "ge" => (&[Value, Value], None),
        // and, or, eq, index, slice
        _ => (&[Value], Some(Value)),
    }
}

pub enum CallError {
    /// Go's error, reported as "error calling NAME: ...".
    Go(String),
    /// What Go does but srt-controller does not, named.
    Refused(String),
}

fn go<T>(msg: impl Into<String>) -> Result<T, CallError> {
    Err(CallError::Go(msg.into()))
}

fn formatted(v: &Value, verb: &str) -> String {
    sprintf(verb, std::slice::from_ref(v)).unwrap_or_default()
}

#[derive(PartialEq, Clone, Copy)]
enum Basic {
    Bool,
    Int,
    Uint,
    Str,
}

fn basic(v: &Value) -> Option<Basic> {
    match v {
        Value::Bool(_) => Some(Basic::Bool),
        Value::Int(_) => Some(Basic::Int),
        Value::Byte(_) => Some(Basic::Uint),
        Value::Str(_) => Some(Basic::Str),
        _ => None,
    }
}

const BAD_TYPE: &str = "invalid type for comparison";
const INCOMPATIBLE: &str = "incompatible types for comparison";

/// Go's `reflect.Kind` of the values without a basic kind.
fn reflect_kind(v: &Value) -> u8 {
    match v {
        Value::Nil => 0,
        Value::List(_) => 1,
        _ => 2,
    }
}

fn is_nil(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::List(l) => l.is_empty(),
        _ => false,
    }
}

fn eq(a: &Value, rest: &[Value]) -> Result<bool, CallError> {
    if rest.is_empty() {
        return go("missing argument for comparison");
    }
    let k1 = basic(a);
    for b in rest {
        let k2 = basic(b);
        let truth = match (k1, k2) {
            (Some(Basic::Int | Basic::Uint), Some(Basic::Int | Basic::Uint)) => a.int() == b.int(),
            _ if k1 != k2 => {
                if !matches!(a, Value::Nil) && !matches!(b, Value::Nil) {
                    return go(INCOMPATIBLE);
                }
                false
            }
            (Some(_), _) => a == b,
            (None, _) => {
                let (r1, r2) = (reflect_kind(a), reflect_kind(b));
                if r1 != r2 && r1 != 0 && r2 != 0 {
                    let (a_s, b_v) = (formatted(a, "%s"), formatted(b, "%v"));
                    return go(format!("non-comparable types {a_s}: {}, {}: {b_v}", a.type_name(), b.type_name()));
                }
                if is_nil(a) || is_nil(b) {
                    is_nil(a) == is_nil(b)
                } else {
                    return go(format!("non-comparable type {}: {}", formatted(b, "%s"), b.type_name()));
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(a: &Value, b: &Value) -> Result<bool, CallError> {
    let (Some(k1), Some(k2)) = (basic(a), basic(b)) else { return go(BAD_TYPE) };
    match (k1, k2, a, b) {
        (Basic::Int | Basic::Uint, Basic::Int | Basic::Uint, _, _) => Ok(a.int() < b.int()),
        _ if k1 != k2 => go(INCOMPATIBLE),
        (Basic::Str, _, Value::Str(x), Value::Str(y)) => Ok(x < y),
        _ => go(BAD_TYPE),
    }
}

/// An index argument (`indexArg`): an integer in `0..=cap`.
fn index_arg(v: &Value, cap: usize) -> Result<usize, CallError> {
    let x = match v {
        Value::Nil => return go("cannot index slice/array with nil"),
        _ => v.int().ok_or_else(|| CallError::Go(format!("cannot index slice/array with type {}", v.type_name())))?,
    };
    match usize::try_from(x) {
        Ok(x) if x <= cap => Ok(x),
        _ => go(format!("index out of range: {x}")),
    }
}

fn index(item: &Value, indexes: &[Value]) -> Result<Value, CallError> {
    if matches!(item, Value::Nil) {
        return go("index of untyped nil");
    }
    let mut item = item.clone();
    for i in indexes {
        item = match &item {
            Value::List(l) => match l.get(index_arg(i, l.len())?) {
                Some(s) => Value::str(s),
                None => return go("reflect: slice index out of range"),
            },
            Value::Str(s) => match s.as_bytes().get(index_arg(i, s.len())?) {
                Some(b) => Value::Byte(*b),
                None => return go("reflect: string index out of range"),
            },
            other => return go(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(item: &Value, indexes: &[Value]) -> Result<Value, CallError> {
    let len = match item {
        Value::Nil => return go("slice of untyped nil"),
        _ if indexes.len() > 3 => return go(format!("too many slice indexes: {}", indexes.len())),
        Value::Str(_) if indexes.len() == 3 => return go("cannot 3-index slice a string"),
        Value::Str(s) => s.len(),
        Value::List(l) => l.len(),
        other => return go(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, len, len];
    for (n, i) in indexes.iter().enumerate() {
        // Past a list's length Go reads its capacity, which kagent's appends leave unknown.
        idx[n] = index_arg(i, usize::MAX).and_then(|x| match x {
            x if x <= len => Ok(x),
            x if matches!(item, Value::List(_)) => Err(CallError::Refused(format!(
                "slice of a list past its length ({x} > {len}: Go's result depends on the list's capacity)"
            ))),
            x => go(format!("index out of range: {x}")),
        })?;
    }
    if idx[0] > idx[1] || (indexes.len() == 3 && idx[1] > idx[2]) {
        let (a, b) = if idx[0] > idx[1] { (idx[0], idx[1]) } else { (idx[1], idx[2]) };
        return go(format!("invalid slice index: {a} > {b}"));
    }
    match item {
        Value::Str(s) => match s.get(idx[0]..idx[1]) {
            Some(sub) => Ok(Value::str(sub)),
            None => Err(CallError::Refused("slice of a string inside a UTF-8 character".into())),
        },
        Value::List(l) => Ok(Value::list(&l[idx[0]..idx[1]])),
        _ => go("unreachable"),
    }
}

fn length(v: &Value) -> Result<Value, CallError> {
    match v {
        Value::Str(s) => Ok(Value::Int(s.len() as i64)),
        Value::List(l) => Ok(Value::Int(l.len() as i64)),
        // Go's `length` asks the zero reflect.Value its type, and reports reflect's panic.
        Value::Nil => go("reflect: call of reflect.Value.Type on zero Value"),
        other => go(format!("len of type {}", other.type_name())),
    }
}

/// `evalArgs`: the one string argument, or the arguments as `fmt.Sprint` prints them.
fn eval_args(args: &[Value]) -> String {
    match args {
        [Value::Str(s)] => s.to_string(),
        // `printableValue` turns a nil argument into the string "<no value>".
        _ => sprint(
            &args
                .iter()
                .map(|a| if *a == Value::Nil { Value::str("<no value>") } else { a.clone() })
                .collect::<Vec<_>>(),
        ),
    }
}

fn refused(e: gofmt::Refused) -> CallError {
    CallError::Refused(e.0)
}

/// Calls a function other than `and` and `or` with its checked arguments.
pub fn call(name: &str, a: &[Value], lookup: &BTreeMap<String, String>) -> Result<Value, CallError> {
    let arg = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
    Ok(match name {
        "include" => {
            let path = match arg(0) {
                Value::Str(s) => s,
                _ => return go("include takes a string"),
            };
            match lookup.get(&*path) {
                Some(content) => Value::str(content),
                None => {
                    let keys: Vec<&str> = lookup.keys().map(String::as_str).collect();
                    return go(format!(
                        "prompt template {} not found in promptSources, available: [{}]",
                        quote::quote(&path, false),
                        keys.join(" ")
                    ));
                }
            }
        }
        "len" => length(&arg(0))?,
        "not" => Value::Bool(!arg(0).truth()),
        "eq" => Value::Bool(eq(&arg(0), a.get(1..).unwrap_or_default())?),
        "ne" => Value::Bool(!eq(&arg(0), &[arg(1)])?),
        "lt" => Value::Bool(lt(&arg(0), &arg(1))?),
        "le" => Value::Bool(lt(&arg(0), &arg(1))? || eq(&arg(0), &[arg(1)])?),
        "gt" => Value::Bool(!(lt(&arg(0), &arg(1))? || eq(&arg(0), &[arg(1)])?)),
        "ge" => Value::Bool(!lt(&arg(0), &arg(1))?),
        "index" => index(&arg(0), a.get(1..).unwrap_or_default())?,
        "slice" => slice(&arg(0), a.get(1..).unwrap_or_default())?,
        "print" => Value::str(&sprint(a)),
        "println" => Value::str(&sprintln(a)),
        "printf" => {
            let Value::Str(format) = arg(0) else { return go("printf takes a string format") };
            Value::str(&sprintf(&format, a.get(1..).unwrap_or_default()).map_err(refused)?)
        }
        "html" => Value::str(&quote::html_escape(&eval_args(a))),
        "js" => Value::str(&quote::js_escape(&eval_args(a))),
        "urlquery" => Value::str(&quote::query_escape(&eval_args(a))),
        other => return Err(CallError::Refused(format!("the function {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_go() {
        let l = Value::list(&["a".into()]);
        assert!(matches!(eq(&Value::Int(107), &[Value::Byte(107)]), Ok(true)));
        assert!(matches!(eq(&Value::list(&[]), &[Value::Nil]), Ok(true)));
        assert!(matches!(eq(&l, &[Value::Nil]), Ok(false)));
        assert!(matches!(eq(&Value::Nil, &[Value::str("x")]), Ok(false)));
        assert!(matches!(eq(&l, &[Value::str("x")]), Err(CallError::Go(m)) if m == INCOMPATIBLE));
        assert!(matches!(lt(&Value::Int(-1), &Value::Byte(0)), Ok(true)));
        assert!(matches!(lt(&Value::Bool(true), &Value::Bool(false)), Err(CallError::Go(m)) if m == BAD_TYPE));
    }

    #[test]
    fn index_and_slice_bounds() {
        let l = Value::list(&["a".into(), "b".into()]);
        assert!(
            matches!(index(&l, &[Value::Int(2)]), Err(CallError::Go(m)) if m == "reflect: slice index out of range")
        );
        assert!(matches!(index(&l, &[Value::Int(3)]), Err(CallError::Go(m)) if m == "index out of range: 3"));
        assert!(matches!(slice(&l, &[Value::Int(1), Value::Int(3)]), Err(CallError::Refused(_))));
        assert!(matches!(slice(&Value::str("é"), &[Value::Int(1)]), Err(CallError::Refused(_))));
        assert!(
            matches!(slice(&l, &[Value::Int(2), Value::Int(1)]), Err(CallError::Go(m)) if m == "invalid slice index: 2 > 1")
        );
    }
}
