use super::*;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// What `apply` makes of the pod template annotations `pod` with the agent's `agent`.
fn run(pod: &[(&str, &str)], agent: &[(&str, &str)]) -> Result<Protection, Rejection> {
    let (pod, agent) = (map(pod), map(agent));
    let mut p = Protection { deny_read: vec!["/config".into(), "/var/run/secrets".into()], ..Default::default() };
    apply(&mut p, &[("metadata.annotations", &agent), ("deployment.annotations", &pod)], &agent)?;
    Ok(p)
}

#[test]
fn vaults_default_and_every_path_its_annotations_name_are_denied() {
    let p = run(
        &[
            ("vault.hashicorp.com/agent-inject", "true"),
            ("vault.hashicorp.com/role", "agent"),
            ("vault.hashicorp.com/agent-inject-secret-db", "database/creds/app"),
            ("vault.hashicorp.com/agent-inject-file-db", "db/creds.json"),
            ("vault.hashicorp.com/secret-volume-path", "/etc/app/secrets/"),
            ("vault.hashicorp.com/secret-volume-path-db", "/data/../srv/db"),
            ("vault.hashicorp.com/auth-path", "auth/kubernetes"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(p.deny_read, ["/config", "/etc/app/secrets", "/srv/db", "/var/run/secrets", "/vault/secrets"]);
    assert!(p.allow_read.is_empty());
    // present at all, even turned off: fail closed (the webhook's default is the annotation's)
    let off = run(&[("vault.hashicorp.com/agent-inject", "false")], &[]).unwrap();
    assert!(off.deny_read.contains(&"/vault/secrets".to_string()), "{:?}", off.deny_read);
}

#[test]
fn each_known_injector_denies_its_directories() {
    for (key, value, want) in [
        ("openbao.openbao.org/agent-inject", "true", "/openbao/secrets"),
        ("vault.security.banzaicloud.io/vault-ct-configmap", "ct", "/vault"),
        ("secrets-webhook.security.bank-vaults.io/vault-ct-secrets-mount-path", "/etc/ct", "/etc/ct"),
        ("conjur.org/secrets-destination", "file", "/conjur"),
        ("conjur.org/secret-file-path.app", "/opt/conjur/app.yaml", "/opt/conjur/app.yaml"),
        ("sidecar-injector.cyberark.com/inject", "yes", "/run/conjur"),
        ("akeyless/enabled", "true", "/akeyless"),
        ("akeyless/inject_file", "/K8s/db|location=/tmp/db,/K8s/api|location=/srv/api", "/srv/api"),
        ("akeyless/inject_file_s1", "/K8s/x|jq=.a|location=/tmp/x", "/tmp/x"),
    ] {
        let p = run(&[(key, value)], &[]).unwrap_or_else(|e| panic!("{key}: {}", e.message));
        assert!(p.deny_read.contains(&want.to_string()), "{key}: {:?}", p.deny_read);
    }
    // 1Password's injector resolves variables only: nothing to deny, nothing refused
    let p = run(&[("operator.1password.io/inject", "kagent")], &[]).unwrap();
    assert_eq!(p.deny_read, ["/config", "/var/run/secrets"]);
}

#[test]
fn paths_srt_controller_cannot_tell_must_be_named() {
    // Infisical writes where the templates in its ConfigMap say
    let r =
        run(&[("org.infisical.com/inject", "true"), ("org.infisical.com/agent-config-map", "cfg")], &[]).unwrap_err();
    assert_eq!(r.reason, REASON_INJECTED_PATHS_UNNAMED);
    assert!(r.message.contains("deployment.annotations: \"org.infisical.com/agent-config-map\""), "{}", r.message);
    assert!(r.message.contains(ANNOTATION_INJECTED_PATHS), "{}", r.message);
    let p =
        run(&[("org.infisical.com/inject", "true")], &[(ANNOTATION_INJECTED_PATHS, "/app/secrets, /etc/infisical")])
            .unwrap();
    for want in ["/app/secrets", "/etc/infisical", "/shared", "/home/.infisical-workdir"] {
        assert!(p.deny_read.contains(&want.to_string()), "{want}: {:?}", p.deny_read);
    }

    // an unknown webhook, on the pod template or on the agent
    for (pod, agent) in [
        (vec![("secrets.example.com/inject", "true")], vec![]),
        (vec![], vec![("example.com/Injector-Enabled", "yes")]),
    ] {
        let r = run(&pod, &agent).unwrap_err();
        assert_eq!(r.reason, REASON_INJECTED_PATHS_UNNAMED, "{}", r.message);
    }
    let mut agent = vec![("example.com/injector-enabled", "yes")];
    agent.push((ANNOTATION_INJECTED_PATHS, ""));
    let p = run(&[], &agent).unwrap();
    assert_eq!(p.deny_read, ["/config", "/var/run/secrets"], "an empty list: it adds no files");

    // service meshes and OpenTelemetry inject no secret files into the agent's container
    for key in ["sidecar.istio.io/inject", "linkerd.io/inject", "instrumentation.opentelemetry.io/inject-python"] {
        assert!(run(&[(key, "true")], &[]).is_ok(), "{key}");
    }
}

#[test]
fn named_paths_must_be_absolute_and_readable_ones_must_have_been_denied() {
    let r = run(&[], &[(ANNOTATION_INJECTED_PATHS, "vault/secrets")]).unwrap_err();
    assert_eq!(r.reason, REASON_INVALID_SPEC);
    assert!(r.message.contains("\"vault/secrets\" is not an absolute path"), "{}", r.message);

    let vault = [("vault.hashicorp.com/agent-inject", "true")];
    let p = run(&vault, &[(ANNOTATION_COMMAND_READABLE_PATHS, "/vault/secrets/ca.pem")]).unwrap();
    assert_eq!(p.allow_read, ["/vault/secrets/ca.pem"]);
    assert!(p.deny_read.contains(&"/vault/secrets".to_string()));
    for other in ["/etc", "/vault", "/var/run/secrets/tokens"] {
        let r = run(&vault, &[(ANNOTATION_COMMAND_READABLE_PATHS, other)]).unwrap_err();
        assert_eq!(r.reason, REASON_INVALID_SPEC, "{other}");
        assert!(r.message.contains("those are: /vault/secrets"), "{other}: {}", r.message);
    }
}

#[test]
fn srt_controllers_own_annotations_are_not_injectors() {
    let p = run(&[], &[(ANNOTATION_INJECTED_PATHS, "/x"), ("srt-controller.dev/command-env", "A")]).unwrap();
    assert!(p.deny_read.contains(&"/x".to_string()));
}
