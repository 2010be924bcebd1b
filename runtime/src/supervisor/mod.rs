//! The syscall supervisor. The command's Landlock domain (and, in namespace mode, its
//! read-only mount view) is the floor: the kernel refuses everything the policy refuses.
//! The supervisor only does what the kernel cannot express:
//! - makes, removes and moves names in the directories the plan had to split (the working
//!   directory always, for `.bashrc`), judging protected names whose parents do not exist
//!   yet ([`crate::fs::name_rules`]);
//! - judges metadata calls in landlock mode, where no mount can make them fail;
//! - routes `connect()` to the proxy in landlock mode;
//! - places the command's local servers in landlock mode (`bind`, `listen`) and lets its
//!   loopback connects reach those and nothing else ([`listen`], [`local`]), showing it
//!   the addresses it asked for ([`sockname`]);
//! - lets `AF_UNIX` connects reach only the sockets `allowUnixSockets` lists ([`unix`]).
//! - in landlock mode, lets calls that change another process by pid name only the
//!   command's own processes ([`pids`]).
//!
//! It never grants by letting the command's own syscall proceed (`CONTINUE`): the command
//! could change the path or the descriptor after the check. It reads arguments once,
//! resolves them to descriptors of its own, judges the real location, and acts on those
//! descriptors. `CONTINUE` is used only for calls the kernel judges by itself under the
//! command's Landlock domain (opens and name operations the supervisor would not grant),
//! never for metadata, and for a connect only where no address the kernel could read again
//! reaches more than the one judged ([`crate::net::kernel_holds_any_address`]). Whatever it
//! cannot classify is refused.
//!
//! One receiver answers notifications inline; a watchdog ([`Watchdog`], ticked by srt's
//! main thread between signals) adds receivers when calls get stuck (a FIFO waiting for a
//! reader), so one slow call never stalls the others, and the main thread's signal
//! handling never waits for any of them.

mod connect;
mod follow;
pub use state::transparent_refused_without_getfd;
pub use state::SharedMemory;
mod listen;
mod local;
mod meta;
mod moves;
mod names;
mod native;
mod open;
mod pids;
mod pty;
mod resolve;
mod shm;
mod sockets;
mod sockname;
mod state;
mod sys;
mod tracee;
mod unix;

use std::cell::RefCell;
use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::fs::policy::FsPolicy;
use crate::seccomp::notify::{self, Notif};
use crate::seccomp::sysno::Arch;
use tracee::Tracee;

/// What the mediated syscall gets.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The kernel runs it as issued and judges it under the command's Landlock domain.
    Continue,
    Fail(i32),
    Value(i64),
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// The command stopped waiting (killed, interrupted): nothing to answer.
    Gone,
}

pub struct Supervisor {
    pub(crate) policy: FsPolicy,
    /// (dev, ino) of existing write-denied files, so a second name cannot reach them.
    pub(crate) protected: HashSet<(u64, u64)>,
    /// Files that got extra names from us, every one of them in a writable place.
    linked: Mutex<HashSet<(u64, u64)>>,
    /// Objects this run made through the supervisor: it may remove them again.
    made: Mutex<HashSet<(u64, u64)>>,
    arch: Arch,
    /// Where connects may go (the embedded proxy); `None`: nowhere.
    route: Option<crate::net::Route>,
    /// Landlock mode: `/dev/ptmx` opens, `TIOCGPTPEER` and opens of the ptys the command
    /// allocated are performed here ([`pty`]).
    pub mediate_ptys: bool,
    /// The ptys the command allocated: index and our copy of the master.
    ptys: Mutex<Vec<(u32, OwnedFd)>>,
    /// (dev, ino) of the Landlock rules that grant writing: below these the kernel judges
    /// every name operation exactly as the policy would ([`native`]).
    pub native_rules: HashSet<(u64, u64)>,
    /// (dev, ino) of the write rules that also grant making files: the directories srt
    /// made for the run ([`crate::fs::landlock_plan::PlannedRule::makes_files`]).
    pub files_rules: HashSet<(u64, u64)>,
    /// Directories found to be below such rules, and which. Cleared whenever a directory may
    /// have moved (any rename or rmdir), since that changes what lies above it.
    native_dirs: Mutex<std::collections::HashMap<(u64, u64), state::Native>>,
    /// Inodes whose metadata the command may change, as judged by path once; cleared by any
    /// rename, link or unlink (the only ways an inode's names change under us).
    meta_ok: Mutex<HashSet<(u64, u64)>>,
    /// Socket options the command set, by socket inode, for sockets the supervisor replaces
    /// with its own connected one ([`connect`]).
    sockopts: Mutex<std::collections::HashMap<u64, Vec<state::SockOpt>>>,
    /// Working directory per thread id, for the fast path ([`native`]).
    cwds: Mutex<std::collections::HashMap<u32, Arc<OwnedFd>>>,
    /// Umask per thread id. Read from /proc once per thread, forgotten whenever any thread
    /// calls umask(2) (trapped for this reason only).
    umasks: Mutex<std::collections::HashMap<u32, u32>>,
    /// The run's journal: what the command made that the check after the run must look at
    /// (directories made or moved, links and special files) is written there before it
    /// is done ([`crate::check::journal`]).
    pub journal: Option<Arc<crate::check::journal::Journal>>,
    /// Directories made ahead with write rules, moved where the command makes one in a
    /// split directory ([`crate::fs::pool`]).
    pub pool: Option<Arc<crate::fs::pool::Pool>>,
    /// Landlock mode: the listeners srt made for the command ([`listen`]).
    listeners: Mutex<state::Listeners>,
    /// Landlock mode: what the command asked of its sockets ([`sockname`]).
    asked: Mutex<state::AskedTable>,
    /// Landlock mode: sockets bound where the command's servers must not get srt's ports
    /// ([`crate::net::shown_addr::reserved`]), held for the run.
    pub reserved: Vec<OwnedFd>,
    /// `allowUnixSockets`, as absolute paths ([`unix`]).
    pub unix_paths: Vec<PathBuf>,
    /// The command's `/dev/shm` ([`shm`]).
    pub shm: SharedMemory,
    /// Landlock mode: the auditor, whose descendants are the command's processes
    /// ([`pids`]).
    pub auditor: Option<libc::pid_t>,
}

/// One notification being handled.
pub(crate) struct Call<'a> {
    sup: &'a Supervisor,
    listener: BorrowedFd<'a>,
    req: &'a Notif,
    t: Tracee,
    /// What the decision was about, for the `-d` log.
    note: RefCell<Option<(PathBuf, &'static str)>>,
}

impl Call<'_> {
    fn args(&self) -> [u64; 6] {
        self.req.data.args
    }

    /// The notification is still pending, so `/proc/<pid>` lookups made so far named the
    /// command's thread and not a process that reused its pid.
    fn valid(&self) -> bool {
        notify::id_valid(self.listener, self.req.id)
    }

    fn note(&self, path: &Path, why: &'static str) {
        *self.note.borrow_mut() = Some((path.to_path_buf(), why));
    }

    fn made(&self, st: &libc::stat) {
        if let Ok(mut m) = self.sup.made.lock() {
            m.insert((st.st_dev, st.st_ino));
        }
    }

    fn made_by_run(&self, st: &libc::stat) -> bool {
        self.sup.made.lock().is_ok_and(|m| m.contains(&(st.st_dev, st.st_ino)))
    }

    /// The command's umask, applied to modes of what is made on its behalf.
    fn umask(&self) -> u32 {
        const MAX_CACHED: usize = 4096;
        if let Some(m) = self.sup.umasks.lock().ok().and_then(|c| c.get(&self.req.pid).copied()) {
            return m;
        }
        let m = self.t.read_umask();
        if let Ok(mut c) = self.sup.umasks.lock() {
            if c.len() >= MAX_CACHED {
                c.clear();
            }
            c.insert(self.req.pid, m);
        }
        m
    }

    fn umask_changes(&self) -> Outcome {
        if let Ok(mut c) = self.sup.umasks.lock() {
            c.clear();
        }
        Outcome::Continue
    }

    /// Writes `e` to the run's journal before the operation it announces is performed;
    /// an entry that cannot be written means the operation is refused (with the error).
    fn journal(&self, e: crate::check::journal::Entry) -> Result<(), Outcome> {
        match &self.sup.journal {
            None => Ok(()),
            Some(j) => j.record(&e).map_err(|err| {
                crate::warn!("could not write to the run's journal ({err}); refusing what it would record");
                Outcome::Fail(err.raw_os_error().unwrap_or(libc::EIO))
            }),
        }
    }

    fn forget(&self, st: &libc::stat) {
        if let Ok(mut m) = self.sup.made.lock() {
            m.remove(&(st.st_dev, st.st_ino));
        }
    }
}

impl Supervisor {
    pub fn new(policy: FsPolicy, arch: Arch, route: Option<crate::net::Route>) -> Self {
        Supervisor {
            policy,
            // by [`Supervisor::serve`]
            protected: HashSet::new(),
            linked: Mutex::default(),
            made: Mutex::default(),
            arch,
            route,
            mediate_ptys: false,
            ptys: Mutex::default(),
            umasks: Mutex::default(),
            journal: None,
            pool: None,
            native_rules: HashSet::new(),
            files_rules: HashSet::new(),
            native_dirs: Mutex::default(),
            cwds: Mutex::default(),
            meta_ok: Mutex::default(),
            sockopts: Mutex::default(),
            listeners: Mutex::default(),
            asked: Mutex::default(),
            reserved: Vec::new(),
            unix_paths: Vec::new(),
            shm: SharedMemory::Untouched,
            auditor: None,
        }
    }

    /// Answers notifications on `listener` from worker threads until the process exits.
    /// The caller ticks the returned [`Watchdog`] once its [`Watchdog::due_in`] has passed.
    pub fn serve(mut self, listener: OwnedFd) -> std::io::Result<Watchdog> {
        // Looked up here, once the command is starting, rather than on the way to its
        // exec (a stat of each protected path, 0.05 ms): no call is answered before, and
        // the command cannot move a protected file meanwhile (Landlock denies it).
        self.protected = crate::fs::prepare::protected_paths(&self.policy)
            .iter()
            .filter_map(|p| std::fs::symlink_metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            })
            .collect();
        // Linux >= 6.6: the answer wakes the command on the CPU that answered instead of
        // sending a wake-up to another CPU, which on a VM costs 40-180 µs per round trip
        // instead of ~6 µs. Older kernels refuse the flag; they are only slower.
        let sync = notify::set_sync_wakeup(listener.as_fd());
        tracing::debug!(sync, "supervisor listener");
        let pool = Arc::new(Pool {
            sup: self,
            listener,
            idle: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        });
        Pool::start(&pool)
    }

    fn handle(&self, listener: BorrowedFd<'_>, req: &Notif) {
        let name = self.arch.name(i64::from(req.data.nr)).unwrap_or("?");
        let call = Call { sup: self, listener, req, t: Tracee::new(req.pid), note: RefCell::new(None) };
        let outcome = call.dispatch(name);
        match &*call.note.borrow() {
            Some((path, why)) => {
                tracing::debug!(syscall = name, pid = req.pid, path = %path.display(), decision = ?outcome, rule = why, "mediated")
            }
            None => tracing::debug!(syscall = name, pid = req.pid, decision = ?outcome, "mediated"),
        }
        let sent = match outcome {
            Outcome::Continue => notify::send_continue(listener, req.id),
            Outcome::Fail(e) => notify::send_result(listener, req.id, 0, e),
            Outcome::Value(v) => notify::send_result(listener, req.id, v, 0),
            Outcome::Fd { fd, cloexec } => notify::send_fd(listener, req.id, fd.as_fd(), cloexec),
            Outcome::Gone => Ok(()),
        };
        // ENOENT: the command was killed or interrupted while we worked
        if let Err(e) = sent.map_err(|e| e.raw_os_error()) {
            if e != Some(libc::ENOENT) {
                crate::warn!("supervisor: answering {name}: errno {e:?}");
            }
        }
    }
}

impl Call<'_> {
    fn dispatch(&self, name: &str) -> Outcome {
        let a = self.args();
        let fd = |x: u64| x as i32;
        let cwd = libc::AT_FDCWD;
        match name {
            "open" => self.open(cwd, a[0], a[1] as i32, a[2] as u32),
            "openat" => self.open(fd(a[0]), a[1], a[2] as i32, a[3] as u32),
            "creat" => self.open(cwd, a[0], libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, a[1] as u32),
            "mkdir" => self.mkdir(cwd, a[0], a[1] as u32),
            "mkdirat" => self.mkdir(fd(a[0]), a[1], a[2] as u32),
            "mknod" => self.mknod(cwd, a[0], a[1] as u32),
            "mknodat" => self.mknod(fd(a[0]), a[1], a[2] as u32),
            "symlink" => self.symlink(a[0], cwd, a[1]),
            "symlinkat" => self.symlink(a[0], fd(a[1]), a[2]),
            "link" => self.link([cwd, cwd], [a[0], a[1]], 0),
            "linkat" => self.link([fd(a[0]), fd(a[2])], [a[1], a[3]], a[4] as i32),
            "rename" => self.rename([cwd, cwd], [a[0], a[1]], 0),
            "renameat" => self.rename([fd(a[0]), fd(a[2])], [a[1], a[3]], 0),
            "renameat2" => self.rename([fd(a[0]), fd(a[2])], [a[1], a[3]], a[4] as u32),
            "unlink" => self.unlink(cwd, a[0], 0),
            "unlinkat" => self.unlink(fd(a[0]), a[1], a[2] as i32),
            "rmdir" => self.unlink(cwd, a[0], libc::AT_REMOVEDIR),
            "truncate" => self.truncate(a[0], a[1] as i64),
            "connect" => self.connect(fd(a[0]), a[1], a[2]),
            "bind" => self.bind(fd(a[0]), a[1], a[2]),
            "listen" => self.listen(fd(a[0]), a[1] as i32),
            "getsockname" => self.sock_name(fd(a[0]), a[1], a[2], crate::net::shown_addr::End::Own),
            "getpeername" => self.sock_name(fd(a[0]), a[1], a[2], crate::net::shown_addr::End::Peer),
            "setsockopt" => self.setsockopt(fd(a[0]), a[1] as i32, a[2] as i32, a[3], a[4]),
            "ioctl" => self.pty_peer(fd(a[0]), a[2] as i32),
            "umask" => self.umask_changes(),
            "chdir" | "fchdir" => self.directory_changes(),
            "prlimit64" | "setpriority" | "sched_setaffinity" | "sched_setscheduler" | "sched_setparam"
            | "sched_setattr" | "ioprio_set" => self.pid_call(name),
            "kill" | "tkill" | "tgkill" | "rt_sigqueueinfo" | "rt_tgsigqueueinfo" | "pidfd_send_signal" | "fcntl" => {
                self.signal_call(name)
            }
            other => self.metadata(other),
        }
    }
}

/// The receiving threads. One is the fast path: it polls the listener (with the
/// synchronous wake-up the kernel hands the notification over on the same CPU), receives
/// and answers inline. A watchdog adds another whenever every receiver has been inside
/// one call for [`STUCK`] (a FIFO waiting for a reader, a hung network filesystem), up to
/// [`MAX_WORKERS`], so a slow call never holds up the rest and signals are never delayed
/// (the main thread handles those).
struct Pool {
    sup: Supervisor,
    listener: OwnedFd,
    idle: AtomicUsize,
    total: AtomicUsize,
    /// Calls answered so far: the watchdog's sign of progress.
    done: AtomicUsize,
}

const MAX_WORKERS: usize = 64;
const STUCK: std::time::Duration = std::time::Duration::from_millis(50);

impl Pool {
    fn start(pool: &Arc<Pool>) -> std::io::Result<Watchdog> {
        Pool::spawn(pool)?;
        Ok(Watchdog { pool: Arc::clone(pool), last: usize::MAX, next: std::time::Instant::now() + STUCK })
    }

    fn spawn(pool: &Arc<Pool>) -> std::io::Result<()> {
        if pool.total.fetch_add(1, Ordering::SeqCst) >= MAX_WORKERS {
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        let p = Arc::clone(pool);
        let spawned =
            std::thread::Builder::new().name("supervisor".into()).stack_size(256 * 1024).spawn(move || p.work());
        if spawned.is_err() {
            // no thread: its place is free for a later try (the system may have threads again)
            pool.total.fetch_sub(1, Ordering::SeqCst);
        }
        spawned.map(drop)
    }

    fn work(self: Arc<Self>) {
        let mut follow = follow::Follow::default();
        loop {
            self.idle.fetch_add(1, Ordering::SeqCst);
            let fd = std::os::fd::AsRawFd::as_raw_fd(&self.listener);
            let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: poll on one live descriptor.
            let n = unsafe { libc::poll(&mut pfd, 1, -1) };
            if n < 0 || pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                self.idle.fetch_sub(1, Ordering::SeqCst);
                if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // no process is left under the filter
                return;
            }
            let req = notify::recv(self.listener.as_fd());
            self.idle.fetch_sub(1, Ordering::SeqCst);
            match req {
                Ok(req) => {
                    follow.note(req.pid);
                    self.sup.handle(self.listener.as_fd(), &req);
                    self.done.fetch_add(1, Ordering::SeqCst);
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) => {}
                Err(e) => {
                    tracing::debug!("supervisor receiver stops: {e}");
                    return;
                }
            }
        }
    }
}

/// Adds a receiver when every receiver has been inside one call for [`STUCK`]. It is
/// ticked by srt's main thread, which wakes for signals anyway, rather than by a thread of
/// its own: a thread costs every run its start and, at srt's exit, a wake-up on another
/// CPU to end it (100-300 µs on a VM), for a case that is rare.
pub struct Watchdog {
    pool: Arc<Pool>,
    /// Calls answered at the last look.
    last: usize,
    /// When to look next.
    next: std::time::Instant,
}

impl Watchdog {
    /// How long the caller may sleep before the next [`Watchdog::tick`].
    pub fn due_in(&self) -> std::time::Duration {
        self.next.saturating_duration_since(std::time::Instant::now())
    }

    /// Looks at the receivers if a period has passed since the last look.
    pub fn tick(&mut self) {
        let now = std::time::Instant::now();
        if now < self.next {
            return;
        }
        self.next = now + STUCK;
        let done = self.pool.done.load(Ordering::SeqCst);
        if stuck(self.pool.idle.load(Ordering::SeqCst), done, self.last) {
            // the spawn only fails when the system is out of threads; the existing
            // receivers go on serving, just with less concurrency
            let _ = Pool::spawn(&self.pool);
        }
        self.last = done;
    }
}

/// Every receiver is inside a call (none idle) and none was answered since the last look.
fn stuck(idle: usize, done: usize, last: usize) -> bool {
    idle == 0 && done == last
}

#[cfg(test)]
mod watchdog_tests {
    use super::stuck;

    #[test]
    fn a_receiver_is_added_only_when_none_is_idle_and_nothing_was_answered() {
        assert!(stuck(0, 7, 7), "every receiver busy, no progress: add one");
        assert!(!stuck(1, 7, 7), "an idle receiver takes the next call");
        assert!(!stuck(0, 8, 7), "calls are being answered");
        assert!(!stuck(0, 0, usize::MAX), "the first look has nothing to compare with");
    }
}
