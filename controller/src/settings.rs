//! The `srt-settings.json` a SandboxAgent gets: kagent's defaults plus the agent's domains
//! (the same keys and bytes as kagent v0.9.x writes), plus what keeps the pod's credentials
//! from the commands (srt-rs's `environment` and `filesystem.listable`, a `denyRead` of the
//! credential mounts), validated before anyone sees it.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::credentials::Protection;
use crate::pod_layout::SETTINGS_KEY;

/// Renders the settings for `allowed_domains`: writes in `.` and `/tmp`, reads unrestricted
/// except the credential mounts (listable, so `ls /` keeps working), no denied domains,
/// and the Secret-sourced variables excluded. Keys sorted and compact, as Go's
/// `json.Marshal` writes them.
pub fn render(allowed_domains: &[String], protect: &Protection) -> Result<String, settings_schema::SettingsError> {
    // serde_json's default map is a BTreeMap, so keys come out sorted like Go's.
    let deny_read = paths(&protect.deny_read);
    let mut filesystem = json!({
        "allowWrite": [".", "/tmp"],
        "denyRead": deny_read,
        "denyWrite": [],
    });
    if !protect.deny_read.is_empty() {
        filesystem["listable"] = deny_read;
    }
    if !protect.allow_read.is_empty() {
        filesystem["allowRead"] = paths(&protect.allow_read);
    }
    let mut value = json!({
        "filesystem": filesystem,
        "network": {"allowedDomains": allowed_domains, "deniedDomains": []},
    });
    let mut environment = Map::new();
    if !protect.exclude.is_empty() {
        environment.insert("exclude".into(), json!(protect.exclude));
    }
    if !protect.include.is_empty() {
        environment.insert("include".into(), json!(protect.include));
    }
    if protect.core_only {
        environment.insert("inherit".into(), json!("core"));
    }
    if !environment.is_empty() {
        value["environment"] = Value::Object(environment);
    }
    let text = value.to_string();
    settings_schema::parse_str(&text, Path::new(SETTINGS_KEY))?;
    Ok(text)
}

/// Mount paths as settings entries: a path with glob characters (Kubernetes allows them) in
/// srt's literal form, so it denies exactly that path.
fn paths(list: &[String]) -> Value {
    Value::Array(
        list.iter()
            .map(|p| if p.contains(['*', '?', '[', '{']) { json!({"path": p, "literal": true}) } else { json!(p) })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_credentials_it_is_kagents_bytes() {
        assert_eq!(
            render(&[], &Protection::default()).unwrap(),
            r#"{"filesystem":{"allowWrite":[".","/tmp"],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}"#
        );
    }

    #[test]
    fn domains_are_kept_in_order() {
        let domains = vec!["api.github.com".to_string(), "*.example.com".to_string()];
        assert_eq!(
            render(&domains, &Protection::default()).unwrap(),
            r#"{"filesystem":{"allowWrite":[".","/tmp"],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":["api.github.com","*.example.com"],"deniedDomains":[]}}"#
        );
    }

    #[test]
    fn credentials_become_environment_and_read_rules() {
        let p = Protection {
            exclude: vec!["OPENAI_API_KEY".into()],
            include: vec!["GITHUB_TOKEN".into()],
            core_only: true,
            deny_read: vec!["/etc/git-creds".into(), "/var/run/secrets".into()],
            allow_read: vec!["/var/run/secrets/tokens".into()],
        };
        assert_eq!(
            render(&[], &p).unwrap(),
            concat!(
                r#"{"environment":{"exclude":["OPENAI_API_KEY"],"include":["GITHUB_TOKEN"],"inherit":"core"},"#,
                r#""filesystem":{"allowRead":["/var/run/secrets/tokens"],"allowWrite":[".","/tmp"],"#,
                r#""denyRead":["/etc/git-creds","/var/run/secrets"],"denyWrite":[],"#,
                r#""listable":["/etc/git-creds","/var/run/secrets"]},"#,
                r#""network":{"allowedDomains":[],"deniedDomains":[]}}"#
            )
        );
    }

    #[test]
    fn an_invalid_domain_never_renders() {
        let err = render(&["https://x.example.com".to_string()], &Protection::default()).unwrap_err();
        assert!(err.to_string().contains("network.allowedDomains.0"), "{err}");
    }
}
