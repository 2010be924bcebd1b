//! The agent's status as a function of what happened: `Accepted` and `Ready` conditions
//! with kagent's types and reasons, `observedGeneration`, and transition times that only
//! move when a condition's status does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::DynamicObject;

use crate::crd::AgentStatus;

pub const ACCEPTED: &str = "Accepted";
pub const READY: &str = "Ready";

pub const REASON_RECONCILED: &str = "Reconciled";
pub const REASON_RECONCILE_FAILED: &str = "ReconcileFailed";
pub const REASON_WORKLOAD_READY: &str = "WorkloadReady";
pub const REASON_SANDBOX_NOT_FOUND: &str = "SandboxNotFound";
pub const REASON_SANDBOX_READY_PENDING: &str = "SandboxReadyPending";
pub const REASON_SANDBOX_API_MISSING: &str = "SandboxAPIMissing";
pub const REASON_NOT_ACCEPTED: &str = "NotAccepted";

/// One condition before times and generations are filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cond {
    pub type_: &'static str,
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

/// The most characters a condition message may have (`metav1.Condition`'s schema; the API
/// server refuses a status with a longer one).
pub const MAX_MESSAGE: usize = 32768;

impl Cond {
    pub fn new(type_: &'static str, status: &'static str, reason: &str, message: impl Into<String>) -> Self {
        Cond { type_, status, reason: reason.into(), message: bounded(message.into()) }
    }
}

/// `message`, cut to [`MAX_MESSAGE`] characters with a note where it was cut (messages that
/// can grow, such as a list of invalid domains, are summarised before they get here).
pub fn bounded(message: String) -> String {
    const NOTE: &str = " ... (cut: too long for a condition)";
    if message.chars().count() <= MAX_MESSAGE {
        return message;
    }
    let keep = MAX_MESSAGE - NOTE.chars().count();
    let mut out: String = message.chars().take(keep).collect();
    out.push_str(NOTE);
    out
}

pub fn accepted() -> Cond {
    Cond::new(ACCEPTED, "True", REASON_RECONCILED, "SandboxAgent configuration accepted")
}

/// `Ready` mirrored from the Sandbox's own `Ready` condition (kagent's rule: a True
/// condition is reported with reason `WorkloadReady`).
pub fn ready_from_sandbox(sandbox: Option<&DynamicObject>) -> Cond {
    let Some(sandbox) = sandbox else {
        return Cond::new(READY, "False", REASON_SANDBOX_NOT_FOUND, "Sandbox not found");
    };
    let ready = sandbox
        .data
        .pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .and_then(|all| all.iter().find(|c| c.get("type").and_then(|t| t.as_str()) == Some(READY)));
    let Some(ready) = ready else {
        return Cond::new(READY, "Unknown", REASON_SANDBOX_READY_PENDING, "Sandbox Ready condition not yet reported");
    };
    let text = |k: &str| ready.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    // A Ready written for an older generation says nothing about the spec just applied:
    // wait until the Sandbox's controller has seen it. (Older agent-sandbox versions set no
    // observedGeneration anywhere; their Ready is mirrored as it is.)
    let observed = ready
        .get("observedGeneration")
        .or_else(|| sandbox.data.pointer("/status/observedGeneration"))
        .and_then(|g| g.as_i64());
    if let (Some(seen), Some(current)) = (observed, sandbox.metadata.generation) {
        if seen != current {
            return Cond::new(
                READY,
                "Unknown",
                REASON_SANDBOX_READY_PENDING,
                format!("Sandbox status is for generation {seen}; waiting for generation {current}"),
            );
        }
    }
    let message = text("message");
    match text("status").as_str() {
        "True" => Cond::new(READY, "True", REASON_WORKLOAD_READY, message),
        status => {
            let status = if status == "False" { "False" } else { "Unknown" };
            let reason = text("reason");
            let reason = if reason.is_empty() { REASON_SANDBOX_READY_PENDING.to_string() } else { reason };
            Cond { type_: READY, status, reason, message: bounded(message) }
        }
    }
}

/// The status to write: `conds` stamped with `generation`; a condition whose status did not
/// change keeps its `lastTransitionTime`.
pub fn status(previous: Option<&AgentStatus>, conds: &[Cond], generation: i64, now: &Time) -> AgentStatus {
    let old = previous.map(|s| s.conditions.as_slice()).unwrap_or(&[]);
    let conditions = conds
        .iter()
        .map(|c| {
            let since = old
                .iter()
                .find(|o| o.type_ == c.type_ && o.status == c.status)
                .map(|o| o.last_transition_time.clone())
                .unwrap_or_else(|| now.clone());
            Condition {
                type_: c.type_.into(),
                status: c.status.into(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                observed_generation: Some(generation),
                last_transition_time: since,
            }
        })
        .collect();
    AgentStatus { observed_generation: generation, conditions }
}

/// Whether writing `next` would change anything (so unchanged agents cost no write).
pub fn changed(previous: Option<&AgentStatus>, next: &AgentStatus) -> bool {
    previous != Some(next)
}

/// The status of `type_` in `status`, if present.
pub fn condition_status<'a>(status: Option<&'a AgentStatus>, type_: &str) -> Option<&'a str> {
    status?.conditions.iter().find(|c| c.type_ == type_).map(|c| c.status.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;
    use kube::api::ApiResource;

    fn sandbox(status: serde_json::Value) -> DynamicObject {
        let mut s = DynamicObject::new("a", &ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&()));
        s.data = serde_json::json!({ "status": status });
        s
    }

    fn t(secs: i64) -> Time {
        Time(Timestamp::from_second(secs).unwrap())
    }

    #[test]
    fn ready_true_becomes_workload_ready() {
        let s = sandbox(serde_json::json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "Pod is Ready; Service Exists"}
        ]}));
        let c = ready_from_sandbox(Some(&s));
        assert_eq!((c.status, c.reason.as_str()), ("True", REASON_WORKLOAD_READY));
        assert_eq!(c.message, "Pod is Ready; Service Exists");
    }

    #[test]
    fn ready_of_an_older_generation_is_not_mirrored() {
        let mut s = sandbox(serde_json::json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "ok", "observedGeneration": 1}
        ]}));
        s.metadata.generation = Some(2);
        let c = ready_from_sandbox(Some(&s));
        assert_eq!((c.status, c.reason.as_str()), ("Unknown", REASON_SANDBOX_READY_PENDING), "{}", c.message);
        assert!(c.message.contains("generation 1") && c.message.contains("generation 2"));
        s.metadata.generation = Some(1);
        assert_eq!(ready_from_sandbox(Some(&s)).status, "True", "the same generation is mirrored");
        // status.observedGeneration when the condition carries none
        let mut t = sandbox(serde_json::json!({"observedGeneration": 4, "conditions": [
            {"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "ok"}
        ]}));
        t.metadata.generation = Some(5);
        assert_eq!(ready_from_sandbox(Some(&t)).status, "Unknown");
    }

    #[test]
    fn not_ready_passes_the_sandbox_reason_through() {
        let s = sandbox(serde_json::json!({"conditions": [
            {"type": "Ready", "status": "False", "reason": "DependenciesNotReady", "message": "Pod exists with phase: Pending"}
        ]}));
        let c = ready_from_sandbox(Some(&s));
        assert_eq!((c.status, c.reason.as_str()), ("False", "DependenciesNotReady"));
    }

    #[test]
    fn long_messages_are_cut_to_what_the_schema_allows() {
        let c = Cond::new(ACCEPTED, "False", "X", "é".repeat(40_000));
        assert_eq!(c.message.chars().count(), MAX_MESSAGE);
        assert!(c.message.ends_with("(cut: too long for a condition)"));
        assert_eq!(Cond::new(ACCEPTED, "False", "X", "short").message, "short");
    }

    #[test]
    fn missing_sandbox_or_condition() {
        assert_eq!(ready_from_sandbox(None).reason, REASON_SANDBOX_NOT_FOUND);
        let c = ready_from_sandbox(Some(&sandbox(serde_json::json!({}))));
        assert_eq!((c.status, c.reason.as_str()), ("Unknown", REASON_SANDBOX_READY_PENDING));
    }

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let first = status(None, &[accepted(), ready_from_sandbox(None)], 1, &t(100));
        let again = status(Some(&first), &[accepted(), ready_from_sandbox(None)], 1, &t(200));
        assert!(!changed(Some(&first), &again), "same conditions must not be rewritten");
        let s = sandbox(serde_json::json!({"conditions": [{"type": "Ready", "status": "True"}]}));
        let ready = status(Some(&again), &[accepted(), ready_from_sandbox(Some(&s))], 2, &t(300));
        assert!(changed(Some(&again), &ready));
        assert_eq!(ready.conditions[0].last_transition_time, t(100), "Accepted stayed True");
        assert_eq!(ready.conditions[1].last_transition_time, t(300), "Ready flipped");
        assert_eq!(ready.observed_generation, 2);
        assert_eq!(condition_status(Some(&ready), READY), Some("True"));
    }
}
