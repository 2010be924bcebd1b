//! Whole-process startup benchmark: `srt -c true` in each network mode against bare `true` (and `bash -c true`,
//! which srt runs inside) in the same run, interleaved in a shuffled order so drift hits all alike.
//! Reports medians, the overhead over each baseline, and peak RSS from wait4.
//!
//! SRT_BENCH_BASELINE=/path/to/an/older/srt adds that binary's two modes to the same run,
//! for a before/after ratio. SRT_BENCH_ANTHROPIC=/path/to/srt adds Anthropic's srt 0.0.83
//! (`scripts/bench-deps.sh` installs it from npm, with bubblewrap and socat) the same way. SRT_BENCH_SRT=/path/to/srt measures that srt instead of cargo's
//! own build of it: `scripts/build.sh` links the one users install statically (target/dist/srt).
//!
//! With `--trees`, the same in the places agents work, each against `bash -c true` in the
//! same directory, interleaved: an empty directory; a 100,000-file repository shaped like a
//! node_modules install (`.git`, `src/`, `node_modules/` with 1,000 packages of 100 files);
//! an empty directory with a 100,000-entry directory in `allowWrite` (a busy `/tmp`); and
//! a 1,000,000-entry tree of 10,000 directories (on tmpfs); and the empty directory and the
//! repository again with `/tmp` writable too, as most users' settings have it. Per-command cost must not grow
//! with the trees.
//!
//! With SRT_BENCH_BASELINE, the trees get that binary's two modes in the same rounds too.
//! SRT_BENCH_BASELINE_STATE=DIR runs the baseline with `XDG_STATE_HOME=DIR`, so that two
//! builds that keep different state between runs (a pool shelf of another size) do not
//! undo each other's at every round.
//!
//! cargo bench -p srt-runtime --bench startup [-- ROUNDS] [--trees]

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::process::{Command, Stdio};
use std::time::Instant;

struct Sample {
    secs: Vec<f64>,
    max_rss_kb: i64,
}

// The child is reaped with wait4 (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run_once(argv: &[&str], dir: &std::path::Path) -> (f64, i64) {
    // leading NAME=VALUE words are the environment's
    let vars: Vec<(&str, &str)> = argv.iter().map_while(|a| a.split_once('=')).collect();
    let argv = &argv[vars.len()..];
    let start = Instant::now();
    let child = Command::new(argv[0])
        .args(&argv[1..])
        .envs(vars)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-buffer; we wait for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let t = start.elapsed().as_secs_f64();
    assert_eq!(r, child.id() as i32);
    assert_eq!(status, 0, "{argv:?} failed");
    (t, ru.ru_maxrss)
}

/// The srt measured: `SRT_BENCH_SRT`, else cargo's build of this crate's binary.
fn srt_under_test() -> String {
    let srt = std::env::var("SRT_BENCH_SRT").unwrap_or_else(|_| env!("CARGO_BIN_EXE_srt").to_string());
    eprintln!("srt under test: {srt}");
    srt
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(300);
    if args.iter().any(|a| a == "--trees") {
        return trees(rounds);
    }
    let srt_path = srt_under_test();
    let srt = srt_path.as_str();
    let dir = std::env::temp_dir().join(format!("srt-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("s.json");
    std::fs::write(&settings, settings_json(&[])).unwrap();
    let s = settings.to_str().unwrap();
    let baseline = std::env::var("SRT_BENCH_BASELINE").ok();
    let state = baseline_state();
    let mut cases: Vec<(&str, Vec<&str>)> = vec![
        ("true", vec!["/bin/true"]),
        ("bash -c true", vec!["/bin/bash", "-c", "true"]),
        ("srt landlock", vec![srt, "--network-mode=landlock", "-s", s, "-c", "true"]),
        ("srt namespace", vec![srt, "--network-mode=namespace", "-s", s, "-c", "true"]),
    ];
    if let Some(b) = baseline.as_deref() {
        cases.extend(baseline_cases(b, s, &state, ["baseline landl.", "baseline names."]));
    }
    // Anthropic's srt (0.0.83, from npm: scripts/bench-deps.sh) in the same rounds
    let anthropic = std::env::var("SRT_BENCH_ANTHROPIC").ok();
    if let Some(a) = anthropic.as_deref() {
        cases.push(("srt 0.0.83", vec![a, "-s", s, "-c", "true"]));
    }
    let mut samples = sample(&cases, &dir, rounds);
    let base = median(&mut samples[0].secs.clone());
    let bash = median(&mut samples[1].secs.clone());
    println!(
        "startup, {rounds} interleaved rounds, {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<16} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "command", "median ms", "p90 ms", "over true ms", "over bash ms", "peak RSS MB"
    );
    for (i, (name, _)) in cases.iter().enumerate() {
        let m = median(&mut samples[i].secs);
        let p90 = pct(&mut samples[i].secs, 0.9);
        println!(
            "{:<16} {:>10.3} {:>10.3} {:>14.3} {:>14.3} {:>12.2}",
            name,
            m * 1e3,
            p90 * 1e3,
            (m - base) * 1e3,
            (m - bash) * 1e3,
            samples[i].max_rss_kb as f64 / 1024.0
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The baseline `b`'s `srt -c true` in landlock and namespace mode with settings `s`,
/// under `names`, with its own state directory when one is given.
fn baseline_cases<'a>(
    b: &'a str,
    s: &'a str,
    state: &'a Option<String>,
    names: [&'a str; 2],
) -> Vec<(&'a str, Vec<&'a str>)> {
    names
        .into_iter()
        .zip(["--network-mode=landlock", "--network-mode=namespace"])
        .map(|(name, mode)| (name, state.iter().map(String::as_str).chain([b, mode, "-s", s, "-c", "true"]).collect()))
        .collect()
}

/// `XDG_STATE_HOME=...` for the baseline's runs, from SRT_BENCH_BASELINE_STATE.
fn baseline_state() -> Option<String> {
    let dir = std::env::var("SRT_BENCH_BASELINE_STATE").ok()?;
    std::fs::create_dir_all(&dir).unwrap();
    Some(format!("XDG_STATE_HOME={dir}"))
}

fn settings_json(extra_write: &[&str]) -> String {
    let mut w = vec![".".to_string()];
    w.extend(extra_write.iter().map(|p| p.to_string()));
    let w: Vec<String> = w.iter().map(|p| format!("{p:?}")).collect();
    format!(
        r#"{{"network":{{"allowedDomains":[],"deniedDomains":[]}},"filesystem":{{"denyRead":[],"allowWrite":[{}],"denyWrite":[]}}}}"#,
        w.join(",")
    )
}

/// Runs every case once per round, interleaved, after one warm-up each.
fn sample(cases: &[(&str, Vec<&str>)], dir: &std::path::Path, rounds: usize) -> Vec<Sample> {
    let mut samples: Vec<Sample> = cases.iter().map(|_| Sample { secs: vec![], max_rss_kb: 0 }).collect();
    for (_, argv) in cases {
        run_once(argv, dir); // warm the page cache
    }
    // each round in a fresh order: a fixed one gives every case the same predecessor, and
    // the case right after `bash -c true` came out up to 1 ms slower than its peers
    let mut order: Vec<usize> = (0..cases.len()).collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..rounds {
        for k in (1..order.len()).rev() {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(k, (seed >> 33) as usize % (k + 1));
        }
        for &i in &order {
            let (t, rss) = run_once(&cases[i].1, dir);
            samples[i].secs.push(t);
            samples[i].max_rss_kb = samples[i].max_rss_kb.max(rss);
        }
    }
    samples
}

/// `files` empty files spread over `dirs` directories below `root`.
fn fill(root: &std::path::Path, dirs: usize, files: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("d{:03}/p{d:05}", d % 100));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files / dirs {
            std::fs::File::create(dir.join(format!("f{f}.js"))).unwrap();
        }
    }
}

fn trees(rounds: usize) {
    let srt_path = srt_under_test();
    let srt = srt_path.as_str();
    let base = std::env::temp_dir().join(format!("srt-bench-trees-{}", std::process::id()));
    // a tmpfs of the bench's own (root), not /dev/shm, which srt gives every run afresh
    let shm = srt_tests::private_tmpfs("bench-trees")
        .map(|t| t.join("trees"))
        .expect("--trees needs a tmpfs: run the bench as root (mount -t tmpfs)");
    let empty = base.join("empty");
    let repo = base.join("repo");
    let busy = base.join("busy-tmp");
    let million = shm.join("million");
    std::fs::create_dir_all(&empty).unwrap();
    eprintln!("making the trees (a minute or two)");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::process::Command::new("git").args(["init", "-q"]).current_dir(&repo).status().unwrap();
    for i in 0..200 {
        std::fs::write(repo.join(format!("src/m{i}.js")), "x").unwrap();
    }
    fill(&repo.join("node_modules"), 1_000, 100_000);
    std::fs::create_dir_all(&busy).unwrap();
    for i in 0..100_000 {
        std::fs::File::create(busy.join(format!("tmp{i}"))).unwrap();
    }
    fill(&million, 10_000, 1_000_000);
    let plain = base.join("plain.json");
    std::fs::write(&plain, settings_json(&[])).unwrap();
    let with_busy = base.join("busy.json");
    std::fs::write(&with_busy, settings_json(&[busy.to_str().unwrap()])).unwrap();
    let with_tmp = base.join("tmp.json");
    std::fs::write(&with_tmp, settings_json(&["/tmp"])).unwrap();
    let baseline = std::env::var("SRT_BENCH_BASELINE").ok();
    let state = baseline_state();
    println!("srt -c true against bash -c true in the same directory, {rounds} interleaved rounds, medians");
    print!("{:<46} {:>10} {:>16} {:>16}", "where", "bash ms", "landlock +ms", "namespace +ms");
    if baseline.is_some() {
        print!(" {:>16} {:>16}", "base landl. +ms", "base names. +ms");
    }
    println!();
    for (label, dir, settings) in [
        ("empty directory", &empty, &plain),
        ("100k-file repository (node_modules)", &repo, &plain),
        ("empty directory, /tmp writable", &empty, &with_tmp),
        ("100k-file repository, /tmp writable", &repo, &with_tmp),
        ("empty directory, 100k-entry dir in allowWrite", &empty, &with_busy),
        ("1M entries in 10k directories (tmpfs)", &million, &plain),
    ] {
        let s = settings.to_str().unwrap();
        let mut cases: Vec<(&str, Vec<&str>)> = vec![
            ("bash", vec!["/bin/bash", "-c", "true"]),
            ("landlock", vec![srt, "--network-mode=landlock", "-s", s, "-c", "true"]),
            ("namespace", vec![srt, "--network-mode=namespace", "-s", s, "-c", "true"]),
        ];
        if let Some(b) = baseline.as_deref() {
            cases.extend(baseline_cases(b, s, &state, ["baseline landlock", "baseline namespace"]));
        }
        let mut v = sample(&cases, dir, rounds);
        let bash = median(&mut v[0].secs);
        let (l, n) = (median(&mut v[1].secs), median(&mut v[2].secs));
        print!("{label:<46} {:>10.2} {:>16.2} {:>16.2}", bash * 1e3, (l - bash) * 1e3, (n - bash) * 1e3);
        if baseline.is_some() {
            let (bl, bn) = (median(&mut v[3].secs), median(&mut v[4].secs));
            print!(" {:>16.2} {:>16.2}", (bl - bash) * 1e3, (bn - bash) * 1e3);
        }
        println!();
    }
    let _ = std::fs::remove_dir_all(&base);
    let _ = std::fs::remove_dir_all(&shm);
}
