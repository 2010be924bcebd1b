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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            srt_image: DEFAULT_SRT_IMAGE.into(),
            srt_image_path: DEFAULT_SRT_IMAGE_PATH.into(),
            runtime_image: DEFAULT_RUNTIME_IMAGE.into(),
            runtime_class_name: None,
            sandbox_service: ServiceMode::Auto,
            run_as_user: 1001,
            kagent_url: DEFAULT_KAGENT_URL.into(),
            srt_bin_dir: DEFAULT_SRT_BIN_DIR.into(),
        }
    }
}
