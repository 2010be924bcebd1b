//! Moving bytes between two sockets without the tunnel logic: splice(2) through a pipe,
//! or a bounded copy (while the server's first words are still watched), each wait cut
//! after `idle` with no traffic either way.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::Interest;

use crate::client_hello::ServerWatch;

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

pub(crate) struct Pipe {
    r: OwnedFd,
    w: OwnedFd,
}

pub(crate) fn pipe() -> io::Result<Pipe> {
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
pub(crate) fn grow(p: &Pipe) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(p.w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
}

pub(crate) fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
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

pub(crate) const COPY_BUF: usize = 16 * 1024;

pub(crate) fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: read into a live buffer of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

pub(crate) fn write_fd(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: send from a live buffer; MSG_NOSIGNAL so a closed peer is an error, not SIGPIPE.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

pub(crate) async fn copy_once<S: SpliceStream, D: SpliceStream>(
    src: &S,
    dst: &D,
    last: &AtomicU64,
    start: Instant,
    idle: Duration,
    watch: Option<&mut ServerWatch>,
) -> io::Result<usize> {
    // wait before allocating, so an idle tunnel holds no buffer
    with_idle(src.io(Interest::READABLE, || Ok(())), last, start, idle).await?;
    let mut buf = vec![0u8; COPY_BUF];
    let n = with_idle(src.io(Interest::READABLE, || read_fd(src.as_raw_fd(), &mut buf)), last, start, idle).await?;
    if let Some(w) = watch {
        // before the client sees the bytes, so its next hello waits for the verdict
        if n == 0 {
            w.end();
        } else {
            w.feed(&buf[..n]);
        }
    }
    let mut off = 0;
    while off < n {
        off += with_idle(dst.io(Interest::WRITABLE, || write_fd(dst.as_raw_fd(), &buf[off..n])), last, start, idle)
            .await?;
    }
    Ok(n)
}

pub(crate) async fn splice_once<S: SpliceStream, D: SpliceStream>(
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
pub(crate) async fn with_idle<T>(
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

pub(crate) fn shutdown_write<D: AsRawFd>(d: &D) {
    // SAFETY: shutdown on a socket we hold; failure (already closed) is harmless.
    unsafe { libc::shutdown(d.as_raw_fd(), libc::SHUT_WR) };
}
