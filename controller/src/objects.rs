//! Everything one SandboxAgent turns into: the settings ConfigMap, the agent's
//! ServiceAccount and the agent-sandbox `Sandbox`. Pure, so `render` and the reconciler produce the same bytes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::DynamicObject;
use kube::{Resource, ResourceExt};
use serde_json::{json, Value};

use crate::accept;
use crate::agent_config::{self, PodAdditions, Problem};
use crate::crd::{AgentType, SandboxAgent};
use crate::credentials;
use crate::discovery::{SandboxApiInfo, SandboxVersion};
use crate::options::{Options, ServiceMode, ANNOTATION_RUNTIME_CLASS, ANNOTATION_SERVICE};
use crate::pod::{self, PodInputs};
use crate::pod_layout::{AGENT_SPEC_KEY, CONTAINER_NAME, SETTINGS_KEY};
use crate::refs::{Lookup, ObjRef};
use crate::rejection::{self, Rejection, REASON_INVALID_SPEC};
use crate::settings;

pub const MANAGED_BY: &str = "srt-controller";

/// Annotations that describe the agent object itself and must not be copied onto children.
const NOT_COPIED: &[&str] = &["kubectl.kubernetes.io/last-applied-configuration"];

/// The name of an agent's settings ConfigMap.
pub fn settings_name(agent: &str) -> String {
    format!("{agent}-srt-settings")
}

/// The name of a Declarative agent's config Secret (config.json, agent-card.json,
/// agent-spec.json; kagent keeps the first two in a Secret `<agent>` too).
pub fn config_secret_name(agent: &str) -> String {
    format!("{agent}-srt-config")
}

/// Everything one agent turns into. The Sandbox is finished by [`Desired::sandbox`] once
/// discovery has said which API version the cluster serves.
#[derive(Debug, Clone)]
pub struct Desired {
    pub settings: ConfigMap,
    /// A Declarative agent's config.json, agent card and spec: inline header values and the
    /// spec's variables, kept from the namespace's `view` role as kagent keeps them.
    pub config: Option<Secret>,
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
    let mut config_data = BTreeMap::new();
    let cm_annotations = annotations.clone();
    let mut additions = PodAdditions::default();
    let mut hashed: Vec<String> = Vec::new();
    if let (AgentType::Declarative, Some(d)) = (agent.spec.agent_type, agent.spec.declarative.as_ref()) {
        // Serialising a typed spec (strings, maps, JSON values) cannot fail.
        let spec_json = serde_json::to_string_pretty(&agent.spec).unwrap_or_default();
        config_data.insert(AGENT_SPEC_KEY.to_string(), spec_json + "\n");
        let rendered = agent_config::render(&name, &namespace, &agent.spec, d, lookup)?;
        let mut for_hash: serde_json::Value = serde_json::from_str(&rendered.config_json).unwrap_or_default();
        if let Some(o) = for_hash.as_object_mut() {
            o.remove("network");
        }
        hashed.push(for_hash.to_string());
        hashed.push(rendered.agent_card_json.clone());
        config_data.insert(agent_config::CONFIG_KEY.to_string(), rendered.config_json);
        config_data.insert(agent_config::CARD_KEY.to_string(), rendered.agent_card_json);
        additions = rendered.pod;
    }
    let skills_init = crate::skills::init_config(&agent.spec)
        .map_err(|message| Rejection { reason: "InvalidSkills", message: format!("spec.skills: {message}") })?;
    if let Some(cfg) = &skills_init {
        hashed.push(cfg.to_string());
        data.insert(crate::skills::INIT_CONFIG_DATA_KEY.to_string(), cfg.to_string());
    }
    let settings_cm = settings_name(&name);
    let config_secret = (!config_data.is_empty()).then(|| config_secret_name(&name));
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
        config_secret: config_secret.as_deref(),
        service_account: account,
        own_service_account: service_account.is_some(),
        runtime_class_name: runtime_class(agent.annotations().get(ANNOTATION_RUNTIME_CLASS), opts)?,
        additions: &additions,
        skills: skills_init.is_some(),
    };
    let pod_spec = pod::pod_spec(&agent.spec, &deployment, &inputs, opts)?;
    // what the commands may not see is read from the pod as built, so every variable and
    // volume that reaches the agent's container counts, wherever it came from
    let agent_container = pod_spec.containers.iter().find(|c| c.name == CONTAINER_NAME);
    let mut protection = match agent_container {
        Some(c) => credentials::protection(c, pod_spec.volumes.as_deref().unwrap_or_default(), agent.annotations())?,
        None => credentials::Protection::default(),
    };
    // and what a mutating webhook will add after this render, as the pod asks for it
    let sources = [
        ("metadata.annotations", agent.annotations()),
        ("metadata.labels", agent.labels()),
        ("deployment.annotations", &deployment.annotations),
        ("deployment.labels", &deployment.labels),
    ];
    crate::injectors::apply(&mut protection, &sources, agent.annotations())?;
    let settings_json = settings::render(agent.spec.allowed_domains(), &protection).map_err(|e| {
        let domains = e.issues().iter().any(|i| i.path.starts_with("network."));
        let reason = if domains { rejection::REASON_INVALID_DOMAINS } else { REASON_INVALID_SPEC };
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

    let config = config_secret.map(|secret| Secret {
        metadata: ObjectMeta {
            name: Some(secret),
            namespace: Some(namespace.clone()),
            labels: Some(pod_labels.clone()),
            annotations: non_empty(annotations.clone()),
            owner_references: owner.clone(),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        string_data: Some(config_data),
        ..Default::default()
    });

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

    Ok(Desired { settings: configmap, config, service_account, sandbox_meta, sandbox_spec, service_override })
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
        reason: rejection::REASON_NOT_OWNED,
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
            reason: rejection::REASON_UNSAFE_SECURITY_CONTEXT,
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
#[path = "objects_tests.rs"]
mod tests;
