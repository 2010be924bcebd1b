//! Loading real files: every error names the file, the JSON path and the reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use settings_schema::{load_file, parse_str, SettingsError};

const BASE: &str = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},
  "filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#;

fn parse(text: &str) -> Result<settings_schema::Settings, SettingsError> {
    parse_str(text, Path::new("/x/s.json"))
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn with(network: &str, filesystem: &str, extra: &str) -> String {
    format!(
        r#"{{"network":{{"allowedDomains":[],"deniedDomains":[]{network}}},
           "filesystem":{{"denyRead":[],"allowWrite":["."],"denyWrite":[]{filesystem}}}{extra}}}"#
    )
}

#[test]
fn base_is_valid() {
    let s = parse(BASE).unwrap();
    assert!(s.network.allowed_domains.is_empty());
    assert_eq!(s.search_depth(), 3);
}

#[test]
fn file_level_errors() {
    let dir = std::env::temp_dir().join(format!("srt-schema-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("nope.json");
    assert_eq!(load_file(&missing).unwrap_err().to_string(), format!("{} does not exist.", missing.display()));
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "  \n").unwrap();
    assert!(load_file(&empty).unwrap_err().to_string().ends_with("is empty. Delete it, or put a config in it."));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"network": "#).unwrap();
    let e = load_file(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.json is not valid JSON"), "{e}");
    let e = load_file(&dir).unwrap_err().to_string();
    assert!(e.contains("could not be read"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let _ = PathBuf::new();
}

#[test]
fn structural_errors_name_the_path() {
    assert_eq!(err("{}"), "/x/s.json does not hold a valid config — network: Required");
    let e = err(
        r#"{"network":{"allowedDomains":"x.com","deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#,
    );
    assert!(e.contains("network.allowedDomains: wrong type"), "{e}");
    let e = err(r#"{"network":{"allowedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#);
    assert!(e.contains("network.deniedDomains: Required"), "{e}");
    assert!(err("[1]").contains("(root): expected an object"));
    let e = err(&with("", r#","allowWrite2":[]"#, ""));
    assert!(e.contains("did you mean \"allowWrite\""), "{e}");
}

#[test]
fn unknown_keys_are_refused_with_a_suggestion() {
    let e = err(&with(r#","deniedDomain":[]"#, "", ""));
    assert!(e.contains("network.deniedDomain: unknown key \"deniedDomain\"; did you mean \"deniedDomains\"?"), "{e}");
    let e = err(&with("", "", r#","bogusField":1"#));
    assert!(e.contains("bogusField: unknown key"), "{e}");
    let e = err(&with("", "", r#","mandatoryDenySearchDept":2"#));
    assert!(e.contains("did you mean \"mandatoryDenySearchDepth\""), "{e}");
}

#[test]
fn unsupported_security_features_are_refused() {
    for (n, x) in [
        (r#","tlsTerminate":{}"#, ""),
        (r#","mitmProxy":{"socketPath":"/s","domains":["a.com"]}"#, ""),
        (r#","parentProxy":{}"#, ""),
        ("", r#","credentials":{"envVars":[]}"#),
        ("", r#","allowNestedUserNamespaces":true"#),
    ] {
        let e = err(&with(n, "", x));
        assert!(e.contains("does not hold a valid config"), "{e}");
    }
}

#[test]
fn other_platform_keys_are_accepted() {
    parse(&with(r#","allowMachLookup":["com.apple.x"],"allowLocalBinding":true"#, "",
        r#","allowPty":true,"allowAppleEvents":false,"enableWeakerNetworkIsolation":true,"windows":{},"ripgrep":{"command":"rg"},"seccomp":{},"bwrapPath":"/usr/bin/bwrap""#)).unwrap();
}

#[test]
fn semantic_errors() {
    let e = err(&with("", "", "").replace(r#""allowedDomains":[]"#, r#""allowedDomains":["ok.com","*.com"]"#));
    assert!(e.contains("network.allowedDomains.1: invalid domain pattern \"*.com\""), "{e}");
    let e = err(&with(r#","deniedDomainReasons":{"x.com":"no"}"#, "", ""));
    assert!(e.contains("not an entry of deniedDomains"), "{e}");
    let e = err(&with(r#","deniedResolvedAddresses":["10.0.0.0/8","[::1]"]"#, "", ""));
    assert!(e.contains("network.deniedResolvedAddresses.1"), "{e}");
    let e = err(&with("", "", r#","mandatoryDenySearchDepth":11"#));
    assert!(e.contains("out of range"), "{e}");
    let e = err(&with("", "", "").replace(r#""denyWrite":[]"#, r#""denyWrite":["/a/*.txt"]"#));
    assert!(e.contains("filesystem.denyWrite.0: globs are only supported"), "{e}");
    let e = err(&with("", "", "").replace(r#""denyRead":[]"#, r#""denyRead":[""]"#));
    assert!(e.contains("Path cannot be empty"), "{e}");
    let e = err(&with("", r#","listable":[""]"#, ""));
    assert!(e.contains("filesystem.listable.0: Path cannot be empty"), "{e}");
    parse(&with("", r#","listable":["/var/run/secrets","/srv/*/keys"]"#, "")).unwrap();
    let e = err(&with(r#","httpProxyPort":70000"#, "", ""));
    assert!(e.contains("network.httpProxyPort"), "{e}");
    let e = err(&with(r#","allowOtherProtocols":["github.com:22","*.com"]"#, "", ""));
    assert!(e.contains("network.allowOtherProtocols.1: invalid domain pattern \"*.com\""), "{e}");
    assert!(parse(&with(r#","allowOtherProtocols":["*:22","db.test"]"#, "", "")).is_ok());
    for bad in ["0", "3601"] {
        let e = err(&with(&format!(r#","firstFlightTimeout":{bad}"#), "", ""));
        assert!(e.contains("network.firstFlightTimeout: ") && e.contains("between 1 and 3600"), "{e}");
    }
}

#[test]
fn the_environment_policy_is_strict() {
    let s = parse(&with(
        "",
        "",
        r#","environment":{"inherit":"core","exclude":["CI_*"],"include":["MYAPP_*","GITHUB_TOKEN"],"set":{"LANG":"C.UTF-8"}}"#,
    ))
    .unwrap();
    let env = s.environment.unwrap();
    assert_eq!(env.inherit, Some(settings_schema::Inherit::Core));
    assert_eq!(env.include, ["MYAPP_*", "GITHUB_TOKEN"]);
    assert_eq!(env.set["LANG"], "C.UTF-8");
    // absent: inherit all, the credential default
    assert_eq!(parse(BASE).unwrap().environment().inherit(), settings_schema::Inherit::All);

    let e = err(&with("", "", r#","enviroment":{}"#));
    assert!(e.contains("enviroment: unknown key \"enviroment\"; did you mean \"environment\"?"), "{e}");
    let e = err(&with("", "", r#","environment":{"exlude":["A"]}"#));
    assert!(e.contains("environment.exlude: unknown key \"exlude\"; did you mean \"exclude\"?"), "{e}");
    let e = err(&with("", "", r#","environment":{"includeOnly":["A"]}"#));
    assert!(e.contains("environment.includeOnly: unknown key"), "{e}");
    let e = err(&with("", "", r#","environment":{"inherit":"Core"}"#));
    assert!(e.contains("environment.inherit: unknown variant `Core`, expected one of `all`, `core`, `none`"), "{e}");
    let e = err(&with("", "", r#","environment":{"include":"PATH"}"#));
    assert!(e.contains("environment.include: wrong type"), "{e}");
    let e = err(&with("", "", r#","environment":{"set":{"HTTPS_PROXY":"http://evil.test:1"}}"#));
    assert!(e.contains("environment.set.HTTPS_PROXY: srt sets HTTPS_PROXY itself"), "{e}");
    let e = err(&with("", "", r#","environment":{"set":{"TMPDIR":"/tmp"}}"#));
    assert!(e.contains("environment.set.TMPDIR"), "{e}");
    let e = err(&with("", "", r#","environment":{"exclude":["A=1"]}"#));
    assert!(e.contains("environment.exclude.0: \"A=1\": a variable name cannot contain '='"), "{e}");
    let e = err(&with("", "", r#","environment":{"set":{"X":"a\u0000b"}}"#));
    assert!(e.contains("environment.set.X: the value contains a NUL"), "{e}");
}

#[test]
fn literal_entries_and_embedded_default() {
    let s = parse(&with("", r#","allowRead":[{"path":"/a[1]","literal":true}]"#, "")).unwrap();
    assert!(s.filesystem.allow_read.unwrap()[0].is_literal());
    let d = settings_schema::Settings::embedded_default();
    assert!(settings_schema::validate(&d).is_empty());
    assert_eq!(d.filesystem.allow_write.len(), 2);
}

#[test]
fn committed_json_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("srt-settings.schema.json");
    let fresh = settings_schema::json_schema();
    if std::env::var_os("SRT_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "settings-schema/srt-settings.schema.json is stale; regenerate it with \
         `SRT_BLESS=1 cargo test -p settings-schema --test settings_files`"
    );
}
