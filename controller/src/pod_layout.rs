//! The names and paths the sandbox pod is built with, which several modules must agree on:
//! `pod` builds the pod from them, `mounts` keeps the agent's own volumes off them,
//! `credentials` hides the settings from the commands, `objects` fills the ConfigMap.

/// The key of the settings file in the settings ConfigMap, and so its file name in the pod.
pub const SETTINGS_KEY: &str = "srt-settings.json";

/// Where the settings ConfigMap is mounted (kagent's `/config`). A directory mount, never
/// `subPath`, so the kubelet swaps in edited settings while the pod runs.
pub const SETTINGS_DIR: &str = "/config";
/// The Declarative agent's spec, as JSON, next to the settings.
pub const AGENT_SPEC_KEY: &str = "agent-spec.json";
pub const SETTINGS_VOLUME: &str = "srt-settings";
pub const SRT_BIN_VOLUME: &str = "srt-bin";
/// kagent's projected ServiceAccount token for calls to KAGENT_URL (audience `kagent`, so
/// the API server does not accept it).
pub const TOKEN_VOLUME: &str = "kagent-token";
pub const TOKEN_DIR: &str = "/var/run/secrets/tokens";
pub const CONTAINER_NAME: &str = "kagent";
pub const INIT_CONTAINER_NAME: &str = "install-srt";
pub const AGENT_PORT: i32 = 8080;
