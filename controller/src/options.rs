//! What an operator chooses for every agent: images, runtime class, the Service switch,
//! kagent's URL.
//! Shared by `render` and `run` so both produce the same objects.

/// The annotation on a SandboxAgent that picks its pod's RuntimeClass (e.g. `gvisor`),
/// overriding `--runtime-class-name`.
pub const ANNOTATION_RUNTIME_CLASS: &str = "srt-controller.dev/runtime-class-name";
/// The annotation on a SandboxAgent that turns the Sandbox's headless Service on or off
/// (`"true"`/`"false"`), overriding `--sandbox-service`.
pub const ANNOTATION_SERVICE: &str = "srt-controller.dev/sandbox-service";

/// The default image holding the `srt` binary that the init container copies.
pub const DEFAULT_SRT_IMAGE: &str = "ghcr.io/srt-sandbox/srt:0.1.0";
/// Where `srt` is inside that image.
pub const DEFAULT_SRT_IMAGE_PATH: &str = "/usr/local/bin/srt";
/// kagent's Python runtime for declarative agents (`--host 0.0.0.0 --port 8080 --filepath /config`).
pub const DEFAULT_RUNTIME_IMAGE: &str = "cr.kagent.dev/kagent-dev/kagent/app:0.9.12";
/// kagent's Go runtime for `runtime: go`, the `-full` variant kagent uses for sandboxed agents
/// (it has the shell srt runs commands with).
pub const DEFAULT_GO_RUNTIME_IMAGE: &str = "cr.kagent.dev/kagent-dev/kagent/golang-adk:0.9.12-full";
/// kagent's skills-init image (fetches OCI and git skills into /skills).
pub const DEFAULT_SKILLS_INIT_IMAGE: &str = "cr.kagent.dev/kagent-dev/kagent/skills-init:0.9.12";
/// kagent's controller in-cluster (its Helm chart's Service `kagent-controller` in `kagent`,
/// port 8083), the `KAGENT_URL` kagent gives every agent.
pub const DEFAULT_KAGENT_URL: &str = "http://kagent-controller.kagent:8083";
/// Where the init container puts `srt`. Kubernetes cannot prepend to an image's `PATH` (an
/// `env` entry replaces it, and `$(PATH)` only expands variables of the pod spec), so `srt`
/// goes into a directory the usual image `PATH`s already contain: the Debian, Ubuntu, Alpine,
/// distroless, python and node defaults and kagent's images all list `/usr/local/sbin`, ahead
/// of `/usr/bin` (where kagent's images keep their own `srt`), and it is normally empty.
pub const DEFAULT_SRT_BIN_DIR: &str = "/usr/local/sbin";

/// Whether the Sandbox gets `spec.service: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServiceMode {
    /// Wherever the served Sandbox schema declares `spec.service` (agent-sandbox >= 0.4.6).
    Auto,
    /// Always (fails on agent-sandbox < 0.4.6, whose schema has no such field).
    True,
    /// Never (agent-sandbox >= 0.4.6 then creates no Service for the agent).
    False,
}

#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Image with the srt binary; an init container copies it onto the agent's PATH.
    #[arg(long, env = "SRT_CONTROLLER_SRT_IMAGE", default_value = DEFAULT_SRT_IMAGE)]
    pub srt_image: String,
    /// Path of the srt binary inside --srt-image.
    #[arg(long, env = "SRT_CONTROLLER_SRT_IMAGE_PATH", default_value = DEFAULT_SRT_IMAGE_PATH)]
    pub srt_image_path: String,
    /// Image that runs Declarative agents (BYO agents bring their own).
    #[arg(long, env = "SRT_CONTROLLER_RUNTIME_IMAGE", default_value = DEFAULT_RUNTIME_IMAGE)]
    pub runtime_image: String,
    /// Image that runs Declarative agents with `runtime: go`.
    #[arg(long, env = "SRT_CONTROLLER_GO_RUNTIME_IMAGE", default_value = DEFAULT_GO_RUNTIME_IMAGE)]
    pub go_runtime_image: String,
    /// Image of the skills-init init container of agents with spec.skills (kagent's: it reads
    /// /etc/kagent/skills-init/config.json and fetches the skills into /skills).
    #[arg(long, env = "SRT_CONTROLLER_SKILLS_INIT_IMAGE", default_value = DEFAULT_SKILLS_INIT_IMAGE)]
    pub skills_init_image: String,
    /// RuntimeClass for every sandbox pod (e.g. gvisor, kata); per agent: the
    /// srt-controller.dev/runtime-class-name annotation.
    #[arg(long, env = "SRT_CONTROLLER_RUNTIME_CLASS_NAME")]
    pub runtime_class_name: Option<String>,
    /// The Sandbox's spec.service: agent-sandbox >= 0.4.6 creates the agent's headless Service
    /// only when it is true; older versions reject the field. `auto` sets it where the served
    /// schema declares it; per agent: the srt-controller.dev/sandbox-service annotation.
    #[arg(long, env = "SRT_CONTROLLER_SANDBOX_SERVICE", value_enum, default_value_t = ServiceMode::Auto)]
    pub sandbox_service: ServiceMode,
    /// uid (and gid) sandbox pods run as when the agent's podSecurityContext names none.
    #[arg(long, env = "SRT_CONTROLLER_RUN_AS_USER", default_value_t = 1001, value_parser = clap::value_parser!(i64).range(1..))]
    pub run_as_user: i64,
    /// KAGENT_URL for every agent: kagent's controller, which kagent's runtimes and SDK call
    /// (sessions, tasks, A2A). An agent's own env entry overrides it.
    #[arg(long, env = "SRT_CONTROLLER_KAGENT_URL", default_value = DEFAULT_KAGENT_URL)]
    pub kagent_url: String,
    /// Directory, already on the agent image's PATH, where the init container puts srt.
    #[arg(long, env = "SRT_CONTROLLER_SRT_BIN_DIR", default_value = DEFAULT_SRT_BIN_DIR)]
    pub srt_bin_dir: String,
    /// ServiceAccount for agents whose spec names none (kagent's --default-service-account-name,
    /// e.g. one account with a workload identity for all agents); unset, each agent gets one
    /// of its own, named after it.
    #[arg(long, env = "SRT_CONTROLLER_DEFAULT_SERVICE_ACCOUNT_NAME")]
    pub default_service_account_name: Option<String>,
    /// The controller's own OTEL_* variables, passed to every agent as kagent does (sorted).
    #[arg(skip)]
    pub otel_env: Vec<(String, String)>,
}

/// The OTEL_* variables of this process, sorted by name.
pub fn otel_from_process() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")).collect();
    v.sort();
    v
}

impl Default for Options {
    fn default() -> Self {
        Options {
            srt_image: DEFAULT_SRT_IMAGE.into(),
            srt_image_path: DEFAULT_SRT_IMAGE_PATH.into(),
            runtime_image: DEFAULT_RUNTIME_IMAGE.into(),
            go_runtime_image: DEFAULT_GO_RUNTIME_IMAGE.into(),
            skills_init_image: DEFAULT_SKILLS_INIT_IMAGE.into(),
            runtime_class_name: None,
            sandbox_service: ServiceMode::Auto,
            run_as_user: 1001,
            kagent_url: DEFAULT_KAGENT_URL.into(),
            srt_bin_dir: DEFAULT_SRT_BIN_DIR.into(),
            default_service_account_name: None,
            otel_env: Vec::new(),
        }
    }
}
