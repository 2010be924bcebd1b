use super::*;

#[test]
fn only_the_agents_controller_reference_makes_an_object_its_own() {
    let agent: SandboxAgent = serde_json::from_value(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "metadata": {"name": "a", "namespace": "n", "uid": "agent-uid"}, "spec": {"type": "Declarative", "declarative": {}}}))
    .unwrap();
    let meta =
        |refs: serde_json::Value| -> ObjectMeta { serde_json::from_value(json!({"ownerReferences": refs})).unwrap() };
    let reference = |uid: &str, controller: bool, api: &str| json!([{"apiVersion": api, "kind": "SandboxAgent", "name": "a", "uid": uid, "controller": controller}]);
    assert!(owned_by(&meta(reference("agent-uid", true, "kagent.dev/v1alpha2")), &agent));
    assert!(!owned_by(&meta(reference("agent-uid", false, "kagent.dev/v1alpha2")), &agent), "not the controller");
    assert!(!owned_by(&meta(reference("other-uid", true, "kagent.dev/v1alpha2")), &agent), "an older agent");
    assert!(!owned_by(&meta(reference("agent-uid", true, "example.com/v1")), &agent), "another group");
    assert!(!owned_by(&ObjectMeta::default(), &agent), "no owner");
}

fn agent(manifest: serde_json::Value) -> SandboxAgent {
    serde_json::from_value(manifest).unwrap()
}

fn with_model() -> Lookup {
    let mut l = Lookup::complete();
    l.insert(
        ObjRef::new(crate::refs::Kind::ModelConfig, "n", "gpt"),
        Some(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig",
            "metadata": {"name": "gpt", "namespace": "n"},
            "spec": {"provider": "OpenAI", "model": "gpt-4o", "apiKeySecret": "openai", "apiKeySecretKey": "key"}})),
    );
    l
}

fn declarative(extra: serde_json::Value) -> SandboxAgent {
    let mut spec = json!({"type": "Declarative", "declarative": {"modelConfig": "gpt", "systemMessage": "Hi."}});
    json_merge(&mut spec, extra);
    agent(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "metadata": {"name": "a", "namespace": "n"}, "spec": spec}))
}

fn json_merge(into: &mut serde_json::Value, from: serde_json::Value) {
    match (into, from) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                json_merge(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn pod_of(d: &Desired) -> serde_json::Value {
    let api = SandboxApiInfo::for_release("0.5.6").unwrap();
    d.sandbox(&api, &Options::default()).data["spec"]["podTemplate"].clone()
}

fn env_of(pod: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    pod["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_string(), e.get("value").cloned().unwrap_or_default()))
        .collect()
}

/// kagent puts its own variables after the spec's, so they win: a spec's KAGENT_NAME,
/// KAGENT_URL or OTEL_* gives way to kagent's (and srt-controller's), each name once.
#[test]
fn kagents_own_variables_and_the_otel_passthrough_win_over_the_specs() {
    let a = agent(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "metadata": {"name": "a", "namespace": "n"},
        "spec": {"type": "BYO", "byo": {"deployment": {"image": "x", "env": [
            {"name": "LOG_LEVEL", "value": "debug"},
            {"name": "KAGENT_NAME", "value": "someone-else"},
            {"name": "KAGENT_URL", "value": "http://elsewhere:1"},
            {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://spec:4317"}]}}}}));
    let opts = Options {
        otel_env: vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT".into(), "http://collector.monitoring:4317".into()),
            ("OTEL_TRACING_ENABLED".into(), "true".into()),
        ],
        ..Options::default()
    };
    let d = desired(&a, &opts, &Lookup::complete()).unwrap();
    let api = SandboxApiInfo::for_release("0.5.6").unwrap();
    let env = env_of(&d.sandbox(&api, &opts).data["spec"]["podTemplate"]);
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "each name once: {names:?}");
    let value = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()).unwrap();
    assert_eq!(value("LOG_LEVEL"), "debug");
    assert_eq!(value("KAGENT_NAME"), "a");
    assert_eq!(value("KAGENT_URL"), crate::options::DEFAULT_KAGENT_URL);
    assert_eq!(value("OTEL_EXPORTER_OTLP_ENDPOINT"), "http://collector.monitoring:4317");
    assert_eq!(value("OTEL_TRACING_ENABLED"), "true");
    assert_eq!(names[0], "LOG_LEVEL", "the spec's come first: {names:?}");
    // without OTEL_* in the controller's environment the spec's own stays
    let d = desired(&a, &Options::default(), &Lookup::complete()).unwrap();
    let env = env_of(&pod_of(&d));
    assert!(env.contains(&("OTEL_EXPORTER_OTLP_ENDPOINT".to_string(), json!("http://spec:4317"))), "{env:?}");
}

/// `runtime: go` runs the Go image, and `imageRegistry` replaces the registry of either.
#[test]
fn runtime_go_and_image_registry_choose_the_image() {
    let image = |extra| {
        let d = desired(&declarative(extra), &Options::default(), &with_model()).unwrap();
        pod_of(&d)["spec"]["containers"][0]["image"].as_str().unwrap().to_string()
    };
    assert_eq!(image(json!({})), crate::options::DEFAULT_RUNTIME_IMAGE);
    assert_eq!(image(json!({"declarative": {"runtime": "go"}})), crate::options::DEFAULT_GO_RUNTIME_IMAGE);
    assert_eq!(
        image(json!({"declarative": {"deployment": {"imageRegistry": "registry.example:5000"}}})),
        "registry.example:5000/kagent-dev/kagent/app:0.9.12"
    );
    assert_eq!(
        image(json!({"declarative": {"runtime": "go", "deployment": {"imageRegistry": "mirror.example/"}}})),
        "mirror.example/kagent-dev/kagent/golang-adk:0.9.12-full"
    );
}

/// kagent's pod labels and config-hash: the hash follows what the runtime reads at start
/// (the model, the system message) and not `allowedDomains`, which srt reads live.
#[test]
fn the_pod_has_kagents_labels_and_a_config_hash_of_what_the_runtime_reads_at_start() {
    let hash = |extra| {
        let d = desired(&declarative(extra), &Options::default(), &with_model()).unwrap();
        let t = pod_of(&d);
        assert_eq!(t["metadata"]["labels"]["app"], "kagent");
        assert_eq!(t["metadata"]["labels"]["kagent"], "a");
        t["metadata"]["annotations"][CONFIG_HASH].as_str().unwrap().to_string()
    };
    let base = hash(json!({}));
    assert!(base.parse::<u64>().is_ok(), "kagent's form, a decimal u64: {base}");
    assert_eq!(hash(json!({})), base, "the same input, the same hash");
    assert_eq!(hash(json!({"sandbox": {"network": {"allowedDomains": ["api.github.com"]}}})), base);
    assert_ne!(hash(json!({"declarative": {"systemMessage": "Bye."}})), base);
    assert_ne!(hash(json!({"skills": {"refs": ["ghcr.io/x/skill:1"]}})), base);
    let mut other_model = with_model();
    other_model.insert(
        ObjRef::new(crate::refs::Kind::ModelConfig, "n", "gpt"),
        Some(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig",
            "metadata": {"name": "gpt", "namespace": "n"},
            "spec": {"provider": "OpenAI", "model": "gpt-4.1", "apiKeySecret": "openai", "apiKeySecretKey": "key"}})),
    );
    let d = desired(&declarative(json!({})), &Options::default(), &other_model).unwrap();
    assert_ne!(pod_of(&d)["metadata"]["annotations"][CONFIG_HASH], json!(base), "a ModelConfig edit");
    // a BYO agent's image reads no config.json: no hash
    let byo = agent(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "metadata": {"name": "a", "namespace": "n"}, "spec": {"type": "BYO", "byo": {"deployment": {"image": "x"}}}}));
    let d = desired(&byo, &Options::default(), &Lookup::complete()).unwrap();
    assert!(pod_of(&d)["metadata"].get("annotations").is_none());
}

/// kagent's ServiceAccount: the agent's annotations, then serviceAccountConfig's.
#[test]
fn the_service_account_carries_the_agents_annotations() {
    let mut a = declarative(json!({"declarative": {"deployment": {"serviceAccountConfig": {
        "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/from-config", "team": "b"}}}}}));
    a.metadata.annotations = Some(
        [
            ("team".to_string(), "a".to_string()),
            ("iam.gke.io/gcp-service-account".to_string(), "a@p.iam.gserviceaccount.com".to_string()),
            (NOT_COPIED[0].to_string(), "{}".to_string()),
        ]
        .into(),
    );
    let d = desired(&a, &Options::default(), &with_model()).unwrap();
    let sa = d.service_account.unwrap().metadata.annotations.unwrap();
    assert_eq!(sa["iam.gke.io/gcp-service-account"], "a@p.iam.gserviceaccount.com");
    assert_eq!(sa["eks.amazonaws.com/role-arn"], "arn:aws:iam::1:role/from-config");
    assert_eq!(sa["team"], "b", "serviceAccountConfig's win");
    assert!(!sa.contains_key(NOT_COPIED[0]));
}

#[test]
fn an_agent_cannot_replace_the_operators_runtime_class() {
    let gvisor = Options { runtime_class_name: Some("gvisor".into()), ..Options::default() };
    let none = Options::default();
    let runc = "runc".to_string();
    let empty = String::new();
    let r = runtime_class(Some(&runc), &gvisor).unwrap_err();
    assert_eq!(r.reason, rejection::REASON_UNSAFE_SECURITY_CONTEXT);
    assert!(r.message.contains("--runtime-class-name gvisor"), "{}", r.message);
    assert_eq!(runtime_class(Some(&empty), &gvisor), Ok(Some("gvisor".into())), "empty is unset");
    assert_eq!(runtime_class(Some(&"gvisor".to_string()), &gvisor), Ok(Some("gvisor".into())));
    assert_eq!(runtime_class(None, &gvisor), Ok(Some("gvisor".into())));
    assert_eq!(runtime_class(Some(&runc), &none), Ok(Some("runc".into())));
    assert_eq!(runtime_class(Some(&empty), &none), Ok(None));
}

/// A webhook's secrets are added after this render: the pod template's injector annotations
/// are what the rendered settings deny by, and an unknown injector is refused until its paths
/// are named.
#[test]
fn an_injectors_directories_are_denied_in_the_rendered_settings() {
    let settings = |d: &Desired| -> serde_json::Value {
        serde_json::from_str(&d.settings.data.as_ref().unwrap()[SETTINGS_KEY]).unwrap()
    };
    let vault = declarative(json!({"declarative": {"deployment": {"annotations": {
        "vault.hashicorp.com/agent-inject": "true",
        "vault.hashicorp.com/agent-inject-secret-db": "database/creds/app",
        "vault.hashicorp.com/secret-volume-path-db": "/srv/db"}}}}));
    let d = desired(&vault, &Options::default(), &with_model()).unwrap();
    let fs = &settings(&d)["filesystem"];
    for path in ["/vault/secrets", "/srv/db"] {
        assert!(fs["denyRead"].as_array().unwrap().contains(&json!(path)), "{path}: {fs}");
        assert!(fs["listable"].as_array().unwrap().contains(&json!(path)), "{path}: {fs}");
    }
    // the annotations still reach the pod, where the webhook reads them
    assert_eq!(pod_of(&d)["metadata"]["annotations"]["vault.hashicorp.com/agent-inject"], "true");

    let unknown =
        declarative(json!({"declarative": {"deployment": {"annotations": {"secrets.example.com/inject": "true"}}}}));
    let r = match desired(&unknown, &Options::default(), &with_model()) {
        Err(Pending::Rejected(r)) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(r.reason, crate::injectors::REASON_INJECTED_PATHS_UNNAMED, "{}", r.message);
    let mut named = unknown.clone();
    named.metadata.annotations =
        Some([(crate::injectors::ANNOTATION_INJECTED_PATHS.to_string(), "/etc/example-secrets".to_string())].into());
    let d = desired(&named, &Options::default(), &with_model()).unwrap();
    assert!(settings(&d)["filesystem"]["denyRead"].as_array().unwrap().contains(&json!("/etc/example-secrets")));
}
