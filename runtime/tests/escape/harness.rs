//! Escape-test harness: every scenario runs the real `srt` binary in a fresh pair of
//! directories (W = working dir, O = a sibling outside it), asserts the attempt failed,
//! then asserts the host is unchanged. Each scenario runs as root and as uid 65534.

use std::os::unix::fs::{chown, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Value};

use super::probes::{clear_probes, probes_quiet, register, TcpProbe};
use super::timed::wait_with_timeout;
pub use super::timed::Output;

pub const NOBODY: u32 = 65534;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum As {
    Root,
    Unprivileged,
}

pub struct Env {
    pub root: PathBuf,
    pub w: PathBuf,
    pub o: PathBuf,
    pub uid: Option<u32>,
}

impl Env {
    pub fn w(&self, rel: &str) -> PathBuf {
        self.w.join(rel)
    }
    pub fn o(&self, rel: &str) -> PathBuf {
        self.o.join(rel)
    }
    /// Creates a file owned by the scenario's user (so only the sandbox stops writes).
    pub fn file(&self, p: &Path, content: &str) {
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
            self.own(parent);
        }
        std::fs::write(p, content).unwrap();
        self.own(p);
    }
    pub fn dir(&self, p: &Path) {
        std::fs::create_dir_all(p).unwrap();
        let mut cur = p.to_path_buf();
        while cur.starts_with(&self.root) && cur != self.root {
            self.own(&cur);
            cur.pop();
        }
    }
    pub fn own(&self, p: &Path) {
        if let Some(uid) = self.uid {
            chown(p, Some(uid), Some(uid)).unwrap();
        }
    }
    /// Builds the C program `source` as O/`name` (gcc, `-O1 -pthread`), owned by the
    /// scenario's user.
    pub fn build_c(&self, name: &str, source: &str) {
        let c = self.o(&format!("{name}.c"));
        self.file(&c, source);
        let out = std::process::Command::new("gcc")
            .args(["-O1", "-pthread", "-o"])
            .arg(self.o(name))
            .arg(&c)
            .output()
            .expect("gcc is installed (scripts/deps.sh)");
        assert!(out.status.success(), "gcc {name}.c: {}", String::from_utf8_lossy(&out.stderr));
        self.own(&self.o(name));
    }
    /// Gives `p` and everything beneath it to the scenario's user, symlinks themselves
    /// rather than their targets.
    pub fn own_tree(&self, p: &Path) {
        let Some(uid) = self.uid else { return };
        std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
        if p.symlink_metadata().unwrap().is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                self.own_tree(&e.unwrap().path());
            }
        }
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A copy of srt that uid 65534 can execute (the build tree may sit under /root).
fn srt_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // SRT_ESCAPE_BIN lets a reviewer aim the battery at another launcher (or at an
        // unsandboxed stand-in, to see every scenario catch it).
        let src =
            std::env::var_os("SRT_ESCAPE_BIN").map(PathBuf::from).unwrap_or_else(|| env!("CARGO_BIN_EXE_srt").into());
        srt_tests::executable_copy(&src, "escape-bin")
    })
}

pub type Hook = Box<dyn Fn(&Env)>;
pub type Check = Box<dyn Fn(&Env, &Output) -> Result<(), String>>;

pub struct Scenario {
    pub cmd: String,
    pub settings: Value,
    pub setup: Vec<Hook>,
    pub checks: Vec<Check>,
    /// Shell wrapped around srt outside the sandbox (for inherited fds); `{SRT}` is replaced.
    pub wrapper: Option<String>,
    /// Environment for srt (or the wrapper); `{W}` and `{O}` in values are replaced.
    pub extra_env: Vec<(String, String)>,
    pub settings_file: SettingsFile,
    /// Whether srt gets `-s <settings file>` (wrappers always get `$SETTINGS`).
    pub settings_flag: bool,
    /// srt (or the wrapper) is killed, and the scenario fails, after this long.
    pub time_limit: Duration,
    /// A second srt run in the same directories, after the first ("a later tool call").
    pub then: Option<String>,
}

/// Where the scenario's settings file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsFile {
    /// Next to W and O, out of the command's reach (the default).
    Beside,
    /// `W/srt-settings.json`, owned by the scenario's user: inside allowWrite.
    InW,
    /// No file at all: srt falls back to `~/.srt-settings.json` or its built-in default.
    Absent,
}

pub fn base_settings() -> Value {
    json!({
        "network": {"allowedDomains": [], "deniedDomains": []},
        "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}
    })
}

impl Scenario {
    pub fn new(cmd: &str) -> Self {
        Scenario {
            cmd: cmd.into(),
            settings: base_settings(),
            setup: vec![],
            checks: vec![],
            wrapper: None,
            extra_env: vec![],
            settings_file: SettingsFile::Beside,
            settings_flag: true,
            time_limit: Duration::from_secs(30),
            then: None,
        }
    }
    pub fn setup(mut self, f: impl Fn(&Env) + 'static) -> Self {
        self.setup.push(Box::new(f));
        self
    }
    /// `f` gets W and O and returns settings patches: `("filesystem.denyWrite", json!([..]))`.
    pub fn with(mut self, key: &str, value: Value) -> Self {
        let (a, b) = key.split_once('.').unwrap_or((key, ""));
        if b.is_empty() {
            self.settings[a] = value;
        } else {
            self.settings[a][b] = value;
        }
        self
    }
    pub fn check(mut self, f: impl Fn(&Env, &Output) -> Result<(), String> + 'static) -> Self {
        self.checks.push(Box::new(f));
        self
    }
    /// The attempt itself must fail (non-zero exit).
    pub fn fails(self) -> Self {
        self.check(|_, o| if o.code != 0 { Ok(()) } else { Err(format!("attempt exited 0: {}", o.text)) })
    }
    pub fn lacks(self, needle: &'static str) -> Self {
        self.check(
            move |_, o| {
                if o.text.contains(needle) {
                    Err(format!("output has {needle:?}: {}", o.text))
                } else {
                    Ok(())
                }
            },
        )
    }
    pub fn prints(self, needle: &'static str) -> Self {
        self.check(
            move |_, o| {
                if o.text.contains(needle) {
                    Ok(())
                } else {
                    Err(format!("output lacks {needle:?}: {}", o.text))
                }
            },
        )
    }
    /// The host must not have this path (W- or O-relative: "w/x", "o/x").
    pub fn absent(self, rel: &'static str) -> Self {
        self.check(move |e, _| {
            let p = resolve(e, rel);
            if p.symlink_metadata().is_ok() {
                Err(format!("{} exists on the host", p.display()))
            } else {
                Ok(())
            }
        })
    }
    /// The host must not have `rel` below W (a path relative to W, any depth).
    pub fn absent_w(self, rel: &'static str) -> Self {
        self.check(move |e, _| {
            let p = e.w(rel);
            if p.symlink_metadata().is_ok() {
                Err(format!("{} exists on the host", p.display()))
            } else {
                Ok(())
            }
        })
    }
    /// The host file must still hold exactly `content`.
    pub fn holds(self, rel: &'static str, content: &'static str) -> Self {
        self.check(move |e, _| match std::fs::read_to_string(resolve(e, rel)) {
            Ok(s) if s == content => Ok(()),
            Ok(s) => Err(format!("{rel} now holds {s:?}, expected {content:?}")),
            Err(err) => Err(format!("{rel} is gone: {err}")),
        })
    }
    pub fn wrap(mut self, shell: &str) -> Self {
        self.wrapper = Some(shell.into());
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.extra_env.push((k.into(), v.into()));
        self
    }
    /// The settings file is `W/srt-settings.json`, inside allowWrite.
    pub fn settings_in_w(mut self) -> Self {
        self.settings_file = SettingsFile::InW;
        self
    }
    /// srt finds its settings itself (`$SRT_SETTINGS_PATH`, `~/.srt-settings.json`, default).
    pub fn no_settings_flag(mut self) -> Self {
        self.settings_flag = false;
        self
    }
    /// No settings file anywhere and no `-s`.
    pub fn no_settings_file(mut self) -> Self {
        self.settings_file = SettingsFile::Absent;
        self.no_settings_flag()
    }
    /// After the attempt, srt runs again with `cmd`, same settings and mode (an agent's
    /// next tool call); the checks see both outputs.
    pub fn then(mut self, cmd: &str) -> Self {
        self.then = Some(cmd.into());
        self
    }
    /// srt (or the wrapper) must be done within `limit` (default 30 s).
    pub fn within(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    pub fn run(&self, who: As, mode: &str) {
        let uid = match who {
            As::Root => None,
            As::Unprivileged if is_root() => Some(NOBODY),
            As::Unprivileged => {
                srt_tests::skip(
                    &format!("escape as uid 65534 in {mode} mode: {}", self.cmd.lines().next().unwrap_or_default()),
                    "not root: cannot switch to uid 65534 (ran as this uid instead)",
                );
                None
            }
        };
        let root = tempdir();
        let env = Env { w: root.join("w"), o: root.join("o"), root: root.clone(), uid };
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        env.dir(&env.w.clone());
        env.dir(&env.o.clone());
        clear_probes();
        for s in &self.setup {
            s(&env);
        }
        // srt's git audit counts changes from its start, to the clock tick (a few ms): the
        // setup is the host's, before the run
        std::thread::sleep(Duration::from_millis(20));
        let fill = |s: &str| s.replace("{W}", env.w.to_str().unwrap()).replace("{O}", env.o.to_str().unwrap());
        let settings_path = match self.settings_file {
            SettingsFile::Beside => Some(root.join("settings.json")),
            SettingsFile::InW => Some(env.w("srt-settings.json")),
            SettingsFile::Absent => None,
        };
        if let Some(p) = &settings_path {
            std::fs::write(p, fill(&self.settings.to_string())).unwrap();
            if self.settings_file == SettingsFile::InW {
                env.own(p);
            }
        }
        let extra: Vec<(String, String)> = self.extra_env.iter().map(|(k, v)| (k.clone(), fill(v))).collect();
        let run = Run {
            settings: settings_path.as_deref(),
            settings_flag: self.settings_flag,
            cmd: &self.cmd,
            wrapper: self.wrapper.as_deref(),
            extra: &extra,
            mode,
            limit: self.time_limit,
        };
        let mut out = run_srt(&env, &run);
        if let Some(second) = &self.then {
            // a later tool call: past the clock tick the first run ended in
            std::thread::sleep(Duration::from_millis(20));
            let again = run_srt(&env, &Run { cmd: second, ..run });
            out.text.push_str(&again.text);
            out.timed_out |= again.timed_out;
        }
        let mut failures: Vec<String> = Vec::new();
        if out.timed_out {
            failures.push(format!("srt did not finish within {:?}: {}", self.time_limit, out.text));
        }
        failures.extend(self.checks.iter().filter_map(|c| c(&env, &out).err()));
        failures.extend(probes_quiet().err());
        clear_probes();
        let _ = std::fs::remove_dir_all(&root);
        assert!(failures.is_empty(), "as {who:?} in {mode} mode: {}", failures.join("; "));
        assert!(!self.checks.is_empty(), "a scenario must check something");
    }
}

fn resolve(e: &Env, rel: &str) -> PathBuf {
    match rel.split_once('/') {
        Some(("w", r)) => e.w(r),
        Some(("o", r)) => e.o(r),
        _ => e.root.join(rel),
    }
}

fn tempdir() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let p = std::env::temp_dir().join(format!("srt-escape-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p.canonicalize().unwrap()
}

/// One invocation of srt (or of the wrapper around it).
pub struct Run<'a> {
    /// The settings file, passed as `-s` when `settings_flag` and as `$SETTINGS` to wrappers.
    pub settings: Option<&'a Path>,
    pub settings_flag: bool,
    pub cmd: &'a str,
    pub wrapper: Option<&'a str>,
    pub extra: &'a [(String, String)],
    pub mode: &'a str,
    pub limit: Duration,
}

pub fn run_srt(env: &Env, run: &Run<'_>) -> Output {
    let srt = srt_bin();
    let mode = format!("--network-mode={}", run.mode);
    let mut c = match run.wrapper {
        None => {
            let mut c = Command::new(srt);
            c.arg(&mode);
            if let (true, Some(s)) = (run.settings_flag, run.settings) {
                c.arg("-s").arg(s);
            }
            c.arg("-c").arg(run.cmd);
            c
        }
        Some(w) => {
            let mut c = Command::new("/bin/bash");
            c.arg("-c").arg(w).env("SRT", srt).env("CMD", run.cmd).env("MODE", &mode);
            if let Some(s) = run.settings {
                c.env("SETTINGS", s);
            }
            c
        }
    };
    c.current_dir(&env.w)
        .env("W", &env.w)
        .env("O", &env.o)
        .env("HOME", &env.root)
        .env_remove("SRT_SETTINGS_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // its own process group, so a time-out can kill a wrapper and all it started
        .process_group(0);
    for (k, v) in run.extra {
        c.env(k, v);
    }
    if let Some(uid) = env.uid {
        c.uid(uid).gid(uid);
    }
    let child = c.spawn().unwrap();
    wait_with_timeout(child, run.limit)
}

/// Declares each scenario four times: in landlock and namespace mode, each as root and
/// as uid 65534.
#[macro_export]
macro_rules! escapes {
    ($($(#[$attr:meta])* $name:ident => $scenario:expr;)*) => {
        $crate::escapes!(@mode landlock "landlock"; $($(#[$attr])* $name => $scenario;)*);
        $crate::escapes!(@mode namespace "namespace"; $($(#[$attr])* $name => $scenario;)*);
    };
    (@mode $m:ident $mode:literal; $($(#[$attr:meta])* $name:ident => $scenario:expr;)*) => {
        mod $m {
            #[allow(unused_imports)]
            use super::*;
            mod as_root {
                #[allow(unused_imports)]
                use super::*;
                $( $(#[$attr])* #[test] fn $name() { let s: $crate::escape::harness::Scenario = $scenario; s.run($crate::escape::harness::As::Root, $mode) } )*
            }
            mod as_unprivileged {
                #[allow(unused_imports)]
                use super::*;
                $( $(#[$attr])* #[test] fn $name() { let s: $crate::escape::harness::Scenario = $scenario; s.run($crate::escape::harness::As::Unprivileged, $mode) } )*
            }
        }
    };
}

/// Setup: a host TCP listener on `addr` (port 0), its port written to O/port.
pub fn tcp_probe(e: &Env, addr: &str) {
    let l = std::net::TcpListener::bind(addr).unwrap();
    l.set_nonblocking(true).unwrap();
    e.file(&e.o("port"), &l.local_addr().unwrap().port().to_string());
    register(Box::new(TcpProbe(l)));
}

/// A Python one-liner calling `syscall(nr, args...)`: exits 0 only if it succeeded,
/// and prints the errno.
pub fn py_syscall(nr: i64, args: &str) -> String {
    format!(
        "/usr/bin/python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); \
         r=l.syscall({nr}{args}); print(\"rc\", r, \"errno\", ctypes.get_errno()); sys.exit(0 if r>=0 else 1)'"
    )
}

pub fn py(code: &str) -> String {
    format!("/usr/bin/python3 -c '{code}'")
}

/// Setup: srt gets a private TMPDIR base (`<root>/tmp`; a wrapper exports it) so that
/// leftovers can be looked for.
pub fn private_tmp(e: &Env) {
    e.dir(&e.root.join("tmp"));
}

/// Nothing is left in the private TMPDIR base ([`private_tmp`]).
pub fn nothing_left_in_tmp(e: &Env, _: &Output) -> Result<(), String> {
    let left: Vec<String> = std::fs::read_dir(e.root.join("tmp"))
        .map(|d| d.flatten().map(|x| x.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("srt left things in TMPDIR's base: {left:?}"))
    }
}

/// No process whose command line mentions `marker` is alive.
pub fn no_process_with(marker: &str) -> Result<(), String> {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(marker) {
                return Err(format!(
                    "process {} ({}) survived srt",
                    e.file_name().to_string_lossy(),
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                ));
            }
        }
    }
    Ok(())
}
