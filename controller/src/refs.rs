//! The objects a Declarative agent refers to (its ModelConfigs, tool servers, tool agents,
//! ConfigMaps) and a [`Lookup`] of them: filled from the input files by `render`, or by
//! `run` from the API server. Secrets are never in it: a Secret is referenced from the pod
//! (`secretKeyRef`, a Secret volume), never read.

use std::collections::BTreeMap;

use serde_json::Value;

/// The kinds an agent's config is rendered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    ModelConfig,
    RemoteMCPServer,
    MCPServer,
    Service,
    Agent,
    SandboxAgent,
    ConfigMap,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::ModelConfig,
        Kind::RemoteMCPServer,
        Kind::MCPServer,
        Kind::Service,
        Kind::Agent,
        Kind::SandboxAgent,
        Kind::ConfigMap,
    ];

    /// (apiVersion, plural) the API server serves the kind as.
    pub fn api(self) -> (&'static str, &'static str) {
        match self {
            Kind::ModelConfig => ("kagent.dev/v1alpha2", "modelconfigs"),
            Kind::RemoteMCPServer => ("kagent.dev/v1alpha2", "remotemcpservers"),
            Kind::MCPServer => ("kagent.dev/v1alpha1", "mcpservers"),
            Kind::Service => ("v1", "services"),
            Kind::Agent => ("kagent.dev/v1alpha2", "agents"),
            Kind::SandboxAgent => ("kagent.dev/v1alpha2", "sandboxagents"),
            Kind::ConfigMap => ("v1", "configmaps"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::ModelConfig => "ModelConfig",
            Kind::RemoteMCPServer => "RemoteMCPServer",
            Kind::MCPServer => "MCPServer",
            Kind::Service => "Service",
            Kind::Agent => "Agent",
            Kind::SandboxAgent => "SandboxAgent",
            Kind::ConfigMap => "ConfigMap",
        }
    }

    /// The kind of a manifest (`apiVersion`, `kind`), if it is one of these.
    pub fn of(api_version: &str, kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == kind && k.api().0 == api_version)
    }
}

/// One object by kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjRef {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

impl ObjRef {
    pub fn new(kind: Kind, namespace: &str, name: &str) -> Self {
        ObjRef { kind, namespace: namespace.into(), name: name.into() }
    }
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind.name(), self.namespace, self.name)
    }
}

/// What is known of the referenced objects. A `complete` lookup (render's: everything is in
/// the input) answers "absent" for an object it lacks; an incomplete one (run's) says it
/// does not know, and the reconciler fetches the object and asks again.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    objects: BTreeMap<ObjRef, Option<Value>>,
    pub complete: bool,
}

/// The answer for one reference.
pub enum Found<'a> {
    Present(&'a Value),
    Absent,
    Unknown,
}

impl Lookup {
    pub fn complete() -> Self {
        Lookup { objects: BTreeMap::new(), complete: true }
    }

    /// Records `object` (`None`: known not to exist).
    pub fn insert(&mut self, r: ObjRef, object: Option<Value>) {
        self.objects.insert(r, object);
    }

    /// Adds what `other` knows.
    pub fn extend(&mut self, other: Lookup) {
        self.objects.extend(other.objects);
    }

    pub fn get(&self, r: &ObjRef) -> Found<'_> {
        match self.objects.get(r) {
            Some(Some(v)) => Found::Present(v),
            Some(None) => Found::Absent,
            None if self.complete => Found::Absent,
            None => Found::Unknown,
        }
    }

    /// Every reference looked at so far, for the index that wakes an agent when one changes.
    pub fn references(&self) -> impl Iterator<Item = &ObjRef> {
        self.objects.keys()
    }
}
