//! Objects and files the tests seed the fake with.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::{json, Value};

/// A kubeconfig pointing at the fake.
pub fn write_kubeconfig(dir: &Path, addr: SocketAddr) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://{addr}\n\
             users:\n- name: fake\n  user:\n    token: fake-token\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n\
             current-context: fake\n"
        ),
    )
    .unwrap();
    path
}

/// The ModelConfig `default-model-config` in `ns` the seed's agents use: OpenAI, its key in
/// Secret `openai-secret` (referenced, never read).
pub fn model_config_json(ns: &str) -> Value {
    json!({
        "apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig",
        "metadata": {"name": "default-model-config", "namespace": ns},
        "spec": {"provider": "OpenAI", "model": "gpt-4o", "apiKeySecret": "openai-secret", "apiKeySecretKey": "api-key"}
    })
}

/// The seed's declarative agent named `name` in `ns` with `domains`.
pub fn agent_json(ns: &str, name: &str, domains: &[&str]) -> Value {
    json!({
        "apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"type": "Declarative",
                 "sandbox": {"network": {"allowedDomains": domains}},
                 "declarative": {"modelConfig": "default-model-config", "systemMessage": "You are a helpful assistant."}}
    })
}
