//! The syscall supervisor. The command's Landlock domain (and, in namespace mode, its
//! read-only mount view) is the floor: the kernel refuses everything the policy refuses.
//! The supervisor only does what the kernel cannot express:
//! - makes, removes and moves names in the directories the plan had to split (the working
//!   directory always, for `.bashrc`), judging protected names whose parents do not exist
//!   yet ([`crate::name_rules`]);
//! - judges metadata calls in landlock mode, where no mount can make them fail;
//! - routes `connect()` to the proxy in landlock mode.
//!
//! It never grants by letting the command's own syscall proceed (`CONTINUE`): the command
//! could change the path or the descriptor after the check. It reads arguments once,
//! resolves them to descriptors of its own, judges the real location, and acts on those
//! descriptors. `CONTINUE` is used only for calls the kernel judges by itself under the
//! command's Landlock domain (opens and name operations the supervisor would not grant),
//! never for metadata and never for a connect. Whatever it cannot classify is refused.
//!
//! Several worker threads answer notifications, so one slow call (a FIFO waiting for a
//! reader) never stalls the others, and the main thread's signal handling never waits.

mod meta;
mod names;
mod pty;
mod resolve;
mod sys;
mod tracee;

use std::cell::RefCell;
use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::notify::{self, Notif};
use crate::policy::FsPolicy;
use crate::sysno::Arch;
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

    fn forget(&self, st: &libc::stat) {
        if let Ok(mut m) = self.sup.made.lock() {
            m.remove(&(st.st_dev, st.st_ino));
        }
    }
}

impl Supervisor {
    pub fn new(policy: FsPolicy, arch: Arch, route: Option<crate::net::Route>) -> Self {
        let protected = crate::prepare::protected_paths(&policy)
            .iter()
            .filter_map(|p| std::fs::symlink_metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            })
            .collect();
        Supervisor {
            policy,
            protected,
            linked: Mutex::default(),
            made: Mutex::default(),
            arch,
            route,
            mediate_ptys: false,
            ptys: Mutex::default(),
        }
    }

    /// Answers notifications on `listener` from worker threads until the process exits.
    pub fn serve(self, listener: OwnedFd) -> std::io::Result<()> {
        // Linux >= 6.6: the answer wakes the command on the CPU that answered instead of
        // sending a wake-up to another CPU, which on a VM costs 40-180 µs per round trip
        // instead of ~6 µs. Older kernels refuse the flag; they are only slower.
        notify::set_sync_wakeup(listener.as_fd());
        let pool = Arc::new(Pool { sup: self, listener, idle: AtomicUsize::new(0), total: AtomicUsize::new(0) });
        Pool::spawn(&pool)?;
        Pool::spawn(&pool)
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
            "ioctl" => self.pty_peer(fd(a[0]), a[2] as i32),
            other => self.metadata(other),
        }
    }

    /// Routes a connect: to the proxy (performed here on the command's own socket, at an
    /// address we hold, so changing the sockaddr in memory afterwards gains nothing), or
    /// refused.
    fn connect(&self, sockfd: i32, addr: u64, len: u64) -> Outcome {
        use crate::net::{self, Verdict};
        let Some(route) = self.sup.route else { return Outcome::Fail(libc::EACCES) };
        if addr == 0 || !(2..=128).contains(&len) {
            return Outcome::Fail(libc::EINVAL);
        }
        let sa = match self.t.read_bytes(addr, len as usize) {
            Ok(sa) => sa,
            Err(e) => return Outcome::Fail(e),
        };
        match net::judge(&route, &sa) {
            Verdict::Refuse(e) => Outcome::Fail(e),
            Verdict::Kernel => Outcome::Continue,
            Verdict::Proxy { v6, port } => {
                let sock = match net::take_socket(self.req.pid, sockfd) {
                    Ok(s) => s,
                    Err(e) => return Outcome::Fail(e),
                };
                if !self.valid() {
                    return Outcome::Gone;
                }
                match net::connect_to_proxy(&sock, port, v6) {
                    0 => Outcome::Value(0),
                    e => Outcome::Fail(e),
                }
            }
        }
    }
}

/// The worker threads. Each blocks in `SECCOMP_IOCTL_NOTIF_RECV`; when the last idle one
/// takes a notification, another is started, up to [`MAX_WORKERS`], so a call that waits
/// (a FIFO open) never holds up the rest.
struct Pool {
    sup: Supervisor,
    listener: OwnedFd,
    idle: AtomicUsize,
    total: AtomicUsize,
}

const MAX_WORKERS: usize = 64;

impl Pool {
    fn spawn(pool: &Arc<Pool>) -> std::io::Result<()> {
        if pool.total.fetch_add(1, Ordering::SeqCst) >= MAX_WORKERS {
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        let p = Arc::clone(pool);
        std::thread::Builder::new().name("supervisor".into()).stack_size(256 * 1024).spawn(move || p.work()).map(drop)
    }

    fn work(self: Arc<Self>) {
        loop {
            self.idle.fetch_add(1, Ordering::SeqCst);
            let req = notify::recv(self.listener.as_fd());
            let idle = self.idle.fetch_sub(1, Ordering::SeqCst) - 1;
            match req {
                Ok(req) => {
                    if idle == 0 {
                        // the spawn only fails when the system is out of threads; the
                        // existing workers go on serving, just with less concurrency
                        let _ = Pool::spawn(&self);
                    }
                    self.sup.handle(self.listener.as_fd(), &req);
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) => {}
                Err(e) => {
                    tracing::debug!("supervisor worker stops: {e}");
                    return;
                }
            }
        }
    }
}
