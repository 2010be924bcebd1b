//! Relaying an established tunnel with splice(2) through a pipe per direction: the bytes
//! never enter user space, no per-tunnel buffers are held, half-close is propagated, and
//! the tunnel is cut after `idle` with no traffic either way.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::Interest;

use crate::client_hello::{ServerSaid, ServerWatch};
use crate::splice::{
    copy_once, grow, read_fd, shutdown_write, splice_once, with_idle, write_fd, Pipe, SpliceStream, COPY_BUF,
};

/// Bytes moved each way.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Moved {
    pub up: u64,
    pub down: u64,
}

/// Relays until both directions have finished or the tunnel has been idle for `idle`.
pub async fn relay<A: SpliceStream, B: SpliceStream>(client: &A, upstream: &B, idle: Duration) -> io::Result<Moved> {
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let up = pump(client, upstream, &last, start, idle, None);
    let down = pump(upstream, client, &last, start, idle, None);
    let (u, d) = tokio::join!(up, down);
    let moved = Moved { up: u.as_ref().copied().unwrap_or(0), down: d.as_ref().copied().unwrap_or(0) };
    match (u, d) {
        (Err(e), _) | (_, Err(e))
            if e.kind() != io::ErrorKind::BrokenPipe && e.kind() != io::ErrorKind::ConnectionReset =>
        {
            Err(e)
        }
        _ => Ok(moved),
    }
}

/// What a gate says about the client's first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Pass,
    /// Pass, sending these bytes upstream in place of those held.
    PassWith(Vec<u8>),
    /// A ClientHello, the first `len` bytes held, passes. The client's bytes after it wait
    /// until the server has answered: a HelloRetryRequest means a second ClientHello
    /// follows, which the gate judges again (`Flight::Retry`).
    PassHello {
        len: usize,
    },
    NeedMore,
    /// Refused: `reply` goes to the client (a TLS alert, an HTTP 403), then both ends close.
    Refuse {
        reason: &'static str,
        reply: &'static [u8],
    },
}

/// Why a gated relay ended without relaying.
#[derive(Debug)]
pub enum Gated {
    Io(io::Error),
    Refused(&'static str),
}

/// Largest first flight held back for the gate.
const MAX_FIRST: usize = 80 * 1024;

/// Which of the client's flights the gate judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flight {
    /// The first bytes of the tunnel.
    First,
    /// The bytes after a ClientHello the server answered with a HelloRetryRequest.
    Retry,
}

/// A server that asks for more than one retry breaks RFC 8446; its client's hellos are
/// not judged a third time, the tunnel is refused.
const MAX_RETRIES: u8 = 1;

/// Relays like [`relay`], but the client's first bytes are held back until `gate` has
/// judged them; none reach the upstream before that. The upstream's bytes flow to the
/// client meanwhile, so protocols where the server speaks first still work. The client has
/// `first_flight` to send bytes the gate can decide on; `pending` (a per-client count of
/// undecided tunnels) is dropped as soon as the gate has decided.
///
/// After a ClientHello the client's further bytes wait for the server's answer (a client
/// sends nothing before it, except 0-RTT data): if that is a HelloRetryRequest, the
/// second ClientHello is judged too, since OpenSSL serves the name in that one.
#[allow(clippy::too_many_arguments)] // each is one of the relay's independent inputs
pub async fn relay_gated<A: SpliceStream, B: SpliceStream, P: Send>(
    client: &A,
    upstream: &B,
    idle: Duration,
    first_flight: Duration,
    first: Vec<u8>,
    pending: P,
    mut gate: impl FnMut(&[u8], bool, Flight) -> Gate + Send,
) -> Result<Moved, Gated> {
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let deadline = tokio::time::Instant::now() + first_flight;
    let (said_tx, mut said) = tokio::sync::watch::channel(Said::default());
    let up = async {
        let mut pending = Some(pending);
        let mut held = first;
        let mut eof = false;
        let mut timed_out = false;
        let mut flight = Flight::First;
        let mut retry_deadline = deadline;
        let mut retries = 0u8;
        let mut sent = 0u64;
        loop {
            if eof && held.is_empty() {
                // nothing (more) sent: nothing a server could route on
                drop(pending);
                shutdown_write(upstream);
                return Ok(sent);
            }
            if timed_out && held.is_empty() {
                shutdown_both(client, upstream);
                return Err(Gated::Refused("first-flight-timeout"));
            }
            if !held.is_empty() {
                let last_chance = eof || timed_out || held.len() >= MAX_FIRST;
                match gate(&held, last_chance, flight) {
                    Gate::Pass => break,
                    Gate::PassWith(bytes) => {
                        held = bytes;
                        break;
                    }
                    Gate::PassHello { len } => {
                        drop(pending.take());
                        let rest = held.split_off(len.min(held.len()));
                        sent += write_all(client, upstream, &held, &last, start, idle).await?;
                        held = rest;
                        // the server's answer decides whether the bytes after the hello are
                        // another hello to judge
                        let judged = retries;
                        let answer = said.wait_for(|s| s.done.is_some() || s.retries > judged);
                        let answer = match with_idle(async { Ok(answer.await.map(|s| *s)) }, &last, start, idle).await {
                            Ok(Ok(s)) => s,
                            // the server side ended without a word
                            Ok(Err(_)) | Err(_) => Said { retries, done: Some(ServerSaid::NotTls) },
                        };
                        if answer.retries > judged {
                            if answer.retries > MAX_RETRIES {
                                shutdown_both(client, upstream);
                                return Err(Gated::Refused("malformed-first-flight"));
                            }
                            retries = answer.retries;
                            flight = Flight::Retry;
                            // the second hello has a first-flight allowance of its own
                            retry_deadline = tokio::time::Instant::now() + first_flight;
                            timed_out = false;
                            continue;
                        }
                        match answer.done {
                            Some(ServerSaid::Hello) => break,
                            // no hello will be read any more, so nothing the client sends
                            // now is judged: it does not reach the server
                            _ => {
                                shutdown_write(upstream);
                                return Ok(sent);
                            }
                        }
                    }
                    Gate::NeedMore if !last_chance => {}
                    Gate::NeedMore => {
                        shutdown_both(client, upstream);
                        return Err(Gated::Refused("first-flight-incomplete"));
                    }
                    Gate::Refuse { reason, reply } => {
                        let _ = write_fd(client.as_raw_fd(), reply);
                        shutdown_both(client, upstream);
                        return Err(Gated::Refused(reason));
                    }
                }
            }
            let deadline = if flight == Flight::First { deadline } else { retry_deadline };
            // wait before allocating, so a tunnel waiting for its first flight holds no buffer
            match tokio::time::timeout_at(deadline, client.io(Interest::READABLE, || Ok(()))).await {
                Err(_) => {
                    timed_out = true;
                    continue;
                }
                Ok(Err(e)) => {
                    shutdown_both(client, upstream);
                    return Err(Gated::Io(e));
                }
                Ok(Ok(())) => {}
            }
            let mut chunk = vec![0u8; COPY_BUF];
            let read = client.io(Interest::READABLE, || read_fd(client.as_raw_fd(), &mut chunk));
            let n = match tokio::time::timeout_at(deadline, read).await {
                Err(_) => {
                    timed_out = true;
                    continue;
                }
                Ok(Ok(n)) => n,
                Ok(Err(e)) => {
                    // a reset before the gate decided: end the other way too
                    shutdown_both(client, upstream);
                    return Err(Gated::Io(e));
                }
            };
            held.extend_from_slice(&chunk[..n]);
            eof = n == 0;
            last.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
        }
        drop(pending);
        sent += write_all(client, upstream, &held, &last, start, idle).await?;
        let rest = pump(client, upstream, &last, start, idle, None).await.map_err(Gated::Io)?;
        Ok(rest + sent)
    };
    let down = pump(upstream, client, &last, start, idle, Some(&said_tx));
    let (u, d) = tokio::join!(up, down);
    let up = u?;
    Ok(Moved { up, down: d.unwrap_or(0) })
}

/// Writes all of `buf` upstream; on failure the tunnel ends both ways.
async fn write_all<A: SpliceStream, B: SpliceStream>(
    client: &A,
    upstream: &B,
    buf: &[u8],
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
) -> Result<u64, Gated> {
    let mut off = 0;
    while off < buf.len() {
        off += with_idle(
            upstream.io(Interest::WRITABLE, || write_fd(upstream.as_raw_fd(), &buf[off..])),
            last,
            start,
            idle,
        )
        .await
        .map_err(|e| {
            shutdown_both(client, upstream);
            Gated::Io(e)
        })?;
    }
    Ok(buf.len() as u64)
}

fn shutdown_both<A: AsRawFd, B: AsRawFd>(a: &A, b: &B) {
    // SAFETY: shutdown on sockets we hold; failure (already closed) is harmless.
    unsafe {
        libc::shutdown(a.as_raw_fd(), libc::SHUT_RDWR);
        libc::shutdown(b.as_raw_fd(), libc::SHUT_RDWR);
    }
}

/// Small exchanges are copied through a short-lived buffer (no pipes for a request and
/// its answer); once a read fills that buffer the direction is a bulk transfer and
/// switches to splice through a pipe grown for it.
///
/// `said`: the server's side of a tunnel, whose first handshake messages are read as they
/// pass (until they show a ServerHello or no TLS) and told to the client's side.
async fn pump<S: SpliceStream, D: SpliceStream>(
    src: &S,
    dst: &D,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
    said: Option<&tokio::sync::watch::Sender<Said>>,
) -> io::Result<u64> {
    let mut total = 0u64;
    let mut pipe: Option<Pipe> = None;
    let mut watch = said.map(|tx| (ServerWatch::default(), tx));
    // however the watched side ends, the client's side hears it had its last word
    let _said_last = Ended(said);
    loop {
        let r = match &pipe {
            None => copy_once(src, dst, last, start, idle, watch.as_mut().map(|w| &mut w.0)).await,
            Some(p) => splice_once(src, dst, p, last, start, idle).await,
        };
        if let Some((w, tx)) = &mut watch {
            let now = Said { retries: w.retries(), done: w.done() };
            tx.send_if_modified(|s| std::mem::replace(s, now) != now);
            if now.done.is_some() {
                watch = None;
            }
        }
        let n = match r {
            Ok(n) => n,
            Err(e) => {
                // a reset or timeout one way: end the other way too, or it waits for ever
                shutdown_write(dst);
                return Err(e);
            }
        };
        if n == 0 {
            // EOF one way: pass the half-close on and let the other direction finish
            shutdown_write(dst);
            return Ok(total);
        }
        total += n as u64;
        last.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
        if pipe.is_none() && n == COPY_BUF {
            if let Some((mut w, tx)) = watch.take() {
                // spliced bytes are not read: whatever was not said yet will not be heard
                w.end();
                tx.send_replace(Said { retries: w.retries(), done: w.done() });
            }
            let p = crate::splice::pipe()?;
            grow(&p);
            pipe = Some(p);
        }
    }
}

/// What the server's side has said so far: HelloRetryRequests, then its last word.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Said {
    retries: u8,
    done: Option<ServerSaid>,
}

/// Tells the client's side, when the server's side ends, that no ServerHello is coming
/// (unless one came).
struct Ended<'a>(Option<&'a tokio::sync::watch::Sender<Said>>);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        if let Some(tx) = self.0 {
            tx.send_if_modified(|s| {
                let first = s.done.is_none();
                s.done.get_or_insert(ServerSaid::NotTls);
                first
            });
        }
    }
}
