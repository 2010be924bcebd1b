//! A scripted API server for reconciler tests (kube-rs controller-rs pattern): the test
//! states each request it expects, checks method, path, field manager and body, and
//! answers it. A request the script did not expect fails the test.

#![allow(dead_code)]

pub mod schema;

use std::sync::Arc;

use controller::crd::SandboxAgent;
use controller::options::Options;
use controller::reconcile::Context;
use http::{Method, Request, Response, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::client::Body;
use kube::Client;
use serde_json::{json, Value};
use tower_test::mock::{Handle, SendResponse};

pub type ApiHandle = Handle<Request<Body>, Response<Body>>;

pub const NOW_SECS: i64 = 1_800_000_000;

pub fn fixed_now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(NOW_SECS).unwrap())
}

/// A context whose client talks to the returned handle.
pub fn mock_context() -> (Arc<Context>, ApiHandle) {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = Client::new(service, "default");
    (Arc::new(Context::with_clock(client, Options::default(), fixed_now)), handle)
}

/// One request as the API server saw it.
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub body: Value,
    send: SendResponse<Response<Body>>,
}

impl Seen {
    pub fn respond(self, status: StatusCode, body: Value) {
        let bytes = serde_json::to_vec(&body).unwrap();
        self.send.send_response(Response::builder().status(status).body(Body::from(bytes)).unwrap());
    }

    /// Answers an apply with the object it applied (plus `extra` merged at the top level,
    /// e.g. a status the server holds).
    pub fn respond_applied(self, extra: Value) {
        let mut body = self.body.clone();
        if body.get("metadata").is_none() {
            // A status apply carries no metadata; the server answers with the whole object.
            body["metadata"] = json!({"name": "sandbox-agent", "namespace": "kagent"});
        }
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        self.respond(StatusCode::OK, body);
    }

    pub fn respond_status(self, code: u16, reason: &str, message: &str) {
        let status = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code
        });
        self.respond(StatusCode::from_u16(code).unwrap(), status);
    }

    /// Asserts this is a server-side apply by srt-controller with force.
    pub fn assert_apply(&self, path: &str) {
        assert_eq!(self.method, Method::PATCH, "{}", self.path);
        assert_eq!(self.path, path);
        assert!(self.query.contains("fieldManager=srt-controller"), "field manager: {}", self.query);
        assert!(self.query.contains("force=true"), "force: {}", self.query);
        assert_eq!(self.content_type, "application/apply-patch+yaml");
    }
}

/// The seed agent's ModelConfig, as the scripted server holds it.
pub const MODEL_CONFIG_PATH: &str = "/apis/kagent.dev/v1alpha2/namespaces/kagent/modelconfigs/default-model-config";

pub fn model_config() -> Value {
    json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig",
           "metadata": {"name": "default-model-config", "namespace": "kagent"},
           "spec": {"provider": "OpenAI", "model": "gpt-4o", "apiKeySecret": "openai-secret", "apiKeySecretKey": "api-key"}})
}

/// The next request, with the seed's ModelConfig read (which a Declarative agent does before
/// anything else) answered on the way: scripts state the requests that matter to them.
pub async fn next(handle: &mut ApiHandle) -> Seen {
    loop {
        let seen = next_raw(handle).await;
        if seen.method == Method::GET && seen.path == MODEL_CONFIG_PATH {
            seen.respond(StatusCode::OK, model_config());
            continue;
        }
        return seen;
    }
}

/// The next request, whatever it is.
pub async fn next_raw(handle: &mut ApiHandle) -> Seen {
    let (req, send) = tokio::time::timeout(std::time::Duration::from_secs(5), handle.next_request())
        .await
        .expect("the reconciler sent no further request within 5s")
        .expect("the client was dropped before the expected request");
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let content_type = req.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let bytes = req.into_body().collect_bytes().await.unwrap();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    Seen { method, path, query, content_type, body, send }
}

/// srt-controller reads each object before applying it (one of that name that is not the
/// agent's is never written): answers "none yet".
pub async fn absent(handle: &mut ApiHandle, path: &str) {
    let get = next(handle).await;
    assert_eq!((get.method.clone(), get.path.as_str()), (Method::GET, path));
    get.respond_status(404, "NotFound", "not found");
}

/// srt-controller reads an object that exists: answers with `object`.
pub async fn existing(handle: &mut ApiHandle, path: &str, object: Value) {
    let get = next(handle).await;
    assert_eq!((get.method.clone(), get.path.as_str()), (Method::GET, path));
    get.respond(StatusCode::OK, object);
}

/// An object the agent does not have yet: read (404), then applied.
pub async fn created(handle: &mut ApiHandle, path: &str) {
    absent(handle, path).await;
    let req = next(handle).await;
    req.assert_apply(path);
    req.respond_applied(json!({}));
}

/// A reconcile up to its Sandbox: the settings ConfigMap, config Secret and ServiceAccount created, the
/// Sandbox at `path` read (`held`: the object the server holds, or none). Returns the
/// Sandbox apply for the test to answer.
pub async fn through_to_sandbox(handle: &mut ApiHandle, path: &str, held: Option<Value>) -> Seen {
    created(handle, CM_PATH).await;
    created(handle, SECRET_PATH).await;
    created(handle, SA_PATH).await;
    match held {
        Some(object) => existing(handle, path, object).await,
        None => absent(handle, path).await,
    }
    let sb = next(handle).await;
    sb.assert_apply(path);
    sb
}

/// After the reconcile returned and its context is gone: the server saw nothing more.
pub async fn assert_no_more_requests(mut handle: ApiHandle) {
    let extra = tokio::time::timeout(std::time::Duration::from_secs(2), handle.next_request()).await;
    match extra {
        Ok(None) => {}
        Ok(Some((req, _))) => panic!("unexpected request: {} {}", req.method(), req.uri()),
        Err(_) => panic!("the client is still alive; drop the context before calling this"),
    }
}

pub fn agent(yaml: &str) -> SandboxAgent {
    yaml_serde::from_str(yaml).unwrap()
}

/// The seed's agent, as stored by the API server (uid, generation).
pub fn seed_agent(domains: &[&str], generation: i64) -> SandboxAgent {
    let mut a = agent(
        r#"
apiVersion: kagent.dev/v1alpha2
kind: SandboxAgent
metadata:
  name: sandbox-agent
  namespace: kagent
  uid: 6d1c1f2e-8a4b-4c1e-9a57-3f0e2b7c9d10
spec:
  type: Declarative
  declarative:
    modelConfig: default-model-config
    systemMessage: "You are a helpful assistant running in a sandboxed environment."
"#,
    );
    a.metadata.generation = Some(generation);
    if !domains.is_empty() {
        a.spec.sandbox = Some(controller::crd::SandboxConfig {
            network: Some(controller::crd::NetworkConfig {
                allowed_domains: domains.iter().map(|d| d.to_string()).collect(),
            }),
        });
    }
    a
}

pub const DISCOVERY_V1BETA1: &str = "/apis/agents.x-k8s.io/v1beta1";
pub const DISCOVERY_V1ALPHA1: &str = "/apis/agents.x-k8s.io/v1alpha1";
pub const CM_PATH: &str = "/api/v1/namespaces/kagent/configmaps/sandbox-agent-srt-settings";
pub const SA_PATH: &str = "/api/v1/namespaces/kagent/serviceaccounts/sandbox-agent";
/// The seed (Declarative) agent's config Secret: config.json, agent card, spec.
pub const SECRET_PATH: &str = "/api/v1/namespaces/kagent/secrets/sandbox-agent-srt-config";
/// The Sandbox of the seed agent under the release most tests use (v0.5.6: v1beta1).
pub const SANDBOX_PATH: &str = "/apis/agents.x-k8s.io/v1beta1/namespaces/kagent/sandboxes/sandbox-agent";
pub const STATUS_PATH: &str = "/apis/kagent.dev/v1alpha2/namespaces/kagent/sandboxagents/sandbox-agent/status";
pub const EVENTS_PATH: &str = "/apis/events.k8s.io/v1/namespaces/kagent/events";
/// The agent-sandbox release the mock API server plays unless a test names another.
pub const DEFAULT_RELEASE: &str = "v0.5.6";

pub fn sandbox_path(version: &str) -> String {
    format!("/apis/agents.x-k8s.io/{version}/namespaces/kagent/sandboxes/sandbox-agent")
}

pub fn sandbox_api_list(version: &str) -> Value {
    json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("agents.x-k8s.io/{version}"),
        "resources": [
            {"name": "sandboxes", "singularName": "sandbox", "namespaced": true, "kind": "Sandbox",
             "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
            {"name": "sandboxes/status", "singularName": "", "namespaced": true, "kind": "Sandbox", "verbs": ["get", "patch", "update"]}
        ]
    })
}

/// Plays the API server of `release` through discovery, asserting each request: the
/// resource lists of v1beta1 then (if needed) v1alpha1, then the OpenAPI v3 document of the
/// version found. Returns that version (None: nothing served).
pub async fn answer_discovery(handle: &mut ApiHandle, release: &str) -> Option<String> {
    let fixture = schema::sandbox_fixture(release);
    let served: Vec<String> = serde_json::from_value(fixture["served"].clone()).unwrap();
    answer_discovery_of(handle, &served, Some(&fixture)).await
}

/// Discovery against a server serving `served` (no fixture: the OpenAPI document is not
/// readable, 404).
pub async fn answer_discovery_of(handle: &mut ApiHandle, served: &[String], fixture: Option<&Value>) -> Option<String> {
    let mut found = None;
    for (version, path) in [("v1beta1", DISCOVERY_V1BETA1), ("v1alpha1", DISCOVERY_V1ALPHA1)] {
        let req = next(handle).await;
        assert_eq!((req.method.clone(), req.path.as_str()), (Method::GET, path));
        if served.iter().any(|v| v == version) {
            req.respond(StatusCode::OK, sandbox_api_list(version));
            found = Some(version.to_string());
            break;
        }
        req.respond_status(404, "NotFound", "the server could not find the requested resource");
    }
    let version = found?;
    let req = next(handle).await;
    assert_eq!(
        (req.method.clone(), req.path.as_str()),
        (Method::GET, format!("/openapi/v3/apis/agents.x-k8s.io/{version}").as_str())
    );
    match fixture {
        Some(f) => req.respond(StatusCode::OK, schema::openapi_document(f, &version)),
        None => req.respond_status(404, "NotFound", "the server could not find the requested resource"),
    }
    Some(version)
}

/// The conditions of a status apply body as (type, status, reason) triples.
pub fn conditions(body: &Value) -> Vec<(String, String, String)> {
    body["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn condition_message(body: &Value, type_: &str) -> String {
    body["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| c["message"].as_str().unwrap().to_string())
        .unwrap()
}
