#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The in-memory API server's admission (tests/apiserver_schema/) under the real upstream
//! CRDs and ours: what a real API server prunes, defaults, refuses and which CEL rules fail,
//! each shown by a manifest that trips it. kagent v0.9.12's CRD and ours must give the same
//! verdict on every manifest here.

mod apiserver_schema;

use std::path::Path;

use apiserver_schema::{admit, version_schema, Unknown};
use serde_json::{json, Value};

fn upstream(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream").join(rel);
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn kagent() -> &'static Value {
    static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    S.get_or_init(|| version_schema(&upstream("kagent-v0.9.12/kagent.dev_sandboxagents.yaml"), "v1alpha2").unwrap())
}

fn ours() -> &'static Value {
    static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let crd: Value = yaml_serde::from_str(&controller::crd_yaml()).unwrap();
        version_schema(&crd, "v1alpha2").unwrap()
    })
}

fn agent(spec: Value) -> Value {
    json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
           "metadata": {"name": "a", "namespace": "kagent"}, "spec": spec})
}

/// Admits under both CRDs and insists they agree.
fn both(spec: Value) -> Result<Value, Vec<String>> {
    let k = admit(kagent(), agent(spec.clone()), None, Unknown::Prune);
    let o = admit(ours(), agent(spec.clone()), None, Unknown::Prune);
    match (&k, &o) {
        (Ok(a), Ok(b)) => assert_eq!(a.object, b.object, "kagent's and ours store {spec} differently"),
        (Err(a), Err(b)) => assert_eq!(a, b, "kagent's and ours refuse {spec} differently"),
        _ => panic!("kagent's CRD says {k:?}, ours {o:?} for {spec}"),
    }
    o.map(|a| a.object)
}

fn refused(spec: Value) -> Vec<String> {
    both(spec.clone()).expect_err(&format!("{spec} was admitted"))
}

#[test]
fn defaults_are_applied_as_kagents_crd_applies_them() {
    let stored = both(json!({"declarative": {"systemMessage": "hi", "context": {"compaction": {}},
        "deployment": {"extraContainers": [{"name": "s", "ports": [{"containerPort": 80}]}]}}}))
    .unwrap();
    assert_eq!(stored["spec"]["type"], "Declarative");
    assert_eq!(stored["spec"]["platform"], "agent-sandbox");
    assert_eq!(stored["spec"]["declarative"]["runtime"], "python");
    assert_eq!(
        stored["spec"]["declarative"]["context"]["compaction"],
        json!({"compactionInterval": 5, "overlapSize": 2})
    );
    assert_eq!(stored["spec"]["declarative"]["deployment"]["extraContainers"][0]["ports"][0]["protocol"], "TCP");
}

#[test]
fn undeclared_fields_are_pruned_or_refused_under_server_side_apply() {
    let spec = json!({"type": "BYO", "byo": {"deployment": {"image": "x", "workDir": "/app",
        "volumeMounts": [{"name": "v", "mountPath": "/data", "bindMountOptions": ["nosuid"]}]}}});
    let a = admit(ours(), agent(spec.clone()), None, Unknown::Prune).unwrap();
    assert_eq!(
        a.pruned,
        vec!["spec.byo.deployment.volumeMounts[0].bindMountOptions", "spec.byo.deployment.workDir"],
        "a Kubernetes 1.37 alpha field and a typo are pruned, as kagent's CRD prunes them"
    );
    let b = admit(kagent(), agent(spec.clone()), None, Unknown::Prune).unwrap();
    assert_eq!(a.pruned, b.pruned);
    let e = admit(ours(), agent(spec), None, Unknown::Refuse).unwrap_err();
    assert!(e.contains(&".spec.byo.deployment.workDir: field not declared in schema".to_string()), "{e:?}");
}

#[test]
fn list_map_keys_refuse_duplicates() {
    let e = refused(json!({"declarative": {"systemMessage": "x", "deployment": {"extraContainers": [
        {"name": "s", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}]}}}));
    assert!(e.iter().any(|m| m.contains("extraContainers[0].env[1]: Duplicate value")), "{e:?}");
    // two ports that differ only by the defaulted protocol are the same key
    let e = refused(json!({"declarative": {"systemMessage": "x", "deployment": {"extraContainers": [
        {"name": "s", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]}]}}}));
    assert!(e.iter().any(|m| m.contains("ports[1]: Duplicate value")), "{e:?}");
}

#[test]
fn quantities_must_look_like_quantities() {
    let e = refused(
        json!({"type": "BYO", "byo": {"deployment": {"image": "x", "resources": {"limits": {"cpu": "lots"}}}}}),
    );
    assert!(
        e.iter().any(|m| m.starts_with("spec.byo.deployment.resources.limits.cpu: Invalid value: \"lots\"")),
        "{e:?}"
    );
    both(json!({"type": "BYO", "byo": {"deployment": {"image": "x", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}}}}}))
        .unwrap();
}

#[test]
fn kagents_cel_rules_are_evaluated() {
    let cases = [
        (
            json!({"type": "BYO"}),
            "declarative must be specified if type is Declarative, or byo must be specified if type is BYO",
        ),
        (
            json!({"platform": "substrate", "skills": {"refs": ["x"]}, "declarative": {"systemMessage": "x"}}),
            "spec.skills is not supported when spec.platform is substrate",
        ),
        (
            json!({"substrate": {}, "declarative": {"systemMessage": "x"}}),
            "spec.substrate may only be set when spec.platform is substrate",
        ),
        (
            json!({"declarative": {"systemMessage": "x", "systemMessageFrom": {"type": "ConfigMap", "name": "c", "key": "k"}}}),
            "systemMessage and systemMessageFrom are mutually exclusive",
        ),
        (
            json!({"declarative": {"systemMessage": "x", "tools": [{"type": "McpServer"}]}}),
            "type.mcpServer must be specified for McpServer filter.type",
        ),
        (
            json!({"declarative": {"systemMessage": "x", "tools": [{"type": "McpServer", "mcpServer": {"name": "t", "toolNames": ["a"], "requireApproval": ["b"]}}]}}),
            "each RequireApproval entry must also appear in ToolNames",
        ),
        (
            json!({"declarative": {"systemMessage": "x", "tools": [{"type": "Agent", "agent": {"name": "b"}, "headersFrom": [{"name": "h"}]}]}}),
            "Exactly one of value or valueFrom must be specified",
        ),
        (
            json!({"allowedNamespaces": {"from": "Selector"}, "declarative": {"systemMessage": "x"}}),
            "selector must be specified when from is Selector",
        ),
        (
            json!({"type": "BYO", "byo": {"deployment": {"image": "x", "serviceAccountName": "s", "serviceAccountConfig": {}}}}),
            "serviceAccountName and serviceAccountConfig are mutually exclusive",
        ),
    ];
    for (spec, message) in cases {
        let e = refused(spec.clone());
        assert!(e.iter().any(|m| m.ends_with(message)), "{spec}: {e:?}");
    }
    // skills with neither refs nor gitRefs: kagent's CRD has no rule for it, neither has ours
    both(json!({"skills": {}, "declarative": {"systemMessage": "x"}})).unwrap();
}

#[test]
fn bounds_and_required_fields() {
    let e = refused(json!({"declarative": {"systemMessage": "x", "a2aConfig": {"skills": [{"id": "only-an-id"}]}}}));
    assert_eq!(e, vec!["spec.declarative.a2aConfig.skills[0].name: Required value".to_string()]);
    let e = refused(json!({"declarative": {"systemMessage": "x", "memory": {"modelConfig": "m", "ttlDays": 0}}}));
    assert!(e[0].starts_with("spec.declarative.memory.ttlDays: Invalid value: 0"), "{e:?}");
    let e = refused(json!({"type": "Imperative"}));
    assert!(e.iter().any(|m| m.starts_with("spec.type: Unsupported value")), "{e:?}");
    let tools: Vec<Value> = (0..21).map(|i| json!({"type": "Agent", "agent": {"name": format!("a{i}")}})).collect();
    let e = refused(json!({"declarative": {"systemMessage": "x", "tools": tools}}));
    assert!(e.iter().any(|m| m.starts_with("spec.declarative.tools: Too many: 21")), "{e:?}");
}

#[test]
fn a_condition_message_over_32768_characters_is_refused() {
    let status = |len: usize| {
        let mut a = agent(json!({"declarative": {"systemMessage": "x"}}));
        a["status"] = json!({"observedGeneration": 1, "conditions": [{"type": "Accepted", "status": "False",
            "reason": "InvalidAllowedDomains", "message": "m".repeat(len), "lastTransitionTime": "2026-11-25T00:00:00Z"}]});
        a
    };
    assert!(admit(ours(), status(32768), None, Unknown::Refuse).is_ok());
    let e = admit(kagent(), status(32769), None, Unknown::Refuse).unwrap_err();
    assert_eq!(e, vec!["status.conditions[0].message: Too long: may not be more than 32768 bytes".to_string()]);
}

/// agent-sandbox's own rules: from v0.5.3 volumeClaimTemplates cannot change (a transition
/// rule, evaluated against the stored object).
#[test]
fn agent_sandbox_transition_rules_use_the_stored_object() {
    let schema = version_schema(&upstream("agent-sandbox-v0.5.6/agents.x-k8s.io_sandboxes.yaml"), "v1beta1").unwrap();
    let sandbox = |size: &str| {
        json!({"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": {"name": "a"},
               "spec": {"podTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                        "volumeClaimTemplates": [{"metadata": {"name": "w"}, "spec": {"resources": {"requests": {"storage": size}}}}]}})
    };
    let first = admit(&schema, sandbox("1Gi"), None, Unknown::Refuse).unwrap().object;
    admit(&schema, sandbox("1Gi"), Some(&first), Unknown::Refuse).unwrap();
    let e = admit(&schema, sandbox("2Gi"), Some(&first), Unknown::Refuse).unwrap_err();
    assert!(e.iter().any(|m| m.starts_with("spec: Invalid value")), "{e:?}");
    // the same change on v0.5.0, which has no such rule, is admitted
    let old = version_schema(&upstream("agent-sandbox-v0.5.0/agents.x-k8s.io_sandboxes.yaml"), "v1beta1").unwrap();
    admit(&old, sandbox("2Gi"), Some(&first), Unknown::Refuse).unwrap();
}

/// Every kagent-style sample: kagent's CRD and ours store it the same way.
#[test]
fn the_samples_get_the_same_verdict_from_kagents_crd_and_ours() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kagent-samples");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let manifest: Value = yaml_serde::from_str(&text).unwrap();
        both(manifest["spec"].clone()).unwrap();
        n += 1;
    }
    assert!(n >= 7);
}
