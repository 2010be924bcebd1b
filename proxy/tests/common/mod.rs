//! Test fixtures: the real `srt-proxy` binary, a plain-HTTP origin and a TLS origin, all
//! on loopback.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

pub const TOKEN: &str = "t0ken-for-tests";

/// A directory removed when the test process exits.
pub fn tempdir(tag: &str) -> PathBuf {
    srt_tests::scratch_dir(&format!("proxy-test-{tag}"))
}

pub fn settings(allow: &[&str], deny: &[&str]) -> String {
    serde_json::json!({
        "network": {"allowedDomains": allow, "deniedDomains": deny},
        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
    })
    .to_string()
}

/// The proxy binary, its log lines, killed on drop.
pub struct Proxy {
    child: Child,
    pub addr: SocketAddr,
    pub log: Arc<Mutex<Vec<String>>>,
    pub settings: PathBuf,
    pub dir: PathBuf,
}

impl Proxy {
    pub fn start(settings_text: &str, extra: &[&str]) -> Proxy {
        Self::start_with(settings_text, extra, |_| {})
    }

    pub fn start_with(settings_text: &str, extra: &[&str], tweak: impl FnOnce(&mut Command)) -> Proxy {
        let dir = tempdir("proxy");
        let settings = dir.join("srt-settings.json");
        std::fs::write(&settings, settings_text).unwrap();
        Self::spawn(dir, settings, extra, tweak)
    }

    /// Runs on an existing settings path (a symlinked ConfigMap layout, say).
    pub fn start_file(settings: &Path, extra: &[&str]) -> Proxy {
        Self::spawn(tempdir("proxy"), settings.to_path_buf(), extra, |_| {})
    }

    fn spawn(dir: PathBuf, settings: PathBuf, extra: &[&str], tweak: impl FnOnce(&mut Command)) -> Proxy {
        // SRT_TEST_PROXY_BIN runs the tests against another build (an older gate, to show
        // that a test fails without its fix)
        let bin = std::env::var_os("SRT_TEST_PROXY_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_srt-proxy").into());
        let mut c = Command::new(bin);
        c.arg("--settings").arg(&settings).args(["--listen", "127.0.0.1:0"]).args(extra);
        c.env("SRT_PROXY_TOKEN", TOKEN).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        tweak(&mut c);
        let mut child = c.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let l2 = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("\"event\":\"listening\"") {
                    let _ = tx.send(line.clone());
                }
                l2.lock().unwrap().push(line);
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(10)).expect("proxy did not start");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let addr = v["addr"].as_str().unwrap().parse().unwrap();
        Proxy { child, addr, log, settings, dir }
    }

    pub fn url(&self) -> String {
        format!("http://srt:{TOKEN}@{}", self.addr)
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits until a log line contains all of `needles`.
    pub fn wait_log(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            if let Some(l) = self.log.lock().unwrap().iter().find(|l| needles.iter().all(|n| l.contains(n))) {
                return l.clone();
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no log line with {needles:?}: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A plain HTTP/1.1 origin on loopback. Routes: `/small`, `/headers` (echoes the request
/// head), `/bytes/N` (N deterministic bytes), `PUT /sha256` (hex digest of the body).
pub struct Origin {
    pub port: u16,
    pub heads: Arc<Mutex<Vec<String>>>,
}

pub fn pattern(n: usize) -> impl Iterator<Item = u8> {
    (0..n).map(|i| (i % 251) as u8)
}

impl Origin {
    pub fn start() -> Origin {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let h2 = heads.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let h = h2.clone();
                std::thread::spawn(move || serve_origin(s, h));
            }
        });
        Origin { port, heads }
    }
}

fn serve_origin(mut s: TcpStream, heads: Arc<Mutex<Vec<String>>>) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        head.push_str(&line);
        if line == "\r\n" || line == "\n" {
            break;
        }
    }
    heads.lock().unwrap().push(head.clone());
    let first = head.lines().next().unwrap_or("").to_string();
    let target = first.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/").to_string();
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    let reply = |s: &mut TcpStream, body: &[u8]| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\nKeep-Alive: timeout=5\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(body);
    };
    if path == "/sha256" {
        let mut h = Sha256::new();
        let mut left = len;
        let mut buf = vec![0u8; 1 << 16];
        while left > 0 {
            let n = r.read(&mut buf[..left.min(1 << 16)]).unwrap_or(0);
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            left -= n;
        }
        reply(&mut s, hex(&h.finalize()).as_bytes());
    } else if let Some(n) = path.strip_prefix("/bytes/") {
        let n: usize = n.parse().unwrap_or(0);
        let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n");
        let chunk: Vec<u8> = pattern(251 * 1024).collect();
        let mut sent = 0;
        while sent < n {
            let k = (n - sent).min(chunk.len());
            if s.write_all(&chunk[..k]).is_err() {
                return;
            }
            sent += k;
        }
    } else if path == "/headers" {
        reply(&mut s, head.as_bytes());
    } else {
        reply(&mut s, b"origin-ok\n");
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[allow(unused_imports)] // not every test file uses it
pub use srt_tests::TlsOrigin;

pub struct Curl {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn curl(args: &[&str]) -> Curl {
    let o = Command::new("curl").args(["-sS", "--max-time", "20"]).args(args).output().expect("curl is installed");
    Curl {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
    }
}

/// Sends raw bytes, returns everything the proxy answered before closing (or 3 s).
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into()
}

pub fn basic() -> String {
    use base64::Engine;
    format!(
        "Proxy-Authorization: Basic {}\r\n",
        base64::engine::general_purpose::STANDARD.encode(format!("srt:{TOKEN}"))
    )
}

/// A CONNECT tunnel through the proxy to `authority`, its `200` head read.
pub fn connect_tunnel(p: &Proxy, authority: &str, timeout: Duration) -> TcpStream {
    let mut s = TcpStream::connect(p.addr).unwrap();
    s.set_read_timeout(Some(timeout)).unwrap();
    s.write_all(format!("CONNECT {authority} HTTP/1.1\r\n{}\r\n", basic()).as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
    s
}

/// A SOCKS5 tunnel through the proxy to `host:port` (by name), authenticated with the
/// run's token; the proxy must allow it.
pub fn socks5_tunnel(p: &Proxy, host: &str, port: u16, timeout: Duration) -> TcpStream {
    let mut s = TcpStream::connect(p.addr).unwrap();
    s.set_read_timeout(Some(timeout)).unwrap();
    s.write_all(&[5, 1, 2]).unwrap();
    let mut b = [0u8; 2];
    s.read_exact(&mut b).unwrap();
    assert_eq!(b, [5, 2], "user/password auth is asked for");
    let mut auth = vec![1, 3];
    auth.extend(b"srt");
    auth.push(TOKEN.len() as u8);
    auth.extend(TOKEN.as_bytes());
    s.write_all(&auth).unwrap();
    s.read_exact(&mut b).unwrap();
    assert_eq!(b, [1, 0]);
    let mut req = vec![5, 1, 0, 3, host.len() as u8];
    req.extend(host.as_bytes());
    req.extend(port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut rep = [0u8; 10];
    s.read_exact(&mut rep).unwrap();
    assert_eq!(rep[1], 0, "the tunnel itself is allowed");
    s
}
