//! HTTP/1.1 proxy requests with hyper: CONNECT tunnels and absolute-form `http://`
//! requests. Every request on a connection is judged on its own; every refusal closes
//! the connection, so bytes a client pipelined after it are never parsed as a request.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Map, Value};

use crate::dial::{self, DialError};
use crate::log::clean;
use crate::policy::Verdict;
use crate::shared::{ClientStream, Shared};
use crate::target::{self, Target, TargetError};
use crate::tunnel::Gated;

type Body = BoxBody<Bytes, hyper::Error>;

pub async fn serve<S: ClientStream>(stream: S, peer: String, shared: Arc<Shared>) {
    let conn_id = shared.next_id();
    let io = TokioIo::new(stream);
    let sh = shared.clone();
    let svc = hyper::service::service_fn(move |req| {
        let (sh, peer) = (sh.clone(), peer.clone());
        async move { Ok::<_, Infallible>(handle::<S>(req, sh, peer, conn_id).await) }
    });
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(shared.limits.header_timeout)
        .max_buf_size(shared.limits.max_header_bytes.max(8192))
        .max_headers(shared.limits.max_headers)
        .keep_alive(true);
    let _ = b.serve_connection(io, svc).with_upgrades().await;
}

/// The reason phrase of a refusal: clients (pip, npm, git, Go, urllib) print the status
/// line and nothing else, so it says what happened (RFC 9110 allows any visible text).
fn reason_phrase(error: &str) -> Option<&'static [u8]> {
    match error {
        "blocked-by-allowlist" => Some(b"Blocked by sandbox network allowlist (host not allowed)"),
        "blocked-by-denylist" => Some(b"Blocked by sandbox network policy (host denied)"),
        "blocked-by-resolved-address" => Some(b"Blocked by sandbox network policy (address not allowed)"),
        "proxy-auth-required" => Some(b"Proxy Authentication Required (sandbox proxy token missing or wrong)"),
        _ => None,
    }
}

fn text(status: u16, error: &str, message: &str) -> Response<Body> {
    // srt 0.0.83's words for a refused host, then the detail
    let body = match error {
        "blocked-by-allowlist" | "blocked-by-denylist" | "blocked-by-resolved-address" => {
            format!("Connection blocked by network allowlist: {message}\n")
        }
        _ => format!("{message}\n"),
    };
    let mut r = Response::new(Full::new(Bytes::from(body)).map_err(|never| match never {}).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("text/plain"));
    if let Ok(v) = HeaderValue::from_str(error) {
        h.insert("x-proxy-error", v);
    }
    h.insert("connection", HeaderValue::from_static("close"));
    if let Some(p) = reason_phrase(error) {
        r.extensions_mut().insert(hyper::ext::ReasonPhrase::from_static(p));
    }
    r
}

struct Ctx<'a> {
    shared: &'a Shared,
    kind: &'static str,
    fields: Map<String, Value>,
    start: Instant,
}

impl Ctx<'_> {
    fn done(mut self, allow: bool, status: u16, reason: &'static str) {
        self.fields.insert("allow".into(), allow.into());
        self.fields.insert("status".into(), status.into());
        self.fields.insert("reason".into(), reason.into());
        self.fields.insert("duration_ms".into(), dial::ms(self.start.elapsed()));
        let decision = if allow {
            "allow"
        } else if status == 403 {
            "deny"
        } else {
            "error"
        };
        self.shared.metrics.request(self.kind, decision, reason);
        if status == 403 {
            let host = self.fields.get("host").and_then(Value::as_str).unwrap_or_default().to_string();
            let port = self.fields.get("port").and_then(Value::as_u64).and_then(|p| u16::try_from(p).ok());
            self.shared.note_refused(&host, port.unwrap_or(0), reason);
        }
        self.shared.log.event("decision", self.fields);
    }
}

async fn handle<S: ClientStream>(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    peer: String,
    conn: u64,
) -> Response<Body> {
    let kind = if req.method() == Method::CONNECT { "connect" } else { "http" };
    let mut fields = Map::new();
    fields.insert("kind".into(), kind.into());
    fields.insert("conn".into(), conn.into());
    fields.insert("client".into(), peer.clone().into());
    fields.insert("method".into(), clean(req.method().as_str()).into());
    let ctx = Ctx { shared: &shared, kind, fields, start: Instant::now() };

    if !authorized(&shared, req.headers()) {
        let mut r = text(407, "proxy-auth-required", "proxy authentication required");
        r.headers_mut().insert("proxy-authenticate", HeaderValue::from_static("Basic realm=\"srt\""));
        ctx.done(false, 407, "auth");
        return r;
    }
    let parsed = if kind == "connect" {
        let raw = req.uri().authority().map(|a| a.as_str().to_string()).unwrap_or_else(|| req.uri().to_string());
        target::parse_authority(&raw, None)
    } else {
        target::parse_absolute(req.uri())
    };
    let t = match parsed {
        Ok(t) => t,
        Err(e) => {
            let mut ctx = ctx;
            ctx.fields.insert("error".into(), e.to_string().into());
            let reason = if e == TargetError::OriginForm { "origin-form" } else { "invalid-target" };
            ctx.done(false, 400, reason);
            return text(400, reason, &format!("bad request: {e}"));
        }
    };
    let mut ctx = ctx;
    ctx.fields.insert("host".into(), t.host.to_string().into());
    ctx.fields.insert("port".into(), t.port.into());
    let verdict = shared.policy.load().decide(&t);
    let rule = match verdict {
        Verdict::Deny { by, rule, message } => {
            ctx.fields.insert("matched_rule".into(), rule.into());
            ctx.done(false, 403, by.header());
            return text(403, by.header(), &message);
        }
        Verdict::Allow { rule } => rule,
    };
    ctx.fields.insert("matched_rule".into(), rule.into());
    if kind == "connect" {
        connect::<S>(req, t, ctx, &shared, &peer).await
    } else {
        forward(req, t, ctx).await
    }
}

fn authorized(shared: &Shared, h: &HeaderMap) -> bool {
    if shared.token.is_none() {
        return true;
    }
    let Some(v) = h.get("proxy-authorization").and_then(|v| v.to_str().ok()) else { return false };
    let Some(b64) = v.strip_prefix("Basic ").or_else(|| v.strip_prefix("basic ")) else { return false };
    let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(b64.trim()) else { return false };
    let Some(colon) = raw.iter().position(|&c| c == b':') else { return false };
    shared.token_ok(&raw[colon + 1..])
}

fn dial_failed(mut ctx: Ctx<'_>, e: DialError, resolved: Vec<std::net::IpAddr>) -> Response<Body> {
    let (status, header, msg) = e.response();
    ctx.fields.insert("resolved".into(), dial::ips(&resolved));
    ctx.done(false, status, header);
    text(status, header, &msg)
}

async fn connect<S: ClientStream>(
    req: Request<Incoming>,
    t: Target,
    mut ctx: Ctx<'_>,
    shared: &Arc<Shared>,
    peer: &str,
) -> Response<Body> {
    let slot = match shared.open_tunnel(peer) {
        Ok(s) => s,
        Err(why) => {
            ctx.done(false, 503, why);
            return text(503, why, "too many open tunnels; retry later");
        }
    };
    let up = match dial::dial(shared, &t).await {
        Ok(d) => d,
        Err((e, resolved)) => return dial_failed(ctx, e, resolved),
    };
    ctx.fields.insert("resolved".into(), dial::ips(&up.resolved));
    ctx.fields.insert("dialed".into(), up.dialed.to_string().into());
    let (mut fields, start) = (ctx.fields, ctx.start);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let mut slot = slot;
        let metrics = shared.metrics.clone();
        metrics.active_tunnels.fetch_add(1, Ordering::Relaxed);
        let upstream = up.stream;
        let result = match hyper::upgrade::on(req).await {
            Ok(upgraded) => match upgraded.downcast::<TokioIo<S>>() {
                Ok(parts) => {
                    let client = parts.io.into_inner();
                    // bytes the client sent right after the CONNECT head are its first flight
                    let first = parts.read_buf.to_vec();
                    crate::checked::relay(&shared, &t, &client, &upstream, first, slot.pending()).await
                }
                Err(_) => Err(Gated::Io(std::io::Error::other("unexpected connection type"))),
            },
            Err(e) => Err(Gated::Io(std::io::Error::other(e))),
        };
        metrics.active_tunnels.fetch_sub(1, Ordering::Relaxed);
        let moved = result.as_ref().ok().copied().unwrap_or_default();
        metrics.bytes_up.fetch_add(moved.up, Ordering::Relaxed);
        metrics.bytes_down.fetch_add(moved.down, Ordering::Relaxed);
        let reason = match &result {
            Err(Gated::Refused(reason)) => {
                shared.note_refused(&t.host.to_string(), t.port, reason);
                reason
            }
            _ => "allowed",
        };
        let allow = reason == "allowed";
        metrics.request("connect", if allow { "allow" } else { "deny" }, reason);
        fields.insert("allow".into(), allow.into());
        fields.insert("status".into(), 200.into());
        fields.insert("reason".into(), reason.into());
        fields.insert("bytes_up".into(), moved.up.into());
        fields.insert("bytes_down".into(), moved.down.into());
        fields.insert("duration_ms".into(), dial::ms(start.elapsed()));
        if let Err(Gated::Io(e)) = result {
            fields.insert("close".into(), clean(&e.to_string()).into());
        }
        shared.log.event("decision", fields);
    });
    Response::new(Full::new(Bytes::new()).map_err(|never| match never {}).boxed())
}

/// Hop-by-hop fields (RFC 9110 §7.6.1) plus the proxy's own credentials.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn strip_hop_by_hop(h: &mut HeaderMap) {
    let named: Vec<HeaderName> = h
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in named {
        h.remove(n);
    }
    for n in HOP_BY_HOP {
        h.remove(n);
    }
}

async fn forward(req: Request<Incoming>, t: Target, mut ctx: Ctx<'_>) -> Response<Body> {
    let shared = ctx.shared;
    let up = match dial::dial(shared, &t).await {
        Ok(d) => d,
        Err((e, resolved)) => return dial_failed(ctx, e, resolved),
    };
    ctx.fields.insert("resolved".into(), dial::ips(&up.resolved));
    ctx.fields.insert("dialed".into(), up.dialed.to_string().into());
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(up.stream)).await {
        Ok(x) => x,
        Err(e) => return dial_failed(ctx, DialError::Connect(std::io::Error::other(e)), vec![]),
    };
    tokio::spawn(conn);
    let (mut parts, body) = req.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    let host = if t.port == 80 { t.host.to_string() } else { t.to_string() };
    if let Ok(v) = HeaderValue::from_str(&host) {
        parts.headers.insert("host", v);
    }
    // the upstream sees origin-form; the query string is forwarded but never logged
    let pq = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    ctx.fields.insert("path".into(), clean(parts.uri.path()).into());
    parts.uri = pq.parse().unwrap_or_default();
    parts.version = hyper::Version::HTTP_11;
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => {
            let (mut rp, rb) = resp.into_parts();
            strip_hop_by_hop(&mut rp.headers);
            let status = rp.status.as_u16();
            ctx.done(true, status, "allowed");
            Response::from_parts(rp, rb.boxed())
        }
        Err(e) => dial_failed(ctx, DialError::Connect(std::io::Error::other(e)), vec![]),
    }
}
