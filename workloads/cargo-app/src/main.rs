//! Parses a JSON manifest, validates names with a regex and reports a libc value.
use serde::{Deserialize, Serialize};

include!(concat!(env!("OUT_DIR"), "/squares.rs"));

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Manifest {
    name: String,
    deps: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
enum Problem {
    #[error("bad JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid crate name {0:?}")]
    Name(String),
}

fn check(text: &str) -> Result<Manifest, Problem> {
    let m: Manifest = serde_json::from_str(text)?;
    let re = regex::Regex::new(r"^[a-z][a-z0-9_-]*$").map_err(|_| Problem::Name(String::new()))?;
    for d in std::iter::once(&m.name).chain(&m.deps) {
        if !re.is_match(d) {
            return Err(Problem::Name(d.clone()));
        }
    }
    Ok(m)
}

fn main() {
    let m = check(r#"{"name": "app", "deps": ["serde", "libc"]}"#);
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    println!("{m:?} squares[15]={} pid>0={}", SQUARES[15], pid > 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_manifest() {
        let m = check(r#"{"name": "a", "deps": []}"#).unwrap();
        assert_eq!(m, Manifest { name: "a".into(), deps: vec![] });
    }

    #[test]
    fn invalid_name() {
        assert!(matches!(check(r#"{"name": "A!", "deps": []}"#), Err(Problem::Name(_))));
    }

    #[test]
    fn bad_json() {
        assert!(matches!(check("{"), Err(Problem::Json(_))));
    }

    #[test]
    fn build_script_output() {
        assert_eq!(SQUARES[3], 9);
    }

    #[test]
    fn round_trip() {
        let m = Manifest { name: "x".into(), deps: vec!["y".into()] };
        let back: Manifest = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }
}
