//! `spec.skills` as kagent v0.9.12 acts on it: a `skills-init` init container (kagent's
//! image, configurable) fetches OCI and git skills into the `/skills` emptyDir, reading a
//! JSON config from the ConfigMap `<agent>-skills-init`; the agent container mounts `/skills`
//! read-only and gets `KAGENT_SKILLS_FOLDER=/skills`. The directory names, the validation of
//! names and subpaths and the config are kagent's.

use serde_json::{json, Value};

use crate::crd::{GitRepo, SandboxAgentSpec};

/// Where skills go, in both containers.
pub const SKILLS_DIR: &str = "/skills";
pub const SKILLS_VOLUME: &str = "kagent-skills";
/// Where the skills-init binary reads its config (`config.json`).
pub const INIT_CONFIG_DIR: &str = "/etc/kagent/skills-init";
pub const INIT_CONFIG_KEY: &str = "config.json";
/// The key of the skills-init config in the agent's settings ConfigMap (mounted as
/// `INIT_CONFIG_DIR/INIT_CONFIG_KEY`; kagent keeps it in a ConfigMap of its own).
pub const INIT_CONFIG_DATA_KEY: &str = "skills-init.json";
pub const INIT_CONFIG_VOLUME: &str = "skills-init-config";
/// Where the git credentials Secret is mounted.
pub const GIT_AUTH_DIR: &str = "/git-auth";
pub const GIT_AUTH_VOLUME: &str = "git-auth";
/// Where each image pull Secret is mounted, one directory per Secret.
pub const DOCKER_SECRETS_DIR: &str = "/docker-secrets";
pub const INIT_CONTAINER_NAME: &str = "skills-init";

/// kagent's gitSkillName: `name`, else the last segment of `path`, else the repository
/// name (URL path without `.git`).
pub fn git_skill_name(r: &GitRepo) -> String {
    if let Some(n) = r.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    if let Some(p) = r.path.as_deref().map(|p| p.trim().trim_matches('/')).filter(|p| !p.is_empty()) {
        return p.rsplit('/').next().unwrap_or(p).to_string();
    }
    // url.Parse's path: after the scheme and host, before a query or fragment.
    let url = r.url.as_str();
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or(""),
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = if path.is_empty() { url } else { path };
    let path = path.strip_suffix(".git").unwrap_or(path);
    let base = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if base.is_empty() {
        "/".to_string()
    } else {
        base.to_string()
    }
}

/// kagent's ociSkillName: the image's last path segment without tag or digest.
pub fn oci_skill_name(image: &str) -> String {
    let r = image.rsplit_once('@').map(|(a, _)| a).unwrap_or(image);
    let r = match (r.rfind(':'), r.rfind('/')) {
        (Some(c), Some(s)) if c > s => &r[..c],
        (Some(c), None) => &r[..c],
        _ => r,
    };
    r.rsplit('/').next().unwrap_or(r).to_string()
}

/// The skill directory names of an agent (for prompt templates' `.SkillNames`).
pub fn names(spec: &SandboxAgentSpec) -> Vec<String> {
    let Some(s) = &spec.skills else { return Vec::new() };
    s.refs
        .iter()
        .map(|r| oci_skill_name(r))
        .chain(s.git_refs.iter().map(git_skill_name))
        .filter(|n| !n.is_empty())
        .collect()
}

fn valid_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("skill name is empty".into());
    }
    if name == "." || name == ".." {
        return Err(format!("skill name {name:?} is not a valid directory name"));
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-') {
        return Err(format!("skill name {name:?} must match ^[A-Za-z0-9._-]+$"));
    }
    Ok(())
}

/// Go's filepath.IsLocal for a subpath: relative, no `..` segment, not empty after cleaning.
fn valid_subpath(p: &str) -> Result<(), String> {
    let local = !p.starts_with('/') && p.split('/').all(|seg| seg != "..") && !p.contains('\0');
    if p.is_empty() || local {
        Ok(())
    } else {
        Err(format!("skill subPath must be a relative path without '..' segments, got {p:?}"))
    }
}

/// The JSON config the skills-init binary reads (kagent's prepareSkillsInitConfig), or why
/// the skills cannot be fetched as written.
pub fn init_config(spec: &SandboxAgentSpec) -> Result<Option<Value>, String> {
    let Some(s) = &spec.skills else { return Ok(None) };
    if s.refs.is_empty() && s.git_refs.is_empty() {
        return Ok(None);
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut git = Vec::new();
    let mut ssh_hosts: Vec<(String, String)> = Vec::new();
    for r in &s.git_refs {
        let sub = r.path.as_deref().unwrap_or("").trim_end_matches('/');
        valid_subpath(sub)?;
        let gitref = if r.r#ref.is_empty() { "main" } else { r.r#ref.as_str() };
        let name = git_skill_name(r);
        valid_name(&name).map_err(|e| format!("git skill {:?}: {e}", r.url))?;
        if !seen.insert(name.clone()) {
            return Err(format!("duplicate skill directory name {name:?}"));
        }
        if s.git_auth_secret_ref.is_some() {
            if let Some(h) = ssh_host(&r.url) {
                if !ssh_hosts.contains(&h) {
                    ssh_hosts.push(h);
                }
            }
        }
        let full = gitref.len() == 40 && gitref.bytes().all(|b| b.is_ascii_hexdigit());
        let mut g = json!({"url": r.url, "ref": gitref, "dest": format!("{SKILLS_DIR}/{name}")});
        if full {
            g["full"] = json!(true);
        }
        if !sub.is_empty() {
            g["subPath"] = json!(sub);
        }
        git.push(g);
    }
    let mut oci = Vec::new();
    for image in &s.refs {
        let name = oci_skill_name(image);
        valid_name(&name).map_err(|e| format!("oci skill {image:?}: {e}"))?;
        if !seen.insert(name.clone()) {
            return Err(format!("duplicate skill directory name {name:?}"));
        }
        oci.push(json!({"image": image, "dest": format!("{SKILLS_DIR}/{name}")}));
    }
    ssh_hosts.sort();
    let mut cfg = serde_json::Map::new();
    if s.git_auth_secret_ref.is_some() {
        cfg.insert("authMountPath".into(), json!(GIT_AUTH_DIR));
    }
    if !git.is_empty() {
        cfg.insert("gitRefs".into(), json!(git));
    }
    if !oci.is_empty() {
        cfg.insert("ociRefs".into(), json!(oci));
    }
    if s.insecure_skip_verify {
        cfg.insert("insecureOci".into(), json!(true));
    }
    if !ssh_hosts.is_empty() {
        let hosts: Vec<Value> = ssh_hosts
            .iter()
            .map(|(h, p)| if p.is_empty() { json!({"host": h}) } else { json!({"host": h, "port": p}) })
            .collect();
        cfg.insert("sshHosts".into(), json!(hosts));
    }
    let pulls: Vec<&str> = s.image_pull_secrets.iter().map(|p| p.name.as_str()).collect();
    if !pulls.is_empty() {
        cfg.insert("imagePullSecrets".into(), json!(pulls));
    }
    Ok(Some(Value::Object(cfg)))
}

/// kagent's gitSSHHost: the host (and non-default port) of an SSH git URL.
fn ssh_host(url: &str) -> Option<(String, String)> {
    let host_ok = |h: &str| !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if let Some((scheme, rest)) = url.split_once("://") {
        if scheme != "ssh" && scheme != "git+ssh" {
            return None;
        }
        let authority = rest.split('/').next().unwrap_or("");
        let hostport = authority.rsplit('@').next().unwrap_or("");
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => (hostport, ""),
        };
        let port = if port == "22" { "" } else { port };
        if !host_ok(host) || !port.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return Some((host.to_string(), port.to_string()));
    }
    // scp-like: [user@]host:path
    let (left, _) = url.split_once(':')?;
    let host = left.rsplit('@').next().unwrap_or(left);
    if left.contains('/') || !host_ok(host) {
        return None;
    }
    Some((host.to_string(), String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(url: &str, path: Option<&str>, name: Option<&str>) -> GitRepo {
        GitRepo { url: url.into(), r#ref: "main".into(), path: path.map(String::from), name: name.map(String::from) }
    }

    #[test]
    fn skill_names_as_kagent_derives_them() {
        assert_eq!(git_skill_name(&repo("https://github.com/org/skills.git", None, None)), "skills");
        assert_eq!(git_skill_name(&repo("https://github.com/org/skills.git", Some("tools/fetch/"), None)), "fetch");
        assert_eq!(git_skill_name(&repo("https://github.com/org/skills", None, Some("mine"))), "mine");
        assert_eq!(git_skill_name(&repo("git@github.com:org/repo.git", None, None)), "repo");
        assert_eq!(git_skill_name(&repo("file:///srv/skills.git?x=1", None, None)), "skills");
        assert_eq!(oci_skill_name("ghcr.io/org/fetch-url-skill:latest"), "fetch-url-skill");
        assert_eq!(oci_skill_name("localhost:5000/skill@sha256:abc"), "skill");
    }

    #[test]
    fn bad_names_and_subpaths_are_refused() {
        let spec =
            |refs: serde_json::Value| -> SandboxAgentSpec { serde_json::from_value(json!({"skills": refs})).unwrap() };
        assert!(init_config(&spec(json!({"gitRefs": [{"url": "https://x/a.git", "path": "../etc"}]}))).is_err());
        assert!(init_config(&spec(json!({"gitRefs": [{"url": "https://x/a.git", "name": "a/b"}]}))).is_err());
        let e = init_config(&spec(json!({"refs": ["r/a:1"], "gitRefs": [{"url": "https://x/a.git"}]}))).unwrap_err();
        assert!(e.contains("duplicate skill directory name \"a\""), "{e}");
        let cfg = init_config(&spec(json!({"gitAuthSecretRef": {"name": "git"},
            "gitRefs": [{"url": "ssh://git@example.com:2222/o/r.git", "ref": "0123456789abcdef0123456789abcdef01234567"}]})))
        .unwrap()
        .unwrap();
        assert_eq!(cfg["authMountPath"], "/git-auth");
        assert_eq!(cfg["sshHosts"], json!([{"host": "example.com", "port": "2222"}]));
        assert_eq!(cfg["gitRefs"][0]["full"], true);
        assert_eq!(cfg["gitRefs"][0]["dest"], "/skills/r");
    }
}
