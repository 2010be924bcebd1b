#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The real `srt-controller` binary: `crd`, `render` (files, stdin, exit codes) and `run`
//! without a cluster.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_srt-controller"))
}

fn golden(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(file)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn crd_prints_the_committed_manifest() {
    let out = bin().arg("crd").output().unwrap();
    assert!(out.status.success());
    let committed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/crd.yaml")).unwrap();
    assert_eq!(text(&out.stdout), committed);
}

#[test]
fn render_prints_the_golden_objects() {
    let out = bin().args(["render", "-f"]).arg(golden("seed-skills.yaml")).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), std::fs::read_to_string(golden("seed-skills.rendered.yaml")).unwrap());
}

#[test]
fn render_reads_stdin_and_takes_options() {
    let mut child = bin()
        .args(["render", "-f", "-", "--runtime-class-name", "kata", "--sandbox-service", "false"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(golden("seed-allowlist.yaml")).unwrap()).unwrap();
    let out: Output = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("runtimeClassName: kata"), "{stdout}");
    assert!(!stdout.contains("service: true"), "{stdout}");
    assert!(stdout.contains(r#""allowedDomains":["api.github.com"]"#), "{stdout}");
}

#[test]
fn render_of_an_agent_that_would_be_rejected_exits_1_naming_the_entry() {
    let out = bin().args(["render", "-f"]).arg(golden("invalid-domains.yaml")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing is printed for a rejected agent");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "srt-controller: SandboxAgent kagent/sandbox-agent would not be accepted (InvalidAllowedDomains)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("\"https://api.openai.com/v1\": has a scheme"), "{stderr}");
}

#[test]
fn render_of_a_missing_file_exits_2() {
    let out = bin().args(["render", "-f", "/nonexistent/agent.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read /nonexistent/agent.yaml"));
}

#[test]
fn run_without_a_cluster_says_what_is_missing() {
    let out = bin()
        .args(["run", "--metrics-addr", "127.0.0.1:0"])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no Kubernetes configuration"), "{stderr}");
    assert!(stderr.contains("KUBECONFIG"), "{stderr}");
}

#[test]
fn help_names_every_command() {
    let out = bin().arg("--help").output().unwrap();
    let help = text(&out.stdout);
    for cmd in ["crd", "render", "run"] {
        assert!(help.contains(cmd), "{help}");
    }
    let out = bin().args(["render", "--help"]).output().unwrap();
    assert!(text(&out.stdout).contains("--runtime-class-name"));
    let out = bin().args(["run", "--help"]).output().unwrap();
    assert!(text(&out.stdout).contains("RUST_LOG"));
}

#[test]
fn a_root_uid_for_sandbox_pods_is_refused() {
    let out = bin().args(["render", "--run-as-user", "0", "-f"]).arg(golden("seed-allowlist.yaml")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--run-as-user"), "{}", text(&out.stderr));
}

/// render -f AGENT -f REFERENCES: the agent renders with the objects from the other file.
#[test]
fn render_takes_referenced_objects_from_another_file() {
    let dir = srt_tests::scratch_dir("cli-two-files");
    let input = std::fs::read_to_string(golden("seed-allowlist.yaml")).unwrap();
    let (agent, refs) = input.split_once("\n---\n").unwrap();
    std::fs::write(dir.join("agent.yaml"), agent).unwrap();
    std::fs::write(dir.join("refs.yaml"), refs).unwrap();
    let one = bin().args(["render", "-f"]).arg(dir.join("agent.yaml")).output().unwrap();
    assert_eq!(one.status.code(), Some(1));
    assert!(text(&one.stderr).contains("(ModelConfigNotFound)"), "{}", text(&one.stderr));
    let both =
        bin().args(["render", "-f"]).arg(dir.join("agent.yaml")).arg("-f").arg(dir.join("refs.yaml")).output().unwrap();
    assert!(both.status.success(), "{}", text(&both.stderr));
    assert!(text(&both.stdout).contains(r#""model":{"base_url":"","model":"gpt-4.1-mini","type":"openai"}"#));
}

/// render -f takes one of kagent's translator testdata files as it is (operation,
/// targetObject, namespace, objects): its target Agent renders as the SandboxAgent with the
/// same spec, with the ModelConfig and ServiceAccount of the file, the Secret skipped. The
/// files set `spec.declarative.description`, which kagent's CRD does not declare: render
/// refuses it by name (never drops it), and renders the file without it.
#[test]
fn render_reads_a_kagent_translator_testdata_file() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/upstream/kagent-v0.9.12/translator-testdata/inputs/agent_with_custom_sa.yaml");
    let raw = bin().args(["render", "-f"]).arg(&file).output().unwrap();
    assert_eq!(raw.status.code(), Some(1));
    assert!(raw.stdout.is_empty());
    assert!(
        text(&raw.stderr).contains("(UnsupportedField): spec.declarative.description: srt-controller does not carry"),
        "{}",
        text(&raw.stderr)
    );
    let dir = srt_tests::scratch_dir("cli-testdata");
    let stored = dir.join("agent_with_custom_sa.yaml");
    let original = std::fs::read_to_string(&file).unwrap();
    let without: Vec<&str> = original.lines().filter(|l| !l.starts_with("        description:")).collect();
    std::fs::write(&stored, without.join("\n")).unwrap();
    let out = bin().args(["render", "-f"]).arg(&stored).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs: Vec<serde_json::Value> = yaml_serde::Deserializer::from_str(&text(&out.stdout))
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &serde_json::Value| !v.is_null())
        .collect();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ConfigMap", "Secret", "Sandbox"], "the spec names its ServiceAccount, so none is made");
    let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
    let config: serde_json::Value =
        serde_json::from_str(secret["stringData"]["config.json"].as_str().unwrap()).unwrap();
    let kagent: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(file.to_string_lossy().replace("/inputs/", "/outputs/").replace(".yaml", ".json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(config["model"], kagent["config"]["model"]);
    assert_eq!(config["instruction"], kagent["config"]["instruction"]);
    assert_eq!(docs[2]["metadata"]["namespace"], "test", "the file's namespace");
    let pod = &docs[2]["spec"]["podTemplate"]["spec"];
    let kagent_pod = kagent["manifest"].as_array().unwrap().iter().find(|m| m["kind"] == "Deployment").unwrap()["spec"]
        ["template"]["spec"]
        .clone();
    assert_eq!(pod["serviceAccountName"], kagent_pod["serviceAccountName"]);
}
