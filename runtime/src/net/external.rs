//! Namespace mode with an existing proxy (`httpProxyPort`, a pod's sidecar): the proxy
//! ports inside the command's network namespace are relayed to it by srt, outside.

use std::net::{Ipv4Addr, TcpListener};

use crate::error::LaunchError;

/// Namespace mode with an existing proxy: each port inside is relayed to the proxy's port
/// on the host's loopback (3128 -> HTTP port, 1080 -> SOCKS port). Landlock mode needs no
/// relay: the supervisor connects straight to those ports.
pub fn relay_to_external(inside: Vec<TcpListener>, (http, socks): (u16, u16)) -> Result<(), LaunchError> {
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
                                if let Ok(up) = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, to)).await {
                                    let _ =
                                        srt_proxy::tunnel::relay(&client, &up, std::time::Duration::from_secs(3600))
                                            .await;
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
