//! What the API server does with a value under a CRD's structural schema, through the same
//! admission the in-memory API server applies (../apiserver_schema): pruned fields, type,
//! enum, bound, pattern, list-key and CEL problems, each as one line.

use std::path::Path;

use serde_json::{json, Value};

// The crate including this module declares `mod apiserver_schema;` (one copy per crate).
use crate::apiserver_schema;

/// Problems a real API server would have with `value` at `at` under `schema`: a pruned field
/// is reported as "<path>: field not declared in schema (pruned)".
pub fn check(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let wrapper = json!({"type": "object", "properties": {"x": schema}});
    let rename = |p: &str| -> String {
        let rest = p.strip_prefix('.').unwrap_or(p).strip_prefix('x').unwrap_or(p);
        format!("{at}{rest}")
    };
    match apiserver_schema::admit(&wrapper, json!({ "x": value }), None, apiserver_schema::Unknown::Refuse) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| match e.strip_suffix(": field not declared in schema") {
                Some(path) => format!("{}: field not declared in schema (pruned)", rename(path)),
                None => rename(e),
            })
            .collect(),
    }
}

/// An agent-sandbox release's real Sandbox CRD (tests/fixtures/upstream) as
/// `{"release", "served": [storage version first, then the others], "spec": {version: the
/// spec schema}}`.
pub fn sandbox_fixture(release: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/upstream/agent-sandbox-{release}/agents.x-k8s.io_sandboxes.yaml"));
    let crd: Value = yaml_serde::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut versions: Vec<&Value> =
        crd["spec"]["versions"].as_array().unwrap().iter().filter(|v| v["served"] == true).collect();
    versions.sort_by_key(|v| v["storage"] != true);
    let served: Vec<Value> = versions.iter().map(|v| v["name"].clone()).collect();
    let spec: serde_json::Map<String, Value> = versions
        .iter()
        .map(|v| {
            (v["name"].as_str().unwrap().to_string(), v["schema"]["openAPIV3Schema"]["properties"]["spec"].clone())
        })
        .collect();
    json!({"release": release, "served": served, "spec": spec})
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
