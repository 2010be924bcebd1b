//! The two places where the schema kube-derive and k8s-openapi generate is stricter than
//! kagent's CRD (controller-gen), fixed on the generated CRD:
//!
//! * `spec` is optional in kagent (`json:"spec,omitempty"`); kube-derive marks it required.
//! * Kubernetes' object references (`LocalObjectReference`, `ConfigMapKeySelector`,
//!   `SecretKeySelector`, `ConfigMapVolumeSource`, ...) declare `name` with `default: ""`
//!   since Kubernetes 1.30, so `imagePullSecrets: [{}]` is valid; k8s-openapi's schema
//!   requires it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{CustomResourceDefinition, JSONSchemaProps};

/// How the upstream schemas describe such a `name`.
const REFERENT_NAME: &str = "Name of the referent";

pub fn kagent_compatible(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        if let Some(root) = version.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut()) {
            if let Some(required) = root.required.as_mut() {
                required.retain(|r| r != "spec");
                if required.is_empty() {
                    root.required = None;
                }
            }
            default_reference_names(root);
        }
    }
    crd
}

fn default_reference_names(s: &mut JSONSchemaProps) {
    if let Some(props) = s.properties.as_mut() {
        let referent =
            props.get("name").and_then(|n| n.description.as_deref()).is_some_and(|d| d.starts_with(REFERENT_NAME));
        if referent {
            if let Some(name) = props.get_mut("name") {
                name.default = Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON(
                    serde_json::Value::String(String::new()),
                ));
            }
            if let Some(required) = s.required.as_mut() {
                required.retain(|r| r != "name");
                if required.is_empty() {
                    s.required = None;
                }
            }
        }
        if let Some(props) = s.properties.as_mut() {
            props.values_mut().for_each(default_reference_names);
        }
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(
        items,
    )) = s.items.as_mut()
    {
        default_reference_names(items);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrBool::Schema(
        extra,
    )) = s.additional_properties.as_mut()
    {
        default_reference_names(extra);
    }
}

/// An optional string enum as controller-gen writes it: a plain `type: string` with `enum`
/// (no `null` member, which a structural schema would refuse) and kagent's default.
pub(crate) fn string_enum(values: &[&str], default: Option<&str>, description: &str) -> schemars::Schema {
    let mut s = schemars::json_schema!({ "type": "string", "enum": values, "description": description });
    if let Some(d) = default {
        s.insert("default".into(), d.into());
    }
    s
}
