//! Relaying an established tunnel with splice(2) through a pipe per direction: the bytes
//! never enter user space, no per-tunnel buffers are held, half-close is propagated, and
//! the tunnel is cut after `idle` with no traffic either way.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::Interest;

/// A stream whose socket can be spliced and whose readiness tokio tracks.
pub trait SpliceStream: AsRawFd + Sync {
    fn io<R: Send>(
        &self,
        interest: Interest,
        f: impl FnMut() -> io::Result<R> + Send,
    ) -> impl std::future::Future<Output = io::Result<R>> + Send;
}

/// Both socket types have the same inherent `async_io`; no common trait offers it.
macro_rules! splice_stream {
    ($($t:ty),*) => {$(
        impl SpliceStream for $t {
            fn io<R: Send>(
                &self,
                interest: Interest,
                f: impl FnMut() -> io::Result<R> + Send,
            ) -> impl std::future::Future<Output = io::Result<R>> + Send {
                self.async_io(interest, f)
            }
        }
    )*};
}

splice_stream!(tokio::net::TcpStream, tokio::net::UnixStream);

const CHUNK: usize = 1 << 20;
const PIPE_SIZE: libc::c_int = 1024 * 1024;

struct Pipe {
    r: OwnedFd,
    w: OwnedFd,
}

fn pipe() -> io::Result<Pipe> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors owned by nobody else.
    Ok(unsafe { Pipe { r: OwnedFd::from_raw_fd(fds[0]), w: OwnedFd::from_raw_fd(fds[1]) } })
}

/// Larger pipes mean fewer syscalls per byte for bulk transfers; the per-user pipe
/// budget may refuse it, in which case the default size still works.
fn grow(p: &Pipe) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(p.w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
}

fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: splice between two descriptors we hold; no user memory involved.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

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
    let up = pump(client, upstream, &last, start, idle);
    let down = pump(upstream, client, &last, start, idle);
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

/// Relays like [`relay`], but the client's first bytes are held back until `gate` has
/// judged them; none reach the upstream before that. The upstream's bytes flow to the
/// client meanwhile, so protocols where the server speaks first still work. The client has
/// `first_flight` to send bytes the gate can decide on; `pending` (a per-client count of
/// undecided tunnels) is dropped as soon as the gate has decided.
#[allow(clippy::too_many_arguments)] // each is one of the relay's independent inputs
pub async fn relay_gated<A: SpliceStream, B: SpliceStream, P: Send>(
    client: &A,
    upstream: &B,
    idle: Duration,
    first_flight: Duration,
    first: Vec<u8>,
    pending: P,
    mut gate: impl FnMut(&[u8], bool) -> Gate + Send,
) -> Result<Moved, Gated> {
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let deadline = tokio::time::Instant::now() + first_flight;
    let up = async {
        let mut held = first;
        let mut eof = false;
        let mut timed_out = false;
        loop {
            if eof && held.is_empty() {
                // nothing sent at all: nothing a server could route on
                drop(pending);
                shutdown_write(upstream);
                return Ok(0);
            }
            if timed_out && held.is_empty() {
                shutdown_both(client, upstream);
                return Err(Gated::Refused("first-flight-timeout"));
            }
            if !held.is_empty() {
                let last_chance = eof || timed_out || held.len() >= MAX_FIRST;
                match gate(&held, last_chance) {
                    Gate::Pass => break,
                    Gate::PassWith(bytes) => {
                        held = bytes;
                        break;
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
        let mut off = 0;
        while off < held.len() {
            off += with_idle(
                upstream.io(Interest::WRITABLE, || write_fd(upstream.as_raw_fd(), &held[off..])),
                &last,
                start,
                idle,
            )
            .await
            .map_err(|e| {
                shutdown_both(client, upstream);
                Gated::Io(e)
            })?;
        }
        let rest = pump(client, upstream, &last, start, idle).await.map_err(Gated::Io)?;
        Ok(rest + held.len() as u64)
    };
    let down = pump(upstream, client, &last, start, idle);
    let (u, d) = tokio::join!(up, down);
    let up = u?;
    Ok(Moved { up, down: d.unwrap_or(0) })
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
async fn pump<S: SpliceStream, D: SpliceStream>(
    src: &S,
    dst: &D,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
) -> io::Result<u64> {
    let mut total = 0u64;
    let mut pipe: Option<Pipe> = None;
    loop {
        let r = match &pipe {
            None => copy_once(src, dst, last, start, idle).await,
            Some(p) => splice_once(src, dst, p, last, start, idle).await,
        };
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
            let p = crate::tunnel::pipe()?;
            grow(&p);
            pipe = Some(p);
        }
    }
}

const COPY_BUF: usize = 16 * 1024;

fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: read into a live buffer of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn write_fd(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: send from a live buffer; MSG_NOSIGNAL so a closed peer is an error, not SIGPIPE.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

async fn copy_once<S: SpliceStream, D: SpliceStream>(
    src: &S,
    dst: &D,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
) -> io::Result<usize> {
    // wait before allocating, so an idle tunnel holds no buffer
    with_idle(src.io(Interest::READABLE, || Ok(())), last, start, idle).await?;
    let mut buf = vec![0u8; COPY_BUF];
    let n = with_idle(src.io(Interest::READABLE, || read_fd(src.as_raw_fd(), &mut buf)), last, start, idle).await?;
    let mut off = 0;
    while off < n {
        off += with_idle(dst.io(Interest::WRITABLE, || write_fd(dst.as_raw_fd(), &buf[off..n])), last, start, idle)
            .await?;
    }
    Ok(n)
}

async fn splice_once<S: SpliceStream, D: SpliceStream>(
    src: &S,
    dst: &D,
    pipe: &Pipe,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
) -> io::Result<usize> {
    let n =
        with_idle(src.io(Interest::READABLE, || splice(src.as_raw_fd(), pipe.w.as_raw_fd(), CHUNK)), last, start, idle)
            .await?;
    let mut left = n;
    while left > 0 {
        left -= with_idle(
            dst.io(Interest::WRITABLE, || splice(pipe.r.as_raw_fd(), dst.as_raw_fd(), left)),
            last,
            start,
            idle,
        )
        .await?;
    }
    Ok(n)
}

/// Waits for `fut`, giving up only when neither direction has moved a byte for `idle`.
async fn with_idle<T>(
    fut: impl std::future::Future<Output = io::Result<T>>,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
) -> io::Result<T> {
    tokio::pin!(fut);
    loop {
        match tokio::time::timeout(idle, &mut fut).await {
            Ok(r) => return r,
            Err(_) => {
                let quiet = start.elapsed().saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
                if quiet >= idle {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "tunnel idle timeout"));
                }
            }
        }
    }
}

fn shutdown_write<D: AsRawFd>(d: &D) {
    // SAFETY: shutdown on a socket we hold; failure (already closed) is harmless.
    unsafe { libc::shutdown(d.as_raw_fd(), libc::SHUT_WR) };
}
