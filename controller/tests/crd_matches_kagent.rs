#![allow(clippy::unwrap_used, clippy::expect_used)]
//! srt-controller's SandboxAgent CRD against kagent v0.9.12's (the upstream file, in
//! tests/fixtures/upstream/): a structural diff of the whole CRD, descriptions aside, where
//! every difference must be one docs/kubernetes.md lists with its reason. A field kagent's API
//! server would prune and ours keeps (or the other way round), a missing list type,
//! default, bound or CEL rule, fails here.

use std::path::Path;

use serde_json::Value;

/// Differences docs/kubernetes.md's "Living beside kagent" lists, by path, with the reason there.
const LISTED: &[&str] = &[
    // ours is not written by controller-gen, so it carries no controller-gen version
    "/metadata/annotations",
];

fn fixture(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream").join(rel);
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn diff(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                if k == "description" {
                    continue;
                }
                let here = format!("{at}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(p, q, &here, out),
                    (Some(p), None) => out.push(format!("{here}: only kagent's has {p}")),
                    (None, Some(q)) => out.push(format!("{here}: only ours has {q}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(p, q, &format!("{at}[{i}]"), out);
            }
        }
        (p, q) if p == q => {}
        // YAML and JSONSchemaProps write `minimum: 1` as 1.0; the API server reads a number.
        (Value::Number(p), Value::Number(q)) if p.as_f64() == q.as_f64() => {}
        (p, q) => out.push(format!("{at}: kagent's {p}, ours {q}")),
    }
}

fn differences() -> Vec<String> {
    let kagent = fixture("kagent-v0.9.12/kagent.dev_sandboxagents.yaml");
    let ours: Value = yaml_serde::from_str(&controller::crd_yaml()).unwrap();
    let mut out = Vec::new();
    diff(&kagent, &ours, "", &mut out);
    out
}

#[test]
fn our_crd_is_kagents_but_for_the_listed_differences() {
    let found = differences();
    let unlisted: Vec<&String> =
        found.iter().filter(|d| !LISTED.iter().any(|l| d.starts_with(&format!("{l}:")))).collect();
    assert!(
        unlisted.is_empty(),
        "differences from kagent v0.9.12's CRD docs/kubernetes.md does not list:\n{unlisted:#?}"
    );
    for listed in LISTED {
        assert!(
            found.iter().any(|d| d.starts_with(&format!("{listed}:"))),
            "{listed} is listed as a difference but is none any more; remove it here and in docs/kubernetes.md"
        );
    }
}

#[test]
fn the_kubernetes_doc_lists_each_difference_with_its_reason() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/kubernetes.md")).unwrap();
    for listed in LISTED {
        assert!(doc.contains(&format!("`{listed}`")), "docs/kubernetes.md does not list `{listed}`");
    }
}

/// The diff itself can fail: a field removed, a default changed, a list type dropped.
#[test]
fn the_diff_notices_a_changed_schema() {
    let kagent = fixture("kagent-v0.9.12/kagent.dev_sandboxagents.yaml");
    let spec = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties";
    for (path, change) in [
        ("/declarative/properties/runtime/default", Value::from("go")),
        (
            "/byo/properties/deployment/properties/extraContainers/items/properties/env/x-kubernetes-list-type",
            Value::from("atomic"),
        ),
        ("/skills/properties/gitRefs/maxItems", Value::from(21)),
    ] {
        let mut changed = kagent.clone();
        *changed.pointer_mut(&format!("{spec}{path}")).unwrap() = change;
        let mut out = Vec::new();
        diff(&kagent, &changed, "", &mut out);
        assert_eq!(out.len(), 1, "{path}: {out:?}");
    }
}
