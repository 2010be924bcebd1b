//! The environment policy's own cost per launch: `env_policy::build` over a fixed
//! developer environment (`env_policy_fixture.env`: 60 variables, `LS_COLORS` and a few
//! credentials among them, the same on every machine), over this process's environment and
//! over it with 200 synthetic variables (a tenth credential-shaped), median of many calls.
//! The whole-process view is `--bench startup` with SRT_BENCH_BASELINE set to an srt
//! without the policy.
//!
//! cargo bench -p srt-runtime --bench env_policy

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::ffi::OsString;
use std::time::Instant;

use settings_schema::Environment;
use srt_runtime::launch::env_policy::build;

fn median_ns(vars: &[(OsString, OsString)], policy: &Environment, own: &[(String, String)]) -> f64 {
    let mut samples = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let input = vars.to_vec();
        let t = Instant::now();
        let b = build(policy, input, own);
        samples.push(t.elapsed().as_nanos() as f64);
        std::hint::black_box(b);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

fn main() {
    let own: Vec<(String, String)> = settings_schema::environment::SRT_OWN
        .iter()
        .map(|n| (n.to_string(), "http://srt:0123456789abcdef0123456789abcdef@127.0.0.1:3128".to_string()))
        .collect();
    let fixed: Vec<(OsString, OsString)> = include_str!("env_policy_fixture.env")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    let here: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let mut large = here.clone();
    for i in 0..200 {
        let name = if i % 10 == 0 { format!("SERVICE_{i}_API_KEY") } else { format!("APP_SETTING_{i}_VALUE") };
        large.push((name.into(), format!("some-value-{i}-with/a/path:and-more-text-to-scan").into()));
    }
    let default = Environment::default();
    let busy = Environment {
        exclude: vec!["CI_*".into(), "*_DEBUG".into(), "APP_SETTING_1*".into()],
        include: vec!["SERVICE_0_API_KEY".into(), "MYAPP_*".into()],
        ..Environment::default()
    };
    println!("env_policy::build, median of 2000 calls");
    for (label, vars) in [("fixed developer", &fixed), ("this environment", &here), ("+200 variables", &large)] {
        for (p, policy) in [("default policy", &default), ("3 excludes, 2 includes", &busy)] {
            println!("{label:<18} {:>4} vars  {p:<24} {:>8.1} µs", vars.len(), median_ns(vars, policy, &own) / 1e3);
        }
    }
}
