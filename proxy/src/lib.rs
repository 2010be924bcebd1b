//! The egress proxy: HTTP CONNECT tunnels, absolute-form `http://` requests and SOCKS5
//! on one listener, judged by the srt-settings.json network policy (deny list first,
//! then allow list, then the resolved addresses), with per-run token auth, hardening
//! limits, splice tunnels, JSON decision logs, Prometheus metrics and live reload.
//! The launcher embeds it; `srt-proxy` runs it on its own.

pub mod addr;
pub mod checked;
pub mod client_hello;
pub mod clients;
pub mod dial;
pub mod dns;
pub mod first_flight;
pub mod http;
pub mod log;
pub mod matcher;
pub mod metrics;
pub mod policy;
pub mod preamble;
pub mod reload;
pub mod resolve;
pub mod server;
pub mod shared;
pub mod socks;
pub mod splice;
pub mod synthetic;
pub mod target;
pub mod transparent;
pub mod tunnel;

pub use policy::{DenyBy, Policy, Verdict};
pub use server::{serve, Listener};
pub use shared::{Limits, Refused, Shared};

/// Serves `GET /metrics` (Prometheus text) on its own listener.
pub async fn serve_metrics(listener: tokio::net::TcpListener, shared: std::sync::Arc<Shared>) {
    use http_body_util::Full;
    loop {
        let Ok((s, _)) = listener.accept().await else { continue };
        let shared = shared.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let shared = shared.clone();
                async move {
                    let (status, body) = if req.uri().path() == "/metrics" {
                        (200, shared.metrics.render())
                    } else {
                        (404, "not found\n".to_string())
                    };
                    let mut r = hyper::Response::new(Full::new(bytes::Bytes::from(body)));
                    *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::NOT_FOUND);
                    r.headers_mut()
                        .insert("content-type", hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"));
                    Ok::<_, std::convert::Infallible>(r)
                }
            });
            let _ =
                hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(s), svc).await;
        });
    }
}
