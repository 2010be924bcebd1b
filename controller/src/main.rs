//! `srt-controller`: `crd`, `render -f agent.yaml`, `run`.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use controller::discovery::SandboxApiInfo;
use controller::options::Options;

#[derive(Parser)]
#[command(
    name = "srt-controller",
    version,
    about = "Runs kagent SandboxAgents as agent-sandbox Sandboxes whose pods use srt, unprivileged.",
    long_about = "Runs kagent SandboxAgents (kagent.dev/v1alpha2) as agent-sandbox Sandboxes \
                  (agents.x-k8s.io v1beta1 or v1alpha1, whichever the cluster serves) whose pods run \
                  unprivileged, with srt on PATH and srt-settings.json generated from \
                  spec.sandbox.network.allowedDomains."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the SandboxAgent CustomResourceDefinition as YAML (kagent v0.9.12's schema).
    Crd {
        /// The CRD installed now (`kubectl get crd sandboxagents.kagent.dev -o yaml`; `-` reads
        /// standard input): print nothing and exit 1, naming what would be lost, if applying
        /// ours would drop a version or field it serves (a newer kagent's: never downgrade).
        #[arg(long, value_name = "FILE")]
        installed: Option<PathBuf>,
    },
    /// Print the objects the controller would create for the agents in a YAML file (no
    /// cluster needed). Exits 1, naming the problem, when an agent would not be accepted.
    Render {
        /// SandboxAgent manifest(s) and the objects they refer to (ModelConfigs, tool servers,
        /// agents, ConfigMaps; Secrets are skipped); repeat -f for more files; `-` reads
        /// standard input.
        #[arg(short = 'f', long = "file", value_name = "FILE", required = true)]
        file: Vec<PathBuf>,
        /// The agent-sandbox release to write the Sandbox for (`run` asks the cluster): before
        /// 0.4.6 without spec.service, from 0.5.0 as agents.x-k8s.io/v1beta1.
        #[arg(long = "agent-sandbox", value_name = "RELEASE", default_value = controller::render::DEFAULT_RELEASE)]
        agent_sandbox: String,
        #[command(flatten)]
        options: Options,
    },
    /// Reconcile SandboxAgents in the cluster of the current kubeconfig (or in-cluster).
    #[command(after_help = "Logs go to stderr; RUST_LOG sets the level (default: info,kube=warn).\n\
                            Run one replica at a time (controller/deploy/deployment.yaml does).")]
    Run(controller::run::RunArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Crd { installed: None } => {
            print!("{}", controller::crd_yaml());
            ExitCode::SUCCESS
        }
        Command::Crd { installed: Some(file) } => crd_over(&file),
        Command::Render { file, agent_sandbox, options } => render(&file, &agent_sandbox, &options),
        Command::Run(args) => controller::run::main(args),
    }
}

/// Reads FILE, or standard input for `-`.
fn read_input(file: &PathBuf) -> Result<(String, String), String> {
    if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok((s, "<stdin>".to_string()))
    } else {
        let s = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        Ok((s, file.display().to_string()))
    }
}

fn crd_over(file: &PathBuf) -> ExitCode {
    let (text, origin) = match read_input(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("srt-controller: {e}");
            return ExitCode::from(2);
        }
    };
    let ours_text = controller::crd_yaml();
    let parsed: Result<serde_json::Value, _> = yaml_serde::from_str(&text);
    let (Ok(installed), Ok(ours)) = (parsed, yaml_serde::from_str::<serde_json::Value>(&ours_text)) else {
        eprintln!("srt-controller: {origin} is not a CRD in YAML");
        return ExitCode::from(2);
    };
    if installed.get("kind").and_then(|k| k.as_str()) != Some("CustomResourceDefinition") {
        eprintln!("srt-controller: {origin} is not a CustomResourceDefinition");
        return ExitCode::from(2);
    }
    let lost = controller::kagent_crd::would_lose(&installed, &ours);
    if lost.is_empty() {
        print!("{ours_text}");
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "srt-controller: not printing the CRD: applied over the installed one (a newer kagent's) it would drop {} \
         (and {} more); leave the installed CRD in place",
        lost.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
        lost.len().saturating_sub(5)
    );
    ExitCode::FAILURE
}

fn render(files: &[PathBuf], release: &str, options: &Options) -> ExitCode {
    let api = match SandboxApiInfo::for_release(release) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("srt-controller: --agent-sandbox: {e}");
            return ExitCode::from(2);
        }
    };
    let mut inputs = Vec::new();
    for file in files {
        match read_input(file) {
            Ok(input) => inputs.push(input),
            Err(e) => {
                eprintln!("srt-controller: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut options = options.clone();
    options.otel_env = controller::options::otel_from_process();
    match controller::render::render_all(&inputs, &options, &api) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("srt-controller: {e}");
            ExitCode::FAILURE
        }
    }
}
