//! One JSON line per decision (and per tunnel close), on stderr or a caller's sink.
//! Never the credentials, never a query string, every client-supplied string capped.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

pub type Sink = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Clone)]
pub struct Log {
    sink: Option<Sink>,
}

impl Log {
    pub fn stderr() -> Log {
        let lock = Arc::new(Mutex::new(()));
        Log {
            sink: Some(Arc::new(move |line: &str| {
                let _g = lock.lock();
                let _ = writeln!(std::io::stderr(), "{line}");
            })),
        }
    }
    pub fn to(sink: Sink) -> Log {
        Log { sink: Some(sink) }
    }
    pub fn off() -> Log {
        Log { sink: None }
    }

    pub fn event(&self, event: &str, fields: Map<String, Value>) {
        let Some(sink) = &self.sink else { return };
        let mut m = Map::new();
        let ts =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        m.insert("ts".into(), Value::from((ts * 1000.0).round() / 1000.0));
        m.insert("event".into(), Value::from(event));
        m.extend(fields);
        sink(&Value::Object(m).to_string());
    }
}

/// A client-supplied string made safe to log: control characters replaced, length capped.
pub fn clean(s: &str) -> String {
    let mut out: String = s.chars().take(256).map(|c| if c.is_control() { '?' } else { c }).collect();
    if s.chars().count() > 256 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_and_cleaned() {
        let got = Arc::new(Mutex::new(Vec::<String>::new()));
        let g = got.clone();
        let log = Log::to(Arc::new(move |l: &str| g.lock().unwrap().push(l.to_string())));
        let mut f = Map::new();
        f.insert("target".into(), Value::from(clean("evil\r\nX-Injected: 1")));
        log.event("decision", f);
        let line = got.lock().unwrap()[0].clone();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "decision");
        assert_eq!(v["target"], "evil??X-Injected: 1");
        assert_eq!(clean(&"a".repeat(300)).chars().count(), 257);
    }
}
