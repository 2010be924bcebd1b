//! The `srt-settings.json` a SandboxAgent gets: kagent's defaults plus the agent's domains,
//! byte-identical to what kagent v0.9.x writes, and validated before anyone sees it.

use std::path::Path;

use serde_json::json;

/// The key of the settings file in the settings ConfigMap, and so its file name in the pod.
pub const SETTINGS_KEY: &str = "srt-settings.json";

/// Renders kagent's srt settings for `allowed_domains`: writes in `.` and `/tmp`, reads
/// unrestricted, no denied domains. Keys sorted and compact, as Go's `json.Marshal` writes
/// them, so the file is the same byte for byte as kagent's.
pub fn render(allowed_domains: &[String]) -> Result<String, settings_schema::SettingsError> {
    // serde_json's default map is a BTreeMap, so keys come out sorted like Go's.
    let value = json!({
        "filesystem": {"allowWrite": [".", "/tmp"], "denyRead": [], "denyWrite": []},
        "network": {"allowedDomains": allowed_domains, "deniedDomains": []},
    });
    let text = value.to_string();
    settings_schema::parse_str(&text, Path::new(SETTINGS_KEY))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_kagents_bytes() {
        assert_eq!(
            render(&[]).unwrap(),
            r#"{"filesystem":{"allowWrite":[".","/tmp"],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}"#
        );
    }

    #[test]
    fn domains_are_kept_in_order() {
        let domains = vec!["api.github.com".to_string(), "*.example.com".to_string()];
        assert_eq!(
            render(&domains).unwrap(),
            r#"{"filesystem":{"allowWrite":[".","/tmp"],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":["api.github.com","*.example.com"],"deniedDomains":[]}}"#
        );
    }

    #[test]
    fn an_invalid_domain_never_renders() {
        let err = render(&["https://x.example.com".to_string()]).unwrap_err();
        assert!(err.to_string().contains("network.allowedDomains.0"), "{err}");
    }
}
