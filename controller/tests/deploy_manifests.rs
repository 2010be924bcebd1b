#![allow(clippy::unwrap_used, clippy::expect_used)]
//! controller/deploy/ is what users apply: the CRD must be the one the binary prints, RBAC
//! must be exactly what the reconciler uses, and the controller itself unprivileged.

mod apiserver_schema;
mod common;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy").join(file)
}

fn docs(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(deploy(file)).unwrap();
    yaml_serde::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect()
}

#[test]
fn committed_crd_is_the_generated_one() {
    let generated = controller::crd_yaml();
    if std::env::var_os("SRT_BLESS").is_some() {
        std::fs::write(deploy("crd.yaml"), &generated).unwrap();
    }
    let committed = std::fs::read_to_string(deploy("crd.yaml")).unwrap();
    assert!(
        committed == generated,
        "controller/deploy/crd.yaml is stale; SRT_BLESS=1 cargo test -p controller regenerates it"
    );
}

#[test]
fn crd_keeps_kagents_names_columns_and_status() {
    let crd = &docs("crd.yaml")[0];
    assert_eq!(crd["metadata"]["name"], "sandboxagents.kagent.dev");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(
        crd["spec"]["names"],
        json!({"kind": "SandboxAgent", "listKind": "SandboxAgentList", "plural": "sandboxagents", "singular": "sandboxagent"})
    );
    let v = &crd["spec"]["versions"][0];
    assert_eq!(
        (v["name"].as_str(), v["served"].as_bool(), v["storage"].as_bool()),
        (Some("v1alpha2"), Some(true), Some(true))
    );
    assert_eq!(v["subresources"], json!({"status": {}}));
    let columns: Vec<(&str, &str)> = v["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["jsonPath"].as_str().unwrap()))
        .collect();
    assert_eq!(
        columns,
        vec![
            ("Ready", ".status.conditions[?(@.type=='Ready')].status"),
            ("Accepted", ".status.conditions[?(@.type=='Accepted')].status")
        ]
    );
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
    for field in ["type", "declarative", "byo", "description", "skills", "allowedNamespaces", "sandbox", "platform"] {
        assert!(spec["properties"].get(field).is_some(), "spec.{field} missing");
    }
    assert_eq!(spec["properties"]["type"]["enum"], json!(["Declarative", "BYO"]));
    assert_eq!(spec["properties"]["platform"]["enum"], json!(["agent-sandbox", "substrate"]));
    assert_eq!(spec["properties"]["platform"]["default"], "agent-sandbox");
    let domains = &spec["properties"]["sandbox"]["properties"]["network"]["properties"]["allowedDomains"];
    assert_eq!(domains["items"]["type"], "string");
}

#[test]
fn rbac_is_exactly_what_the_reconciler_uses() {
    let all = docs("rbac.yaml");
    let role = all.iter().find(|d| d["kind"] == "ClusterRole").unwrap();
    let rules: Vec<(String, String, Vec<String>)> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let verbs: Vec<String> =
                r["verbs"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
            let groups = r["apiGroups"].as_array().unwrap().clone();
            let resources = r["resources"].as_array().unwrap().clone();
            groups.into_iter().flat_map(move |g| {
                let verbs = verbs.clone();
                resources
                    .clone()
                    .into_iter()
                    .map(move |res| (g.as_str().unwrap().to_string(), res.as_str().unwrap().to_string(), verbs.clone()))
            })
        })
        .collect();
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let expected = vec![
        ("kagent.dev".to_string(), "sandboxagents".to_string(), v(&["get", "list", "watch"])),
        ("kagent.dev".into(), "sandboxagents/status".into(), v(&["patch"])),
        ("kagent.dev".into(), "sandboxagents/finalizers".into(), v(&["update"])),
        ("".into(), "configmaps".into(), v(&["get", "list", "watch", "create", "patch"])),
        // what Declarative agents refer to, read as kagent's translator reads it
        ("".into(), "services".into(), v(&["get", "list", "watch"])),
        ("kagent.dev".into(), "modelconfigs".into(), v(&["get", "list", "watch"])),
        ("kagent.dev".into(), "remotemcpservers".into(), v(&["get", "list", "watch"])),
        ("kagent.dev".into(), "agents".into(), v(&["get", "list", "watch"])),
        ("kagent.dev".into(), "mcpservers".into(), v(&["get", "list", "watch"])),
        ("".into(), "serviceaccounts".into(), v(&["get", "create", "patch"])),
        // Declarative agents' config Secrets: their metadata read (is it the agent's?) and
        // applied; never listed or watched
        ("".into(), "secrets".into(), v(&["get", "create", "patch"])),
        ("agents.x-k8s.io".into(), "sandboxes".into(), v(&["get", "list", "watch", "create", "patch"])),
        ("events.k8s.io".into(), "events".into(), v(&["create", "patch"])),
    ];
    assert_eq!(rules, expected);
    let text = std::fs::read_to_string(deploy("rbac.yaml")).unwrap();
    assert!(!text.contains("\"*\"") && !text.contains("pods"));
    let binding = all.iter().find(|d| d["kind"] == "ClusterRoleBinding").unwrap();
    let sa = all.iter().find(|d| d["kind"] == "ServiceAccount").unwrap();
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], sa["metadata"]["namespace"]);
}

#[test]
fn the_takeover_role_adds_only_delete_on_sandboxes_for_the_same_account() {
    let all = docs("rbac-takeover.yaml");
    let role = all.iter().find(|d| d["kind"] == "ClusterRole").unwrap();
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": ["agents.x-k8s.io"], "resources": ["sandboxes"], "verbs": ["delete"]}])
    );
    let binding = all.iter().find(|d| d["kind"] == "ClusterRoleBinding").unwrap();
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    let main = docs("rbac.yaml");
    let sa = main.iter().find(|d| d["kind"] == "ServiceAccount").unwrap();
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], sa["metadata"]["namespace"]);
    let text = std::fs::read_to_string(deploy("rbac.yaml")).unwrap();
    assert!(!text.contains("\"delete\""), "rbac.yaml itself grants no delete");
}

#[test]
fn the_controller_runs_unprivileged_as_one_replica() {
    let all = docs("deployment.yaml");
    let d = all.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(d["spec"]["replicas"], 1);
    assert_eq!(d["spec"]["strategy"]["type"], "Recreate");
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "srt-controller");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let c = &pod["containers"][0];
    assert_eq!(c["args"], json!(["run", "--log-json"]));
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["privileged"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
}

fn schema_problems(manifest: &Value) -> Vec<String> {
    let crd = &docs("crd.yaml")[0];
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let spec = manifest.get("spec").cloned().unwrap_or(Value::Null);
    common::schema::check(&schema["properties"]["spec"], &spec, "spec")
}

#[test]
fn kagent_manifests_fit_the_schema_without_losing_a_field() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for case in ["seed-sandbox-agent", "seed-allowlist", "seed-skills", "byo", "invalid-domains"] {
        let text = std::fs::read_to_string(golden.join(format!("{case}.yaml"))).unwrap();
        // the agent is the first document; the objects it refers to follow
        let manifest: Value =
            serde::Deserialize::deserialize(yaml_serde::Deserializer::from_str(&text).next().unwrap()).unwrap();
        assert_eq!(schema_problems(&manifest), Vec::<String>::new(), "{case}");
    }
    // kagent v0.9.7+ fields, and a declarative spec full of fields this controller never reads.
    let rich = json!({"type": "Declarative", "platform": "substrate", "substrate": {"workerPoolRef": {"name": "pool"}},
        "allowedNamespaces": {"from": "All"},
        "declarative": {"modelConfig": "m", "stream": true, "tools": [{"type": "McpServer", "mcpServer": {"name": "x"}}],
                        "a2aConfig": {"skills": [{"name": "s"}, {"id": "t", "name": "T"}]}, "executeCodeBlocks": true}});
    assert_eq!(schema_problems(&json!({"spec": rich})), Vec::<String>::new());
    // kagent v0.9.7-v0.9.12: an A2A skill needs a name; its id is optional.
    let id_only = json!({"spec": {"type": "Declarative", "declarative": {"a2aConfig": {"skills": [{"id": "s"}]}}}});
    assert_eq!(
        schema_problems(&id_only),
        vec!["spec.declarative.a2aConfig.skills[0].name: Required value".to_string()]
    );
}

#[test]
fn the_schema_check_catches_what_the_api_server_would() {
    let bad = json!({"spec": {"type": "Imperative", "sandbox": {"netwrk": {}, "network": {"allowedDomains": "x"}}}});
    let problems = schema_problems(&bad);
    assert!(problems.iter().any(|p| p.starts_with("spec.type: Unsupported value: \"Imperative\"")), "{problems:?}");
    assert!(
        problems.contains(&"spec.sandbox.netwrk: field not declared in schema (pruned)".to_string()),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p
                .starts_with("spec.sandbox.network.allowedDomains: Invalid value: \"string\": must be of type array")),
        "{problems:?}"
    );
}

/// The API server only accepts structural schemas: every node has a type, unless it is an
/// int-or-string or an open object.
#[test]
fn crd_schema_is_structural() {
    fn walk(n: &Value, at: &str, bad: &mut Vec<String>) {
        let open = n["x-kubernetes-int-or-string"] == true || n["x-kubernetes-preserve-unknown-fields"] == true;
        if n.get("type").is_none() && !open {
            bad.push(at.to_string());
        }
        for key in ["anyOf", "oneOf", "allOf", "$ref"] {
            if n.get(key).is_some() && !open {
                bad.push(format!("{at} ({key})"));
            }
        }
        if let Some(props) = n.get("properties").and_then(|p| p.as_object()) {
            for (k, v) in props {
                walk(v, &format!("{at}.{k}"), bad);
            }
        }
        if let Some(items) = n.get("items") {
            walk(items, &format!("{at}[]"), bad);
        }
        if let Some(extra) = n.get("additionalProperties").filter(|a| a.is_object()) {
            walk(extra, &format!("{at}{{}}"), bad);
        }
    }
    let crd = &docs("crd.yaml")[0];
    let mut bad = Vec::new();
    walk(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "", &mut bad);
    assert_eq!(bad, Vec::<String>::new());
}

/// `kubectl apply -f crd.yaml -f rbac.yaml -f deployment.yaml` (the README's order) creates
/// every namespace before anything is put in it.
#[test]
fn the_readme_apply_order_creates_the_namespace_first() {
    let mut created = std::collections::BTreeSet::new();
    for file in ["crd.yaml", "rbac.yaml", "deployment.yaml"] {
        for d in docs(file) {
            if d["kind"] == "Namespace" {
                created.insert(d["metadata"]["name"].as_str().unwrap().to_string());
            }
            if let Some(ns) = d["metadata"]["namespace"].as_str() {
                assert!(
                    created.contains(ns),
                    "{file}: {} {} is in {ns}, not created yet",
                    d["kind"],
                    d["metadata"]["name"]
                );
            }
        }
    }
    assert!(created.contains("srt-system"));
}
