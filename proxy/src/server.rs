//! The accept loop and per-connection dispatch: the first byte tells SOCKS5 (0x05) from
//! HTTP and from a transparent-mode preamble (0x00); SOCKS4 (0x04) is refused.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::OwnedSemaphorePermit;

use crate::shared::{ClientStream, Shared};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            Listener::Unix(l) => l
                .local_addr()
                .ok()
                .and_then(|a| a.as_pathname().map(|p| format!("unix:{}", p.display())))
                .unwrap_or_default(),
        }
    }
}

/// Accepts forever. Running out of descriptors backs off instead of spinning.
pub async fn serve(listener: Listener, shared: Arc<Shared>) -> io::Result<()> {
    loop {
        let accepted = match &listener {
            Listener::Tcp(l) => l.accept().await.map(|(s, a)| {
                let _ = s.set_nodelay(true);
                (Conn::Tcp(s), a.to_string())
            }),
            Listener::Unix(l) => l.accept().await.map(|(s, _)| (Conn::Unix(s), "unix".to_string())),
        };
        let (conn, peer) = match accepted {
            Ok(c) => c,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)
                ) =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(_) => continue,
        };
        let Ok(permit) = shared.conns.clone().try_acquire_owned() else {
            shared.metrics.limit_rejections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move { conn.reject_busy().await });
            continue;
        };
        // per client too: one that opens connections and sends nothing (it needs no token
        // for that) would otherwise hold every slot of a shared proxy
        let Ok(held) = shared.clients.connect(crate::clients::client_key(&peer)) else {
            shared.metrics.limit_rejections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move { conn.reject_busy().await });
            continue;
        };
        let permit = (permit, held);
        let shared = shared.clone();
        tokio::spawn(async move {
            match conn {
                Conn::Tcp(s) => handle(s, peer, shared, permit).await,
                Conn::Unix(s) => handle(s, peer, shared, permit).await,
            }
        });
    }
}

enum Conn {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl Conn {
    async fn reject_busy(self) {
        const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: too-many-connections\r\nContent-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
        let _ = match self {
            Conn::Tcp(mut s) => s.write_all(BUSY).await,
            Conn::Unix(mut s) => s.write_all(BUSY).await,
        };
    }
}

async fn handle<S: ClientStream>(
    stream: S,
    peer: String,
    shared: Arc<Shared>,
    permit: (OwnedSemaphorePermit, crate::clients::Held),
) {
    shared.metrics.active_connections.fetch_add(1, Ordering::Relaxed);
    let first = tokio::time::timeout(shared.limits.header_timeout, peek(&stream)).await;
    match first {
        Ok(Ok(Some(5))) => crate::socks::handle(stream, peer, shared.clone()).await,
        Ok(Ok(Some(0))) => crate::transparent::handle(stream, peer, shared.clone()).await,
        Ok(Ok(Some(4))) => {
            // SOCKS4 request rejected or failed
            let mut s = stream;
            let _ = s.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]).await;
        }
        Ok(Ok(Some(_))) => crate::http::serve(stream, peer, shared.clone()).await,
        _ => {}
    }
    shared.metrics.active_connections.fetch_sub(1, Ordering::Relaxed);
    drop(permit);
}

async fn peek<S: ClientStream>(s: &S) -> io::Result<Option<u8>> {
    let fd = s.as_raw_fd();
    let mut b = 0u8;
    let n = s
        .io(Interest::READABLE, || {
            // SAFETY: a one-byte peek into a local.
            let n = unsafe { libc::recv(fd, (&mut b as *mut u8).cast(), 1, libc::MSG_PEEK) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n)
            }
        })
        .await?;
    Ok((n == 1).then_some(b))
}
