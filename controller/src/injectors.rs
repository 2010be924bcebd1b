//! Secrets a mutating webhook adds to the pod after srt-controller rendered it: the pod
//! template srt-controller writes has no trace of them, so [`crate::credentials`] cannot
//! see their volumes. What it can see are the annotations (and labels) that ask a webhook
//! for them; from those, the directories the webhook will mount are denied to commands.
//!
//! Fails closed in three ways:
//! * a known injector's annotation, whatever its value (even `agent-inject: "false"`), denies
//!   the injector's default directories and every absolute path its path annotations name;
//! * an injector whose paths are named elsewhere (Infisical's templates live in a
//!   ConfigMap), or an unknown annotation whose key says `inject`, refuses the agent until
//!   [`ANNOTATION_INJECTED_PATHS`] names the paths (which are then denied too);
//! * a path is readable again only where [`ANNOTATION_COMMAND_READABLE_PATHS`] names it, at
//!   or below a path denied here.

use std::collections::BTreeMap;

use crate::credentials::Protection;
use crate::mounts::{clean_path, is_at_or_under};
use crate::rejection::{Rejection, REASON_INVALID_SPEC};

/// Annotation on a SandboxAgent: absolute paths a webhook adds to the pod (comma- or
/// space-separated), denied to commands. Needed, and enough, to accept an injector whose
/// paths srt-controller cannot tell; present but empty says it adds no files.
pub const ANNOTATION_INJECTED_PATHS: &str = "srt-controller.dev/injected-paths";
/// Annotation on a SandboxAgent: paths denied here that commands may read after all.
pub const ANNOTATION_COMMAND_READABLE_PATHS: &str = "srt-controller.dev/command-readable-paths";
/// Why an agent asking a webhook for secrets is refused: the paths are unknown.
pub const REASON_INJECTED_PATHS_UNNAMED: &str = "InjectedPathsUnnamed";

/// A secret injector: the annotation prefixes that configure it, the directories it mounts
/// into every container by default, and whether the paths it writes can be read from its
/// annotations at all.
struct Injector {
    name: &'static str,
    prefixes: &'static [&'static str],
    defaults: &'static [&'static str],
    paths_elsewhere: bool,
}

/// From each injector's documentation and source (defaults as its code sets them).
const INJECTORS: &[Injector] = &[
    // vault-k8s: an emptyDir at `secret-volume-path` (default /vault/secrets) in every
    // container; `secret-volume-path-<name>` moves one secret; the token with
    // `agent-inject-token` lands there too
    Injector {
        name: "HashiCorp Vault Agent Injector",
        prefixes: &["vault.hashicorp.com/"],
        defaults: &["/vault/secrets"],
        paths_elsewhere: false,
    },
    Injector {
        name: "OpenBao Agent Injector",
        prefixes: &["openbao.openbao.org/"],
        defaults: &["/openbao/secrets"],
        paths_elsewhere: false,
    },
    // consul-template files under `vault-ct-secrets-mount-path` (/vault/secrets in the
    // code, /vault/secret in the docs; /bao likewise for its OpenBao annotations, a guess
    // that costs nothing); `vault:` variables are the environment rule's
    Injector {
        name: "Bank-Vaults secrets webhook",
        prefixes: &[
            "vault.security.banzaicloud.io/",
            "bao.security.banzaicloud.io/",
            "secrets-webhook.security.bank-vaults.io/",
        ],
        defaults: &["/vault", "/bao"],
        paths_elsewhere: false,
    },
    // Secrets Provider push-to-file (/conjur/secrets, `secret-file-path.<group>` relative
    // to it) and the authenticator's access token (/run/conjur)
    Injector {
        name: "CyberArk Conjur Secrets Provider",
        prefixes: &["conjur.org/"],
        defaults: &["/conjur", "/run/conjur"],
        paths_elsewhere: false,
    },
    Injector {
        name: "CyberArk sidecar injector",
        prefixes: &["sidecar-injector.cyberark.com/"],
        defaults: &["/run/conjur"],
        paths_elsewhere: false,
    },
    // /akeyless/secrets, or `location=<path>` in `inject_file[_<name>]`
    Injector {
        name: "Akeyless secrets injector",
        prefixes: &["akeyless/"],
        defaults: &["/akeyless"],
        paths_elsewhere: false,
    },
    // a volume at the directory of each template's destination-path, which the ConfigMap
    // named by `agent-config-map` holds (default /shared/infisical-secrets), and the agent's
    // work directory with its access token
    Injector {
        name: "Infisical Agent Injector",
        prefixes: &["org.infisical.com/"],
        defaults: &["/shared", "/home/.infisical-workdir"],
        paths_elsewhere: true,
    },
    // secrets as variables only (`op run` resolves `op://` values): the environment rule
    // keeps them from commands; /op holds the op binary
    Injector {
        name: "1Password secrets injector",
        prefixes: &["operator.1password.io/"],
        defaults: &[],
        paths_elsewhere: false,
    },
];

/// Webhooks whose `inject` annotations add no secret files to the agent's container (service
/// meshes put their identity in their own proxy container; OpenTelemetry adds code).
const NOT_SECRET_INJECTORS: &[&str] = &[
    "sidecar.istio.io/",
    "linkerd.io/",
    "config.linkerd.io/",
    "sidecar.opentelemetry.io/",
    "instrumentation.opentelemetry.io/",
];

/// Adds to `p` what the pod's injector annotations and labels call for. `sources` are
/// (where, map) pairs: the agent's and the pod template's annotations and labels, all of
/// which a webhook may see on the pod; `annotations` are the agent's own, which carry
/// srt-controller's annotations.
pub fn apply(
    p: &mut Protection,
    sources: &[(&str, &BTreeMap<String, String>)],
    annotations: &BTreeMap<String, String>,
) -> Result<(), Rejection> {
    let named = paths(annotations, ANNOTATION_INJECTED_PATHS)?;
    let mut denied: Vec<String> = Vec::new();
    for (place, map) in sources {
        for (key, value) in *map {
            if key.starts_with("srt-controller.dev/") {
                continue;
            }
            if let Some(injector) = INJECTORS.iter().find(|i| i.prefixes.iter().any(|x| key.starts_with(x))) {
                denied.extend(injector.defaults.iter().map(|d| d.to_string()));
                denied.extend(named_in(key, value));
                if injector.paths_elsewhere && named.is_none() {
                    return Err(unnamed(
                        place,
                        key,
                        &format!("{} writes where its own configuration says", injector.name),
                    ));
                }
            } else if key.to_ascii_lowercase().contains("inject")
                && !NOT_SECRET_INJECTORS.iter().any(|x| key.starts_with(x))
                && named.is_none()
            {
                return Err(unnamed(place, key, "an unknown webhook may add secret files to the pod"));
            }
        }
    }
    denied.extend(named.into_iter().flatten());
    for r in paths(annotations, ANNOTATION_COMMAND_READABLE_PATHS)?.into_iter().flatten() {
        if !denied.iter().any(|d| is_at_or_under(&r, d)) {
            return Err(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!(
                    "annotation {ANNOTATION_COMMAND_READABLE_PATHS}: {r} is not at or below a path this agent's \
                     injector annotations deny (those are: {})",
                    if denied.is_empty() { "none".to_string() } else { denied.join(", ") }
                ),
            });
        }
        p.allow_read.push(r);
    }
    p.deny_read.extend(denied);
    p.deny_read.sort();
    p.deny_read.dedup();
    p.allow_read.sort();
    p.allow_read.dedup();
    Ok(())
}

/// The absolute paths an injector's path annotation names: a key about a path, a location,
/// a mount or a file, whose value holds absolute paths (`/etc/app`), possibly as Akeyless'
/// `secret|location=/path` entries. Relative ones are relative to a default denied anyway.
fn named_in(key: &str, value: &str) -> Vec<String> {
    let name = key.rsplit('/').next().unwrap_or(key).to_ascii_lowercase();
    if !["path", "location", "mount", "file"].iter().any(|w| name.contains(w)) {
        return Vec::new();
    }
    value
        .split([',', '|', ' ', '\n', '\t'])
        .map(|t| t.trim().trim_start_matches("location="))
        .filter(|t| t.starts_with('/'))
        .map(clean_path)
        .collect()
}

fn unnamed(place: &str, key: &str, why: &str) -> Rejection {
    Rejection {
        reason: REASON_INJECTED_PATHS_UNNAMED,
        message: format!(
            "{place}: \"{key}\": {why}, which srt-controller cannot see to keep from the agent's commands; list \
             the paths it adds in the annotation {ANNOTATION_INJECTED_PATHS} (they are denied to commands; an \
             empty value says it adds none), or remove it"
        ),
    }
}

/// The annotation's absolute paths, cleaned; `None` when it is absent.
fn paths(annotations: &BTreeMap<String, String>, key: &str) -> Result<Option<Vec<String>>, Rejection> {
    let Some(value) = annotations.get(key) else { return Ok(None) };
    let mut out = Vec::new();
    for p in value.split([',', ' ', '\n', '\t']).map(str::trim).filter(|s| !s.is_empty()) {
        if !p.starts_with('/') {
            return Err(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!("annotation {key}: \"{p}\" is not an absolute path"),
            });
        }
        out.push(clean_path(p));
    }
    Ok(Some(out))
}

#[cfg(test)]
#[path = "injectors_tests.rs"]
mod tests;
