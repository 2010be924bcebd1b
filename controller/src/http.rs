//! `/metrics`, `/healthz` and `/readyz` on one small HTTP/1 listener.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::reconcile::Context;

/// The answer for one path: pure, so it is tested without sockets.
pub fn respond(path: &str, ctx: &Context, ready: bool) -> (StatusCode, &'static str, String) {
    match path {
        "/healthz" => (StatusCode::OK, "text/plain", "ok\n".into()),
        "/readyz" if ready => (StatusCode::OK, "text/plain", "ok\n".into()),
        "/readyz" => (StatusCode::SERVICE_UNAVAILABLE, "text/plain", "SandboxAgent cache not synced yet\n".into()),
        "/metrics" => {
            (StatusCode::OK, "text/plain; version=0.0.4", ctx.metrics.render(ctx.sandbox_api.known_available()))
        }
        _ => (StatusCode::NOT_FOUND, "text/plain", "not found; try /metrics, /healthz or /readyz\n".into()),
    }
}

pub async fn serve(listener: TcpListener, ctx: Arc<Context>, ready: Arc<AtomicBool>) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "metrics listener accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let ctx = ctx.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (status, content_type, body) = respond(req.uri().path(), &ctx, ready.load(Ordering::Relaxed));
                let mut resp = Response::new(Full::new(Bytes::from(body)));
                *resp.status_mut() = status;
                resp.headers_mut()
                    .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
                async move { Ok::<_, Infallible>(resp) }
            });
            if let Err(e) =
                hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await
            {
                tracing::debug!(error = %e, "metrics connection");
            }
        });
    }
}
