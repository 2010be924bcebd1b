//! `srt -c 'curl <allowed loopback origin>'` through the proxy, in each network mode,
//! against bare curl (no sandbox) and against srt 0.0.83 (npm
//! @anthropic-ai/sandbox-runtime with Debian bubblewrap, socat, ripgrep) when
//! `SRT_BENCH_ANTHROPIC` names it (`scripts/bench-deps.sh` installs it) or its `srt` is on
//! PATH, interleaved in one run. `SRT_BENCH_SRT` measures that srt instead of cargo's build.
//!
//!   cargo bench -p srt-runtime --bench net_curl [-- ROUNDS]

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn origin() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\norigin-ok\n");
            });
        }
    });
    port
}

/// srt 0.0.83: `SRT_BENCH_ANTHROPIC` (as `scripts/bench-deps.sh` installs it), else `srt`
/// on `PATH` if that is 0.0.83.
fn reference_srt() -> Option<String> {
    let bin = std::env::var("SRT_BENCH_ANTHROPIC").unwrap_or_else(|_| "srt".to_string());
    let out = Command::new(&bin).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().eq("0.0.83").then_some(bin)
}

fn time(argv: &[String], dir: &std::path::Path) -> f64 {
    let start = Instant::now();
    let o = Command::new(&argv[0]).args(&argv[1..]).current_dir(dir).stdin(Stdio::null()).output().unwrap();
    let t = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(String::from_utf8_lossy(&o.stdout), "200", "{argv:?}: {}", String::from_utf8_lossy(&o.stderr));
    t
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(40);
    let port = origin();
    let dir = std::env::temp_dir().join(format!("srt-net-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("s.json");
    std::fs::write(&s, r#"{"network":{"allowedDomains":["localhost"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#).unwrap();
    let curl = format!("curl -sS --noproxy '' -o /dev/null -w '%{{http_code}}' http://localhost:{port}/");
    // the srt users install (`scripts/build.sh`: target/dist/srt), else cargo's own build
    let ours = std::env::var("SRT_BENCH_SRT").unwrap_or_else(|_| env!("CARGO_BIN_EXE_srt").to_string());
    let mut cases: Vec<(&str, Vec<String>)> = vec![
        (
            "bare curl (direct, no proxy)",
            vec!["bash".into(), "-c".into(), curl.replace("--noproxy ''", "--noproxy '*'")],
        ),
        (
            "srt landlock",
            vec![
                ours.clone(),
                "--network-mode=landlock".into(),
                "-s".into(),
                s.display().to_string(),
                "-c".into(),
                curl.clone(),
            ],
        ),
        (
            "srt namespace",
            vec![
                ours,
                "--network-mode=namespace".into(),
                "-s".into(),
                s.display().to_string(),
                "-c".into(),
                curl.clone(),
            ],
        ),
    ];
    if let Some(r) = reference_srt() {
        cases.push(("srt 0.0.83 (node, bwrap)", vec![r, "-s".into(), s.display().to_string(), "-c".into(), curl]));
    } else {
        eprintln!("srt 0.0.83 is not on PATH: `npm install -g @anthropic-ai/sandbox-runtime@0.0.83` and `apt-get install bubblewrap socat ripgrep` to compare");
    }
    let mut samples: Vec<Vec<f64>> = cases.iter().map(|_| Vec::new()).collect();
    for (i, (_, argv)) in cases.iter().enumerate() {
        time(argv, &dir); // warm up
        let _ = i;
    }
    for _ in 0..rounds {
        for (i, (_, argv)) in cases.iter().enumerate() {
            samples[i].push(time(argv, &dir));
        }
    }
    let medians: Vec<f64> = samples.into_iter().map(median).collect();
    println!("curl to an allowed loopback origin through the sandbox, {rounds} interleaved rounds");
    println!("{:<32} {:>10} {:>16}", "command", "median ms", "vs srt 0.0.83");
    let reference = medians.get(3).copied();
    for ((name, _), m) in cases.iter().zip(&medians) {
        let ratio = reference.map(|r| format!("{:.0}x faster", r / m)).unwrap_or_default();
        println!("{name:<32} {m:>10.2} {ratio:>16}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
