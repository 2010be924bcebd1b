//! What kube-apiserver does with a custom object under its CRD's structural schema, for the
//! in-memory API server and the schema tests: prune fields the schema does not declare (or,
//! for server-side apply, refuse them: "field not declared in schema"), drop nulls of
//! non-nullable fields, apply defaults, validate (types, int32/int64 ranges, enums, bounds,
//! patterns, required fields, `x-kubernetes-list-type` set/map uniqueness with
//! `x-kubernetes-list-map-keys`) and evaluate the `x-kubernetes-validations` CEL rules,
//! transition rules (`oldSelf`) against the stored object.
//!
//! Not evaluated: `messageExpression`, CEL cost limits, Kubernetes' CEL library extensions
//! (`isURL`, `quantity`, ...; no rule in the fixtures uses them: a rule that does fails to
//! compile here and is reported as an error, never skipped), string `format`s other than the
//! integer ranges, and `x-kubernetes-embedded-resource` metadata checks. The root `metadata`
//! is the API server's own and is left alone, as there.

#![allow(dead_code)]

mod cel_rules;

use serde_json::{Map, Value};

/// Fields the schema does not declare: pruned (create/update, `kubectl apply`) or refused
/// (server-side apply, whose typed merge cannot hold them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    Prune,
    Refuse,
}

/// The object as the API server would store it, and what it pruned.
#[derive(Debug)]
pub struct Admitted {
    pub object: Value,
    pub pruned: Vec<String>,
}

/// Admits `object` under `schema` (a CRD version's `openAPIV3Schema`). `old` is the stored
/// object on an update (for transition rules). Errors name the path, as the API server's do.
pub fn admit(
    schema: &Value,
    mut object: Value,
    old: Option<&Value>,
    unknown: Unknown,
) -> Result<Admitted, Vec<String>> {
    let mut st = State { unknown, pruned: Vec::new(), errors: Vec::new() };
    shape(schema, &mut object, "", true, &mut st);
    validate(schema, &object, old, "", true, &mut st);
    if st.errors.is_empty() {
        Ok(Admitted { object, pruned: st.pruned })
    } else {
        Err(st.errors)
    }
}

/// The `openAPIV3Schema` of `version` in a CRD document.
pub fn version_schema(crd: &Value, version: &str) -> Option<Value> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == version)
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
}

struct State {
    unknown: Unknown,
    pruned: Vec<String>,
    errors: Vec<String>,
}

fn child(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn preserves(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"] == true
}

/// Pruning, nulls and defaults, in the API server's order (prune, then default).
fn shape(schema: &Value, value: &mut Value, at: &str, root: bool, st: &mut State) {
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if root && k == "metadata" {
                    continue;
                }
                let sub = props.and_then(|p| p.get(&k)).or(extra);
                match sub {
                    Some(sub) => {
                        if map[&k].is_null() && sub["nullable"] != true {
                            map.remove(&k);
                            continue;
                        }
                        if let Some(v) = map.get_mut(&k) {
                            shape(sub, v, &child(at, &k), false, st);
                        }
                    }
                    None if preserves(schema) => {}
                    None if root && (k == "apiVersion" || k == "kind") => {}
                    None => {
                        let path = child(at, &k);
                        match st.unknown {
                            Unknown::Prune => st.pruned.push(path),
                            Unknown::Refuse => st.errors.push(format!(".{path}: field not declared in schema")),
                        }
                        map.remove(&k);
                    }
                }
            }
            for (k, sub) in props.into_iter().flatten() {
                if let (None, Some(d)) = (map.get(k), sub.get("default")) {
                    let mut d = d.clone();
                    shape(sub, &mut d, &child(at, k), false, st);
                    map.insert(k.clone(), d);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    shape(sub, item, &format!("{at}[{i}]"), false, st);
                }
            }
        }
        _ => {}
    }
}

/// Patterns compiled once per thread (the quantity pattern is checked thousands of times).
fn compiled(pattern: &str) -> Result<regex::Regex, regex::Error> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, regex::Regex>> = Default::default();
    }
    CACHE.with(|c| {
        if let Some(re) = c.borrow().get(pattern) {
            return Ok(re.clone());
        }
        let re = regex::Regex::new(pattern)?;
        c.borrow_mut().insert(pattern.to_string(), re.clone());
        Ok(re)
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn validate(schema: &Value, value: &Value, old: Option<&Value>, at: &str, root: bool, st: &mut State) {
    let shown = if at.is_empty() { "<root>" } else { at };
    if value.is_null() {
        if schema["nullable"] != true {
            st.errors.push(format!("{shown}: Invalid value: \"null\": must not be null"));
        }
        return;
    }
    let int_or_string = schema["x-kubernetes-int-or-string"] == true;
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            other => type_name(value) == other,
        } || (int_or_string && (value.is_string() || value.is_i64()));
        if !ok {
            st.errors.push(format!("{shown}: Invalid value: \"{}\": must be of type {t}", type_name(value)));
            return;
        }
    } else if int_or_string && !(value.is_string() || value.is_i64() || value.is_u64()) {
        st.errors.push(format!("{shown}: Invalid value: {value}: must be an integer or a string"));
        return;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            st.errors.push(format!("{shown}: Unsupported value: {value}: supported values: {options:?}"));
        }
    }
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        if num("minimum").is_some_and(|m| n < m) {
            st.errors.push(format!(
                "{shown}: Invalid value: {value}: should be greater than or equal to {}",
                num("minimum").unwrap_or_default()
            ));
        }
        if num("maximum").is_some_and(|m| n > m) {
            st.errors.push(format!(
                "{shown}: Invalid value: {value}: should be less than or equal to {}",
                num("maximum").unwrap_or_default()
            ));
        }
        let range = match schema.get("format").and_then(Value::as_str) {
            Some("int32") => Some((i32::MIN as f64, i32::MAX as f64)),
            _ => None,
        };
        if let Some((lo, hi)) = range {
            if n < lo || n > hi {
                st.errors.push(format!("{shown}: Invalid value: {value}: out of the int32 range"));
            }
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as f64;
        if num("minLength").is_some_and(|m| len < m) {
            st.errors.push(format!(
                "{shown}: Invalid value: \"{s}\": should be at least {} chars long",
                num("minLength").unwrap_or_default()
            ));
        }
        if num("maxLength").is_some_and(|m| len > m) {
            st.errors.push(format!(
                "{shown}: Too long: may not be more than {} bytes",
                num("maxLength").unwrap_or_default()
            ));
        }
        if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
            match compiled(p) {
                Ok(re) if re.is_match(s) => {}
                Ok(_) => st.errors.push(format!("{shown}: Invalid value: \"{s}\": should match '{p}'")),
                Err(e) => st.errors.push(format!("{shown}: the schema's pattern {p:?} does not compile here: {e}")),
            }
        }
    }
    match value {
        Value::Array(items) => {
            let n = items.len() as f64;
            if num("minItems").is_some_and(|m| n < m) {
                st.errors.push(format!(
                    "{shown}: Invalid value: {n}: should have at least {} items",
                    num("minItems").unwrap_or_default()
                ));
            }
            if num("maxItems").is_some_and(|m| n > m) {
                st.errors.push(format!(
                    "{shown}: Too many: {n}: must have at most {} items",
                    num("maxItems").unwrap_or_default()
                ));
            }
            list_type(schema, items, shown, st);
            let olds = old.and_then(Value::as_array);
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let old_item = olds.and_then(|o| correlate(schema, item, o));
                    validate(sub, item, old_item, &format!("{at}[{i}]"), false, st);
                }
            }
        }
        Value::Object(map) => {
            let n = map.len() as f64;
            if num("maxProperties").is_some_and(|m| n > m) {
                st.errors.push(format!(
                    "{shown}: Too many: {n}: must have at most {} items",
                    num("maxProperties").unwrap_or_default()
                ));
            }
            for r in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                if let Some(r) = r.as_str() {
                    if !map.contains_key(r) {
                        st.errors.push(format!("{}: Required value", child(at, r)));
                    }
                }
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                if root && k == "metadata" {
                    continue;
                }
                let old_v = old.and_then(|o| o.get(k));
                if let Some(sub) = props.and_then(|p| p.get(k)).or(extra) {
                    validate(sub, v, old_v, &child(at, k), false, st);
                }
            }
        }
        _ => {}
    }
    for rule in schema.get("x-kubernetes-validations").and_then(Value::as_array).into_iter().flatten() {
        if let Err(e) = cel_rules::check(rule, value, old) {
            st.errors.push(format!("{shown}: Invalid value: \"object\": {e}"));
        }
    }
}

/// The stored item an item of a `map` list corresponds to (by its keys); other lists are
/// not correlated, as in Kubernetes.
fn correlate<'a>(schema: &Value, item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    if schema["x-kubernetes-list-type"] != "map" {
        return None;
    }
    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"].as_array()?.iter().filter_map(Value::as_str).collect();
    old.iter().find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
}

fn list_type(schema: &Value, items: &[Value], at: &str, st: &mut State) {
    match schema["x-kubernetes-list-type"].as_str() {
        Some("set") => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    st.errors.push(format!("{at}[{i}]: Duplicate value: {item}"));
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
                .as_array()
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |item: &Value| -> Map<String, Value> {
                keys.iter()
                    .map(|k| {
                        // A key field left out takes its default, if it has one.
                        let v =
                            item.get(*k).cloned().or_else(|| schema["items"]["properties"][k].get("default").cloned());
                        (k.to_string(), v.unwrap_or(Value::Null))
                    })
                    .collect()
            };
            for (i, item) in items.iter().enumerate() {
                let key = key_of(item);
                if items[..i].iter().any(|o| key_of(o) == key) {
                    st.errors.push(format!("{at}[{i}]: Duplicate value: {}", Value::Object(key)));
                }
            }
        }
        _ => {}
    }
}
