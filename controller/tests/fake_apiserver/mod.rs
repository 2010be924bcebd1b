//! A small in-memory Kubernetes API server on loopback HTTP, enough for the real
//! `srt-controller run` binary: list + watch (full objects and PartialObjectMetadata),
//! server-side apply (create or merge, no-op applies keep the resourceVersion), status
//! subresource, events, and discovery of the Sandbox API. It can also play the
//! agent-sandbox controller by marking applied Sandboxes Ready.
//!
//! Custom objects go through what a real API server does with them under the real CRDs
//! (../apiserver_schema: pruning, defaults, structural validation, list-map keys, CEL):
//! srt-controller's SandboxAgent CRD (deploy/crd.yaml), agent-sandbox v0.5.6's Sandbox, kagent
//! v0.9.12's ModelConfig, RemoteMCPServer and Agent, kmcp v0.3.0's MCPServer (each
//! replaceable with [`FakeApi::install_crd`]). Server-side apply refuses undeclared fields;
//! a status write is checked against the status schema. Built-in kinds (ConfigMaps,
//! ServiceAccounts, Services, Events) are stored unchecked. No field ownership, no
//! admission webhooks.

#![allow(dead_code)]

// The crate including this module declares `mod apiserver_schema;` (one copy per crate).
use crate::apiserver_schema;

mod fixtures;
mod schemas;
mod wire;
#[allow(unused_imports)] // each including crate uses its own subset
pub use fixtures::{agent_json, model_config_json, write_kubeconfig};
use schemas::{default_crds, schema_key, served_as};
use wire::{
    json_response, kind_of, merge, partial, percent_decode, route_api_version, route_group, selects, status_response,
    Route,
};

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::sync::broadcast;

#[derive(Clone, Debug)]
struct Change {
    plural: &'static str,
    kind: &'static str,
    type_: &'static str,
    object: Value,
}

pub struct FakeApi {
    /// (plural, namespace, name) -> object
    objects: Mutex<BTreeMap<(String, String, String), Value>>,
    version: AtomicU64,
    changes: broadcast::Sender<Change>,
    pub sandbox_api: AtomicBool,
    /// Serve kagent >= v0.10's `kagent.dev/v1alpha3` SandboxAgents in discovery.
    pub kagent_v1alpha3: AtomicBool,
    /// Play agent-sandbox: every applied Sandbox gets `Ready=True` right away.
    pub sandboxes_become_ready: AtomicBool,
    pub requests: AtomicU64,
    pub applies: AtomicU64,
    pub status_writes: AtomicU64,
    /// Events created, in order.
    pub events: Mutex<Vec<Value>>,
    /// Every (API group, resource, verb) a client used, as RBAC names them.
    pub verbs: Mutex<BTreeSet<(String, String, String)>>,
    /// The openAPIV3Schema of each served custom resource, by "group/version/plural".
    schemas: Mutex<BTreeMap<String, Value>>,
}

pub struct Running {
    pub api: Arc<FakeApi>,
    pub addr: SocketAddr,
}

impl FakeApi {
    pub async fn start() -> Running {
        let (changes, _) = broadcast::channel(65_536);
        let api = Arc::new(FakeApi {
            objects: Mutex::new(BTreeMap::new()),
            version: AtomicU64::new(1),
            changes,
            sandbox_api: AtomicBool::new(true),
            kagent_v1alpha3: AtomicBool::new(false),
            sandboxes_become_ready: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            applies: AtomicU64::new(0),
            status_writes: AtomicU64::new(0),
            events: Mutex::new(Vec::new()),
            verbs: Mutex::new(BTreeSet::new()),
            schemas: Mutex::new(BTreeMap::new()),
        });
        for crd in default_crds() {
            api.install_crd(&crd);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = api.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let api = server.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let api = api.clone();
                        async move { Ok::<_, Infallible>(api.handle(req).await) }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        Running { api, addr }
    }

    fn next_version(&self) -> String {
        (self.version.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }

    fn current_version(&self) -> String {
        self.version.load(Ordering::SeqCst).to_string()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String, String), Value>> {
        self.objects.lock().unwrap()
    }

    /// Serves `crd`'s versions with their schemas (replacing what was installed for them).
    pub fn install_crd(&self, crd: &Value) {
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
        let mut schemas = self.schemas.lock().unwrap();
        for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let version = v["name"].as_str().unwrap_or_default();
            schemas.insert(schema_key(&format!("{group}/{version}"), plural), v["schema"]["openAPIV3Schema"].clone());
        }
    }

    /// The schema the object's apiVersion is served with, if it is a custom resource.
    fn schema_for(&self, plural: &str, obj: &Value) -> Option<Value> {
        let api_version = obj["apiVersion"].as_str()?;
        self.schemas.lock().unwrap().get(&schema_key(api_version, plural)).cloned()
    }

    /// What the API server stores for a write of `obj` (`old`: the stored object).
    fn admit(
        &self,
        plural: &str,
        obj: Value,
        old: Option<&Value>,
        unknown: apiserver_schema::Unknown,
    ) -> Result<Value, Vec<String>> {
        match self.schema_for(plural, &obj) {
            Some(schema) => apiserver_schema::admit(&schema, obj, old, unknown).map(|a| a.object),
            None => Ok(obj),
        }
    }

    /// A status write is checked against the status schema only (the spec it does not change
    /// is not validated again, as the API server's status strategy does).
    fn admit_status(&self, plural: &str, mut obj: Value) -> Result<Value, Vec<String>> {
        let Some(schema) = self.schema_for(plural, &obj) else { return Ok(obj) };
        let part = json!({"type": "object", "properties": {"status": schema["properties"]["status"].clone()}});
        let status = json!({"status": obj["status"].take()});
        let admitted = apiserver_schema::admit(&part, status, None, apiserver_schema::Unknown::Refuse)?;
        obj["status"] = admitted.object["status"].clone();
        Ok(obj)
    }

    /// Stores an object as `kubectl create` would (pruned, defaulted and validated under its
    /// CRD; a test that creates an invalid object fails here).
    pub fn create(&self, plural: &'static str, obj: Value) {
        let obj = self
            .admit(plural, obj, None, apiserver_schema::Unknown::Prune)
            .unwrap_or_else(|e| panic!("the API server would refuse this {plural}: {e:?}"));
        self.store_raw(plural, obj);
    }

    /// Stores an object unchecked, as one written under an older schema is stored.
    pub fn store_raw(&self, plural: &'static str, mut obj: Value) {
        let kind = kind_of(plural);
        let ns = obj["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        obj["metadata"]["namespace"] = json!(ns);
        obj["metadata"]["uid"] = json!(format!("uid-{plural}-{ns}-{name}"));
        obj["metadata"]["generation"] = json!(1);
        obj["metadata"]["resourceVersion"] = json!(self.next_version());
        self.lock().insert((plural.into(), ns, name), obj.clone());
        let _ = self.changes.send(Change { plural, kind, type_: "ADDED", object: obj });
    }

    /// Replaces an object's spec as `kubectl apply` of a new spec would (generation + 1).
    pub fn update_spec(&self, plural: &'static str, ns: &str, name: &str, spec: Value) {
        let obj = {
            let mut objects = self.lock();
            let obj = objects.get_mut(&(plural.to_string(), ns.to_string(), name.to_string())).unwrap();
            let mut next = obj.clone();
            next["spec"] = spec;
            *obj = self
                .admit(plural, next, Some(obj), apiserver_schema::Unknown::Prune)
                .unwrap_or_else(|e| panic!("the API server would refuse this {plural} update: {e:?}"));
            let generation = obj["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            obj["metadata"]["generation"] = json!(generation);
            obj["metadata"]["resourceVersion"] = json!(self.next_version());
            obj.clone()
        };
        let _ = self.changes.send(Change { plural, kind: kind_of(plural), type_: "MODIFIED", object: obj });
    }

    pub fn get(&self, plural: &str, ns: &str, name: &str) -> Option<Value> {
        self.lock().get(&(plural.to_string(), ns.to_string(), name.to_string())).cloned()
    }

    pub fn count(&self, plural: &str) -> usize {
        self.lock().keys().filter(|(p, _, _)| p == plural).count()
    }

    /// How many objects of `plural` have condition `type_` with status `status`.
    pub fn count_condition(&self, plural: &str, type_: &str, status: &str) -> usize {
        self.lock()
            .iter()
            .filter(|((p, _, _), _)| p == plural)
            .filter(|(_, o)| {
                o["status"]["conditions"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["type"] == type_ && c["status"] == status))
            })
            .count()
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let query: BTreeMap<String, String> = req
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), percent_decode(v)))
            .collect();
        let metadata_only = req
            .headers()
            .get("accept")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=PartialObjectMetadata"));
        let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();

        if method == Method::GET && path == "/apis/kagent.dev/v1alpha3" {
            if !self.kagent_v1alpha3.load(Ordering::SeqCst) {
                return status_response(404, "NotFound", "the server could not find the requested resource");
            }
            return json_response(
                StatusCode::OK,
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "kagent.dev/v1alpha3",
                       "resources": [{"name": "sandboxagents", "singularName": "sandboxagent", "namespaced": true,
                                      "kind": "SandboxAgent", "verbs": ["get", "list", "watch", "create", "patch"]}]}),
            );
        }
        // Discovery, as agent-sandbox v0.5.x serves it: v1beta1 and the deprecated v1alpha1,
        // both with spec.service.
        for version in ["v1alpha1", "v1beta1"] {
            let resources = format!("/apis/agents.x-k8s.io/{version}");
            let openapi = format!("/openapi/v3/apis/agents.x-k8s.io/{version}");
            if method != Method::GET || (path != resources && path != openapi) {
                continue;
            }
            if !self.sandbox_api.load(Ordering::SeqCst) {
                return status_response(404, "NotFound", "the server could not find the requested resource");
            }
            if path == openapi {
                return json_response(
                    StatusCode::OK,
                    json!({"openapi": "3.0.0", "components": {"schemas": {format!("io.x-k8s.agents.{version}.Sandbox"): {
                        "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "version": version, "kind": "Sandbox"}],
                        "properties": {"spec": {"properties": {"podTemplate": {}, "service": {}}}}}}}}),
                );
            }
            return json_response(
                StatusCode::OK,
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("agents.x-k8s.io/{version}"),
                       "resources": [{"name": "sandboxes", "singularName": "sandbox", "namespaced": true, "kind": "Sandbox",
                                      "verbs": ["get", "list", "watch", "create", "patch"]}]}),
            );
        }
        let Some(route) = Route::parse(&path) else {
            return status_response(404, "NotFound", &format!("no route for {path}"));
        };
        let watching = query.get("watch").map(String::as_str) == Some("true");
        let verb = match (&method, &route.name) {
            (&Method::GET, None) if watching => "watch",
            (&Method::GET, None) => "list",
            (&Method::GET, Some(_)) => "get",
            (&Method::POST, _) => "create",
            (&Method::PATCH, Some(name)) => {
                let exists = self.get(route.plural, route.namespace.as_deref().unwrap_or(""), name).is_some();
                // An apply that creates the object needs `create` as well as `patch`.
                if !exists && !route.status {
                    self.record(&route, "create");
                }
                "patch"
            }
            _ => "other",
        };
        self.record(&route, verb);
        if route.plural == "sandboxes" && !self.sandbox_api.load(Ordering::SeqCst) {
            return status_response(404, "NotFound", "the server could not find the requested resource");
        }
        match (method, &route.name) {
            (Method::GET, None) if query.get("watch").map(String::as_str) == Some("true") => {
                self.watch(&route, &query, metadata_only)
            }
            (Method::GET, None) => self.list(&route, &query, metadata_only),
            (Method::GET, Some(name)) => match self.get(route.plural, route.namespace.as_deref().unwrap_or(""), name) {
                Some(o) => json_response(StatusCode::OK, self.as_served(&route, o)),
                None => status_response(404, "NotFound", "not found"),
            },
            (Method::PATCH, Some(name)) => {
                let patch: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                self.apply(&route, name, patch)
            }
            (Method::POST, None) => {
                let mut obj: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                obj["metadata"]["resourceVersion"] = json!(self.next_version());
                if route.plural == "events" {
                    self.events.lock().unwrap().push(obj.clone());
                }
                json_response(StatusCode::CREATED, obj)
            }
            _ => status_response(405, "MethodNotAllowed", "not supported by the fake"),
        }
    }

    fn record(&self, route: &Route, verb: &str) {
        let group = route_group(route);
        let resource = if route.status { format!("{}/status", route.plural) } else { route.plural.to_string() };
        self.verbs.lock().unwrap().insert((group, resource, verb.to_string()));
    }

    fn list(
        &self,
        route: &Route,
        query: &BTreeMap<String, String>,
        metadata_only: bool,
    ) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
        let selector = query.get("labelSelector").cloned();
        let items: Vec<Value> = self
            .lock()
            .iter()
            .filter(|((p, ns, _), o)| {
                p == route.plural && route.namespace.as_ref().is_none_or(|n| n == ns) && selects(selector.as_deref(), o)
            })
            .map(|(_, o)| if metadata_only { partial(o) } else { self.as_served(route, o.clone()) })
            .collect();
        let kind = if metadata_only { "PartialObjectMetadataList".to_string() } else { format!("{}List", route.kind) };
        json_response(
            StatusCode::OK,
            json!({"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": self.current_version()}, "items": items}),
        )
    }

    fn watch(
        &self,
        route: &Route,
        query: &BTreeMap<String, String>,
        metadata_only: bool,
    ) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
        let rx = self.changes.subscribe();
        let plural = route.plural;
        let api_version = route_api_version(route);
        let schema = self.schemas.lock().unwrap().get(&schema_key(&api_version, plural)).cloned();
        let namespace = route.namespace.clone();
        let selector = query.get("labelSelector").cloned();
        let since: u64 = query.get("resourceVersion").and_then(|v| v.parse().ok()).unwrap_or(0);
        let stream = futures::stream::unfold(rx, move |mut rx| {
            let namespace = namespace.clone();
            let selector = selector.clone();
            let api_version = api_version.clone();
            let schema = schema.clone();
            async move {
                loop {
                    match rx.recv().await {
                        Ok(c) => {
                            let rv: u64 = c.object["metadata"]["resourceVersion"]
                                .as_str()
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0);
                            let ns = c.object["metadata"]["namespace"].as_str().unwrap_or("");
                            if c.plural != plural
                                || rv <= since
                                || namespace.as_deref().is_some_and(|n| n != ns)
                                || !selects(selector.as_deref(), &c.object)
                            {
                                continue;
                            }
                            let object = if metadata_only {
                                partial(&c.object)
                            } else {
                                served_as(&c.object, &api_version, schema.as_ref())
                            };
                            let mut line = serde_json::to_vec(&json!({"type": c.type_, "object": object})).unwrap();
                            line.push(b'\n');
                            return Some((Ok::<_, Infallible>(Frame::data(Bytes::from(line))), rx));
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            }
        });
        Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())))
            .unwrap()
    }

    fn apply(&self, route: &Route, name: &str, patch: Value) -> Response<UnsyncBoxBody<Bytes, Infallible>> {
        let ns = route.namespace.clone().unwrap_or_else(|| "default".into());
        let key = (route.plural.to_string(), ns.clone(), name.to_string());
        let (obj, type_) = {
            let mut objects = self.lock();
            let existing = objects.get(&key).cloned();
            let (next, type_) = match (existing.clone(), route.status) {
                (None, true) => return status_response(404, "NotFound", "no such object"),
                (None, false) => {
                    let mut o = patch.clone();
                    o["metadata"]["uid"] = json!(format!("uid-{}-{ns}-{name}", route.plural));
                    o["metadata"]["generation"] = json!(1);
                    (o, "ADDED")
                }
                (Some(mut o), true) => {
                    o["status"] = patch["status"].clone();
                    (o, "MODIFIED")
                }
                (Some(mut o), false) => {
                    merge(&mut o, &patch);
                    (o, "MODIFIED")
                }
            };
            let admitted = if route.status {
                self.admit_status(route.plural, next)
            } else {
                self.admit(route.plural, next, existing.as_ref(), apiserver_schema::Unknown::Refuse)
            };
            let mut next = match admitted {
                Ok(o) => o,
                Err(errors) => {
                    let undeclared = errors.iter().any(|e| e.ends_with("field not declared in schema"));
                    // A typed-patch failure is an internal error to the API server; a
                    // validation failure is 422 Invalid.
                    let (code, reason) = if undeclared { (500, "InternalError") } else { (422, "Invalid") };
                    let what = format!("{} {name}", route.kind);
                    return status_response(code, reason, &format!("{what} is invalid: {}", errors.join(", ")));
                }
            };
            if route.status {
                self.status_writes.fetch_add(1, Ordering::Relaxed);
            } else {
                self.applies.fetch_add(1, Ordering::Relaxed);
            }
            if route.plural == "sandboxes" && !route.status && self.sandboxes_become_ready.load(Ordering::SeqCst) {
                next["status"] = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "DependenciesReady",
                    "message": "Pod is Ready; Service Exists", "lastTransitionTime": "2026-11-22T00:00:00Z"}]});
            }
            if let Some(old) = &existing {
                let mut a = old.clone();
                a["metadata"]["resourceVersion"] = Value::Null;
                let mut b = next.clone();
                b["metadata"]["resourceVersion"] = Value::Null;
                if a == b {
                    // A no-op apply changes nothing and triggers no watch event.
                    return json_response(StatusCode::OK, old.clone());
                }
            }
            next["metadata"]["resourceVersion"] = json!(self.next_version());
            objects.insert(key, next.clone());
            (next, type_)
        };
        let _ = self.changes.send(Change { plural: route.plural, kind: route.kind, type_, object: obj.clone() });
        json_response(StatusCode::OK, obj)
    }
}

impl FakeApi {
    /// An object as the version `route` asks for sees it (conversion strategy None: the
    /// apiVersion changes, and what that version's schema does not declare is pruned).
    fn as_served(&self, route: &Route, o: Value) -> Value {
        let api_version = route_api_version(route);
        let schema = self.schemas.lock().unwrap().get(&schema_key(&api_version, route.plural)).cloned();
        served_as(&o, &api_version, schema.as_ref())
    }
}
