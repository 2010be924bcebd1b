//! The values a kagent prompt template can hold: the `PromptTemplateContext` struct, its
//! strings and `[]string`s, what the builtins return (`int`, `bool`, `uint8` from `index`
//! of a string) and the constants a template writes.

use std::rc::Rc;

/// kagent's `PromptTemplateContext` (template.go:18-29).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Data {
    pub agent_name: String,
    pub agent_namespace: String,
    pub description: String,
    /// A nil slice in kagent when empty (it is built with `append` from nothing).
    pub tool_names: Vec<String>,
    pub skill_names: Vec<String>,
}

/// Go's name of the context's type: the struct lives in kagent's package `agent`.
pub const CONTEXT_TYPE: &str = "agent.PromptTemplateContext";

/// The context's fields, in declaration order.
pub const FIELDS: [&str; 5] = ["AgentName", "AgentNamespace", "Description", "ToolNames", "SkillNames"];

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Go's zero `reflect.Value` or an untyped `nil`: prints `<no value>` as an action's value
    /// and `<nil>` through fmt.
    Nil,
    Bool(bool),
    Int(i64),
    /// A `uint8`: what `index` of a string gives.
    Byte(u8),
    Str(Rc<str>),
    /// A `[]string`; empty means nil, as kagent's lists are.
    List(Rc<[String]>),
    Context(Rc<Data>),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Rc::from(s))
    }

    pub fn list(items: &[String]) -> Value {
        Value::List(Rc::from(items))
    }

    /// The Go type's name, as `%T` and error messages print it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Byte(_) => "uint8",
            Value::Str(_) => "string",
            Value::List(_) => "[]string",
            Value::Context(_) => CONTEXT_TYPE,
        }
    }

    /// text/template's truth: false, 0, nil and empty strings and lists are false; a struct
    /// is always true.
    pub fn truth(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Byte(b) => *b != 0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Context(_) => true,
        }
    }

    /// A field of the context, or `None` when this value has no such field.
    pub fn field(&self, name: &str) -> Option<Value> {
        let Value::Context(d) = self else { return None };
        Some(match name {
            "AgentName" => Value::str(&d.agent_name),
            "AgentNamespace" => Value::str(&d.agent_namespace),
            "Description" => Value::str(&d.description),
            "ToolNames" => Value::list(&d.tool_names),
            "SkillNames" => Value::list(&d.skill_names),
            _ => return None,
        })
    }

    /// An integer's value, whatever its Go type (comparisons ignore size and sign).
    pub fn int(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(i128::from(*i)),
            Value::Byte(b) => Some(i128::from(*b)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_and_types() {
        let d = Rc::new(Data::default());
        assert!(!Value::list(&[]).truth() && Value::list(&["a".into()]).truth());
        assert!(!Value::str("").truth() && Value::Context(d.clone()).truth() && !Value::Nil.truth());
        assert_eq!(Value::Context(d.clone()).type_name(), "agent.PromptTemplateContext");
        assert_eq!(Value::Context(d).field("ToolNames"), Some(Value::list(&[])));
        assert_eq!(Value::str("x").field("Len"), None);
    }
}
