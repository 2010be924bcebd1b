//! Descriptors 0, 1 and 2 as srt was given them.
//!
//! The kernel hands out the lowest free descriptor number. srt started with one of 0-2
//! closed (`srt ... 2>&-`, `<&-`, a parent that closed its own) would give that number to
//! the first file it keeps open (the proxy's listener, the pool's directory, the run's
//! journal), and its messages to stderr would then be written into that file: into the
//! journal, which the check after the run could then no longer read, so a git config the
//! command planted stayed where host git runs it. std reopens such descriptors on
//! `/dev/null` before `main`; srt enters as a C `main` without std's start-up (`main.rs`),
//! so it does it here, before it opens anything.
//!
//! Each closed one is opened on `/dev/null` with close-on-exec: srt writes its messages
//! there (nowhere, as the user asked), and every program srt execs, the command first,
//! gets the descriptor closed again, as srt was given it (`bash -c` with `2>&-` expects fd
//! 2 closed). Where `/dev/null` cannot be opened srt refuses to start: running on would
//! put the number back in play.

use std::os::fd::RawFd;

/// Why srt cannot start with the descriptors it was given.
#[derive(Debug, thiserror::Error)]
#[error(
    "srt: descriptor {fd} is closed and /dev/null cannot be opened in its place ({source}); \
     srt refuses to run, since the first file it opened would take that number and receive \
     its messages. Start srt with descriptors 0, 1 and 2 open, or make /dev/null usable"
)]
pub struct StdioError {
    pub fd: RawFd,
    pub source: std::io::Error,
}

/// Opens `/dev/null` (close-on-exec) on each of descriptors 0-2 that is closed. Call it
/// before anything opens a file. On error, some may already be filled.
pub fn fill_closed() -> Result<(), StdioError> {
    for fd in 0..=2 {
        if is_open(fd) {
            continue;
        }
        // SAFETY: NUL-terminated path; the descriptor is kept for the life of the process.
        let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if got < 0 {
            return Err(StdioError { fd, source: std::io::Error::last_os_error() });
        }
        // the lowest free number: `fd` itself, as every lower one is open by now
        if got != fd {
            // SAFETY: plain syscalls on descriptors we own; dup3 puts the copy at `fd`.
            let moved = unsafe { libc::dup3(got, fd, libc::O_CLOEXEC) };
            let err = std::io::Error::last_os_error();
            // SAFETY: closing the descriptor we opened above, which nothing else uses.
            unsafe { libc::close(got) };
            if moved < 0 {
                return Err(StdioError { fd, source: err });
            }
        }
    }
    Ok(())
}

/// Writes the refusal to whichever of stderr and stdout is still open (neither: nowhere).
pub fn refuse(e: &StdioError) {
    let msg = format!("{e}\n");
    if let Some(fd) = [2, 1].into_iter().find(|fd| is_open(*fd)) {
        // SAFETY: writing from a live buffer of the given length; a short or failed write
        // loses only this message.
        unsafe { libc::write(fd, msg.as_ptr().cast(), msg.len()) };
    }
}

fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only asks; EBADF is the answer for a closed descriptor.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EBADF)
}
