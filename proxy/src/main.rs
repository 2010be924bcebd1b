//! `srt-proxy`: the egress proxy on its own (a pod sidecar, a shared gateway, tests).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use srt_proxy::{log::Log, resolve::Resolver, Limits, Listener, Policy, Shared};

#[derive(Debug, Parser)]
#[command(
    name = "srt-proxy",
    version,
    about = "Egress proxy enforcing srt-settings.json's allowedDomains/deniedDomains: HTTP CONNECT, \
             absolute-form http:// and SOCKS5 on one listener. Denials are 403 with X-Proxy-Error.",
    after_help = "Clients authenticate with the per-run token in SRT_PROXY_TOKEN, as the password of\n\
                  http://srt:TOKEN@HOST:PORT (or SOCKS5 user/password). Decisions are logged as one JSON\n\
                  line each on stderr; the first line is {\"event\":\"listening\",\"addr\":...}."
)]
struct Cli {
    /// Settings file (srt 0.0.83 format); its `network` section is the policy.
    #[arg(long, short = 's', value_name = "FILE")]
    settings: PathBuf,
    /// Where to listen: HOST:PORT (loopback; port 0 picks one) or unix:PATH.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:3128")]
    listen: String,
    /// Accept clients without the token. Only for loopback or Unix-socket listeners
    /// that nothing untrusted can reach (a pod sidecar).
    #[arg(long)]
    no_auth: bool,
    /// Resolve HOST on PORT (or * for any) to ADDR, like curl's --resolve. Repeatable.
    /// The result is trusted as written (not subject to the loopback/private checks).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    resolve: Vec<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics (a loopback address).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Read policy updates from this inherited descriptor: one complete settings JSON per line.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(3..))]
    control_fd: Option<i32>,
    /// Do not watch the settings file for changes (it is watched by default).
    #[arg(long)]
    no_watch: bool,
    /// Seconds a request head or SOCKS handshake may take.
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// Seconds to wait for an upstream connection.
    #[arg(long, default_value_t = 10)]
    connect_timeout: u64,
    /// Seconds a tunnel may be idle in both directions before it is closed.
    #[arg(long, default_value_t = 600)]
    idle_timeout: u64,
    /// Most tunnels open at once; more get 503 (SOCKS: general failure).
    #[arg(long, default_value_t = 4096)]
    max_tunnels: usize,
    /// Most client connections at once; more get 503.
    #[arg(long, default_value_t = 8192)]
    max_connections: usize,
    /// Seconds a tunnel's client has to send its first bytes (a TLS ClientHello, an HTTP
    /// request head, or another protocol's opening where allowOtherProtocols allows it);
    /// then the tunnel is closed. The settings' network.firstFlightTimeout wins.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    first_flight_timeout: u64,
    /// Most tunnels one client (source address: srt gives each run its own; all of a Unix
    /// listener's clients count as one) may hold open; more get 503 (SOCKS: general
    /// failure). Keeps one client of a shared proxy from holding every slot.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    max_tunnels_per_client: usize,
    /// Most tunnels one client may hold that have not yet sent their first bytes.
    #[arg(long, default_value_t = 128, value_name = "N")]
    max_pending_per_client: usize,
    /// Most connections one client may hold, counted before it shows its token (so a peer
    /// without one cannot fill --max-connections); more get 503.
    #[arg(long, default_value_t = 2048, value_name = "N")]
    max_connections_per_client: usize,
}

fn main() {
    std::process::exit(match run(Cli::parse()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("srt-proxy: {e}");
            1
        }
    })
}

fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let settings = settings_schema::load_file(&cli.settings).map_err(|e| e.to_string())?;
    let policy = Policy::from_settings(&settings)?;
    let token = match (cli.no_auth, std::env::var("SRT_PROXY_TOKEN")) {
        (true, _) => None,
        (false, Ok(t)) if !t.is_empty() => Some(t),
        _ => {
            return Err(
                "set SRT_PROXY_TOKEN to the clients' token, or pass --no-auth for a loopback-only sidecar".into()
            )
        }
    };
    let mut resolver = Resolver::new(Duration::from_secs(5));
    for r in &cli.resolve {
        resolver.add_override(r)?;
    }
    let limits = Limits {
        header_timeout: Duration::from_secs(cli.header_timeout.max(1)),
        connect_timeout: Duration::from_secs(cli.connect_timeout.max(1)),
        idle_timeout: Duration::from_secs(cli.idle_timeout.max(1)),
        max_tunnels: cli.max_tunnels.max(1),
        max_connections: cli.max_connections.max(1),
        first_flight_timeout: Duration::from_secs(cli.first_flight_timeout.max(1)),
        max_tunnels_per_client: cli.max_tunnels_per_client.max(1),
        max_pending_per_client: cli.max_pending_per_client.max(1),
        max_connections_per_client: cli.max_connections_per_client.max(1),
        ..Limits::default()
    };
    raise_fd_limit();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let listener = bind(&cli.listen, cli.no_auth).await?;
        let shared = Shared::new(policy, token, resolver, limits, Log::stderr());
        if let Some(fd) = cli.control_fd {
            srt_proxy::reload::watch_control_fd(fd, shared.clone())
                .map_err(|e| format!("--control-fd {fd} is not usable: {e}"))?;
        }
        if !cli.no_watch {
            tokio::spawn(srt_proxy::reload::watch_file(
                cli.settings.clone(),
                shared.clone(),
                Duration::from_millis(500),
            ));
        }
        if let Some(addr) = cli.metrics.filter(|a| !a.ip().is_loopback()) {
            return Err(format!("--metrics {addr}: metrics are only served on a loopback address"));
        }
        if let Some(addr) = cli.metrics {
            let l = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("--metrics {addr}: {e}"))?;
            let mut f = serde_json::Map::new();
            f.insert("addr".into(), l.local_addr().map(|a| a.to_string()).unwrap_or_default().into());
            shared.log.event("metrics_listening", f);
            tokio::spawn(srt_proxy::serve_metrics(l, shared.clone()));
        }
        let mut f = serde_json::Map::new();
        f.insert("addr".into(), listener.describe().into());
        f.insert("auth".into(), shared.token.is_some().into());
        shared.log.event("listening", f);
        srt_proxy::serve(listener, shared).await.map_err(|e| e.to_string())
    })
}

async fn bind(spec: &str, no_auth: bool) -> Result<Listener, String> {
    if let Some(path) = spec.strip_prefix("unix:") {
        let _ = std::fs::remove_file(path);
        return tokio::net::UnixListener::bind(path).map(Listener::Unix).map_err(|e| format!("--listen {spec}: {e}"));
    }
    let addr: SocketAddr = spec.parse().map_err(|_| format!("--listen {spec}: expected HOST:PORT or unix:PATH"))?;
    if no_auth && !addr.ip().is_loopback() {
        return Err(format!("--no-auth needs a loopback or unix: listener, not {addr}"));
    }
    tokio::net::TcpListener::bind(addr).await.map(Listener::Tcp).map_err(|e| format!("--listen {spec}: {e}"))
}
