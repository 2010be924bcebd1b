use std::collections::BTreeMap;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

fn names(b: &Built) -> Vec<String> {
    b.envp.iter().map(|c| c.to_string_lossy().split('=').next().unwrap_or_default().to_string()).collect()
}

const HOST: &[(&str, &str)] = &[
    ("PATH", "/usr/bin"),
    ("HOME", "/root"),
    ("LC_ALL", "C.UTF-8"),
    ("MYAPP_MODE", "fast"),
    ("OPENAI_API_KEY", "sk-1"),
    ("DATABASE_URL", "postgres://a:b@db/x"),
    ("HTTPS_PROXY", "http://corp:3128"),
    ("TMPDIR", "/host-tmp"),
];

fn own() -> Vec<(String, String)> {
    vec![("HTTPS_PROXY".into(), "http://srt".into()), ("TMPDIR".into(), "/tmp/srt-1".into())]
}

#[test]
fn the_default_drops_credentials_and_srts_own_win() {
    let b = build(&Environment::default(), vars(HOST), &own());
    assert_eq!(names(&b), ["PATH", "HOME", "LC_ALL", "MYAPP_MODE", "HTTPS_PROXY", "TMPDIR"]);
    assert!(b.envp.iter().any(|c| c.to_bytes() == b"HTTPS_PROXY=http://srt"));
    assert_eq!(
        b.report.credentials,
        [("OPENAI_API_KEY".to_string(), Why::Name), ("DATABASE_URL".to_string(), Why::Value)]
    );
    assert!(b.report.excluded.is_empty() && b.report.not_inherited.is_empty());
}

#[test]
fn only_an_exact_include_brings_a_credential_back() {
    let glob = Environment { include: vec!["*".into(), "OPENAI_*".into()], ..Environment::default() };
    assert!(!names(&build(&glob, vars(HOST), &own())).contains(&"OPENAI_API_KEY".to_string()));
    let exact = Environment { include: vec!["OPENAI_API_KEY".into()], ..Environment::default() };
    let b = build(&exact, vars(HOST), &own());
    assert!(b.envp.iter().any(|c| c.to_bytes() == b"OPENAI_API_KEY=sk-1"));
    assert_eq!(b.report.credentials, [("DATABASE_URL".to_string(), Why::Value)]);
}

#[test]
fn core_and_none_start_small_and_include_adds() {
    let core = Environment { inherit: Some(Inherit::Core), ..Environment::default() };
    let b = build(&core, vars(HOST), &own());
    assert_eq!(names(&b), ["PATH", "HOME", "LC_ALL", "HTTPS_PROXY", "TMPDIR"]);
    assert_eq!(b.report.not_inherited, ["MYAPP_MODE", "OPENAI_API_KEY", "DATABASE_URL"]);
    let none = Environment {
        inherit: Some(Inherit::None),
        include: vec!["MYAPP_*".into(), "OPENAI_API_KEY".into()],
        ..Environment::default()
    };
    let b = build(&none, vars(HOST), &own());
    assert_eq!(names(&b), ["MYAPP_MODE", "OPENAI_API_KEY", "HTTPS_PROXY", "TMPDIR"]);
    assert_eq!(b.report.not_inherited, ["PATH", "HOME", "LC_ALL", "DATABASE_URL"]);
}

#[test]
fn exclude_wins_over_include_and_set_over_both() {
    let p = Environment {
        exclude: vec!["MYAPP_*".into(), "OPENAI_API_KEY".into(), "HOME".into()],
        include: vec!["OPENAI_API_KEY".into(), "MYAPP_MODE".into()],
        set: BTreeMap::from([("HOME".into(), "/sandbox-home".into()), ("NEW".into(), "1".into())]),
        ..Environment::default()
    };
    let b = build(&p, vars(HOST), &own());
    assert_eq!(names(&b), ["PATH", "LC_ALL", "HOME", "NEW", "HTTPS_PROXY", "TMPDIR"]);
    assert!(b.envp.iter().any(|c| c.to_bytes() == b"HOME=/sandbox-home"));
    assert_eq!(b.report.excluded, ["MYAPP_MODE", "OPENAI_API_KEY"]);
}
