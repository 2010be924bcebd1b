//! The run's journal: everything the check after the run needs, on disk from before the
//! command starts, so that the check is done even when srt itself dies.
//!
//! srt writes the journal's header (the writable trees, the moment the run started, the
//! git directories that were repositories at launch) before the command runs, and the
//! supervisor appends what the command made that the check must look at (directories made
//! or moved in, links and special files) *before* it performs each operation: what is not
//! recorded does not happen. The check reads the whole file ([`read`]) and, once done,
//! removes it or keeps it for a later run to write over ([`Journal::finish`],
//! `journal_spare.rs`).
//!
//! A journal whose run is still going is locked (`flock`) by the processes of that run.
//! One that can be locked by anyone else belongs to a run that died before its check: the
//! next srt run finishes it ([`stale`]). The journals live in srt's state directory
//! ([`state_dir`], in `runs/`), which the command may never write (it is added to the policy's
//! protected paths), so a command cannot remove or edit its own journal.
//!
//! Format: records separated by NUL bytes, each a tag byte followed by its payload. Paths
//! are raw bytes (no NUL can occur in a path). Header records come first.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::fs::state_dir::owned_private;

#[path = "journal_header.rs"]
mod header;
pub use header::Header;
use header::{encode_header, record, TAG_SINCE};

/// One thing the command made that the check must look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory made at this path (empty when made).
    Dir(PathBuf),
    /// A directory moved to this path, with whatever it holds.
    Moved(PathBuf),
    /// A symlink, FIFO, socket or device made at this path.
    Special(PathBuf),
    /// A directory in which the supervisor performed a write the kernel's rules could not
    /// judge (a file created or opened for writing there).
    Wrote(PathBuf),
    /// Landlock mode: a name in the host's `/dev/shm` about to hold this file (device,
    /// inode) of the run's, removed after the run if it still does ([`crate::fs::shm`]).
    Shm { path: PathBuf, dev: u64, ino: u64 },
}

const TAG_DIR: u8 = b'D';
const TAG_MOVED: u8 = b'V';
const TAG_SPECIAL: u8 = b'L';
const TAG_WROTE: u8 = b'W';
const TAG_SHM: u8 = b'H';

/// An open journal of a running command.
#[derive(Debug)]
pub struct Journal {
    file: std::fs::File,
    path: PathBuf,
    /// Bytes in the file: appends stop at [`MAX_LEN`], so that [`read`] always reads a
    /// journal whole (a command making millions of directories is refused the next one,
    /// never left with entries past what the check reads).
    len: AtomicU64,
    /// The cap was reached and said once.
    full: AtomicBool,
}

impl Journal {
    /// Creates a journal in `dir`'s `runs/` (made if missing, mode 0700) holding `header`, and locks
    /// it. Fails when the header cannot be written whole: a run without its journal would
    /// go unchecked if srt died.
    pub fn create(dir: &Path, header: &Header) -> std::io::Result<Journal> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let dir = &dir.join("runs");
        let transient_dir = transient(dir.parent().unwrap_or(dir));
        let mut nonce = [0u8; 8];
        // SAFETY: getrandom writes at most the buffer's length into it.
        unsafe { libc::getrandom(nonce.as_mut_ptr().cast(), nonce.len(), 0) };
        let name = format!("run-{}-{:016x}.journal", std::process::id(), u64::from_ne_bytes(nonce));
        let path = dir.join(&name);
        // Made under another name, locked and given its header, and only then put where
        // [`stale`] looks: a journal there that can be locked is always a dead run's.
        let new = dir.join(format!("{name}.new"));
        let mut attempt = 0;
        let (mut file, spare) = loop {
            // another run's finish may remove the (empty) directory between `mkdir`'s EEXIST
            // and the builder's look at it, which then reports EEXIST: made again
            match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 3 => {
                    attempt += 1;
                    continue;
                }
                other => other?,
            }
            owned_private(dir)?;
            if !transient_dir {
                if let Some(f) = journal_spare::take(dir, &new) {
                    break (f, true);
                }
            }
            let opened = std::fs::OpenOptions::new()
                .append(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
                .open(&new);
            match opened {
                // another run's finish removed the (empty) directory in between
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt < 3 => attempt += 1,
                other => break (other?, false),
            }
        };
        let head = encode_header(header);
        // a spare is locked already, and opened for writing rather than appending
        let written = if spare {
            journal_spare::reset(&file, &head)
        } else {
            lock(&file, false).and_then(|()| file.write_all(&head))
        };
        let made = written.and_then(|()| std::fs::rename(&new, &path));
        if let Err(e) = made {
            let _ = std::fs::remove_file(&new);
            return Err(e);
        }
        Ok(Journal { file, path, len: AtomicU64::new(head.len() as u64), full: AtomicBool::new(false) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry in a single write (appends of one write never interleave).
    /// An error means the entry is not recorded: the caller must not perform the operation.
    pub fn record(&self, e: &Entry) -> std::io::Result<()> {
        let r = match e {
            Entry::Dir(p) => record(TAG_DIR, p.as_os_str().as_bytes()),
            Entry::Moved(p) => record(TAG_MOVED, p.as_os_str().as_bytes()),
            Entry::Special(p) => record(TAG_SPECIAL, p.as_os_str().as_bytes()),
            Entry::Wrote(p) => record(TAG_WROTE, p.as_os_str().as_bytes()),
            Entry::Shm { path, dev, ino } => {
                let mut payload = format!("{dev} {ino} ").into_bytes();
                payload.extend_from_slice(path.as_os_str().as_bytes());
                record(TAG_SHM, &payload)
            }
        };
        let len = r.len() as u64;
        if self.len.fetch_add(len, Ordering::SeqCst) + len > MAX_LEN {
            self.len.fetch_sub(len, Ordering::SeqCst);
            if !self.full.swap(true, Ordering::SeqCst) {
                crate::warn!(
                    "the run's journal reached {} MiB: further directories, links and moves are refused (ENOSPC) so that the check after the run sees everything",
                    MAX_LEN >> 20
                );
            }
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let n = (&self.file).write(&r)?;
        if n != r.len() {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "short write to the journal"));
        }
        Ok(())
    }

    /// The descriptor, for a process that takes over the journal (it keeps the lock).
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.file.as_fd()
    }

    /// The check is done: the journal goes (in the user's state directory it is kept as a
    /// spare for a later run, `journal_spare.rs`). In the user's state directory the (empty)
    /// directories and the create preload stay, as programs' state directories do:
    /// removing a directory frees its block, which on a filesystem mounted with `discard`
    /// waits for the device (about 3 ms per run on an ext4 VM disk). In the shared temporary
    /// directory (no usable home) nothing of srt's stays: the run's copy of the preload goes
    /// with its journal, and the directories when nothing else is left in them.
    pub fn finish(&self) -> std::io::Result<()> {
        let state = self.path.parent().and_then(Path::parent).filter(|s| transient(s));
        if state.is_some() {
            // the run's own copy of the create preload, which builds before the library's
            // one place (`fs::preload::dir`) kept beside the journal: before the journal, so
            // that a srt killed in between leaves a journal whose finish removes it
            let _ = std::fs::remove_file(self.path.with_extension("so"));
        }
        if state.is_none() && journal_spare::keep(&self.path) {
            return Ok(());
        }
        std::fs::remove_file(&self.path)?;
        if let Some(state) = state {
            if std::fs::remove_dir(state.join("runs")).is_ok() {
                let _ = std::fs::remove_dir(state);
            }
        }
        Ok(())
    }
}

fn lock(file: &std::fs::File, nonblocking: bool) -> std::io::Result<()> {
    let how = if nonblocking { libc::LOCK_EX | libc::LOCK_NB } else { libc::LOCK_EX };
    // SAFETY: flock on a live descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), how) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Journals are small, but a command could make many directories: a bound on what a run
/// may append and one read takes into memory (about 1.6 million entries of 40 bytes).
const MAX_LEN: u64 = 64 << 20;

/// Reads a journal: its header and entries. Unknown tags are an error (the file is srt's
/// own; anything else in it means it cannot be trusted to be complete), and so is a file
/// longer than any run may write: reading only its start would skip what came last.
pub fn read(path: &Path) -> std::io::Result<(Header, Vec<Entry>)> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(MAX_LEN + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_LEN {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("longer than the {} MiB a run may write", MAX_LEN >> 20),
        ));
    }
    parse(&buf)
}

fn parse(buf: &[u8]) -> std::io::Result<(Header, Vec<Entry>)> {
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut h = Header::empty();
    let mut since = false;
    let mut entries = Vec::new();
    // a record srt cannot read (written by another version, or damaged) is skipped, not the
    // whole journal: the check then still covers every record it can read, where giving up
    // checked nothing at all (fail closed means checking what can be checked)
    let mut unread: Vec<String> = Vec::new();
    let mut rest = buf;
    while let Some(end) = rest.iter().position(|&b| b == 0) {
        let (rec, tail) = rest.split_at(end);
        rest = &tail[1..];
        let Some((&tag, payload)) = rec.split_first() else {
            unread.push("an empty record".into());
            continue;
        };
        if let Err(why) = parse_record(&mut h, &mut entries, &mut since, tag, payload) {
            unread.push(format!("{why} (tag {:?})", char::from(tag)));
        }
    }
    if !rest.is_empty() {
        // a record cut short by a crash in the middle of a write: the operation it
        // announced was not performed yet (entries are written before acting)
        tracing::debug!(len = rest.len(), "journal ends in a partial record");
    }
    if !since {
        return Err(bad("no header"));
    }
    if !unread.is_empty() {
        crate::warn!(
            "{} record(s) of this run's journal could not be read ({}); the check covers the others",
            unread.len(),
            unread.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
        );
    }
    Ok((h, entries))
}

/// One record into the header or the entries; `Err`: why it cannot be read.
fn parse_record(
    h: &mut Header,
    entries: &mut Vec<Entry>,
    since: &mut bool,
    tag: u8,
    payload: &[u8],
) -> Result<(), &'static str> {
    let p = || PathBuf::from(OsStr::from_bytes(payload));
    match tag {
        TAG_SINCE => {
            h.since = header::stamp(payload).ok_or("a bad start stamp")?;
            *since = true;
        }
        t if header::TAGS.contains(&t) => header::record_into(h, t, payload)?,
        TAG_DIR => entries.push(Entry::Dir(p())),
        TAG_MOVED => entries.push(Entry::Moved(p())),
        TAG_SPECIAL => entries.push(Entry::Special(p())),
        TAG_WROTE => entries.push(Entry::Wrote(p())),
        TAG_SHM => {
            let mut f = payload.splitn(3, |&b| b == b' ');
            let mut num = || f.next().and_then(|n| std::str::from_utf8(n).ok()).and_then(|n| n.parse::<u64>().ok());
            let (dev, ino) = (num().ok_or("a bad shared memory record")?, num().ok_or("a bad shared memory record")?);
            let path = PathBuf::from(OsStr::from_bytes(f.next().ok_or("a bad shared memory record")?));
            entries.push(Entry::Shm { path, dev, ino });
        }
        _ => return Err("an unknown record"),
    }
    Ok(())
}

/// Where srt's state directory may be, in order: `$XDG_STATE_HOME/srt`, else
/// `~/.local/state/srt` (both kept), else `$TMPDIR/srt-state-<uid>`, else
/// `/tmp/srt-state-<uid>` (those two removed again when a run leaves them empty).
pub fn state_dir_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| Path::new(x).is_absolute()) {
        out.push(PathBuf::from(x).join("srt"));
    } else if let Some(h) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute()) {
        out.push(h.join(".local/state/srt"));
    }
    let fixed = crate::fs::state_dir::fixed();
    // $TMPDIR where it is a directory (as for the run's own TMPDIR), and /tmp in any case
    if let Some(t) = std::env::var_os("TMPDIR").map(PathBuf::from).filter(|p| p.is_absolute() && p.is_dir()) {
        out.push(t.join(fixed.file_name().unwrap_or_default()));
    }
    out.push(fixed);
    out.dedup();
    out
}

/// srt's state directory for this run: the first candidate that is, or can be made, a
/// directory of this uid that only it may write, with a `runs/` directory for journals.
pub fn state_dir() -> std::io::Result<PathBuf> {
    use crate::fs::state_dir::make_private;
    let mut last = std::io::Error::from_raw_os_error(libc::ENOENT);
    for dir in state_dir_candidates() {
        // the directory checked before `runs/` is made in it: one another user planted in
        // /tmp as a symlink would otherwise get `runs/` made wherever it points
        match make_private(&dir).and_then(|()| make_private(&dir.join("runs"))) {
            Ok(()) => return Ok(dir),
            Err(e) => last = std::io::Error::new(e.kind(), format!("{}: {e}", dir.display())),
        }
    }
    Err(last)
}

/// Whether `dir` is the state directory in `/tmp` (which goes when empty) rather than a
/// home's (which stays, as XDG state does).
pub(crate) fn transient(dir: &Path) -> bool {
    dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("srt-state-"))
}

/// The journals in `dir` whose runs are gone (their lock could be taken), each opened and
/// locked so that no second run finishes it too. A run still going holds its lock.
///
/// Only journals srt itself could have written are taken: in a directory of this uid that
/// only it may write, each a regular file of this uid that only it may read. A journal
/// decides what the check renames and removes (its pools), so one planted by another user
/// (who made `/tmp/srt-state-<uid>` first) or by a command must never be finished.
pub fn stale(dir: &Path) -> Vec<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    if owned_private(dir).and_then(|()| owned_private(&dir.join("runs"))).is_err() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir.join("runs")) else { return Vec::new() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension() != Some(OsStr::new("journal")) {
            continue;
        }
        let Ok(file) =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW).open(&path)
        else {
            continue;
        };
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        let srts = file.metadata().is_ok_and(|m| m.is_file() && m.uid() == me && m.mode() & 0o077 == 0);
        if !srts {
            tracing::warn!(path = %path.display(), "not a journal srt wrote (owner or mode): left alone");
            continue;
        }
        if lock(&file, true).is_ok() {
            out.push((path, file));
        }
    }
    out
}

/// The journal of a run, from a descriptor of it that this process holds (a process that
/// inherited it across fork, or [`stale`]'s): it keeps the lock.
pub fn adopt(fd: OwnedFd, path: PathBuf) -> Journal {
    let file = std::fs::File::from(fd);
    // what is there counts toward the cap; unknown length: as if full (appends refused)
    let len = file.metadata().map_or(MAX_LEN, |m| m.len());
    Journal { file, path, len: AtomicU64::new(len), full: AtomicBool::new(false) }
}

#[path = "journal_spare.rs"]
mod journal_spare;

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
