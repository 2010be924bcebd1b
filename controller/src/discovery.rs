//! Whether the cluster serves `agents.x-k8s.io/v1alpha1` `sandboxes`, asked at run time so
//! agent-sandbox can be installed after the controller started (no restart needed).

use std::sync::atomic::{AtomicBool, Ordering};

use kube::Client;

use crate::objects::{SANDBOX_GROUP, SANDBOX_PLURAL, SANDBOX_VERSION};

/// Remembers a positive answer; a negative one is asked again on the next reconcile.
#[derive(Debug, Default)]
pub struct SandboxApi {
    available: AtomicBool,
}

impl SandboxApi {
    /// `Ok(false)` when the group/version or the resource is not served.
    pub async fn available(&self, client: &Client) -> Result<bool, kube::Error> {
        if self.available.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let found = match client.list_api_group_resources(&format!("{SANDBOX_GROUP}/{SANDBOX_VERSION}")).await {
            Ok(list) => list.resources.iter().any(|r| r.name == SANDBOX_PLURAL),
            Err(kube::Error::Api(status)) if status.code == 404 => false,
            Err(e) => return Err(e),
        };
        self.available.store(found, Ordering::Relaxed);
        Ok(found)
    }

    /// Called when a Sandbox request says the resource is gone (agent-sandbox uninstalled).
    pub fn forget(&self) {
        self.available.store(false, Ordering::Relaxed);
    }

    pub fn known_available(&self) -> bool {
        self.available.load(Ordering::Relaxed)
    }
}

/// The message an agent gets while the Sandbox API is missing.
pub const MISSING_MESSAGE: &str = "the agent-sandbox API (agents.x-k8s.io/v1alpha1 Sandbox) is not served by this cluster; \
     install agent-sandbox (kubectl apply -f https://github.com/kubernetes-sigs/agent-sandbox/releases/download/v0.3.10/manifest.yaml); \
     srt-controller checks again periodically (every 30s by default) and deploys the agent once it is there";
