//! Side-by-side proxy benchmark on loopback, one run: srt-proxy against tinyproxy (Debian
//! package) and srt 0.0.83's own proxy (Node) with an nginx origin (sendfile), reporting
//! ratios against the baselines measured in the same run. Needs `nginx`, `tinyproxy`,
//! Node and srt 0.0.83 from npm (scripts/bench-deps.sh; without srt 0.0.83 its row is left out).
//!
//!   cargo bench -p srt-proxy --bench proxy_bench
//!   SRT_BENCH_PREVIOUS=/path/to/other/srt-proxy cargo bench ...   # also that build, interleaved
//!
//! 1. 1 GiB download: direct vs CONNECT through each proxy (curl -p), median of 3.
//! 2. Connection rate: 32 concurrent clients for 4 s, each doing connect, CONNECT,
//!    GET /small, read to EOF, close; five rounds per proxy, interleaved, with the
//!    proxy's own CPU time per connection.
//! 3. RSS of srt-proxy idle and with 1,000 idle tunnels open.
//! 4. Matching a host against 10,000 patterns.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Stops a child with SIGTERM (nginx's master then takes its workers down) and waits.
struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// The method: the proxy under test on CPU 0,
/// client and origin on CPU 1, so the proxies are compared on equal footing.
fn pinned(cpu: usize, program: &str) -> Command {
    let mut c = Command::new("taskset");
    c.args(["-c", &cpu.to_string(), program]);
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_port(port: u16) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "port {port} never opened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn raise_nofile() {
    // SAFETY: getrlimit/setrlimit on a local.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        r.rlim_cur = r.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &r);
    }
}

fn nginx(dir: &Path, port: u16) -> Kill {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("small"), vec![b'x'; 100]).unwrap();
    std::fs::File::create(www.join("big")).unwrap().set_len(1 << 30).unwrap();
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log crit;\n\
             events {{ worker_connections 8192; }}\n\
             http {{ access_log off; sendfile on; keepalive_requests 1000000; client_header_timeout 120s;\n\
               server {{ listen 127.0.0.1:{port}; root {w}; }} }}\n",
            d = dir.display(),
            w = www.display()
        ),
    )
    .unwrap();
    let c = pinned(1, "nginx")
        .arg("-c")
        .arg(&conf)
        .arg("-p")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx installed");
    wait_port(port);
    Kill(c)
}

fn tinyproxy(dir: &Path, port: u16) -> Kill {
    let conf = dir.join("tinyproxy.conf");
    std::fs::write(
        &conf,
        format!("Port {port}\nListen 127.0.0.1\nTimeout 600\nMaxClients 4096\nAllow 127.0.0.1\nLogLevel Critical\nDisableViaHeader Yes\n"),
    )
    .unwrap();
    let c = pinned(0, "tinyproxy")
        .arg("-d")
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tinyproxy installed");
    wait_port(port);
    Kill(c)
}

fn srt_proxy(dir: &Path, port: u16) -> Kill {
    let c = srt_proxy_command(dir, env!("CARGO_BIN_EXE_srt-proxy"), port)
        // the 1,000 idle tunnels below come from one client
        .args(["--max-pending-per-client", "4096", "--max-tunnels-per-client", "4096"])
        .spawn()
        .unwrap();
    wait_port(port);
    Kill(c)
}

fn srt_proxy_command(dir: &Path, bin: &str, port: u16) -> Command {
    let s = dir.join("srt-settings.json");
    std::fs::write(&s, r#"{"network":{"allowedDomains":["127.0.0.1"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#).unwrap();
    let mut c = pinned(0, bin);
    c.arg("--settings").arg(&s);
    c.args(["--listen", &format!("127.0.0.1:{port}"), "--no-auth", "--no-watch"]).stderr(Stdio::null());
    c
}

/// Another build of srt-proxy (`SRT_BENCH_PREVIOUS=path`, e.g. main's), measured beside
/// this one to show what a change costs.
fn previous(dir: &Path, port: u16) -> Option<Kill> {
    let bin = std::env::var("SRT_BENCH_PREVIOUS").ok()?;
    let c = srt_proxy_command(dir, &bin, port).spawn().unwrap();
    wait_port(port);
    Some(Kill(c))
}

/// srt 0.0.83's own proxy (`createHttpProxyServer` on Node, allowing every host), where
/// scripts/bench-deps.sh installed it.
fn srt_0083(port: u16) -> Option<Kill> {
    let deps = std::env::var_os("SRT_BENCH_DEPS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-deps"));
    let script = deps.join("srt-0.0.83/proxy.mjs");
    if !script.exists() {
        eprintln!("srt 0.0.83 not installed ({}): run scripts/bench-deps.sh", script.display());
        return None;
    }
    let c = pinned(0, "node").arg(script).arg(port.to_string()).stdout(Stdio::null()).spawn().ok()?;
    wait_port(port);
    Some(Kill(c))
}

fn download_gbit(proxy: Option<u16>, origin: u16) -> f64 {
    let mut runs: Vec<f64> = (0..3)
        .map(|_| {
            let mut c = pinned(1, "curl");
            c.args(["-s", "-o", "/dev/null", "-w", "%{speed_download}"]);
            if let Some(p) = proxy {
                c.args(["-p", "-x", &format!("http://127.0.0.1:{p}")]);
            }
            let out = c.arg(format!("http://127.0.0.1:{origin}/big")).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse::<f64>().unwrap() * 8.0 / 1e9
        })
        .collect();
    runs.sort_by(|a, b| a.total_cmp(b));
    runs[1]
}

async fn one_request(proxy: SocketAddr, origin: u16) -> bool {
    let Ok(mut s) = tokio::net::TcpStream::connect(proxy).await else { return false };
    let _ = s.set_nodelay(true);
    let req = format!("CONNECT 127.0.0.1:{origin} HTTP/1.1\r\nHost: 127.0.0.1:{origin}\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = vec![0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    if !got.starts_with(b"HTTP/1.1 200") && !got.starts_with(b"HTTP/1.0 200") {
        return false;
    }
    let get = format!("GET /small HTTP/1.1\r\nHost: 127.0.0.1:{origin}\r\nConnection: close\r\n\r\n");
    if s.write_all(get.as_bytes()).await.is_err() {
        return false;
    }
    let mut total = 0;
    loop {
        match s.read(&mut buf).await {
            Ok(0) => return total > 100,
            Ok(n) => total += n,
            Err(_) => return false,
        }
    }
}

fn conn_rate(proxy: u16, origin: u16, secs: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let done = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let end = Instant::now() + Duration::from_secs(secs);
        let addr: SocketAddr = format!("127.0.0.1:{proxy}").parse().unwrap();
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let (done, failed) = (done.clone(), failed.clone());
                tokio::spawn(async move {
                    while Instant::now() < end {
                        if one_request(addr, origin).await {
                            done.fetch_add(1, Ordering::Relaxed);
                        } else {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
        let f = failed.load(Ordering::Relaxed);
        if f > 0 {
            eprintln!("  ({f} failed requests against port {proxy})");
        }
        done.load(Ordering::Relaxed) as f64 / secs as f64
    })
}

/// CPU seconds (user + system, all threads) `pid` has used so far.
fn cpu_secs(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // fields after the command name (which may hold spaces): utime and stime are 14 and 15
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / tick
}

/// A connection-rate round against the proxy `pid` listens for: (connections/s, proxy
/// CPU microseconds per connection). CPU per connection is the steadier figure on a
/// machine other jobs share: it counts only what the proxy itself spent.
fn round(pid: u32, proxy: u16, origin: u16, secs: u64) -> (f64, f64) {
    let before = cpu_secs(pid);
    let rate = conn_rate(proxy, origin, secs);
    let cpu = cpu_secs(pid) - before;
    (rate, cpu * 1e6 / (rate * secs as f64).max(1.0))
}

fn rss_mb(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    kb / 1024.0
}

fn idle_tunnels(proxy: u16, origin: u16, n: usize) -> Vec<std::net::TcpStream> {
    use std::io::{Read, Write};
    (0..n)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", proxy)).unwrap();
            s.write_all(format!("CONNECT 127.0.0.1:{origin} HTTP/1.1\r\n\r\n").as_bytes()).unwrap();
            let mut b = [0u8; 12];
            s.read_exact(&mut b).unwrap();
            assert!(b.ends_with(b"200"), "{}", String::from_utf8_lossy(&b));
            s
        })
        .collect()
}

fn match_ns() -> f64 {
    use settings_schema::{CanonicalHost, ListKind};
    let patterns: Vec<String> =
        (0..10_000)
            .map(|i| {
                if i % 2 == 0 {
                    format!("host{i}.svc{}.example.com", i % 97)
                } else {
                    format!("*.team{i}.corp.example")
                }
            })
            .collect();
    let set = srt_proxy::matcher::DomainSet::compile(&patterns, ListKind::Allowed).unwrap();
    let hosts: Vec<CanonicalHost> = [
        "host5000.svc53.example.com",
        "api.team4999.corp.example",
        "a.b.c.team9999.corp.example",
        "not-listed.example.org",
        "deep.sub.domain.of.nothing.example",
    ]
    .iter()
    .map(|h| CanonicalHost::parse(h).unwrap())
    .collect();
    let iters = 2_000_000;
    let start = Instant::now();
    let mut hits = 0usize;
    for i in 0..iters {
        if set.find(std::hint::black_box(&hosts[i % hosts.len()]), 443).is_some() {
            hits += 1;
        }
    }
    assert_eq!(hits, iters / 5 * 3);
    start.elapsed().as_nanos() as f64 / iters as f64
}

fn main() {
    raise_nofile();
    // the load generator runs on CPU 1 with the origin
    // SAFETY: sched_setaffinity on ourselves with a local cpu set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(1, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    let dir = std::env::temp_dir().join(format!("srt-proxy-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (origin, srt_port, tiny_port, old_port, prev_port) =
        (free_port(), free_port(), free_port(), free_port(), free_port());
    let _nginx = nginx(&dir, origin);
    let srt = srt_proxy(&dir, srt_port);
    let tiny = tinyproxy(&dir, tiny_port);
    let old = srt_0083(old_port);
    let prev = previous(&dir, prev_port);
    let srt_pid = srt.0.id();

    let idle_rss = rss_mb(srt_pid);
    let direct = download_gbit(None, origin);
    let thr_srt = download_gbit(Some(srt_port), origin);
    let thr_tiny = download_gbit(Some(tiny_port), origin);
    // ABCABC so drift hits all; medians of five 4 s rounds each
    let mut srt_rates = Vec::new();
    let mut tiny_rates = Vec::new();
    let mut old_rates = Vec::new();
    let mut prev_rates = Vec::new();
    for _ in 0..5 {
        if let Some(prev) = &prev {
            prev_rates.push(round(prev.0.id(), prev_port, origin, 4));
        }
        tiny_rates.push(round(tiny.0.id(), tiny_port, origin, 4));
        srt_rates.push(round(srt_pid, srt_port, origin, 4));
        if let Some(old) = &old {
            old_rates.push(round(old.0.id(), old_port, origin, 4));
        }
    }
    // medians of the rates and of the CPU costs, each on its own
    let med = |v: &[(f64, f64)], cpu: bool| {
        let mut x: Vec<f64> = v.iter().map(|r| if cpu { r.1 } else { r.0 }).collect();
        x.sort_by(|a, b| a.total_cmp(b));
        x[x.len() / 2]
    };
    let (rate_srt, rate_tiny) = (med(&srt_rates, false), med(&tiny_rates, false));
    let (cpu_srt, cpu_tiny) = (med(&srt_rates, true), med(&tiny_rates, true));
    let rate_old = (!old_rates.is_empty()).then(|| (med(&old_rates, false), med(&old_rates, true)));
    let rate_prev = (!prev_rates.is_empty()).then(|| (med(&prev_rates, false), med(&prev_rates, true)));
    let tunnels = idle_tunnels(srt_port, origin, 1000);
    std::thread::sleep(Duration::from_millis(300));
    let tunnels_rss = rss_mb(srt_pid);
    drop(tunnels);
    let ns = match_ns();

    println!("proxy benchmark (loopback, nginx origin; proxies pinned to CPU 0, client and origin to CPU 1)");
    println!("{:<44} {:>12} {:>12} {:>10}", "measure", "srt-proxy", "baseline", "ratio");
    println!(
        "{:<44} {:>10.2} G {:>10.2} G {:>10.2}   (target >= 0.80, baseline: direct)",
        "1 GiB CONNECT download (Gbit/s)",
        thr_srt,
        direct,
        thr_srt / direct
    );
    println!(
        "{:<44} {:>10.2} G {:>10.2} G {:>10.2}   (baseline: tinyproxy)",
        "1 GiB CONNECT download (Gbit/s)",
        thr_srt,
        thr_tiny,
        thr_srt / thr_tiny
    );
    println!(
        "{:<44} {:>12.0} {:>12.0} {:>10.2}   (target >= 1.20, baseline: tinyproxy)",
        "connect+CONNECT+GET+close per second (32)",
        rate_srt,
        rate_tiny,
        rate_srt / rate_tiny
    );
    println!(
        "{:<44} {:>10.0}us {:>10.0}us {:>10.2}   (baseline / srt-proxy, baseline: tinyproxy)",
        "proxy CPU per connection",
        cpu_srt,
        cpu_tiny,
        cpu_tiny / cpu_srt
    );
    if let Some((rate_old, cpu_old)) = rate_old {
        println!(
            "{:<44} {:>12.0} {:>12.0} {:>10.2}   (target >= 2.50, baseline: srt 0.0.83)",
            "connect+CONNECT+GET+close per second (32)",
            rate_srt,
            rate_old,
            rate_srt / rate_old
        );
        println!(
            "{:<44} {:>10.0}us {:>10.0}us {:>10.2}   (baseline / srt-proxy, baseline: srt 0.0.83)",
            "proxy CPU per connection",
            cpu_srt,
            cpu_old,
            cpu_old / cpu_srt
        );
    }
    if let Some((rate_prev, cpu_prev)) = rate_prev {
        println!(
            "{:<44} {:>12.0} {:>12.0} {:>10.2}   (baseline: SRT_BENCH_PREVIOUS)",
            "connect+CONNECT+GET+close per second (32)",
            rate_srt,
            rate_prev,
            rate_srt / rate_prev
        );
        println!(
            "{:<44} {:>10.0}us {:>10.0}us {:>10.2}   (baseline / srt-proxy, baseline: SRT_BENCH_PREVIOUS)",
            "proxy CPU per connection",
            cpu_srt,
            cpu_prev,
            cpu_prev / cpu_srt
        );
    }
    println!("{:<44} {:>10.1} M {:>12} {:>10}   (target <= 8 MB)", "idle RSS", idle_rss, "", "");
    println!("{:<44} {:>10.1} M {:>12} {:>10}   (target <= 40 MB)", "RSS with 1,000 idle tunnels", tunnels_rss, "", "");
    println!("{:<44} {:>9.0} ns {:>12} {:>10}   (target <= 300 ns)", "match against 10,000 patterns", ns, "", "");
    drop(srt);
    let _ = std::fs::remove_dir_all(&dir);
}
