//! srt-controller beside kagent >= v0.10, which dropped agent-sandbox: its SandboxAgent
//! always runs on Agent Substrate, `platform` is gone, `skills` is forbidden, and HEAD serves
//! a `v1alpha3` with a flattened `byo`. Two things follow here:
//!
//! * [`would_lose`]: applying srt-controller's CRD (kagent v0.9.12's schema) over a newer
//!   kagent's would drop its served versions and fields (`srt-controller crd --installed`
//!   refuses to print it then: never downgrade an installed CRD).
//! * [`from_v1alpha3`]: where `kagent.dev/v1alpha3` is served, agents are read through it
//!   (read through v1alpha2, the flattened fields would be pruned) and turned into the
//!   v1alpha2 shape this controller works with.

use serde_json::{Map, Value};

/// The served versions and schema paths of `installed` that `ours` lacks: what applying ours
/// over it would drop. Empty: ours equals it or adds to it (kagent v0.9.0-v0.9.12).
pub fn would_lose(installed: &Value, ours: &Value) -> Vec<String> {
    let versions = |crd: &Value| -> Vec<(String, Value)> {
        crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["served"] == true)
            .map(|v| (v["name"].as_str().unwrap_or_default().to_string(), v["schema"]["openAPIV3Schema"].clone()))
            .collect()
    };
    let ours_v = versions(ours);
    let mut lost = Vec::new();
    for (name, schema) in versions(installed) {
        match ours_v.iter().find(|(n, _)| *n == name) {
            None => lost.push(format!("served version {name}")),
            Some((_, our_schema)) => missing_paths(&schema, our_schema, &format!("{name}:"), &mut lost),
        }
    }
    lost
}

fn missing_paths(theirs: &Value, ours: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(props) = theirs.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            let here = format!("{at}.{k}");
            match ours.get("properties").and_then(|p| p.get(k)) {
                Some(o) => missing_paths(sub, o, &here, out),
                None if ours["x-kubernetes-preserve-unknown-fields"] == true => {}
                None => out.push(format!("field {here}")),
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let (Some(t), Some(o)) = (theirs.get(key).filter(|v| v.is_object()), ours.get(key)) {
            missing_paths(t, o, &format!("{at}[]"), out);
        }
    }
}

/// A kagent v1alpha3 SandboxAgent spec in the v1alpha2 shape: `byo.{image,cmd,args,env}` go
/// under `byo.deployment`, `declarative.{env,imageRegistry}` under `declarative.deployment`.
/// Fields v1alpha3 has and srt-controller does not read stay where they are, and are refused
/// by path (crate::carried), as in v1alpha2.
pub fn from_v1alpha3(mut spec: Value) -> Value {
    if let Some(byo) = spec.get_mut("byo").and_then(Value::as_object_mut) {
        let mut deployment = Map::new();
        for k in ["image", "cmd", "args", "env"] {
            if let Some(v) = byo.remove(k) {
                deployment.insert(k.into(), v);
            }
        }
        if !deployment.is_empty() {
            byo.insert("deployment".into(), Value::Object(deployment));
        }
    }
    if let Some(d) = spec.get_mut("declarative").and_then(Value::as_object_mut) {
        let mut deployment = Map::new();
        for k in ["env", "imageRegistry"] {
            if let Some(v) = d.remove(k) {
                deployment.insert(k.into(), v);
            }
        }
        if !deployment.is_empty() {
            d.insert("deployment".into(), Value::Object(deployment));
        }
    }
    spec
}

/// What `srt-controller run` says once at start-up about the kagent it finds.
pub const V1ALPHA3_STANCE: &str = "kagent >= v0.10 is installed (kagent.dev/v1alpha3 is served): its own \
    SandboxAgent controller runs every agent in the namespaces it watches on Agent Substrate and cannot be switched \
    off; srt-controller reads agents through v1alpha3 and must only be given namespaces kagent does not watch \
    (kagent's Helm value controller.watchNamespaces)";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_flattened_byo_goes_back_under_deployment() {
        let spec = json!({"type": "BYO", "byo": {"image": "x", "cmd": "run", "args": ["-v"], "env": [{"name": "A", "value": "1"}]},
                          "declarative": {"imageRegistry": "r.example", "env": [], "systemMessage": "s"}});
        let v2 = from_v1alpha3(spec);
        assert_eq!(
            v2["byo"],
            json!({"deployment": {"image": "x", "cmd": "run", "args": ["-v"], "env": [{"name": "A", "value": "1"}]}})
        );
        assert_eq!(
            v2["declarative"],
            json!({"systemMessage": "s", "deployment": {"imageRegistry": "r.example", "env": []}})
        );
    }
}
