//! Namespace mode with an existing proxy (`httpProxyPort`, a pod's sidecar): the proxy
//! ports inside the command's network namespace are relayed to it by srt, outside, from
//! the run's own loopback address. Every run of the pod shares that proxy, and it tells
//! runs apart (their tunnel and connection caps) by the source address alone.

use std::net::{Ipv4Addr, TcpListener};

use crate::error::LaunchError;

/// Namespace mode with an existing proxy: each port inside is relayed to the proxy's port
/// on the host's loopback (3128 -> HTTP port, 1080 -> SOCKS port), from the run's own
/// address `from` (the proxy is shared by every run and tells them apart by it). Landlock
/// mode needs no relay: the supervisor connects straight to those ports.
pub fn relay_to_external(
    inside: Vec<TcpListener>,
    (http, socks): (u16, u16),
    from: Ipv4Addr,
) -> Result<(), LaunchError> {
    if inside.is_empty() {
        return Ok(());
    }
    std::thread::Builder::new()
        .name("proxy-relay".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async move {
                let mut tasks = Vec::new();
                for l in inside {
                    let inner_port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    let to = if inner_port == crate::net::inside::SOCKS_PORT { socks } else { http };
                    let _ = l.set_nonblocking(true);
                    let Ok(l) = tokio::net::TcpListener::from_std(l) else { continue };
                    tasks.push(tokio::spawn(async move {
                        while let Ok((client, _)) = l.accept().await {
                            tokio::spawn(async move {
                                match connect_from(from, to).await {
                                    Ok(up) => {
                                        let _ = srt_proxy::tunnel::relay(
                                            &client,
                                            &up,
                                            std::time::Duration::from_secs(3600),
                                        )
                                        .await;
                                    }
                                    // the client is dropped: never sent on as another client
                                    Err(e) => tracing::debug!(%from, "relay to the shared proxy: {e}"),
                                }
                            });
                        }
                    }));
                }
                for t in tasks {
                    let _ = t.await;
                }
            });
        })
        .map_err(|e| LaunchError::Proxy(format!("starting the relay thread: {e}")))?;
    Ok(())
}

/// A connection to the proxy on the host's loopback at `port`, leaving from `from`.
async fn connect_from(from: Ipv4Addr, port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let sock = tokio::net::TcpSocket::new_v4()?;
    match super::socket::bind_source(&sock, &std::net::SocketAddr::from((from, 0))) {
        0 => sock.connect((Ipv4Addr::LOCALHOST, port).into()).await,
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}
