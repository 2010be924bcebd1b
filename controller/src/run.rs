//! `srt-controller run`: the watch loop and the health/metrics endpoint.
//!
//! One replica at a time: the Deployment in controller/deploy uses `replicas: 1` and the
//! `Recreate` strategy instead of leader election. Two overlapping replicas would apply the
//! same objects with the same field manager, so an overlap during a rollout is harmless.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use kube::{Client, ResourceExt};

use crate::discovery::SandboxVersion;
use crate::http;
use crate::objects::MANAGED_BY;
use crate::options::Options;
use crate::reconcile::{self, Context};
use crate::stored;

/// The label that opts an agent in under `--opt-in`.
pub const OPT_IN_LABEL: &str = "srt-controller.dev/enabled";

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: Options,
    /// Only watch this namespace (default: all namespaces).
    #[arg(long, env = "SRT_CONTROLLER_NAMESPACE")]
    pub namespace: Option<String>,
    /// Address of /metrics, /healthz and /readyz.
    #[arg(long, env = "SRT_CONTROLLER_METRICS_ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,
    /// Agents reconciled at the same time (each reconcile is a few API requests). Bounds
    /// the controller's connections and memory and the load it puts on the API server.
    #[arg(long, env = "SRT_CONTROLLER_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Seconds between checks for the Sandbox API while it is missing.
    #[arg(long, env = "SRT_CONTROLLER_SANDBOX_API_RETRY_SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub sandbox_api_retry_seconds: u64,
    /// Reconcile only SandboxAgents labelled srt-controller.dev/enabled=true, so the others can
    /// be left to another controller (kagent's). kagent v0.9.x cannot be told to skip an
    /// agent: keep it away from these with its controller.watchNamespaces.
    #[arg(long, env = "SRT_CONTROLLER_OPT_IN")]
    pub opt_in: bool,
    /// When another manager (kagent's controller) has written spec fields into an agent's
    /// Sandbox, delete that Sandbox once and create it again with srt-controller's fields only
    /// (its pod restarts). Needs delete on sandboxes: controller/deploy/rbac-takeover.yaml.
    #[arg(long, env = "SRT_CONTROLLER_TAKE_OVER_SANDBOXES")]
    pub take_over_sandboxes: bool,
    /// Log as JSON lines (for log collectors) instead of text.
    #[arg(long, env = "SRT_CONTROLLER_LOG_JSON")]
    pub log_json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no Kubernetes configuration: {0}. Set KUBECONFIG or run inside a cluster.")]
    Config(#[source] kube::Error),
    #[error("cannot listen on {addr} for /metrics: {source}; choose another address with --metrics-addr")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

pub fn main(args: RunArgs) -> ExitCode {
    init_logging(args.log_json);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(&RunError::Runtime(e)),
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &RunError) -> ExitCode {
    tracing::error!("{e}");
    ExitCode::FAILURE
}

fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

pub async fn run(args: RunArgs) -> Result<(), RunError> {
    let client = Client::try_default().await.map_err(RunError::Config)?;
    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .map_err(|source| RunError::Listen { addr: args.metrics_addr, source })?;
    let mut options = args.options;
    options.otel_env = crate::options::otel_from_process();
    let mut ctx = Context::new(client.clone(), options);
    ctx.sandbox_api_retry = std::time::Duration::from_secs(args.sandbox_api_retry_seconds);
    ctx.take_over_sandboxes = args.take_over_sandboxes;
    let ctx = Arc::new(ctx);
    let ready = Arc::new(AtomicBool::new(false));
    tokio::spawn(http::serve(listener, ctx.clone(), ready.clone()));

    // kagent >= v0.10 (HEAD) serves v1alpha3 beside v1alpha2; read through v1alpha2, its
    // flattened fields (byo.image, ...) would be pruned, so agents are read through v1alpha3.
    let agent_res = match crate::discovery::serves_sandboxagents_v1alpha3(&client).await {
        Ok(true) => {
            tracing::warn!("{}", crate::kagent_crd::V1ALPHA3_STANCE);
            stored::agent_resource_v1alpha3()
        }
        Ok(false) => stored::agent_resource(),
        Err(e) => {
            tracing::warn!(error = %e, "could not ask whether kagent.dev/v1alpha3 is served; reading v1alpha2");
            stored::agent_resource()
        }
    };
    // The Sandbox watch (which wakes an agent when its Sandbox changes) uses the version served
    // at start-up; the reconciler asks again on its own, so an install or upgrade after the
    // start is still applied correctly, and the periodic resync mirrors Ready until a restart
    // moves the watch too.
    let watched = match ctx.sandbox_api.discover(&client).await {
        Ok(Some(info)) => info.version,
        Ok(None) => SandboxVersion::V1beta1,
        Err(e) => {
            tracing::warn!(error = %e, "could not ask which Sandbox API is served; watching v1beta1");
            SandboxVersion::V1beta1
        }
    };
    let sandbox_res = watched.resource();
    let (agents, configmaps, sandboxes): (Api<DynamicObject>, Api<ConfigMap>, Api<DynamicObject>) =
        match &args.namespace {
            Some(ns) => (
                Api::namespaced_with(client.clone(), ns, &agent_res),
                Api::namespaced(client.clone(), ns),
                Api::namespaced_with(client.clone(), ns, &sandbox_res),
            ),
            None => (
                Api::all_with(client.clone(), &agent_res),
                Api::all(client.clone()),
                Api::all_with(client.clone(), &sandbox_res),
            ),
        };
    let ours = watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}"));
    // Agents are watched untyped so one unreadable object cannot block the others (stored.rs).
    // The Sandbox watch fails while agent-sandbox is not installed; the controller retries it
    // with backoff, and agents waiting for it are requeued on their own (reconcile.rs).
    let agent_watch = if args.opt_in {
        watcher::Config::default().labels(&format!("{OPT_IN_LABEL}=true"))
    } else {
        watcher::Config::default()
    };
    let mut controller = Controller::new_with(agents, agent_watch, agent_res.clone())
        .owns(configmaps, ours.clone())
        .owns_with(sandboxes, sandbox_res, ours);
    // The objects Declarative agents refer to: a change re-renders the agents that read it
    // (reconcile.rs records who read what). A kind that is not served (kagent's CRDs not
    // installed) only makes its watch retry; agents meanwhile say what is missing.
    for kind in crate::refs::Kind::ALL {
        let res = reconcile::api_resource(kind);
        let api: Api<DynamicObject> = match &args.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &res),
            None => Api::all_with(client.clone(), &res),
        };
        let (ctx_map, agent_res) = (ctx.clone(), agent_res.clone());
        controller = controller.watches_with(api, res, watcher::Config::default(), move |o: DynamicObject| {
            let r = crate::refs::ObjRef::new(kind, o.metadata.namespace.as_deref().unwrap_or(""), &o.name_any());
            ctx_map
                .references
                .agents_for(&r)
                .into_iter()
                .map(|(ns, name)| ObjectRef::new_with(&name, agent_res.clone()).within(&ns))
                .collect::<Vec<_>>()
        });
    }
    let controller = controller
        .with_config(kube::runtime::controller::Config::default().concurrency(args.concurrency))
        .shutdown_on_signal();
    let store = controller.store();
    let ready_flag = ready.clone();
    tokio::spawn(async move {
        // The store's readiness signal wakes only its latest waiter (the controller's own
        // runner), so ask again every 100 ms rather than wait once.
        loop {
            match tokio::time::timeout(std::time::Duration::from_millis(100), store.wait_until_ready()).await {
                Ok(Ok(())) => {
                    ready_flag.store(true, Ordering::Relaxed);
                    tracing::info!("SandboxAgent cache synced; ready");
                    return;
                }
                Ok(Err(_)) => return,
                Err(_) => continue,
            }
        }
    });
    tracing::info!(namespace = args.namespace.as_deref().unwrap_or("(all)"), "srt-controller started");
    controller
        .run(reconcile::reconcile_stored, reconcile::error_policy_stored, ctx)
        .for_each(|res| async move {
            match res {
                Ok((obj, _)) => tracing::debug!(agent = %obj, "reconciled"),
                Err(e) if is_missing_api(&e) => {
                    tracing::debug!(error = %e, "a watched API is not served (agent-sandbox not installed?); retrying")
                }
                Err(e) => tracing::warn!(error = %e, "controller"),
            }
        })
        .await;
    tracing::info!("shut down");
    Ok(())
}

/// A watch whose list answered 404: the Sandbox CRD is not installed yet. Agents say so in
/// their status (reconcile.rs), so the log does not repeat it on every retry.
fn is_missing_api<E: std::error::Error>(e: &kube::runtime::controller::Error<E, watcher::Error>) -> bool {
    matches!(
        e,
        kube::runtime::controller::Error::QueueError(
            watcher::Error::InitialListFailed(kube::Error::Api(s)) | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        ) if s.code == 404
    )
}
