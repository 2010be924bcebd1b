//! The objects Declarative agents refer to, read from the API server while an agent's
//! config is rendered, and an index from each such object to the agents that read it, so a
//! change to a ModelConfig, tool server, tool agent or ConfigMap re-renders exactly those
//! agents (run.rs watches the kinds and maps events through [`RefIndex::agents_for`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use kube::api::{Api, ApiResource, DynamicObject};
use kube::Client;
use serde_json::Value;

use crate::refs::{Kind, ObjRef};

/// (namespace, name) of an agent.
pub type AgentKey = (String, String);

#[derive(Default)]
pub struct RefIndex {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    by_object: BTreeMap<ObjRef, BTreeSet<AgentKey>>,
    by_agent: BTreeMap<AgentKey, Vec<ObjRef>>,
}

impl RefIndex {
    /// Replaces what `agent` refers to.
    pub fn record(&self, agent: AgentKey, refs: Vec<ObjRef>) {
        // A poisoned index only holds names; keep using it.
        let mut i = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        for old in i.by_agent.remove(&agent).unwrap_or_default() {
            if let Some(set) = i.by_object.get_mut(&old) {
                set.remove(&agent);
                if set.is_empty() {
                    i.by_object.remove(&old);
                }
            }
        }
        for r in &refs {
            i.by_object.entry(r.clone()).or_default().insert(agent.clone());
        }
        i.by_agent.insert(agent, refs);
    }

    /// The agents that read `object` at their last reconcile.
    pub fn agents_for(&self, object: &ObjRef) -> Vec<AgentKey> {
        let i = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        i.by_object.get(object).map(|s| s.iter().cloned().collect()).unwrap_or_default()
    }
}

/// The API resource a kind is served as.
pub fn api_resource(kind: Kind) -> ApiResource {
    let (api_version, plural) = kind.api();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.name().into(),
        plural: plural.into(),
    }
}

/// Reads one referenced object; `None` when it does not exist (or its kind is not served).
pub async fn fetch(client: &Client, r: &ObjRef) -> Result<Option<Value>, kube::Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &r.namespace, &api_resource(r.kind));
    match api.get_opt(&r.name).await {
        Ok(o) => Ok(o.and_then(|o| serde_json::to_value(o).ok())),
        // The kind's API is not served at all (kagent's CRDs not installed): the object is
        // as absent as a missing one.
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_follows_what_each_agent_read_last() {
        let idx = RefIndex::default();
        let mc = ObjRef::new(Kind::ModelConfig, "ns", "gpt");
        let cm = ObjRef::new(Kind::ConfigMap, "ns", "prompts");
        let a = ("ns".to_string(), "a".to_string());
        let b = ("ns".to_string(), "b".to_string());
        idx.record(a.clone(), vec![mc.clone(), cm.clone()]);
        idx.record(b.clone(), vec![mc.clone()]);
        assert_eq!(idx.agents_for(&mc), vec![a.clone(), b.clone()]);
        idx.record(a.clone(), vec![mc.clone()]);
        assert!(idx.agents_for(&cm).is_empty(), "a no longer reads the ConfigMap");
        assert_eq!(api_resource(Kind::MCPServer).group, "kagent.dev");
        assert_eq!(api_resource(Kind::Service).group, "");
    }
}
