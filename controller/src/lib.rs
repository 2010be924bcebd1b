//! `srt-controller`: turns kagent `SandboxAgent`s into srt settings and agent-sandbox
//! `Sandbox`es whose pods run unprivileged.

pub mod accept;
pub mod agent_config;
pub mod carried;
pub mod conditions;
pub mod conflict;
pub mod crd;
pub mod credentials;
pub mod discovery;
pub mod floor;
pub mod http;
pub mod injectors;
pub mod kagent_crd;
pub mod metrics;
pub mod mounts;
pub mod objects;
pub mod options;
pub mod pod;
pub mod pod_layout;
pub mod reconcile;
pub mod refs;
pub mod rejection;
pub mod render;
pub mod run;
pub mod settings;
pub mod skills;
pub mod stored;

/// The SandboxAgent CRD as YAML (what `srt-controller crd` prints and
/// `controller/deploy/crd.yaml` holds).
pub fn crd_yaml() -> String {
    // A CRD is maps, strings and numbers: serialising it cannot fail.
    yaml_serde::to_string(&crd::schema::kagent_compatible(crd::generate::crd())).unwrap_or_default()
}
