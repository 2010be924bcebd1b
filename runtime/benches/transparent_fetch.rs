//! Per-request latency of Node's `fetch()` of a small response: bare (no sandbox, the
//! origin's address), through srt's proxy with the proxy variables (Node's `http.get` in
//! absolute form with the credentials: Node 20's fetch has no proxy support), and
//! transparent (fetch by name inside srt: srt's DNS, the supervisor, the proxy), in each
//! network mode. Each variant is one Node process making N requests in a row over new
//! connections (the origin closes each); the median per request is reported.
//! `SRT_BENCH_SRT` measures that srt instead of cargo's build.
//!
//!   cargo bench -p srt-runtime --bench transparent_fetch [-- N]

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::process::{Command, Stdio};

/// Node: N requests of one kind, the median in microseconds on stdout.
const SCRIPT: &str = r#"
const [kind, url, n] = process.argv.slice(1);
const http = require("http");
function viaProxy(u) {
  const p = new URL(process.env.HTTP_PROXY);
  const auth = "Basic " + Buffer.from(decodeURIComponent(p.username) + ":" + decodeURIComponent(p.password)).toString("base64");
  return new Promise((ok, no) => http.get({ host: p.hostname, port: p.port, path: u, headers: { "Proxy-Authorization": auth }, agent: false },
    r => { r.resume(); r.on("end", () => r.statusCode == 200 ? ok() : no(new Error("status " + r.statusCode))); }).on("error", no));
}
(async () => {
  const t = [];
  for (let i = 0; i < +n; i++) {
    const s = process.hrtime.bigint();
    if (kind == "fetch") { const r = await fetch(url); await r.text(); if (r.status != 200) throw new Error("status " + r.status); }
    else await viaProxy(url);
    t.push(Number(process.hrtime.bigint() - s) / 1000);
  }
  t.sort((a, b) => a - b);
  console.log(Math.round(t.slice(5).length ? t[Math.floor(t.length / 2)] : t[0]));
})().catch(e => { console.error(e); process.exit(1); });
"#;

fn run(srt: Option<&str>, kind: &str, url: &str, n: usize, dir: &std::path::Path) -> f64 {
    let mut c = match srt {
        None => Command::new("node"),
        Some(mode) => {
            // the srt users install (`scripts/build.sh`), else cargo's own build
            let mut c =
                Command::new(std::env::var("SRT_BENCH_SRT").unwrap_or_else(|_| env!("CARGO_BIN_EXE_srt").to_string()));
            c.args(["--network-mode", mode, "-s"]).arg(dir.join("s.json"));
            c.args(["--resolve", "bench.test:*:127.0.0.1", "--", "node"]);
            c
        }
    };
    let o = c.args(["-e", SCRIPT, kind, url, &n.to_string()]).current_dir(dir).stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    text.trim().parse().unwrap_or_else(|_| panic!("{kind} {url}: {text}{}", String::from_utf8_lossy(&o.stderr)))
}

fn main() {
    let n: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300);
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("node is not installed: nothing to measure");
        return;
    }
    // answers `origin-ok\n` and closes: every request is a new connection
    let port = srt_tests::http_origin();
    let dir = std::env::temp_dir().join(format!("srt-bench-fetch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("s.json"),
        r#"{"network":{"allowedDomains":["bench.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#,
    )
    .unwrap();
    let by_ip = format!("http://127.0.0.1:{port}/");
    let by_name = format!("http://bench.test:{port}/");
    let bare = run(None, "fetch", &by_ip, n, &dir);
    println!("fetch() of a 10-byte response, new connection each, median of {n} (us per request)");
    println!("{:<34} {:>8} {:>7}", "variant", "us", "ratio");
    println!("{:<34} {:>8.0} {:>7.2}", "bare fetch (no sandbox)", bare, 1.0);
    for mode in ["landlock", "namespace"] {
        let explicit = run(Some(mode), "proxy", &by_name, n, &dir);
        let transparent = run(Some(mode), "fetch", &by_name, n, &dir);
        println!("{:<34} {:>8.0} {:>7.2}", format!("{mode}: explicit proxy (http.get)"), explicit, explicit / bare);
        println!("{:<34} {:>8.0} {:>7.2}", format!("{mode}: transparent fetch"), transparent, transparent / bare);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
