//! Everything one SandboxAgent turns into: the settings ConfigMap, the agent's
//! ServiceAccount and the agent-sandbox `Sandbox`. Pure, so `render` and the reconciler produce the same bytes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::DynamicObject;
use kube::{Resource, ResourceExt};
use serde_json::{json, Value};

use crate::accept::{self, Rejection, REASON_INVALID_SPEC};
use crate::agent_config::{self, PodAdditions, Problem};
use crate::crd::{AgentType, SandboxAgent};
use crate::credentials;
use crate::discovery::{SandboxApiInfo, SandboxVersion};
use crate::options::{Options, ServiceMode, ANNOTATION_RUNTIME_CLASS, ANNOTATION_SERVICE};
use crate::pod::{self, PodInputs, AGENT_SPEC_KEY};
use crate::refs::{Lookup, ObjRef};
use crate::settings::{self, SETTINGS_KEY};

pub const MANAGED_BY: &str = "srt-controller";

/// Annotations that describe the agent object itself and must not be copied onto children.
const NOT_COPIED: &[&str] = &["kubectl.kubernetes.io/last-applied-configuration"];

/// The name of an agent's settings ConfigMap.
pub fn settings_name(agent: &str) -> String {
    format!("{agent}-srt-settings")
}

/// Everything one agent turns into. The Sandbox is finished by [`Desired::sandbox`] once
/// discovery has said which API version the cluster serves.
#[derive(Debug, Clone)]
pub struct Desired {
    pub settings: ConfigMap,
    /// The ServiceAccount named after the agent, as kagent creates it, unless the spec names
    /// an existing one.
    pub service_account: Option<ServiceAccount>,
    sandbox_meta: ObjectMeta,
    sandbox_spec: Value,
    /// The agent's annotation, if it sets one.
    service_override: Option<bool>,
}

impl Desired {
    /// The Sandbox in the version `api` names, with `spec.service` only where that version's
    /// schema declares it (server-side apply refuses undeclared fields).
    pub fn sandbox(&self, api: &SandboxApiInfo, opts: &Options) -> DynamicObject {
        let explicit = self.service_override.or(match opts.sandbox_service {
            ServiceMode::Auto => None,
            ServiceMode::True => Some(true),
            ServiceMode::False => Some(false),
        });
        let declared = api.service_declared.unwrap_or(api.version == SandboxVersion::V1beta1);
        let service = match explicit {
            // Forced, unless the schema is known to lack the field.
            Some(v) if api.service_declared != Some(false) => Some(v),
            Some(_) => None,
            None => declared.then_some(true),
        };
        let mut spec = self.sandbox_spec.clone();
        if let Some(v) = service {
            spec["service"] = json!(v);
        }
        let mut sandbox = DynamicObject::new("", &api.version.resource());
        sandbox.metadata = self.sandbox_meta.clone();
        sandbox.data = json!({ "spec": spec });
        sandbox
    }
}

/// The pod template annotation kagent rolls its pods by: a hash of what the runtime reads at
/// start (config.json without `network`, which srt-settings.json carries live, the agent
/// card and the skills-init config).
pub const CONFIG_HASH: &str = "kagent.dev/config-hash";

/// Why no objects were decided for an agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// It cannot be accepted as it is.
    Rejected(Rejection),
    /// An object it refers to is not known yet (run fetches it and asks again).
    Needs(ObjRef),
}

impl From<Rejection> for Pending {
    fn from(r: Rejection) -> Self {
        Pending::Rejected(r)
    }
}

impl From<Problem> for Pending {
    fn from(p: Problem) -> Self {
        match (p.rejection(), p) {
            (Some(r), _) => Pending::Rejected(r),
            (None, Problem::Needs(r)) => Pending::Needs(r),
            // Only Needs has no rejection.
            (None, other) => {
                Pending::Rejected(Rejection { reason: REASON_INVALID_SPEC, message: format!("{other:?}") })
            }
        }
    }
}

/// kagent's computeConfigHash: the first 8 bytes of a SHA-256, as a decimal u64.
fn config_hash(parts: &[&str]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b).to_string()
}

/// The objects for `agent`, or why it cannot be accepted (yet). `lookup` holds the objects a
/// Declarative agent refers to.
pub fn desired(agent: &SandboxAgent, opts: &Options, lookup: &Lookup) -> Result<Desired, Pending> {
    let deployment = accept::check(&agent.spec)?;
    let name = agent.name_any();
    let namespace = agent.namespace().unwrap_or_else(|| "default".into());
    // kagent's owner reference: the agent controls its children and, under foreground
    // deletion, waits for them.
    let owner: Option<Vec<OwnerReference>> = agent.controller_owner_ref(&()).map(|mut o| {
        o.block_owner_deletion = Some(true);
        vec![o]
    });
    let annotations = copied_annotations(agent);

    // The spec's labels, then srt-controller's: a pod cannot pass for another agent (its
    // `kagent` label is what Services and NetworkPolicies select on).
    let mut pod_labels = deployment.labels.clone();
    pod_labels.extend([
        ("app.kubernetes.io/name".to_string(), name.clone()),
        ("app.kubernetes.io/managed-by".to_string(), MANAGED_BY.to_string()),
        ("app.kubernetes.io/part-of".to_string(), "kagent".to_string()),
        ("app".to_string(), "kagent".to_string()),
        ("kagent".to_string(), name.clone()),
    ]);

    let mut data = BTreeMap::new();
    let cm_annotations = annotations.clone();
    let mut additions = PodAdditions::default();
    let mut hashed: Vec<String> = Vec::new();
    if let (AgentType::Declarative, Some(d)) = (agent.spec.agent_type, agent.spec.declarative.as_ref()) {
        // Serialising a typed spec (strings, maps, JSON values) cannot fail.
        let spec_json = serde_json::to_string_pretty(&agent.spec).unwrap_or_default();
        data.insert(AGENT_SPEC_KEY.to_string(), spec_json + "\n");
        let rendered = agent_config::render(&name, &namespace, &agent.spec, d, lookup)?;
        let mut for_hash: serde_json::Value = serde_json::from_str(&rendered.config_json).unwrap_or_default();
        if let Some(o) = for_hash.as_object_mut() {
            o.remove("network");
        }
        hashed.push(for_hash.to_string());
        hashed.push(rendered.agent_card_json.clone());
        data.insert(agent_config::CONFIG_KEY.to_string(), rendered.config_json);
        data.insert(agent_config::CARD_KEY.to_string(), rendered.agent_card_json);
        additions = rendered.pod;
    }
    let skills_init = crate::skills::init_config(&agent.spec)
        .map_err(|message| Rejection { reason: "InvalidSkills", message: format!("spec.skills: {message}") })?;
    if let Some(cfg) = &skills_init {
        hashed.push(cfg.to_string());
        data.insert(crate::skills::INIT_CONFIG_DATA_KEY.to_string(), cfg.to_string());
    }
    let settings_cm = settings_name(&name);
    // kagent's rule: the spec's serviceAccountName, else the operator's default
    // (--default-service-account-name), else the agent's name, an account of its own, created,
    // labelled and annotated by serviceAccountConfig. (kagent also takes over an account the
    // spec names after the agent; an account the spec names is left alone here, so one made
    // by hand is not refused as NotOwned.)
    let account = deployment
        .service_account_name
        .clone()
        .or_else(|| opts.default_service_account_name.clone().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| name.clone());
    let service_account = (deployment.service_account_name.is_none() && account == name).then(|| {
        let config = deployment.service_account_config.clone().unwrap_or_default();
        let mut labels = pod_labels.clone();
        labels.extend(config.labels);
        // kagent's: the agent's annotations, then serviceAccountConfig's.
        let mut sa_annotations = annotations.clone();
        sa_annotations.extend(config.annotations);
        ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                labels: Some(labels),
                annotations: non_empty(sa_annotations),
                owner_references: owner.clone(),
                ..Default::default()
            },
            ..Default::default()
        }
    });

    let inputs = PodInputs {
        agent_name: &name,
        settings_configmap: &settings_cm,
        service_account: account,
        own_service_account: service_account.is_some(),
        runtime_class_name: runtime_class(agent.annotations().get(ANNOTATION_RUNTIME_CLASS), opts)?,
        additions: &additions,
        skills: skills_init.is_some(),
    };
    let pod_spec = pod::pod_spec(&agent.spec, &deployment, &inputs, opts)?;
    // what the commands may not see is read from the pod as built, so every variable and
    // volume that reaches the agent's container counts, wherever it came from
    let agent_container = pod_spec.containers.iter().find(|c| c.name == pod::CONTAINER_NAME);
    let protection = match agent_container {
        Some(c) => credentials::protection(c, pod_spec.volumes.as_deref().unwrap_or_default(), agent.annotations())?,
        None => credentials::Protection::default(),
    };
    let settings_json = settings::render(agent.spec.allowed_domains(), &protection).map_err(|e| {
        let domains = e.issues().iter().any(|i| i.path.starts_with("network."));
        let reason = if domains { accept::REASON_INVALID_DOMAINS } else { REASON_INVALID_SPEC };
        Rejection { reason, message: e.to_string() }
    })?;
    data.insert(SETTINGS_KEY.to_string(), settings_json);
    let configmap = ConfigMap {
        metadata: ObjectMeta {
            name: Some(settings_cm.clone()),
            namespace: Some(namespace.clone()),
            labels: Some(pod_labels.clone()),
            annotations: non_empty(cm_annotations),
            owner_references: owner.clone(),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };

    let service_override = match agent.annotations().get(ANNOTATION_SERVICE).map(String::as_str) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(Pending::Rejected(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!("annotation {ANNOTATION_SERVICE}: \"{other}\" is not \"true\" or \"false\""),
            }))
        }
    };

    // Agent labels first, pod labels win (kagent's rule).
    let mut sandbox_labels: BTreeMap<String, String> = agent.labels().clone();
    sandbox_labels.extend(pod_labels.clone());
    let mut template_meta = json!({ "labels": pod_labels });
    let mut template_annotations = deployment.annotations.clone();
    if !hashed.is_empty() {
        let parts: Vec<&str> = hashed.iter().map(String::as_str).collect();
        template_annotations.insert(CONFIG_HASH.to_string(), config_hash(&parts));
    }
    if !template_annotations.is_empty() {
        template_meta["annotations"] = json!(template_annotations);
    }
    // Neither `replicas` (v1alpha1) nor `operatingMode` (v1beta1) is set: the server default
    // runs the pod, and `kubectl scale --replicas=0` or a suspension is not undone by the next
    // apply.
    let sandbox_spec = json!({ "podTemplate": { "metadata": template_meta, "spec": pod_spec } });
    let sandbox_meta = ObjectMeta {
        name: Some(name),
        namespace: Some(namespace),
        labels: Some(sandbox_labels),
        annotations: non_empty(annotations),
        owner_references: owner,
        ..Default::default()
    };

    Ok(Desired { settings: configmap, service_account, sandbox_meta, sandbox_spec, service_override })
}

/// Whether `meta` (an existing object) has `agent` among its owners: made for it by
/// srt-controller, or by kagent's controller, which names and owns it the same way.
pub fn owned_by(meta: &ObjectMeta, agent: &SandboxAgent) -> bool {
    let Some(uid) = agent.metadata.uid.as_deref() else { return false };
    // the controller reference, as both controllers set it: a plain reference anyone with
    // write access could add does not make an object the agent's
    meta.owner_references.iter().flatten().any(|o| {
        o.uid == uid
            && o.kind == "SandboxAgent"
            && o.api_version.starts_with("kagent.dev/")
            && o.controller == Some(true)
    })
}

/// Why an agent is refused when an object it would write exists and is not its own.
pub fn not_owned(kind: &str, namespace: &str, name: &str) -> Rejection {
    let way_out = if kind == "ServiceAccount" {
        "rename the agent, or name an account to run as in deployment.serviceAccountName"
    } else {
        "rename the agent, or remove that object if it is a leftover"
    };
    Rejection {
        reason: accept::REASON_NOT_OWNED,
        message: format!(
            "{kind} {namespace}/{name} exists and does not belong to this agent, so srt-controller will not write it \
             (the agent's owner reference would also have it deleted with the agent): {way_out}"
        ),
    }
}

/// The pod's runtime class: the annotation's where the operator set none; the operator's
/// (`--runtime-class-name`, e.g. gVisor) cannot be replaced by an agent. Empty means unset.
fn runtime_class(annotation: Option<&String>, opts: &Options) -> Result<Option<String>, Rejection> {
    let annotation = annotation.filter(|c| !c.is_empty());
    let operator = opts.runtime_class_name.as_ref().filter(|c| !c.is_empty());
    match (annotation, operator) {
        (Some(a), Some(o)) if a != o => Err(Rejection {
            reason: accept::REASON_UNSAFE_SECURITY_CONTEXT,
            message: format!(
                "annotation {ANNOTATION_RUNTIME_CLASS}: \"{a}\" would replace the runtime class srt-controller's \
                 operator set (--runtime-class-name {o}); remove the annotation"
            ),
        }),
        (a, o) => Ok(a.or(o).cloned()),
    }
}

fn copied_annotations(agent: &SandboxAgent) -> BTreeMap<String, String> {
    agent
        .annotations()
        .iter()
        // agent-sandbox reads its own annotations (`agents.x-k8s.io/pod-name` picks the pod)
        .filter(|(k, _)| !NOT_COPIED.contains(&k.as_str()) && !k.starts_with("agents.x-k8s.io/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn non_empty(m: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!m.is_empty()).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_agents_controller_reference_makes_an_object_its_own() {
        let agent: SandboxAgent = serde_json::from_value(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "metadata": {"name": "a", "namespace": "n", "uid": "agent-uid"}, "spec": {"type": "Declarative", "declarative": {}}}))
        .unwrap();
        let meta = |refs: serde_json::Value| -> ObjectMeta {
            serde_json::from_value(json!({"ownerReferences": refs})).unwrap()
        };
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
        assert_eq!(r.reason, accept::REASON_UNSAFE_SECURITY_CONTEXT);
        assert!(r.message.contains("--runtime-class-name gvisor"), "{}", r.message);
        assert_eq!(runtime_class(Some(&empty), &gvisor), Ok(Some("gvisor".into())), "empty is unset");
        assert_eq!(runtime_class(Some(&"gvisor".to_string()), &gvisor), Ok(Some("gvisor".into())));
        assert_eq!(runtime_class(None, &gvisor), Ok(Some("gvisor".into())));
        assert_eq!(runtime_class(Some(&runc), &none), Ok(Some("runc".into())));
        assert_eq!(runtime_class(Some(&empty), &none), Ok(None));
    }
}
