//! Running a child with a time limit: its output read on threads of their own, its whole
//! process group killed when the limit passes, and a pipe still held open afterwards
//! reported instead of waited for.

use std::io::Read;
use std::time::{Duration, Instant};

/// How a run ended.
pub struct Output {
    pub code: i32,
    pub text: String,
    /// srt (or the wrapper) outlived the scenario's time limit and was killed.
    pub timed_out: bool,
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    rx
}

/// Waits for `child` (the leader of its own process group) at most `limit`, then kills
/// the group; its stdout and stderr are read meanwhile, so a full pipe never stalls it.
pub fn wait_with_timeout(mut child: std::process::Child, limit: Duration) -> Output {
    let pipes = [drain(child.stdout.take()), drain(child.stderr.take())];
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            timed_out = true;
            // SAFETY: signalling the process group made for this run (see `run_srt`).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Whatever still holds a pipe outlived srt: report it rather than wait for it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut text = String::new();
    for rx in pipes {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(buf) => text.push_str(&String::from_utf8_lossy(&buf)),
            Err(_) => text.push_str("[a pipe was still open 5 s after srt exited]"),
        }
    }
    Output { code: status.code().unwrap_or(-1), text, timed_out }
}
