//! Test fixtures shared by the workspace's integration tests: a TLS origin on loopback
//! with a fresh CA, scratch directories removed when the test process exits, and copies of
//! the built binaries that any uid can run. Test-only code: a panic is the failure report.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once};

pub mod layout;
pub mod vhost;

static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_scratch() {
    if let Ok(dirs) = SCRATCH.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A fresh directory `<temp>/srt-<tag>-<pid>-<n>`, mode 0755, removed when this test process
/// exits: fixtures shared through statics are never dropped, so they would otherwise stay
/// behind after every run.
pub fn scratch_dir(tag: &str) -> PathBuf {
    scratch_dir_in(&std::env::temp_dir(), tag)
}

/// [`scratch_dir`] under `parent` instead of the temp directory (e.g. /dev/shm for a tmpfs).
pub fn scratch_dir_in(parent: &Path, tag: &str) -> PathBuf {
    static REGISTER: Once = Once::new();
    // SAFETY: registers a plain extern "C" function that only touches a static Mutex.
    REGISTER.call_once(|| unsafe {
        libc::atexit(remove_scratch);
    });
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = parent.join(format!("srt-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    SCRATCH.lock().unwrap().push(dir.clone());
    dir
}

static MOUNTED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn unmount_tmpfs() {
    if let Ok(dirs) = MOUNTED.lock() {
        for d in dirs.iter() {
            let _ = std::process::Command::new("umount").arg(d).status();
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// A fresh tmpfs of its own on a scratch directory (root only: `mount -t tmpfs`), unmounted
/// when this process exits. Not `/dev/shm`: srt gives every run its own, so a working
/// directory there would be neither readable nor writable for the command. `None` where
/// the mount is refused (not root).
pub fn private_tmpfs(tag: &str) -> Option<PathBuf> {
    static REGISTER: Once = Once::new();
    let dir = std::env::temp_dir().join(format!("srt-{tag}-tmpfs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0755", "tmpfs"])
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    // SAFETY: registers a plain extern "C" function that only touches a static Mutex.
    REGISTER.call_once(|| unsafe {
        libc::atexit(unmount_tmpfs);
    });
    MOUNTED.lock().unwrap().push(dir.clone());
    Some(dir)
}

/// A binary of this workspace's build (`target/<profile>/<name>`), from an integration test.
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let built = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(built.exists(), "{} is missing: run the workspace's tests (cargo test --workspace)", built.display());
    built
}

/// A copy of `src` in a scratch directory that any uid can execute (the build tree may sit
/// under /root, out of reach of the unprivileged uids the tests run as).
pub fn executable_copy(src: &Path, tag: &str) -> PathBuf {
    let dst = scratch_dir(tag).join(src.file_name().unwrap());
    std::fs::copy(src, &dst).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755)).unwrap();
    dst
}

/// A command running `bin` as `uid` (its gid the same number), from a copy of `bin` that
/// uid can reach, made once per binary: the build tree may sit in a private directory
/// (`/root`, a `mktemp -d` clone), where another uid gets EACCES on the path itself.
pub fn command_as(bin: &Path, uid: u32) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    static COPIES: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
    let mut copies = COPIES.lock().unwrap();
    let copy = match copies.iter().find(|(b, _)| b == bin) {
        Some((_, c)) => c.clone(),
        None => {
            let c = executable_copy(bin, "uid-bin");
            copies.push((bin.to_path_buf(), c.clone()));
            c
        }
    };
    let mut c = std::process::Command::new(copy);
    c.uid(uid).gid(uid);
    c
}

/// A TLS origin for `names` answering `tls-origin-ok`, signed by a fresh CA whose
/// certificate is written to `<dir>/ca.pem`.
/// A fresh CA named `ca_name`, and a leaf certificate for `names` it signed (with its key).
pub fn ca_and_leaf(names: &[&str], ca_name: &str) -> (rcgen::Certificate, rcgen::Certificate, rcgen::KeyPair) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, ca_name);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf_params = rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    (ca_cert, leaf, leaf_key)
}

pub struct TlsOrigin {
    pub port: u16,
    pub ca: PathBuf,
    /// TLS handshakes completed so far (a refused tunnel must never reach one).
    pub handshakes: Arc<std::sync::atomic::AtomicUsize>,
}

impl TlsOrigin {
    pub fn start(dir: &Path, names: &[&str]) -> TlsOrigin {
        let (ca_cert, leaf, leaf_key) = ca_and_leaf(names, "srt test CA");
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        let certs = vec![leaf.der().clone()];
        let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let handshakes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = handshakes.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::from_std(l).unwrap();
                loop {
                    let Ok((s, _)) = l.accept().await else { continue };
                    let acceptor = acceptor.clone();
                    let counted = counted.clone();
                    tokio::spawn(async move {
                        use tokio::io::{AsyncReadExt, AsyncWriteExt};
                        let Ok(mut tls) = acceptor.accept(s).await else { return };
                        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let mut buf = vec![0u8; 8192];
                        let _ = tls.read(&mut buf).await;
                        let body = b"tls-origin-ok\n";
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                        let _ = tls.write_all(head.as_bytes()).await;
                        let _ = tls.write_all(body).await;
                        let _ = tls.shutdown().await;
                    });
                }
            });
        });
        TlsOrigin { port, ca, handshakes }
    }
}

/// Records that a test could not do what its name says on this host (not root, no second
/// uid, no user namespaces, no podman): the suite's summary counts it as skipped, not
/// passed, and prints the reason. `scripts/test.sh` sets `SRT_TEST_SKIP_LOG`; without it
/// the reason only goes to stderr.
pub fn skip(test: &str, why: &str) {
    // libtest names each test's thread after the test: unique where `test` may not be
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or(test);
    eprintln!("skipped: {test}: {why}");
    if let Some(log) = std::env::var_os("SRT_TEST_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{test}\t{why}");
        }
    }
}

/// A plain HTTP origin on 127.0.0.1 answering every request with `origin-ok\n`, on its own
/// thread for the rest of the test process; returns its port.
pub fn http_origin() -> u16 {
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\norigin-ok\n");
        }
    });
    port
}
