//! One `x-kubernetes-validations` rule, evaluated with the `cel` crate: `self` is the value
//! at the rule's node, `oldSelf` the stored one. A transition rule (one that names
//! `oldSelf`) is checked only on an update that has an old value there, as in Kubernetes.

use std::collections::HashMap;

use serde_json::Value;

/// `Err(message)` when the rule is false (the rule's message, or Kubernetes' default one),
/// or when it cannot be evaluated here (named, never passed silently).
pub fn check(rule: &Value, value: &Value, old: Option<&Value>) -> Result<(), String> {
    let text = rule["rule"].as_str().unwrap_or_default();
    let program = cel::Program::compile(text).map_err(|e| format!("rule {text:?} does not compile here: {e}"))?;
    let transition = program.references().has_variable("oldSelf");
    let mut ctx = cel::Context::default();
    ctx.add_variable_from_value("self", to_cel(value));
    match (transition, old) {
        (true, Some(old)) => ctx.add_variable_from_value("oldSelf", to_cel(old)),
        (true, None) => return Ok(()),
        (false, _) => {}
    }
    match program.execute(&ctx) {
        Ok(cel::Value::Bool(true)) => Ok(()),
        Ok(cel::Value::Bool(false)) => {
            Err(rule["message"].as_str().map(String::from).unwrap_or_else(|| format!("failed rule: {text}")))
        }
        Ok(other) => Err(format!("rule {text:?} gave {other:?}, not a bool")),
        Err(e) => Err(format!("rule {text:?} could not be evaluated: {e}")),
    }
}

/// JSON as Kubernetes hands it to CEL: integers are `int`, objects maps with string keys.
fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(s.clone().into()),
        Value::Array(a) => cel::Value::List(a.iter().map(to_cel).collect::<Vec<_>>().into()),
        Value::Object(m) => {
            let map: HashMap<String, cel::Value> = m.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::Map(map.into())
        }
    }
}

#[cfg(test)]
mod tests {}
