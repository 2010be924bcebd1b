//! Fields of a SandboxAgent that srt-controller does not carry into what it renders. serde
//! ignores a key the types do not declare, so a newer kagent's field (v0.10's
//! `deployment.envFrom`, `topologySpreadConstraints`, `deploymentAnnotations`,
//! `skills.s3Refs`, ...) or a misspelt one would vanish without a word, and an agent whose
//! keys come through `envFrom` would start without them. Instead every field of the object
//! is checked against the schema the types generate (the SandboxAgent CRD's, which is what
//! the types read): one it does not declare is refused with its JSON path, as is a declared
//! field the renderer has no place for (`replicas` other than 1).

use std::sync::OnceLock;

use serde_json::Value;

use crate::rejection::Rejection;

/// Why an agent is refused when it sets fields srt-controller does not carry.
pub const REASON_UNSUPPORTED_FIELD: &str = "UnsupportedField";

/// How many paths a refusal names one by one (a condition message has a bounded length).
const NAMED: usize = 20;

/// The top-level keys of a stored object; `status` is srt-controller's to write.
const OBJECT_KEYS: &[&str] = &["apiVersion", "kind", "metadata", "spec", "status"];

/// The `spec` schema of the SandboxAgent CRD srt-controller's types generate.
fn spec_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let crd = crate::crd::schema::kagent_compatible(crate::crd::generate::crd());
        // A CRD is maps, strings and numbers: serialising it cannot fail.
        let crd = serde_json::to_value(crd).unwrap_or_default();
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
    })
}

/// The JSON paths of what `object` (a whole SandboxAgent, in the v1alpha2 shape) sets that
/// srt-controller would not carry: keys its schema does not declare, and declared fields it
/// does not render. Nulls are skipped, as the API server drops them.
pub fn not_carried(object: &Value) -> Vec<String> {
    let mut out: Vec<String> = object
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| !OBJECT_KEYS.contains(&k.as_str()) && !v.is_null())
        .map(|(k, _)| k.clone())
        .collect();
    walk(spec_schema(), &object["spec"], "spec", &mut out);
    // kagent's replica count: a Sandbox runs exactly one pod
    for kind in ["byo", "declarative"] {
        let replicas = &object["spec"][kind]["deployment"]["replicas"];
        if !replicas.is_null() && replicas != 1 {
            out.push(format!("spec.{kind}.deployment.replicas ({replicas}: a Sandbox runs exactly one pod)"));
        }
    }
    out
}

fn walk(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (k, v) in map.iter().filter(|(_, v)| !v.is_null()) {
                let here = format!("{at}.{k}");
                match (properties.and_then(|p| p.get(k)), additional) {
                    (Some(s), _) => walk(s, v, &here, out),
                    (None, Some(Value::Bool(true))) => {}
                    (None, Some(a)) if a.is_object() => walk(a, v, &here, out),
                    (None, _) => out.push(here),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(s, v, &format!("{at}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// The refusal for `paths` (from [`not_carried`]), or `None` when there are none.
pub fn refusal(paths: &[String]) -> Option<Rejection> {
    if paths.is_empty() {
        return None;
    }
    let mut named = paths.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > NAMED {
        named.push_str(&format!(" and {} more", paths.len() - NAMED));
    }
    Some(Rejection {
        reason: REASON_UNSUPPORTED_FIELD,
        message: format!(
            "{named}: srt-controller does not carry these fields into the agent's pod or configuration (a newer \
             kagent's, or misspelt), so the agent would run without them; remove them, or run the agent where they \
             are supported"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agent(spec: Value) -> Value {
        json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
               "metadata": {"name": "a", "namespace": "n"}, "spec": spec, "status": {"observedGeneration": 1}})
    }

    #[test]
    fn what_the_types_declare_is_carried() {
        let a = agent(json!({"type": "BYO", "description": null, "byo": {"deployment": {
            "image": "x", "args": [], "labels": {"team": "a"}, "replicas": 1,
            "resources": {"limits": {"cpu": "1"}},
            "volumes": [{"name": "d", "emptyDir": {}}, {"name": "s", "secret": {"secretName": "s", "optional": false}}],
            "extraContainers": [{"name": "s", "image": "y", "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}],
            "env": [{"name": "A", "value": ""}]}},
            "skills": {"insecureSkipVerify": false, "refs": ["r"]}}));
        assert_eq!(not_carried(&a), Vec::<String>::new());
    }

    #[test]
    fn kagent_v0_10s_fields_and_misspellings_are_named_with_their_paths() {
        let a = agent(json!({"type": "Declarative", "declarative": {"systemMessage": "s", "deployment": {
            "envFrom": [{"secretRef": {"name": "keys"}}],
            "topologySpreadConstraints": [],
            "env": [{"name": "A", "value": "1", "valueFromm": {}}]}},
            "deploymentAnnotations": {"a": "b"},
            "skills": {"s3Refs": [{"bucket": "b"}]},
            "byo": {"deployment": {"image": "x", "volumes": [{"name": "v", "hostPathh": {}}]}}}));
        let mut got = not_carried(&a);
        got.sort();
        assert_eq!(
            got,
            [
                "spec.byo.deployment.volumes[0].hostPathh",
                "spec.declarative.deployment.envFrom",
                "spec.declarative.deployment.env[0].valueFromm",
                "spec.declarative.deployment.topologySpreadConstraints",
                "spec.deploymentAnnotations",
                "spec.skills.s3Refs",
            ],
            "an empty list is refused too: the key is not one srt-controller knows"
        );
        let r = refusal(&got).unwrap();
        assert_eq!(r.reason, REASON_UNSUPPORTED_FIELD);
        assert!(r.message.starts_with("spec.byo.deployment.volumes[0].hostPathh, "), "{}", r.message);
        assert!(r.message.contains("would run without them"), "{}", r.message);
    }

    #[test]
    fn replicas_other_than_one_and_unknown_top_level_keys_are_refused() {
        let mut a = agent(json!({"type": "BYO", "byo": {"deployment": {"image": "x", "replicas": 3}}}));
        a["extra"] = json!({"x": 1});
        let got = not_carried(&a);
        assert_eq!(got, ["extra", "spec.byo.deployment.replicas (3: a Sandbox runs exactly one pod)"]);
        assert!(refusal(&[]).is_none());
        let many: Vec<String> = (0..25).map(|i| format!("spec.f{i}")).collect();
        assert!(refusal(&many).unwrap().message.contains("spec.f19 and 5 more:"));
    }
}
