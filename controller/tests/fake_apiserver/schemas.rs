//! The CRDs the fake serves and what serving an object in another version does to it.

use std::path::Path;

use serde_json::{json, Value};

use crate::apiserver_schema;

fn upstream_crd(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream").join(rel);
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The CRDs the fake serves unless a test installs others.
pub(super) fn default_crds() -> Vec<Value> {
    let ours = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/crd.yaml")).unwrap();
    vec![
        yaml_serde::from_str(&ours).unwrap(),
        upstream_crd("agent-sandbox-v0.5.6/agents.x-k8s.io_sandboxes.yaml"),
        upstream_crd("kagent-v0.9.12/kagent.dev_modelconfigs.yaml"),
        upstream_crd("kagent-v0.9.12/kagent.dev_remotemcpservers.yaml"),
        upstream_crd("kagent-v0.9.12/kagent.dev_agents.yaml"),
        upstream_crd("kmcp-v0.3.0/kagent.dev_mcpservers.yaml"),
    ]
}

/// The key of a custom resource's schema: "group/version/plural".
pub(super) fn schema_key(api_version: &str, plural: &str) -> String {
    format!("{api_version}/{plural}")
}

/// An object stored in one version as a client of `api_version` sees it: the apiVersion
/// changed, and what that version's schema does not declare pruned.
pub(super) fn served_as(o: &Value, api_version: &str, schema: Option<&Value>) -> Value {
    let Some(schema) = schema.filter(|_| o["apiVersion"].as_str().is_some_and(|v| v != api_version)) else {
        return o.clone();
    };
    let mut o = o.clone();
    o["apiVersion"] = json!(api_version);
    match apiserver_schema::admit(schema, o.clone(), None, apiserver_schema::Unknown::Prune) {
        Ok(a) => a.object,
        Err(_) => o,
    }
}
