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
use kube::runtime::{watcher, Controller};
use kube::Client;

use crate::crd::SandboxAgent;
use crate::http;
use crate::objects::{sandbox_resource, MANAGED_BY};
use crate::options::Options;
use crate::reconcile::{self, Context};

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
    /// Log as JSON lines (for log collectors) instead of text.
    #[arg(long, env = "SRT_CONTROLLER_LOG_JSON")]
    pub log_json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no Kubernetes configuration: {0}. Set KUBECONFIG or run inside a cluster.")]
    Config(#[source] kube::Error),
    #[error("cannot listen on {addr} for /metrics: {source}")]
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
    eprintln!("srt-controller: {e}");
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
    let ctx = Arc::new(Context::new(client.clone(), args.options));
    let ready = Arc::new(AtomicBool::new(false));
    tokio::spawn(http::serve(listener, ctx.clone(), ready.clone()));

    let (agents, configmaps, sandboxes): (Api<SandboxAgent>, Api<ConfigMap>, Api<DynamicObject>) = match &args.namespace
    {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
            Api::namespaced_with(client.clone(), ns, &sandbox_resource()),
        ),
        None => {
            (Api::all(client.clone()), Api::all(client.clone()), Api::all_with(client.clone(), &sandbox_resource()))
        }
    };
    let ours = watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}"));
    // The Sandbox watch fails while agent-sandbox is not installed; the controller retries it
    // with backoff, and agents waiting for it are requeued on their own (reconcile.rs).
    let controller = Controller::new(agents, watcher::Config::default())
        .owns(configmaps, ours.clone())
        .owns_with(sandboxes, sandbox_resource(), ours)
        .shutdown_on_signal();
    let store = controller.store();
    let ready_flag = ready.clone();
    tokio::spawn(async move {
        if store.wait_until_ready().await.is_ok() {
            ready_flag.store(true, Ordering::Relaxed);
            tracing::info!("SandboxAgent cache synced; ready");
        }
    });
    tracing::info!(namespace = args.namespace.as_deref().unwrap_or("(all)"), "srt-controller started");
    controller
        .run(reconcile::reconcile, reconcile::error_policy, ctx)
        .for_each(|res| async move {
            match res {
                Ok((obj, _)) => tracing::debug!(agent = %obj, "reconciled"),
                Err(e) => tracing::warn!(error = %e, "controller"),
            }
        })
        .await;
    tracing::info!("shut down");
    Ok(())
}
