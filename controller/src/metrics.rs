//! Counters for `/metrics` in Prometheus' text format; a handful of atomics, no registry.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the reconcile-duration histogram.
const BUCKETS: [f64; 8] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];

#[derive(Debug, Default)]
pub struct Metrics {
    reconciles_ok: AtomicU64,
    reconciles_err: AtomicU64,
    rejected: AtomicU64,
    conflicts_retried: AtomicU64,
    sandbox_api_missing: AtomicU64,
    duration_buckets: [AtomicU64; 8],
    duration_count: AtomicU64,
    duration_sum_us: AtomicU64,
}

pub enum Outcome {
    Ok,
    Rejected,
    SandboxApiMissing,
    Error,
}

impl Metrics {
    pub fn record(&self, outcome: Outcome, took: Duration) {
        let counter = match outcome {
            Outcome::Ok => &self.reconciles_ok,
            Outcome::Rejected => &self.rejected,
            Outcome::SandboxApiMissing => &self.sandbox_api_missing,
            Outcome::Error => &self.reconciles_err,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.duration_buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.duration_count.fetch_add(1, Ordering::Relaxed);
        self.duration_sum_us.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn conflict_retried(&self) {
        self.conflicts_retried.fetch_add(1, Ordering::Relaxed);
    }

    pub fn render(&self, sandbox_api_available: bool) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(out, "# HELP srt_controller_reconciles_total Reconciles of SandboxAgents by result.");
        let _ = writeln!(out, "# TYPE srt_controller_reconciles_total counter");
        for (result, c) in [
            ("ok", &self.reconciles_ok),
            ("rejected", &self.rejected),
            ("sandbox_api_missing", &self.sandbox_api_missing),
            ("error", &self.reconciles_err),
        ] {
            let _ = writeln!(out, "srt_controller_reconciles_total{{result=\"{result}\"}} {}", get(c));
        }
        let _ = writeln!(out, "# HELP srt_controller_conflicts_retried_total API conflicts (409) retried.");
        let _ = writeln!(out, "# TYPE srt_controller_conflicts_retried_total counter");
        let _ = writeln!(out, "srt_controller_conflicts_retried_total {}", get(&self.conflicts_retried));
        let _ = writeln!(
            out,
            "# HELP srt_controller_sandbox_api_available Whether agents.x-k8s.io/v1alpha1 sandboxes is served."
        );
        let _ = writeln!(out, "# TYPE srt_controller_sandbox_api_available gauge");
        let _ = writeln!(out, "srt_controller_sandbox_api_available {}", u8::from(sandbox_api_available));
        let _ = writeln!(out, "# HELP srt_controller_reconcile_duration_seconds Time per reconcile.");
        let _ = writeln!(out, "# TYPE srt_controller_reconcile_duration_seconds histogram");
        for (bound, bucket) in BUCKETS.iter().zip(&self.duration_buckets) {
            let _ = writeln!(out, "srt_controller_reconcile_duration_seconds_bucket{{le=\"{bound}\"}} {}", get(bucket));
        }
        let count = get(&self.duration_count);
        let _ = writeln!(out, "srt_controller_reconcile_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let sum = get(&self.duration_sum_us) as f64 / 1e6;
        let _ = writeln!(out, "srt_controller_reconcile_duration_seconds_sum {sum}");
        let _ = writeln!(out, "srt_controller_reconcile_duration_seconds_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.record(Outcome::Ok, Duration::from_millis(3));
        m.record(Outcome::Error, Duration::from_millis(30));
        let text = m.render(true);
        assert!(text.contains("srt_controller_reconciles_total{result=\"ok\"} 1"), "{text}");
        assert!(text.contains("srt_controller_reconciles_total{result=\"error\"} 1"), "{text}");
        assert!(text.contains("le=\"0.005\"} 1"), "{text}");
        assert!(text.contains("le=\"0.05\"} 2"), "{text}");
        assert!(text.contains("le=\"+Inf\"} 2"), "{text}");
        assert!(text.contains("srt_controller_sandbox_api_available 1"), "{text}");
    }
}
