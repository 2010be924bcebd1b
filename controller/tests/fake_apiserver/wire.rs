//! The fake's HTTP side: which collection a path names, label selectors, merge patches,
//! and the JSON and `Status` answers a client library expects.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

/// The collections the fake serves, by URL segment: (api prefix, plural, kind).
const KINDS: &[(&str, &str, &str)] = &[
    ("/apis/kagent.dev/v1alpha2", "sandboxagents", "SandboxAgent"),
    ("/apis/kagent.dev/v1alpha3", "sandboxagents", "SandboxAgent"),
    ("/apis/kagent.dev/v1alpha2", "modelconfigs", "ModelConfig"),
    ("/apis/kagent.dev/v1alpha2", "remotemcpservers", "RemoteMCPServer"),
    ("/apis/kagent.dev/v1alpha2", "agents", "Agent"),
    ("/apis/kagent.dev/v1alpha1", "mcpservers", "MCPServer"),
    ("/api/v1", "services", "Service"),
    ("/api/v1", "configmaps", "ConfigMap"),
    ("/api/v1", "serviceaccounts", "ServiceAccount"),
    ("/api/v1", "secrets", "Secret"),
    ("/apis/agents.x-k8s.io/v1beta1", "sandboxes", "Sandbox"),
    ("/apis/agents.x-k8s.io/v1alpha1", "sandboxes", "Sandbox"),
    ("/apis/events.k8s.io/v1", "events", "Event"),
];

/// "group/version" (or "v1") of a route.
pub(super) fn route_api_version(route: &Route) -> String {
    route.prefix.strip_prefix("/apis/").or_else(|| route.prefix.strip_prefix("/api/")).unwrap_or("").to_string()
}

pub(super) struct Route {
    pub(super) prefix: &'static str,
    pub(super) plural: &'static str,
    pub(super) kind: &'static str,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
    pub(super) status: bool,
}

impl Route {
    /// `{prefix}[/namespaces/{ns}]/{plural}[/{name}[/status]]`
    pub(super) fn parse(path: &str) -> Option<Route> {
        for (prefix, plural, kind) in KINDS {
            let Some(rest) = path.strip_prefix(prefix) else { continue };
            let mut parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
            let namespace = if parts.first() == Some(&"namespaces") && parts.len() >= 3 {
                let ns = parts[1].to_string();
                parts.drain(..2);
                Some(ns)
            } else {
                None
            };
            if parts.first() != Some(plural) {
                continue;
            }
            return Some(Route {
                prefix,
                plural,
                kind,
                namespace,
                name: parts.get(1).map(|s| s.to_string()),
                status: parts.get(2) == Some(&"status"),
            });
        }
        None
    }
}

/// The API group of a route, from its prefix (`/api/v1` is the core group "").
pub(super) fn route_group(route: &Route) -> String {
    let prefix = KINDS.iter().find(|(_, p, _)| *p == route.plural).map(|(p, _, _)| *p).unwrap();
    prefix.strip_prefix("/apis/").and_then(|r| r.split('/').next()).unwrap_or("").to_string()
}

pub(super) fn kind_of(plural: &str) -> &'static str {
    KINDS.iter().find(|(_, p, _)| *p == plural).map(|(_, _, k)| *k).unwrap()
}

pub(super) fn partial(o: &Value) -> Value {
    json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": o["metadata"].clone()})
}

pub(super) fn selects(selector: Option<&str>, o: &Value) -> bool {
    let Some(selector) = selector.filter(|s| !s.is_empty()) else { return true };
    selector.split(',').all(|term| match term.split_once('=') {
        Some((k, v)) => o["metadata"]["labels"][k].as_str() == Some(v),
        None => true,
    })
}

pub(super) fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn json_response(status: StatusCode, v: Value) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(BodyExt::boxed_unsync(Full::new(Bytes::from(serde_json::to_vec(&v).unwrap()))))
        .unwrap()
}

pub(super) fn status_response(code: u16, reason: &str, message: &str) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
    json_response(
        StatusCode::from_u16(code).unwrap(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}),
    )
}
