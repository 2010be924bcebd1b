//! SandboxAgents as the API server stores them. The controller watches them untyped, so one
//! object that does not fit the Rust types (stored under another CRD version, say) cannot
//! stop the list for every other agent; it is parsed per reconcile and refused with the path
//! of the problem.

use kube::api::{ApiResource, DynamicObject};

use crate::crd::SandboxAgent;
use crate::rejection::{Rejection, REASON_INVALID_SPEC};

pub fn agent_resource() -> ApiResource {
    ApiResource::erase::<SandboxAgent>(&())
}

/// kagent >= v0.10's `v1alpha3`, read where served (crate::kagent_crd).
pub fn agent_resource_v1alpha3() -> ApiResource {
    let mut r = agent_resource();
    r.version = "v1alpha3".into();
    r.api_version = "kagent.dev/v1alpha3".into();
    r
}

/// A stored object that is not a valid SandboxAgent, or sets fields srt-controller does not
/// carry (crate::carried): its metadata and status (to write the rejection against) and why.
#[derive(Debug)]
pub struct Unreadable {
    pub shell: SandboxAgent,
    pub rejection: Rejection,
}

pub fn parse(obj: &DynamicObject) -> Result<SandboxAgent, Box<Unreadable>> {
    // Serialising a DynamicObject (metadata + JSON data) cannot fail.
    let mut value = serde_json::to_value(obj).unwrap_or_default();
    // kagent's schema lets `spec` be left out; it then reads as an empty spec (type
    // Declarative, no declarative section) and is refused as such.
    if value.get("spec").is_none_or(serde_json::Value::is_null) {
        value["spec"] = serde_json::json!({});
    }
    if value["apiVersion"] == "kagent.dev/v1alpha3" {
        value["spec"] = crate::kagent_crd::from_v1alpha3(value["spec"].take());
        value["apiVersion"] = serde_json::json!("kagent.dev/v1alpha2");
    }
    // what the types would drop is looked for before they drop it
    let not_carried = crate::carried::not_carried(&value);
    let agent = serde_path_to_error::deserialize::<_, SandboxAgent>(value).map_err(|e| {
        let status = obj.data.get("status").cloned().and_then(|s| serde_json::from_value(s).ok());
        let mut shell = SandboxAgent::new(obj.metadata.name.as_deref().unwrap_or_default(), Default::default());
        shell.metadata = obj.metadata.clone();
        shell.status = status;
        Box::new(Unreadable {
            shell,
            rejection: Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!("{}: {}; fix the object to match the SandboxAgent schema", e.path(), e.inner()),
            },
        })
    })?;
    match crate::carried::refusal(&not_carried) {
        Some(rejection) => Err(Box::new(Unreadable { shell: agent, rejection })),
        None => Ok(agent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dynamic(v: serde_json::Value) -> DynamicObject {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_valid_object_parses() {
        let obj = dynamic(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "metadata": {"name": "a", "namespace": "n"},
            "spec": {"type": "BYO", "byo": {"deployment": {"image": "x"}}}}));
        let agent = parse(&obj).unwrap();
        assert_eq!(agent.spec.byo.unwrap().deployment.unwrap().image, "x");
    }

    #[test]
    fn a_missing_spec_and_unnamed_references_read_as_kagent_defaults_them() {
        let obj = dynamic(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "metadata": {"name": "a", "namespace": "n"}}));
        assert_eq!(parse(&obj).unwrap().spec.agent_type, crate::crd::AgentType::Declarative);
        let obj = dynamic(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "metadata": {"name": "a", "namespace": "n"},
            "spec": {"type": "BYO", "byo": {"deployment": {"image": "x", "imagePullSecrets": [{}]}}}}));
        let agent = parse(&obj).unwrap();
        assert_eq!(agent.spec.byo.unwrap().deployment.unwrap().shared.image_pull_secrets[0].name, "");
    }

    #[test]
    fn a_field_the_types_would_drop_is_refused_by_path() {
        // kagent >= v0.10's envFrom, through v1alpha2 and through v1alpha3 (whose flattened
        // byo is read back into deployment first)
        for (version, byo) in [
            ("v1alpha2", json!({"deployment": {"image": "x", "envFrom": [{"secretRef": {"name": "keys"}}]}})),
            ("v1alpha3", json!({"image": "x", "topologySpreadConstraints": []})),
        ] {
            let obj = dynamic(json!({"apiVersion": format!("kagent.dev/{version}"), "kind": "SandboxAgent",
                "metadata": {"name": "a", "namespace": "n", "generation": 2},
                "spec": {"type": "BYO", "byo": byo}, "status": {"observedGeneration": 1}}));
            let bad = parse(&obj).unwrap_err();
            assert_eq!(bad.rejection.reason, crate::carried::REASON_UNSUPPORTED_FIELD, "{version}");
            let path = if version == "v1alpha2" {
                "spec.byo.deployment.envFrom"
            } else {
                "spec.byo.topologySpreadConstraints"
            };
            assert!(bad.rejection.message.starts_with(&format!("{path}: ")), "{version}: {}", bad.rejection.message);
            assert_eq!(bad.shell.metadata.generation, Some(2));
            assert_eq!(bad.shell.status.unwrap().observed_generation, 1);
        }
    }

    #[test]
    fn a_bad_object_names_the_path_and_keeps_its_identity() {
        let obj = dynamic(json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "metadata": {"name": "a", "namespace": "n", "generation": 4},
            "spec": {"type": "BYO", "byo": {"deployment": {"image": "x", "env": "oops"}}},
            "status": {"observedGeneration": 3}}));
        let bad = parse(&obj).unwrap_err();
        assert_eq!(bad.rejection.reason, REASON_INVALID_SPEC);
        assert!(
            bad.rejection.message.starts_with("spec.byo.deployment: invalid type: string"),
            "{}",
            bad.rejection.message
        );
        assert_eq!(bad.shell.metadata.generation, Some(4));
        assert_eq!(bad.shell.status.unwrap().observed_generation, 3);
    }
}
