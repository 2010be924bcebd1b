//! srt's own messages on stderr, written so that nothing can hold srt in a write.
//!
//! The command shares srt's terminal, and can stop its output (`tcflow(TCOOFF)`, `^S`): a
//! plain write to a stopped terminal blocks until output is restarted, which nobody may
//! ever do. So every message srt writes waits at most [`PATIENCE`] for the terminal (or
//! pipe) to take it and is dropped after that; once one message was dropped, later ones
//! are not waited for at all. On a terminal the message goes through a non-blocking
//! descriptor of srt's own for the same terminal (opened again through
//! `/proc/self/fd/2`), so even a terminal stopped between the wait and the write cannot
//! block it; the user's shell keeps its blocking descriptor.
//!
//! A write that fails (`EFBIG` under a lowered `RLIMIT_FSIZE`, `EPIPE`) drops the message;
//! srt ignores `SIGXFSZ` and `SIGPIPE` for itself ([`crate::limits`]).

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long one message may wait for stderr to take it.
pub const PATIENCE: Duration = Duration::from_secs(1);

/// A message was dropped: the terminal is not taking output.
static STUCK: AtomicBool = AtomicBool::new(false);
/// The descriptor messages go to: -1 not chosen yet.
static TARGET: AtomicI32 = AtomicI32::new(-1);

/// Writes `msg` and a newline to stderr, or drops it (see the module comment).
pub fn line(msg: &str) {
    let mut b = Vec::with_capacity(msg.len() + 1);
    b.extend_from_slice(msg.as_bytes());
    b.push(b'\n');
    bytes(&b);
}

/// Writes `b` to stderr within [`PATIENCE`], or drops what is left.
pub fn bytes(b: &[u8]) {
    if STUCK.load(Ordering::Relaxed) {
        return;
    }
    if !bounded(target(), b, PATIENCE) {
        STUCK.store(true, Ordering::Relaxed);
    }
}

/// Writes `b` to `fd` unless it takes longer than `patience`; `false` when it did.
fn bounded(fd: RawFd, mut b: &[u8], patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    while !b.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
        // SAFETY: poll on one descriptor.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if r == 0 {
            return false;
        }
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return true;
        }
        if pfd.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
            return true;
        }
        // at most PIPE_BUF at once: a pipe with room for it takes it whole, never blocking
        let chunk = &b[..b.len().min(libc::PIPE_BUF)];
        // SAFETY: writing from a live buffer of the given length.
        let n = unsafe { libc::write(fd, chunk.as_ptr().cast(), chunk.len()) };
        if n < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR | libc::EAGAIN) => continue,
                // EFBIG, EPIPE, EIO: the message cannot be written at all
                _ => return true,
            }
        }
        b = &b[n as usize..];
    }
    true
}

/// stderr, or on a terminal a non-blocking descriptor of srt's own for it.
fn target() -> RawFd {
    let t = TARGET.load(Ordering::Relaxed);
    if t >= 0 {
        return t;
    }
    // SAFETY: isatty only asks.
    let fd = if unsafe { libc::isatty(2) } == 1 {
        // SAFETY: NUL-terminated path; the descriptor is kept for the life of the process.
        let own = unsafe {
            libc::open(
                c"/proc/self/fd/2".as_ptr(),
                libc::O_WRONLY | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if own >= 0 {
            own
        } else {
            2
        }
    } else {
        2
    };
    match TARGET.compare_exchange(-1, fd, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => fd,
        Err(other) => {
            if fd != 2 {
                // SAFETY: closing the duplicate we just opened; another thread's is kept.
                unsafe { libc::close(fd) };
            }
            other
        }
    }
}

/// An `io::Write` for the `-d` log, with the same bound.
pub struct Writer;

impl std::io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        bytes(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_pipe_does_not_hold_the_writer() {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two fresh descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) }, 0);
        // fill it: nobody reads
        let junk = [b'x'; 4096];
        // SAFETY: writing a live buffer.
        while unsafe { libc::write(fds[1], junk.as_ptr().cast(), junk.len()) } > 0 {}
        // blocking mode again, as stderr would be
        // SAFETY: fcntl on our descriptor.
        unsafe { libc::fcntl(fds[1], libc::F_SETFL, 0) };
        let t = Instant::now();
        assert!(!bounded(fds[1], b"this cannot be written\n", Duration::from_millis(200)));
        assert!(t.elapsed() < Duration::from_millis(700), "{:?}", t.elapsed());
        // drained, it takes the message
        let mut sink = [0u8; 4096];
        // SAFETY: reading into a live buffer.
        while unsafe { libc::read(fds[0], sink.as_mut_ptr().cast(), sink.len()) } == sink.len() as isize {}
        assert!(bounded(fds[1], b"now it fits\n", Duration::from_millis(200)));
        // SAFETY: closing our descriptors.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
