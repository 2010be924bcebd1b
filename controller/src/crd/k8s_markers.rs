//! Kubernetes 1.36's API markers that k8s-openapi's schemas leave out and controller-gen
//! writes into every CRD that embeds the types (kagent v0.9.12's among them, built against
//! `k8s.io/api v0.36.2`): list types and map keys (`+listType`, `+listMapKey`), atomic
//! structs (`+structType=atomic`), defaults (`+default`), the quantity and int-or-string
//! forms, and the bounds of `metav1.Condition`. Keyed by the OpenAPI name of the type; the
//! test `tests/crd_matches_kagent.rs` holds the generated CRD to kagent's.
//!
//! Without them the API server would let a SandboxAgent through that the Sandbox apply then
//! refuses (two `env` entries of one name), treat `cpu: "lots"` as a quantity, or keep a
//! field kagent's CRD prunes.

use serde_json::{json, Value};

/// Keys put on the definition of a type itself.
fn type_markers(name: &str) -> Option<Value> {
    Some(match name {
        "io.k8s.api.core.v1.ConfigMapEnvSource" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.ConfigMapKeySelector" => json!({"required": ["key"], "x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.ConfigMapProjection" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.ConfigMapVolumeSource" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.FileKeySelector" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.LocalObjectReference" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.NodeSelector" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.NodeSelectorTerm" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.ObjectFieldSelector" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.ResourceFieldSelector" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.SecretEnvSource" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.SecretKeySelector" => json!({"required": ["key"], "x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.SecretProjection" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.api.core.v1.TypedLocalObjectReference" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"})
        }
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector" => json!({"x-kubernetes-map-type": "atomic"}),
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        }
        _ => return None,
    })
}

/// Keys put on one field of a type.
const FIELD_MARKERS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "fsType", r#"{"default": "ext4"}"#),
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "readOnly", r#"{"default": false}"#),
    ("io.k8s.api.core.v1.Capabilities", "add", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.Capabilities", "drop", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.CephFSVolumeSource", "monitors", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ConfigMapEnvSource", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.ConfigMapKeySelector", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.ConfigMapProjection", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ConfigMapProjection", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.Container", "args", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.Container", "command", r#"{"x-kubernetes-list-type": "atomic"}"#),
    (
        "io.k8s.api.core.v1.Container",
        "env",
        r#"{"x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map"}"#,
    ),
    ("io.k8s.api.core.v1.Container", "envFrom", r#"{"x-kubernetes-list-type": "atomic"}"#),
    (
        "io.k8s.api.core.v1.Container",
        "ports",
        r#"{"x-kubernetes-list-map-keys": ["containerPort", "protocol"], "x-kubernetes-list-type": "map"}"#,
    ),
    ("io.k8s.api.core.v1.Container", "resizePolicy", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.Container", "restartPolicyRules", r#"{"x-kubernetes-list-type": "atomic"}"#),
    (
        "io.k8s.api.core.v1.Container",
        "volumeDevices",
        r#"{"x-kubernetes-list-map-keys": ["devicePath"], "x-kubernetes-list-type": "map"}"#,
    ),
    (
        "io.k8s.api.core.v1.Container",
        "volumeMounts",
        r#"{"x-kubernetes-list-map-keys": ["mountPath"], "x-kubernetes-list-type": "map"}"#,
    ),
    ("io.k8s.api.core.v1.ContainerPort", "protocol", r#"{"default": "TCP"}"#),
    ("io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes", "values", r#"{"x-kubernetes-list-type": "set"}"#),
    ("io.k8s.api.core.v1.DownwardAPIProjection", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.DownwardAPIVolumeSource", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ExecAction", "command", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.FCVolumeSource", "targetWWNs", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.FCVolumeSource", "wwids", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.FileKeySelector", "optional", r#"{"default": false}"#),
    ("io.k8s.api.core.v1.GRPCAction", "service", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.HTTPGetAction", "httpHeaders", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ISCSIVolumeSource", "iscsiInterface", r#"{"default": "default"}"#),
    ("io.k8s.api.core.v1.ISCSIVolumeSource", "portals", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.LocalObjectReference", "name", r#"{"default": ""}"#),
    (
        "io.k8s.api.core.v1.NodeAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    ("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.NodeSelectorRequirement", "values", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.NodeSelectorTerm", "matchExpressions", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.NodeSelectorTerm", "matchFields", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes", r#"{"x-kubernetes-list-type": "atomic"}"#),
    (
        "io.k8s.api.core.v1.PodAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    (
        "io.k8s.api.core.v1.PodAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    ("io.k8s.api.core.v1.PodAffinityTerm", "matchLabelKeys", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.PodAffinityTerm", "mismatchLabelKeys", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.PodAffinityTerm", "namespaces", r#"{"x-kubernetes-list-type": "atomic"}"#),
    (
        "io.k8s.api.core.v1.PodAntiAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    (
        "io.k8s.api.core.v1.PodAntiAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    ("io.k8s.api.core.v1.PodSecurityContext", "supplementalGroups", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.PodSecurityContext", "sysctls", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.ProjectedVolumeSource", "sources", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.RBDVolumeSource", "keyring", r#"{"default": "/etc/ceph/keyring"}"#),
    ("io.k8s.api.core.v1.RBDVolumeSource", "monitors", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.RBDVolumeSource", "pool", r#"{"default": "rbd"}"#),
    ("io.k8s.api.core.v1.RBDVolumeSource", "user", r#"{"default": "admin"}"#),
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        r#"{"x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map"}"#,
    ),
    ("io.k8s.api.core.v1.ScaleIOVolumeSource", "fsType", r#"{"default": "xfs"}"#),
    ("io.k8s.api.core.v1.ScaleIOVolumeSource", "storageMode", r#"{"default": "ThinProvisioned"}"#),
    ("io.k8s.api.core.v1.SecretEnvSource", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.SecretKeySelector", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.SecretProjection", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.api.core.v1.SecretProjection", "name", r#"{"default": ""}"#),
    ("io.k8s.api.core.v1.SecretVolumeSource", "items", r#"{"x-kubernetes-list-type": "atomic"}"#),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "message", r#"{"maxLength": 32768}"#),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "observedGeneration", r#"{"minimum": 0}"#),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
        "reason",
        r#"{"maxLength": 1024, "minLength": 1, "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"}"#,
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "status", r#"{"enum": ["True", "False", "Unknown"]}"#),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
        "type",
        r#"{"maxLength": 316, "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"}"#,
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
        "matchExpressions",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
        "values",
        r#"{"x-kubernetes-list-type": "atomic"}"#,
    ),
];

/// Puts the markers of `name` on its definition `def`.
pub fn apply(name: &str, def: &mut Value) {
    // controller-gen writes an ObjectMeta below the root (an ephemeral volume's claim
    // template) as a bare object, which the API server stores as given.
    if name == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
        *def = json!({"type": "object"});
        return;
    }
    if let (Some(extra), Some(obj)) = (type_markers(name), def.as_object_mut()) {
        if extra.get("anyOf").is_some() {
            // int-or-string: controller-gen's form, with no `type` beside the `anyOf`.
            obj.remove("type");
            obj.remove("format");
        }
        if let Some(extra) = extra.as_object() {
            obj.extend(extra.clone());
        }
    }
    for (type_name, field, markers) in FIELD_MARKERS {
        if *type_name != name {
            continue;
        }
        let Some(prop) = def.pointer_mut(&format!("/properties/{field}")).and_then(Value::as_object_mut) else {
            continue;
        };
        // The table is literal JSON objects; a test parses every entry.
        if let Ok(Value::Object(extra)) = serde_json::from_str::<Value>(markers) {
            prop.extend(extra);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_marker_is_a_json_object() {
        for (t, f, m) in FIELD_MARKERS {
            assert!(serde_json::from_str::<Value>(m).unwrap().is_object(), "{t}.{f}");
        }
    }
}
