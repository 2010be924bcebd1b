//! What every reconcile shares (the client, options, clock and retry bookkeeping), the
//! errors a reconcile ends with, and its timing constants: the reconcile flow (`mod.rs`)
//! and its reporting (`report.rs`) both build on this.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::runtime::events::{Recorder, Reporter};
use kube::Client;

use super::references::RefIndex;
use crate::conflict::FIELD_MANAGER;
use crate::discovery::SandboxApi;
use crate::metrics::Metrics;
use crate::options::Options;

/// How often an agent waiting for the Sandbox API is looked at again (default).
pub const SANDBOX_API_RETRY: Duration = Duration::from_secs(30);
/// Re-check of a healthy agent even without watch events.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Re-check of an agent whose Sandbox is not Ready yet (the Sandbox watch usually wins).
pub const NOT_READY_RESYNC: Duration = Duration::from_secs(60);
/// 409 answers are retried this many times inside one reconcile before it fails.
pub const CONFLICT_RETRIES: u32 = 3;
/// Failed reconciles are retried after 5s, 10s, 20s ... up to this.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("applying {kind} {namespace}/{name}: {source}")]
    Apply { kind: &'static str, namespace: String, name: String, source: kube::Error },
    #[error("reading {kind} {namespace}/{name}: {source}")]
    Read { kind: &'static str, namespace: String, name: String, source: kube::Error },
    #[error("writing the status of SandboxAgent {namespace}/{name}: {source}")]
    Status { namespace: String, name: String, source: kube::Error },
    #[error("deleting Sandbox {namespace}/{name} to take it over (--take-over-sandboxes): {source}")]
    TakeOver { namespace: String, name: String, source: kube::Error },
    #[error("asking the API server which agents.x-k8s.io Sandbox API it serves: {0}")]
    Discovery(kube::Error),
    #[error("reading {object}, which the agent refers to: {source}")]
    Reference { object: String, source: kube::Error },
    #[error("agent refers to more than {MAX_FETCHES} objects; not rendered")]
    TooManyReferences,
}

/// The most referenced objects one reconcile reads (kagent's limits: 20 tools, agent chains
/// 10 deep).
pub(super) const MAX_FETCHES: usize = 256;

/// What every reconcile shares.
pub struct Context {
    pub client: Client,
    pub options: Options,
    pub recorder: Recorder,
    pub sandbox_api: SandboxApi,
    pub metrics: Metrics,
    /// How long an agent waits before the Sandbox API is asked for again.
    pub sandbox_api_retry: Duration,
    /// Delete a Sandbox another manager wrote spec fields into (once per agent) and recreate
    /// it with srt-controller's fields only.
    pub take_over_sandboxes: bool,
    /// Agents whose Sandbox was already replaced by this process.
    pub(super) taken_over: Mutex<HashSet<String>>,
    /// Consecutive failures per agent (namespace/name), for the retry backoff.
    pub(super) failures: Mutex<HashMap<String, u32>>,
    /// The clock conditions are stamped with (fixed in tests).
    pub(super) now: fn() -> Time,
    /// Which agents read which referenced objects.
    pub references: RefIndex,
}

fn wall_clock() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

impl Context {
    pub fn new(client: Client, options: Options) -> Self {
        let reporter = Reporter { controller: FIELD_MANAGER.into(), instance: std::env::var("POD_NAME").ok() };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            options,
            sandbox_api: SandboxApi::default(),
            metrics: Metrics::default(),
            sandbox_api_retry: SANDBOX_API_RETRY,
            take_over_sandboxes: false,
            taken_over: Mutex::new(HashSet::new()),
            failures: Mutex::new(HashMap::new()),
            now: wall_clock,
            references: RefIndex::default(),
        }
    }

    /// Same, with a fixed clock, for tests and benchmarks that compare request bodies.
    pub fn with_clock(client: Client, options: Options, now: fn() -> Time) -> Self {
        Context { now, ..Context::new(client, options) }
    }

    /// Records a takeover of `agent`'s Sandbox; false if one was already done.
    pub(super) fn first_takeover(&self, agent: &str) -> bool {
        // A poisoned set only holds names; keep using it.
        self.taken_over.lock().unwrap_or_else(|p| p.into_inner()).insert(agent.to_string())
    }

    /// A takeover that failed did not happen: the next reconcile tries again.
    pub(super) fn takeover_failed(&self, agent: &str) {
        self.taken_over.lock().unwrap_or_else(|p| p.into_inner()).remove(agent);
    }

    pub(super) fn failures(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        // A poisoned map only holds retry counts; keep using it.
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) fn key(meta: &ObjectMeta) -> String {
    format!("{}/{}", meta.namespace.as_deref().unwrap_or_default(), meta.name.as_deref().unwrap_or_default())
}
