//! Living beside kagent: kagent v0.9.x always starts its own SandboxAgent controller, which
//! writes the same Sandbox (named after the agent) with plain updates. Server-side apply keeps
//! fields another manager set that way, so a Sandbox kagent made (or still writes) carries
//! fields srt-controller never asked for: kagent's privileged pod, its Secret volume, its
//! image. This module finds such writers in the Sandbox's `managedFields`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::api::DynamicObject;

/// The one field manager for everything this controller writes: any other manager's
/// fields in the Sandbox's spec are a conflict.
pub const FIELD_MANAGER: &str = "srt-controller";

/// The condition srt-controller adds (status True) while another writer owns Sandbox spec
/// fields. Absent otherwise.
pub const CONDITION: &str = "ControllerConflict";
pub const REASON_FOREIGN_FIELDS: &str = "SandboxSpecWrittenByAnotherManager";
/// The event of a takeover (`--take-over-sandboxes`).
pub const REASON_TOOK_OVER: &str = "SandboxReplaced";

/// Another manager's hold on the Sandbox's spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignWriter {
    pub manager: String,
    pub operation: String,
    pub time: Option<String>,
}

/// Managers other than srt-controller that own anything under `spec` of the main resource.
/// agent-sandbox's own controller writes only metadata and status, and `kubectl scale` goes
/// through the scale subresource, so neither counts.
pub fn foreign_spec_writers(sandbox: &DynamicObject) -> Vec<ForeignWriter> {
    let entries: &[ManagedFieldsEntry] = sandbox.metadata.managed_fields.as_deref().unwrap_or(&[]);
    entries
        .iter()
        .filter(|e| e.manager.as_deref() != Some(FIELD_MANAGER))
        .filter(|e| e.subresource.as_deref().unwrap_or("").is_empty())
        .filter(|e| e.fields_v1.as_ref().is_some_and(|f| f.0.get("f:spec").is_some()))
        .map(writer)
        .collect()
}

fn writer(e: &ManagedFieldsEntry) -> ForeignWriter {
    ForeignWriter {
        manager: e.manager.clone().unwrap_or_else(|| "(unnamed)".into()),
        operation: e.operation.clone().unwrap_or_default(),
        time: e.time.as_ref().map(|t| t.0.to_string()),
    }
}

/// The reason while another manager writes the agent's status conditions (kagent >= v0.10
/// reconciles SandboxAgents on Agent Substrate and writes no Sandbox, so only its status
/// writes show it).
pub const REASON_FOREIGN_STATUS: &str = "StatusWrittenByAnotherController";

/// Managers other than srt-controller that own the agent's status conditions.
pub fn foreign_status_writers(entries: &[ManagedFieldsEntry]) -> Vec<ForeignWriter> {
    entries
        .iter()
        .filter(|e| e.manager.as_deref() != Some(FIELD_MANAGER))
        .filter(|e| e.subresource.as_deref() == Some("status"))
        .filter(|e| e.fields_v1.as_ref().is_some_and(|f| f.0.pointer("/f:status/f:conditions").is_some()))
        .map(writer)
        .collect()
}

/// The condition's message for [`foreign_status_writers`].
pub fn status_message(writers: &[ForeignWriter]) -> String {
    let who: Vec<String> = writers.iter().map(|w| format!("\"{}\" ({})", w.manager, w.operation)).collect();
    format!(
        "the agent's status conditions are also written by {}: another controller reconciles this agent (kagent's \
         own SandboxAgent controller cannot be switched off; kagent >= v0.10 runs the agent on Agent Substrate). \
         Keep one controller per agent: leave this namespace out of kagent's controller.watchNamespaces, or out of \
         srt-controller's (--namespace, --opt-in)",
        who.join(", ")
    )
}

/// What the user reads in the condition: who, and the two ways out.
pub fn message(namespace: &str, name: &str, writers: &[ForeignWriter], take_over_tried: bool) -> String {
    let who: Vec<String> = writers
        .iter()
        .map(|w| match &w.time {
            Some(t) => format!("\"{}\" ({} at {t})", w.manager, w.operation),
            None => format!("\"{}\" ({})", w.manager, w.operation),
        })
        .collect();
    let mut m = format!(
        "Sandbox {namespace}/{name} has spec fields written by {}, not by srt-controller: kagent's own SandboxAgent \
         controller made it or still manages this agent, and server-side apply keeps fields set by plain updates. ",
        who.join(", ")
    );
    if take_over_tried {
        m.push_str(
            "srt-controller already replaced this Sandbox once and it was written again, so another controller is \
             still running for this agent: stop kagent's SandboxAgent controller for this namespace (kagent's \
             controller.watchNamespaces) or keep srt-controller away from it (--namespace, --opt-in).",
        );
    } else {
        m.push_str(&format!(
            "If kagent's controller still runs for this namespace, let only one controller own the agent (kagent's \
             controller.watchNamespaces; srt-controller's --namespace or --opt-in). If the Sandbox is left over from \
             kagent, delete the old Sandbox (kubectl delete sandbox -n {namespace} {name}; srt-controller recreates \
             it) or run srt-controller with --take-over-sandboxes."
        ));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sandbox(managed: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": "agents.x-k8s.io/v1alpha1", "kind": "Sandbox",
            "metadata": {"name": "a", "namespace": "n", "managedFields": managed}}))
        .unwrap()
    }

    #[test]
    fn another_controllers_status_conditions_are_noticed() {
        let s = sandbox(json!([
            {"manager": "srt-controller", "operation": "Apply", "subresource": "status", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {"f:conditions": {}}}},
            {"manager": "kagent", "operation": "Update", "subresource": "status", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {"f:conditions": {}, "f:observedGeneration": {}}}},
            {"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}}
        ]));
        let w = foreign_status_writers(s.metadata.managed_fields.as_deref().unwrap());
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].manager, "kagent");
        assert!(status_message(&w).contains("controller.watchNamespaces"));
    }

    #[test]
    fn only_other_managers_of_the_spec_count() {
        let s = sandbox(json!([
            {"manager": "srt-controller", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:podTemplate": {}}}},
            {"manager": "agent-sandbox-controller", "operation": "Update", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:agents.x-k8s.io/pod-name": {}}}}},
            {"manager": "agent-sandbox-controller", "operation": "Update", "subresource": "status", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {}}},
            {"manager": "kubectl", "operation": "Update", "subresource": "scale", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "kagent", "operation": "Update", "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:podTemplate": {}}}}
        ]));
        let w = foreign_spec_writers(&s);
        assert_eq!(
            w,
            vec![ForeignWriter {
                manager: "kagent".into(),
                operation: "Update".into(),
                time: Some("2026-11-20T10:00:00Z".into())
            }]
        );
        let m = message("n", "a", &w, false);
        assert!(m.contains("\"kagent\" (Update at 2026-11-20T10:00:00Z)"), "{m}");
        assert!(m.contains("delete the old Sandbox (kubectl delete sandbox -n n a"), "{m}");
        assert!(message("n", "a", &w, true).contains("already replaced this Sandbox once"));
        assert!(foreign_spec_writers(&sandbox(json!([]))).is_empty());
    }
}
