//! What the commands an agent runs through srt may not see of the credentials its pod
//! holds: variables whose value comes from a Secret, and the files of Secret, token and
//! secrets-store volumes. Read from the rendered pod, not from the SandboxAgent, so any
//! variable or volume that reaches the agent's container (the spec's, kagent's token, a
//! ModelConfig's key) is covered without knowing where it came from. The agent process
//! itself keeps all of them; only srt's commands lose them.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Volume};

use settings_schema::credential::{credential, credential_name};

use crate::rejection::{Rejection, REASON_INVALID_SPEC};

/// Annotation on a SandboxAgent: variables (exact names, comma-separated) that the agent's
/// commands may see although they come from a Secret or look like credentials.
pub const ANNOTATION_COMMAND_ENV: &str = "srt-controller.dev/command-env";
/// Annotation on a SandboxAgent: credential volumes (names, comma-separated) whose files
/// the agent's commands may read; `kube-api-access` names the ServiceAccount token
/// Kubernetes mounts itself.
pub const ANNOTATION_COMMAND_VOLUMES: &str = "srt-controller.dev/command-readable-volumes";
/// Where Kubernetes and its webhooks put a pod's tokens: kagent's (`tokens/`), the
/// ServiceAccount's (`kubernetes.io/serviceaccount/`), EKS and Azure workload identity's.
pub const SECRETS_DIR: &str = "/var/run/secrets";
/// The ServiceAccount token Kubernetes mounts when the pod's account automounts it.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const SERVICE_ACCOUNT_VOLUME: &str = "kube-api-access";

/// The `environment` and read rules the rendered srt-settings.json carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    /// Variables from Secrets (`secretKeyRef`), and `PREFIX*` for `envFrom` Secrets with a
    /// prefix: never passed to commands, whatever the default.
    pub exclude: Vec<String>,
    /// The annotation's variables, passed on by exact name.
    pub include: Vec<String>,
    /// Commands start from srt's core set (`inherit: core`) plus `include`: always set by
    /// [`protection`], so no plain variable of the pod reaches them unless named.
    pub core_only: bool,
    /// Credential mounts (and `/var/run/secrets`), unreadable to commands but listable.
    pub deny_read: Vec<String>,
    /// Mounts the annotation re-allows below a denied directory.
    pub allow_read: Vec<String>,
}

/// The protection for `container` (the agent's) among the pod's `volumes`, with the agent's
/// `annotations` asking for exceptions.
pub fn protection(
    container: &Container,
    volumes: &[Volume],
    annotations: &BTreeMap<String, String>,
) -> Result<Protection, Rejection> {
    let passed = names(annotations, ANNOTATION_COMMAND_ENV)?;
    for n in &passed {
        if n.contains(['*', '?']) || n.contains('=') {
            return Err(invalid(ANNOTATION_COMMAND_ENV, format!("\"{n}\" is not a variable name; list exact names")));
        }
    }
    let mut p = Protection::default();
    let env = container.env.as_deref().unwrap_or_default();
    let secret_prefixes: Vec<&str> = container
        .env_from
        .iter()
        .flatten()
        .filter(|f| f.secret_ref.is_some())
        .filter_map(|f| f.prefix.as_deref().filter(|x| !x.is_empty()))
        .collect();
    let unprefixed_secret = container
        .env_from
        .iter()
        .flatten()
        .any(|f| f.secret_ref.is_some() && f.prefix.as_deref().is_none_or(str::is_empty));
    // Secret-sourced, in the pod's order: a `secretKeyRef`, a plain value that copies one
    // through Kubernetes' `$(NAME)` expansion (`Bearer $(API_KEY)`), or one whose name or
    // value the credential rule catches (kagent's `AZURE_AD_TOKEN`, the OTLP headers the
    // controller passes through): excluded by name, whatever srt's default
    let mut secret_env: BTreeSet<&str> = BTreeSet::new();
    let mut defined: BTreeSet<&str> = BTreeSet::new();
    for e in env {
        let from_secret = match (&e.value, &e.value_from) {
            (_, Some(v)) => v.secret_key_ref.is_some() || credential_name(e.name.as_bytes()),
            (Some(v), None) => {
                credential(e.name.as_bytes(), v.as_bytes()).is_some()
                    || references(v).iter().any(|r| {
                        secret_env.contains(r)
                            || secret_prefixes.iter().any(|x| r.starts_with(x))
                            || (unprefixed_secret && !defined.contains(r))
                    })
            }
            (None, None) => credential_name(e.name.as_bytes()),
        };
        if from_secret {
            // once from a Secret, always excluded (a later plain entry of the name is
            // replaced by the controller; if one were not, excluding it costs nothing)
            secret_env.insert(e.name.as_str());
        }
        defined.insert(e.name.as_str());
    }
    p.exclude = secret_env.iter().filter(|n| !passed.iter().any(|a| a == *n)).map(|n| n.to_string()).collect();
    for prefix in &secret_prefixes {
        p.exclude.push(format!("{prefix}*"));
    }
    // Commands start from srt's core set (PATH, HOME, LANG, ...) plus the names the agent
    // declares: a plain variable of the pod (the spec's, the image's, a webhook's, an
    // unprefixed envFrom's) reaches them only when named, whatever the credential rule
    // makes of its name or value.
    p.core_only = true;
    p.include = passed.clone();
    p.include.sort();
    p.include.dedup();

    let readable = names(annotations, ANNOTATION_COMMAND_VOLUMES)?;
    // (srt-controller's own /config, the settings with a Declarative agent's config Secret,
    // is denied below and is not the agent's to open)
    let credential_volumes: Vec<&str> = volumes
        .iter()
        .filter(|v| holds_credentials(v) && v.name != crate::pod_layout::SETTINGS_VOLUME)
        .map(|v| v.name.as_str())
        .collect();
    for r in &readable {
        if r != SERVICE_ACCOUNT_VOLUME && !credential_volumes.contains(&r.as_str()) {
            return Err(invalid(
                ANNOTATION_COMMAND_VOLUMES,
                format!(
                    "\"{r}\" is not a credential volume of this agent's pod (those are: {}{SERVICE_ACCOUNT_VOLUME})",
                    credential_volumes.iter().map(|v| format!("{v}, ")).collect::<String>()
                ),
            ));
        }
    }
    p.deny_read.push(SECRETS_DIR.to_string());
    // the agent's own configuration: config.json (tool and model headers), agent-spec.json
    // (the spec's plain variables, credential-looking ones included) are the agent's, not
    // its commands'; srt reads its settings there before the command starts
    p.deny_read.push(crate::pod_layout::SETTINGS_DIR.to_string());
    let mounts = container.volume_mounts.as_deref().unwrap_or_default();
    for m in mounts {
        let path = m.mount_path.trim_end_matches('/').to_string();
        if !credential_volumes.contains(&m.name.as_str()) {
            // a ConfigMap or data volume someone mounted below the tokens' directory
            if under(&path, SECRETS_DIR) && path != SECRETS_DIR {
                p.allow_read.push(path);
            }
        } else if readable.contains(&m.name) {
            if under(&path, SECRETS_DIR) {
                p.allow_read.push(path);
            }
        } else if !under(&path, SECRETS_DIR) {
            p.deny_read.push(path);
        }
    }
    if readable.iter().any(|r| r == SERVICE_ACCOUNT_VOLUME) {
        p.allow_read.push(SERVICE_ACCOUNT_DIR.to_string());
    }
    p.deny_read.sort();
    p.deny_read.dedup();
    p.allow_read.sort();
    p.allow_read.dedup();
    Ok(p)
}

/// A Secret, a projected volume with a Secret or a ServiceAccount token in it, or any inline
/// CSI volume: the secrets-store driver's (`secrets-store.csi.k8s.io` with the AWS, Azure,
/// GCP, Vault, Conjur, Infisical or Akeyless provider), GKE's (`secrets-store-gke.csi.k8s.io`),
/// cert-manager's and SPIFFE's mount keys and workload identities, and a driver srt-controller
/// does not know is taken for one of them (fail closed; `command-readable-volumes` opens it).
pub fn holds_credentials(v: &Volume) -> bool {
    v.secret.is_some()
        || v.projected.as_ref().is_some_and(|p| {
            p.sources.iter().flatten().any(|s| s.secret.is_some() || s.service_account_token.is_some())
        })
        || v.csi.is_some()
}

/// The variables a value names for Kubernetes' expansion: `$(NAME)`, not the escaped `$$(NAME)`.
fn references(value: &str) -> Vec<&str> {
    let b = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'$' && b[i + 1] == b'$' {
            i += 2;
            continue;
        }
        if b[i] == b'$' && b[i + 1] == b'(' {
            if let Some(end) = value[i + 2..].find(')') {
                out.push(&value[i + 2..i + 2 + end]);
                i += 3 + end;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn under(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// The annotation's comma- or space-separated entries.
fn names(annotations: &BTreeMap<String, String>, key: &str) -> Result<Vec<String>, Rejection> {
    let Some(value) = annotations.get(key) else { return Ok(Vec::new()) };
    let out: Vec<String> =
        value.split([',', ' ', '\n', '\t']).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    if let Some(bad) = out.iter().find(|n| n.bytes().any(|b| !(0x21..0x7f).contains(&b))) {
        return Err(invalid(key, format!("\"{bad}\" is not a name")));
    }
    Ok(out)
}

fn invalid(key: &str, what: String) -> Rejection {
    Rejection { reason: REASON_INVALID_SPEC, message: format!("annotation {key}: {what}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn container(v: serde_json::Value) -> Container {
        serde_json::from_value(v).unwrap()
    }

    fn volumes(v: serde_json::Value) -> Vec<Volume> {
        serde_json::from_value(v).unwrap()
    }

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn pod() -> (Container, Vec<Volume>) {
        let c = container(json!({"name": "kagent", "env": [
            {"name": "KAGENT_URL", "value": "http://kagent"},
            {"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "m", "key": "k"}}},
            {"name": "MODEL_ENDPOINT", "valueFrom": {"secretKeyRef": {"name": "m", "key": "url"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "CONF", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}],
            "volumeMounts": [
                {"name": "kagent-token", "mountPath": "/var/run/secrets/tokens"},
                {"name": "git-creds", "mountPath": "/etc/git-creds/"},
                {"name": "vault", "mountPath": "/mnt/vault"},
                {"name": "mixed", "mountPath": "/etc/mixed"},
                {"name": "data", "mountPath": "/data"},
                {"name": "cm", "mountPath": "/etc/cm"},
                {"name": "cm", "mountPath": "/var/run/secrets/ca"},
                {"name": "other-csi", "mountPath": "/mnt/keys"}]}));
        let v = volumes(json!([
            {"name": "kagent-token", "projected": {"sources": [{"serviceAccountToken": {"path": "kagent-token", "audience": "kagent"}}]}},
            {"name": "git-creds", "secret": {"secretName": "git"}},
            {"name": "vault", "csi": {"driver": "secrets-store.csi.k8s.io"}},
            {"name": "mixed", "projected": {"sources": [{"configMap": {"name": "c"}}, {"secret": {"name": "s"}}]}},
            {"name": "data", "emptyDir": {}},
            {"name": "cm", "projected": {"sources": [{"configMap": {"name": "c"}}, {"downwardAPI": {}}]}},
            {"name": "other-csi", "csi": {"driver": "ebs.csi.aws.com"}}]));
        (c, v)
    }

    #[test]
    fn secret_variables_and_credential_mounts_are_kept_from_commands() {
        let (c, v) = pod();
        let p = protection(&c, &v, &BTreeMap::new()).unwrap();
        assert_eq!(p.exclude, ["MODEL_ENDPOINT", "OPENAI_API_KEY"]);
        assert!(p.include.is_empty() && p.core_only, "commands start from srt's core set");
        assert_eq!(p.allow_read, ["/var/run/secrets/ca"], "not a credential: readable below the denied directory");
        assert_eq!(
            p.deny_read,
            ["/config", "/etc/git-creds", "/etc/mixed", "/mnt/keys", "/mnt/vault", "/var/run/secrets"],
            "a CSI driver srt-controller does not know counts as a credential volume"
        );
    }

    #[test]
    fn annotations_let_named_variables_and_volumes_through() {
        let (c, v) = pod();
        let a = annotations(&[
            (ANNOTATION_COMMAND_ENV, "OPENAI_API_KEY, GITHUB_TOKEN"),
            (ANNOTATION_COMMAND_VOLUMES, "git-creds kagent-token,kube-api-access"),
        ]);
        let p = protection(&c, &v, &a).unwrap();
        assert_eq!(p.exclude, ["MODEL_ENDPOINT"]);
        assert_eq!(p.include, ["GITHUB_TOKEN", "OPENAI_API_KEY"]);
        assert_eq!(p.deny_read, ["/config", "/etc/mixed", "/mnt/keys", "/mnt/vault", "/var/run/secrets"]);
        assert_eq!(
            p.allow_read,
            ["/var/run/secrets/ca", "/var/run/secrets/kubernetes.io/serviceaccount", "/var/run/secrets/tokens"]
        );

        let bad = protection(&c, &v, &annotations(&[(ANNOTATION_COMMAND_VOLUMES, "data")])).unwrap_err();
        assert_eq!(bad.reason, REASON_INVALID_SPEC);
        assert!(bad.message.contains("\"data\" is not a credential volume"), "{}", bad.message);
        assert!(bad.message.contains("git-creds"), "{}", bad.message);
        let bad = protection(&c, &v, &annotations(&[(ANNOTATION_COMMAND_ENV, "OPENAI_*")])).unwrap_err();
        assert!(bad.message.contains("list exact names"), "{}", bad.message);
    }

    #[test]
    fn copies_of_secrets_and_credential_looking_plain_values_are_excluded_too() {
        let c = container(json!({"name": "kagent", "env": [
            {"name": "KAGENT_URL", "value": "http://kagent"},
            {"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "m", "key": "k"}}},
            // Kubernetes expands $(NAME) from earlier entries: the Secret's value, renamed
            {"name": "AUTH_HEADER", "value": "Bearer $(OPENAI_API_KEY)"},
            {"name": "AGAIN", "value": "x-$(AUTH_HEADER)"},
            {"name": "LITERAL", "value": "$$(OPENAI_API_KEY) is not expanded"},
            {"name": "UNKNOWN", "value": "$(NOT_DEFINED)"},
            {"name": "FROM_PREFIX", "value": "$(MODEL_KEY)"},
            // plain values the credential rule catches: kagent's AzureOpenAI token, the
            // controller's OTLP headers, a URL with a password
            {"name": "AZURE_AD_TOKEN", "value": "t"},
            {"name": "OTEL_EXPORTER_OTLP_HEADERS", "value": "x-honeycomb-team=abc"},
            {"name": "DB", "value": "postgres://a:b@db/x"},
            {"name": "CONF", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}],
            "envFrom": [{"secretRef": {"name": "s"}, "prefix": "MODEL_"}]}));
        let p = protection(&c, &[], &BTreeMap::new()).unwrap();
        assert_eq!(
            p.exclude,
            [
                "AGAIN",
                "AUTH_HEADER",
                "AZURE_AD_TOKEN",
                "DB",
                "FROM_PREFIX",
                "OPENAI_API_KEY",
                "OTEL_EXPORTER_OTLP_HEADERS",
                "MODEL_*"
            ]
        );
        assert!(p.deny_read.contains(&"/config".to_string()), "{:?}", p.deny_read);

        // an envFrom Secret without a prefix: any name not defined before may be its
        let mut c = c;
        c.env_from = Some(serde_json::from_value(json!([{"secretRef": {"name": "b"}}])).unwrap());
        let p = protection(&c, &[], &BTreeMap::new()).unwrap();
        assert!(p.core_only);
        assert!(p.exclude.contains(&"UNKNOWN".to_string()), "{:?}", p.exclude);
        assert!(p.include.is_empty(), "no plain variable is passed unless named: {:?}", p.include);
    }

    #[test]
    fn env_from_secrets_exclude_their_prefix_and_commands_start_from_the_core_set() {
        let mut c = container(json!({"name": "kagent", "env": [{"name": "KAGENT_URL", "value": "u"}],
            "envFrom": [{"secretRef": {"name": "a"}, "prefix": "MODEL_"}, {"configMapRef": {"name": "c"}}]}));
        let p = protection(&c, &[], &BTreeMap::new()).unwrap();
        assert_eq!(p.exclude, ["MODEL_*"]);
        assert!(p.core_only);
        c.env_from = Some(serde_json::from_value(json!([{"secretRef": {"name": "b"}}])).unwrap());
        let p = protection(&c, &[], &BTreeMap::new()).unwrap();
        assert!(p.core_only);
        assert!(p.include.is_empty(), "{:?}", p.include);
    }

    /// A plain variable whose name and value the credential rule does not catch (a licence
    /// key under an ordinary name) reaches commands only when the agent names it.
    #[test]
    fn plain_variables_reach_commands_only_when_the_agent_names_them() {
        let c = container(json!({"name": "kagent", "env": [
            {"name": "ACME_LICENSE", "value": "lic-5f1e0c"},
            {"name": "KAGENT_URL", "value": "http://kagent"},
            {"name": "REGION", "value": "eu-west-1"}]}));
        let p = protection(&c, &[], &BTreeMap::new()).unwrap();
        assert!(p.core_only);
        assert!(p.exclude.is_empty() && p.include.is_empty(), "{p:?}");
        let a = annotations(&[(ANNOTATION_COMMAND_ENV, "REGION")]);
        let p = protection(&c, &[], &a).unwrap();
        assert!(p.core_only);
        assert_eq!(p.include, ["REGION"], "only what the agent declares");
    }
}
