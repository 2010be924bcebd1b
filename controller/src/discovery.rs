//! Which agent-sandbox `Sandbox` API the cluster serves, asked at run time so agent-sandbox
//! can be installed (or upgraded) after the controller started.
//!
//! Two facts decide what the controller writes: the version (`v1beta1` from agent-sandbox
//! v0.5.0, preferred when served; `v1alpha1` before, and deprecated after) and whether that
//! version's schema declares `spec.service` (v0.4.6 and later). Server-side apply refuses a
//! field the schema does not declare, so `service` is only sent where it exists. The schema is
//! read from the API server's OpenAPI v3 document for the group/version, which every
//! authenticated client may read (the `system:discovery` role).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kube::api::{ApiResource, GroupVersionKind};
use kube::Client;
use serde_json::Value;

pub const SANDBOX_GROUP: &str = "agents.x-k8s.io";
pub const SANDBOX_KIND: &str = "Sandbox";
pub const SANDBOX_PLURAL: &str = "sandboxes";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxVersion {
    V1alpha1,
    V1beta1,
}

impl SandboxVersion {
    /// In the order discovery tries them: the newest first.
    pub const PREFERRED: [SandboxVersion; 2] = [SandboxVersion::V1beta1, SandboxVersion::V1alpha1];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxVersion::V1alpha1 => "v1alpha1",
            SandboxVersion::V1beta1 => "v1beta1",
        }
    }

    pub fn api_version(self) -> String {
        format!("{SANDBOX_GROUP}/{}", self.as_str())
    }

    pub fn resource(self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(SANDBOX_GROUP, self.as_str(), SANDBOX_KIND),
            SANDBOX_PLURAL,
        )
    }
}

/// What discovery found: the version to write and whether its schema has `spec.service`
/// (`None`: the OpenAPI document could not be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxApiInfo {
    pub version: SandboxVersion,
    pub service_declared: Option<bool>,
}

impl SandboxApiInfo {
    /// What an agent-sandbox release serves, for `render` without a cluster: `0.3.10`,
    /// `v0.4.6`, `0.5.0rc1`, ...
    pub fn for_release(release: &str) -> Result<SandboxApiInfo, String> {
        let bad = || format!("\"{release}\" is not an agent-sandbox release such as 0.3.10, 0.4.6 or 0.5.6");
        let mut parts = release.trim_start_matches('v').split('.');
        let mut number = || -> Result<u32, String> {
            let p = parts.next().ok_or_else(bad)?;
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().map_err(|_| bad())
        };
        let (major, minor, patch) = (number()?, number()?, number().unwrap_or(0));
        let at_least = |m: u32, n: u32, p: u32| (major, minor, patch) >= (m, n, p);
        Ok(SandboxApiInfo {
            version: if at_least(0, 5, 0) { SandboxVersion::V1beta1 } else { SandboxVersion::V1alpha1 },
            service_declared: Some(at_least(0, 4, 6)),
        })
    }
}

/// How long a positive answer is trusted: an upgrade of agent-sandbox (0.3.10 to 0.4.6 adds
/// `spec.service`, 0.5 adds v1beta1) is noticed within this time, without a restart.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// Remembers a positive answer for [`MAX_AGE`]; a negative one is asked again on the next
/// reconcile.
#[derive(Debug)]
pub struct SandboxApi {
    found: Mutex<Option<(SandboxApiInfo, Instant)>>,
    max_age: Duration,
}

impl Default for SandboxApi {
    fn default() -> Self {
        SandboxApi::with_max_age(MAX_AGE)
    }
}

impl SandboxApi {
    pub fn with_max_age(max_age: Duration) -> Self {
        SandboxApi { found: Mutex::new(None), max_age }
    }

    /// `Ok(None)` when no version of the Sandbox API is served.
    pub async fn discover(&self, client: &Client) -> Result<Option<SandboxApiInfo>, kube::Error> {
        if let Some((info, at)) = *self.lock() {
            if at.elapsed() < self.max_age {
                return Ok(Some(info));
            }
        }
        let mut version = None;
        for v in SandboxVersion::PREFERRED {
            if serves_sandboxes(client, v).await? {
                version = Some(v);
                break;
            }
        }
        let Some(version) = version else { return Ok(None) };
        let service_declared = service_declared(client, version).await?;
        if service_declared.is_none() {
            tracing::warn!(
                version = version.as_str(),
                "the OpenAPI v3 schema of the Sandbox API could not be read; assuming spec.service is {}",
                if version == SandboxVersion::V1beta1 { "declared" } else { "not declared" }
            );
        }
        let info = SandboxApiInfo { version, service_declared };
        if self.known().is_some_and(|old| old != info) {
            tracing::info!(?info, "the served Sandbox API changed (agent-sandbox upgraded?)");
        }
        *self.lock() = Some((info, Instant::now()));
        Ok(Some(info))
    }

    /// Called when a Sandbox request says the resource is gone (agent-sandbox uninstalled
    /// or upgraded to another version).
    pub fn forget(&self) {
        *self.lock() = None;
    }

    pub fn known(&self) -> Option<SandboxApiInfo> {
        self.lock().map(|(info, _)| info)
    }

    pub fn known_available(&self) -> bool {
        self.known().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(SandboxApiInfo, Instant)>> {
        // The value is a plain copyable answer; a panic elsewhere cannot leave it half-written.
        self.found.lock().unwrap_or_else(|p| p.into_inner())
    }
}

async fn serves_sandboxes(client: &Client, version: SandboxVersion) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(&version.api_version()).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == SANDBOX_PLURAL)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether kagent >= v0.10's `kagent.dev/v1alpha3` SandboxAgents are served.
pub async fn serves_sandboxagents_v1alpha3(client: &Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources("kagent.dev/v1alpha3").await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == "sandboxagents")),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// The OpenAPI v3 path of a group/version.
pub fn openapi_path(version: SandboxVersion) -> String {
    format!("/openapi/v3/apis/{SANDBOX_GROUP}/{}", version.as_str())
}

async fn service_declared(client: &Client, version: SandboxVersion) -> Result<Option<bool>, kube::Error> {
    let request = http::Request::get(openapi_path(version)).body(Vec::new()).map_err(kube::Error::HttpError)?;
    match client.request::<Value>(request).await {
        Ok(doc) => Ok(sandbox_spec_fields(&doc, version).map(|fields| fields.iter().any(|f| f == "service"))),
        // No OpenAPI v3 (very old API servers) or not allowed to read it: say so, do not fail.
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 403 => Ok(None),
        Err(e) => Err(e),
    }
}

/// The property names of the Sandbox's `spec` in an OpenAPI v3 document, found by the
/// `x-kubernetes-group-version-kind` the API server puts on every published kind.
pub fn sandbox_spec_fields(doc: &Value, version: SandboxVersion) -> Option<Vec<String>> {
    let schemas = doc.pointer("/components/schemas")?.as_object()?;
    let is_sandbox = |s: &Value| {
        s.get("x-kubernetes-group-version-kind").and_then(Value::as_array).is_some_and(|gvks| {
            gvks.iter()
                .any(|g| g["group"] == SANDBOX_GROUP && g["version"] == version.as_str() && g["kind"] == SANDBOX_KIND)
        })
    };
    let sandbox = schemas.values().find(|s| is_sandbox(s))?;
    let spec = sandbox.pointer("/properties/spec/properties")?.as_object()?;
    Some(spec.keys().cloned().collect())
}

/// The message an agent gets while no Sandbox API is served.
pub const MISSING_MESSAGE: &str = "the agent-sandbox API (agents.x-k8s.io v1beta1 or v1alpha1 Sandbox) is not served by this cluster; \
     install agent-sandbox (https://github.com/kubernetes-sigs/agent-sandbox/releases: v0.3.10 or later; v0.5.x is preferred); \
     srt-controller checks again periodically (every 30s by default) and deploys the agent once it is there";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_map_to_what_they_serve() {
        let info = |r: &str| SandboxApiInfo::for_release(r).unwrap();
        assert_eq!(info("0.3.10"), SandboxApiInfo { version: SandboxVersion::V1alpha1, service_declared: Some(false) });
        assert_eq!(info("v0.4.5"), SandboxApiInfo { version: SandboxVersion::V1alpha1, service_declared: Some(false) });
        assert_eq!(info("0.4.6"), SandboxApiInfo { version: SandboxVersion::V1alpha1, service_declared: Some(true) });
        assert_eq!(info("0.5.0rc1"), SandboxApiInfo { version: SandboxVersion::V1beta1, service_declared: Some(true) });
        assert_eq!(info("0.5"), SandboxApiInfo { version: SandboxVersion::V1beta1, service_declared: Some(true) });
        assert!(SandboxApiInfo::for_release("latest").unwrap_err().contains("not an agent-sandbox release"));
    }

    #[test]
    fn spec_fields_come_from_the_schema_of_the_right_kind_and_version() {
        let doc = serde_json::json!({"components": {"schemas": {
            "io.x-k8s.agents.v1alpha1.Sandbox": {
                "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "version": "v1alpha1", "kind": "Sandbox"}],
                "properties": {"spec": {"properties": {"podTemplate": {}, "replicas": {}}}}},
            "io.x-k8s.agents.v1alpha1.SandboxList": {
                "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "version": "v1alpha1", "kind": "SandboxList"}],
                "properties": {"spec": {"properties": {"service": {}}}}}
        }}});
        let mut fields = sandbox_spec_fields(&doc, SandboxVersion::V1alpha1).unwrap();
        fields.sort();
        assert_eq!(fields, vec!["podTemplate", "replicas"]);
        assert_eq!(sandbox_spec_fields(&doc, SandboxVersion::V1beta1), None);
    }
}
