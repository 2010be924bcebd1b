//! Everything one SandboxAgent turns into: the settings ConfigMap and the agent-sandbox
//! `Sandbox`. Pure, so `render` and the reconciler produce the same bytes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Resource, ResourceExt};
use serde_json::json;

use crate::accept::{self, Rejection, REASON_INVALID_SPEC};
use crate::crd::{AgentType, SandboxAgent};
use crate::options::{Options, ANNOTATION_RUNTIME_CLASS, ANNOTATION_SERVICE};
use crate::pod::{self, PodInputs, AGENT_SPEC_KEY};
use crate::settings::{self, SETTINGS_KEY};

pub const SANDBOX_GROUP: &str = "agents.x-k8s.io";
pub const SANDBOX_VERSION: &str = "v1alpha1";
pub const SANDBOX_KIND: &str = "Sandbox";
pub const SANDBOX_PLURAL: &str = "sandboxes";
pub const MANAGED_BY: &str = "srt-controller";

/// Annotations that describe the agent object itself and must not be copied onto children.
const NOT_COPIED: &[&str] = &["kubectl.kubernetes.io/last-applied-configuration"];

/// `agents.x-k8s.io/v1alpha1` `Sandbox`, the API this controller writes.
pub fn sandbox_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(SANDBOX_GROUP, SANDBOX_VERSION, SANDBOX_KIND),
        SANDBOX_PLURAL,
    )
}

/// The name of an agent's settings ConfigMap.
pub fn settings_name(agent: &str) -> String {
    format!("{agent}-srt-settings")
}

#[derive(Debug, Clone)]
pub struct Desired {
    pub settings: ConfigMap,
    pub sandbox: DynamicObject,
}

/// The objects for `agent`, or why it cannot be accepted.
pub fn desired(agent: &SandboxAgent, opts: &Options) -> Result<Desired, Rejection> {
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

    let mut pod_labels = BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), name.clone()),
        ("app.kubernetes.io/managed-by".to_string(), MANAGED_BY.to_string()),
        ("app.kubernetes.io/part-of".to_string(), "kagent".to_string()),
        ("kagent".to_string(), name.clone()),
    ]);
    pod_labels.extend(deployment.labels.clone());

    let settings_json = settings::render(agent.spec.allowed_domains())
        .map_err(|e| Rejection { reason: accept::REASON_INVALID_DOMAINS, message: e.to_string() })?;
    let mut data = BTreeMap::from([(SETTINGS_KEY.to_string(), settings_json)]);
    if agent.spec.agent_type == AgentType::Declarative {
        // Serialising a typed spec (strings, maps, JSON values) cannot fail.
        let spec_json = serde_json::to_string_pretty(&agent.spec).unwrap_or_default();
        data.insert(AGENT_SPEC_KEY.to_string(), spec_json + "\n");
    }
    let settings_cm = settings_name(&name);
    let configmap = ConfigMap {
        metadata: ObjectMeta {
            name: Some(settings_cm.clone()),
            namespace: Some(namespace.clone()),
            labels: Some(pod_labels.clone()),
            annotations: non_empty(annotations.clone()),
            owner_references: owner.clone(),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };

    let inputs = PodInputs {
        agent_name: &name,
        settings_configmap: &settings_cm,
        runtime_class_name: agent
            .annotations()
            .get(ANNOTATION_RUNTIME_CLASS)
            .cloned()
            .or_else(|| opts.runtime_class_name.clone())
            .filter(|c| !c.is_empty()),
    };
    let pod_spec = pod::pod_spec(&agent.spec, &deployment, &inputs, opts)?;
    let service = match agent.annotations().get(ANNOTATION_SERVICE).map(String::as_str) {
        None => opts.sandbox_service,
        Some("true") => true,
        Some("false") => false,
        Some(other) => {
            return Err(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!("annotation {ANNOTATION_SERVICE}: \"{other}\" is not \"true\" or \"false\""),
            })
        }
    };

    // Agent labels first, pod labels win (kagent's rule).
    let mut sandbox_labels: BTreeMap<String, String> = agent.labels().clone();
    sandbox_labels.extend(pod_labels.clone());
    let mut template_meta = json!({ "labels": pod_labels });
    if !deployment.annotations.is_empty() {
        template_meta["annotations"] = json!(deployment.annotations);
    }
    // `replicas` is left to the server default (1) so `kubectl scale --replicas=0` is not
    // undone by the next apply.
    let mut spec = json!({ "podTemplate": { "metadata": template_meta, "spec": pod_spec } });
    if service {
        spec["service"] = json!(true);
    }
    let mut sandbox = DynamicObject::new(&name, &sandbox_resource()).within(&namespace);
    sandbox.metadata.labels = Some(sandbox_labels);
    sandbox.metadata.annotations = non_empty(annotations);
    sandbox.metadata.owner_references = owner;
    sandbox.data = json!({ "spec": spec });

    Ok(Desired { settings: configmap, sandbox })
}

fn copied_annotations(agent: &SandboxAgent) -> BTreeMap<String, String> {
    agent
        .annotations()
        .iter()
        .filter(|(k, _)| !NOT_COPIED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn non_empty(m: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!m.is_empty()).then_some(m)
}
