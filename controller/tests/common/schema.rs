//! What the API server does with a value under a CRD's structural schema, for the parts
//! tests can check without one: type, enum, required, item and length bounds, and the fields
//! it would prune (or, under server-side apply, refuse: "field not declared in schema").
//! CEL rules are not evaluated here; tests compare them as text.

use std::path::Path;

use serde_json::Value;

pub fn check(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    check_into(schema, value, at, &mut problems);
    problems
}

fn check_into(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if value.is_null() {
        if schema["nullable"] != true {
            problems.push(format!("{at}: null not allowed"));
        }
        return;
    }
    if let Some(options) = schema.get("enum").and_then(|e| e.as_array()) {
        if !options.contains(value) {
            problems.push(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    let type_ok = match schema["type"].as_str() {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string() || schema["x-kubernetes-int-or-string"] == true,
        Some("integer") => value.is_i64() || value.is_u64() || schema["x-kubernetes-int-or-string"] == true,
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        _ => true,
    };
    if !type_ok {
        problems.push(format!("{at}: {value} is not of type {}", schema["type"]));
        return;
    }
    let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        if bound("minimum").is_some_and(|m| n < m) || bound("maximum").is_some_and(|m| n > m) {
            problems.push(format!("{at}: {value} is out of range"));
        }
    }
    let len = value.as_array().map(Vec::len).or_else(|| value.as_str().map(|s| s.chars().count()));
    if let Some(len) = len.map(|l| l as f64) {
        let (min, max) = if value.is_array() { ("minItems", "maxItems") } else { ("minLength", "maxLength") };
        if bound(min).is_some_and(|m| len < m) || bound(max).is_some_and(|m| len > m) {
            problems.push(format!("{at}: length {len} outside {min}/{max}"));
        }
    }
    if let (Some(map), Some(props)) = (value.as_object(), schema.get("properties").and_then(|p| p.as_object())) {
        for (k, v) in map {
            match props.get(k) {
                Some(s) => check_into(s, v, &format!("{at}.{k}"), problems),
                None if schema["x-kubernetes-preserve-unknown-fields"] == true => {}
                None => problems.push(format!("{at}.{k}: field not declared in schema (pruned)")),
            }
        }
        for r in schema.get("required").and_then(|r| r.as_array()).into_iter().flatten() {
            let r = r.as_str().unwrap();
            let defaulted = props.get(r).is_some_and(|p| p.get("default").is_some());
            if !map.contains_key(r) && !defaulted {
                problems.push(format!("{at}.{r}: required"));
            }
        }
    } else if let (Some(map), Some(extra)) = (value.as_object(), schema.get("additionalProperties")) {
        for (k, v) in map {
            check_into(extra, v, &format!("{at}.{k}"), problems);
        }
    }
    if let (Some(items), Some(s)) = (value.as_array(), schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            check_into(s, v, &format!("{at}[{i}]"), problems);
        }
    }
}

/// A hand-written Sandbox schema fixture (tests/fixtures/sandbox-crd-<release>.json).
pub fn sandbox_fixture(release: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/sandbox-crd-{release}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The OpenAPI v3 document an API server publishes for one served version of the fixture's
/// release, as discovery reads it.
pub fn openapi_document(fixture: &Value, version: &str) -> Value {
    serde_json::json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "components": {"schemas": {
            format!("io.x-k8s.agents.{version}.Sandbox"): {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "kind": "Sandbox", "version": version}],
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "spec": fixture["spec"][version], "status": {"type": "object"}}
            },
            format!("io.x-k8s.agents.{version}.SandboxList"): {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "kind": "SandboxList", "version": version}]
            }
        }}
    })
}
