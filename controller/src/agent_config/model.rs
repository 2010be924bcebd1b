//! A ModelConfig as kagent v0.9.12's translator turns it into `config.json`'s `model` and the
//! agent container's environment and volumes: the API key as an environment variable whose
//! value comes from the ModelConfig's Secret (`secretKeyRef`; the Secret is never read),
//! provider settings, default headers and TLS.

use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, SecretKeySelector, SecretVolumeSource, Volume, VolumeMount};
use serde_json::{json, Map, Value};

use super::resolve::Problem;

/// What a model adds to the pod besides config.json.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodAdditions {
    pub env: Vec<EnvVar>,
    pub volumes: Vec<Volume>,
    pub mounts: Vec<VolumeMount>,
}

impl PodAdditions {
    /// kagent's mergeDeploymentData: what `other` adds that is not there yet (env and
    /// volumes by name, mounts by name and path).
    pub fn merge(&mut self, other: PodAdditions) {
        for e in other.env {
            if !self.env.iter().any(|x| x.name == e.name) {
                self.env.push(e);
            }
        }
        for v in other.volumes {
            if !self.volumes.iter().any(|x| x.name == v.name) {
                self.volumes.push(v);
            }
        }
        for m in other.mounts {
            if !self.mounts.iter().any(|x| x.name == m.name && x.mount_path == m.mount_path) {
                self.mounts.push(m);
            }
        }
    }
}

fn plain(name: &str, value: &str) -> EnvVar {
    EnvVar { name: name.into(), value: Some(value.into()), ..Default::default() }
}

/// An env var whose value is a key of a Secret, as the pod reads it.
pub fn from_secret(name: &str, secret: &str, key: &str, optional: bool) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: key.into(),
                optional: optional.then_some(true),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn secret_volume(name: &str, secret: &str, mode: Option<i32>) -> Volume {
    Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource { secret_name: Some(secret.into()), default_mode: mode, ..Default::default() }),
        ..Default::default()
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// Go's strconv.ParseFloat on a string field; kagent leaves the field out when it fails.
fn float(v: &Value, k: &str) -> Option<Value> {
    let text = s(v, k);
    text.parse::<f64>().ok().filter(|f| f.is_finite()).map(go_float)
}

/// A float64 as Go's encoding/json writes it: without a fraction when it has none (30, not
/// 30.0).
pub fn go_float(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

fn positive(v: &Value, k: &str) -> Option<Value> {
    v.get(k).and_then(Value::as_i64).filter(|n| *n > 0).map(Value::from)
}

const TLS_CA_ROOT: &str = "/etc/ssl/certs/custom";

/// kagent's tlsCAPaths: a volume named after the Secret (hashed when that is no DNS label).
fn tls_ca_paths(secret: &str, key: &str) -> (String, String, String) {
    let candidate = format!("tls-ca-{secret}");
    let label_ok = candidate.len() <= 63
        && candidate.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !candidate.ends_with('-');
    let id = if label_ok {
        secret.to_string()
    } else {
        use sha2::Digest;
        let h = sha2::Sha256::digest(secret.as_bytes());
        h.iter().take(4).map(|b| format!("{b:02x}")).collect()
    };
    let mount = format!("{TLS_CA_ROOT}/{id}");
    (format!("tls-ca-{id}"), mount.clone(), format!("{mount}/{key}"))
}

/// The three TLS fields every TLS-aware wire type carries, and the CA volume (kagent's
/// deriveTLSFields + addTLSConfiguration). An all-zero `tls` writes nothing.
pub fn tls(tls: Option<&Value>, into: &mut Map<String, Value>, pod: &mut PodAdditions) {
    let Some(t) = tls.filter(|t| t.as_object().is_some_and(|o| !o.is_empty())) else { return };
    let disable_verify = t.get("disableVerify").and_then(Value::as_bool).unwrap_or(false);
    let disable_system = t.get("disableSystemCAs").and_then(Value::as_bool).unwrap_or(false);
    let (secret, key) = (s(t, "caCertSecretRef"), s(t, "caCertSecretKey"));
    if !disable_verify && !disable_system && secret.is_empty() && key.is_empty() {
        return;
    }
    into.insert("tls_insecure_skip_verify".into(), json!(disable_verify));
    into.insert("tls_disable_system_cas".into(), json!(disable_system));
    if !secret.is_empty() && !key.is_empty() {
        let (volume, mount, path) = tls_ca_paths(secret, key);
        into.insert("tls_ca_cert_path".into(), json!(path));
        pod.merge(PodAdditions {
            volumes: vec![secret_volume(&volume, secret, Some(0o444))],
            mounts: vec![VolumeMount { name: volume, mount_path: mount, read_only: Some(true), ..Default::default() }],
            ..Default::default()
        });
    }
}

/// `config.json`'s `model` for ModelConfig `name` (`mc` is the stored object).
pub fn translate(name: &str, mc: &Value) -> Result<(Value, PodAdditions), Problem> {
    let spec = &mc["spec"];
    let provider = s(spec, "provider");
    let key_secret = s(spec, "apiKeySecret");
    let key_key = s(spec, "apiKeySecretKey");
    let passthrough = spec.get("apiKeyPassthrough").and_then(Value::as_bool).unwrap_or(false);
    let mut pod = PodAdditions::default();
    let mut m = Map::new();
    m.insert("model".into(), json!(s(spec, "model")));
    if let Some(h) = spec.get("defaultHeaders").and_then(Value::as_object).filter(|h| !h.is_empty()) {
        m.insert("headers".into(), Value::Object(h.clone()));
    }
    tls(spec.get("tls"), &mut m, &mut pod);
    let sub = |k: &str| spec.get(k).filter(|v| v.is_object());
    let required =
        |k: &str| sub(k).ok_or_else(|| Problem::invalid_model(name, format!("provider {provider} needs spec.{k}")));
    let api_key = |env: &str, pod: &mut PodAdditions| {
        pod.env.push(from_secret(env, key_secret, key_key, false));
    };
    let put = |m: &mut Map<String, Value>, k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    let type_ = match provider {
        "OpenAI" => {
            let exchange = sub("openAI").and_then(|o| o.get("tokenExchange")).filter(|t| t.is_object());
            if !passthrough && exchange.is_none() && !key_secret.is_empty() {
                api_key("OPENAI_API_KEY", &mut pod);
            }
            let o = sub("openAI").cloned().unwrap_or(json!({}));
            m.insert("base_url".into(), json!(s(&o, "baseUrl")));
            put(&mut m, "temperature", float(&o, "temperature"));
            put(&mut m, "top_p", float(&o, "topP"));
            put(&mut m, "frequency_penalty", float(&o, "frequencyPenalty"));
            put(&mut m, "presence_penalty", float(&o, "presencePenalty"));
            put(&mut m, "max_tokens", positive(&o, "maxTokens"));
            for (k, out) in [("seed", "seed"), ("n", "n"), ("timeout", "timeout")] {
                put(&mut m, out, o.get(k).filter(|v| v.is_i64()).cloned());
            }
            put(&mut m, "reasoning_effort", o.get("reasoningEffort").filter(|v| v.is_string()).cloned());
            if !s(&o, "organization").is_empty() {
                pod.env.push(plain("OPENAI_ORGANIZATION", s(&o, "organization")));
            }
            if let Some(x) = exchange.filter(|x| s(x, "type") == "GDCHServiceAccount") {
                if let Some(g) = x.get("gdchServiceAccount").filter(|g| g.is_object()) {
                    m.insert(
                        "token_exchange".into(),
                        json!({"type": "GDCHServiceAccount", "gdch_service_account": {
                            "service_account_path": format!("/gdch-creds/{key_key}"), "audience": s(g, "audience")}}),
                    );
                    pod.volumes.push(secret_volume("gdch-creds", key_secret, Some(0o444)));
                    pod.mounts.push(VolumeMount {
                        name: "gdch-creds".into(),
                        mount_path: "/gdch-creds".into(),
                        read_only: Some(true),
                        ..Default::default()
                    });
                }
            }
            "openai"
        }
        "Anthropic" => {
            if !passthrough && !key_secret.is_empty() {
                api_key("ANTHROPIC_API_KEY", &mut pod);
            }
            if let Some(a) = sub("anthropic") {
                put(&mut m, "base_url", Some(json!(s(a, "baseUrl"))).filter(|b| b != ""));
                put(&mut m, "temperature", float(a, "temperature"));
                put(&mut m, "top_p", float(a, "topP"));
                put(&mut m, "max_tokens", positive(a, "maxTokens"));
                put(&mut m, "top_k", positive(a, "topK"));
            }
            "anthropic"
        }
        "AzureOpenAI" => {
            let a = required("azureOpenAI")?;
            if !passthrough {
                api_key("AZURE_OPENAI_API_KEY", &mut pod);
            }
            for (k, env) in [
                ("azureAdToken", "AZURE_AD_TOKEN"),
                ("apiVersion", "OPENAI_API_VERSION"),
                ("azureEndpoint", "AZURE_OPENAI_ENDPOINT"),
            ] {
                if !s(a, k).is_empty() {
                    pod.env.push(plain(env, s(a, k)));
                }
            }
            m.insert("model".into(), json!(s(a, "azureDeployment")));
            put(&mut m, "temperature", float(a, "temperature"));
            put(&mut m, "top_p", float(a, "topP"));
            put(&mut m, "max_tokens", a.get("maxTokens").filter(|v| v.is_i64()).cloned());
            "azure_openai"
        }
        "GeminiVertexAI" | "AnthropicVertexAI" => {
            let k = if provider == "GeminiVertexAI" { "geminiVertexAI" } else { "anthropicVertexAI" };
            let g = required(k)?;
            pod.env.push(plain("GOOGLE_CLOUD_PROJECT", s(g, "projectID")));
            pod.env.push(plain("GOOGLE_CLOUD_LOCATION", s(g, "location")));
            if provider == "GeminiVertexAI" {
                pod.env.push(plain("GOOGLE_GENAI_USE_VERTEXAI", "true"));
            }
            if !key_secret.is_empty() {
                pod.env.push(plain("GOOGLE_APPLICATION_CREDENTIALS", &format!("/creds/{key_key}")));
                pod.volumes.push(secret_volume("google-creds", key_secret, None));
                pod.mounts.push(VolumeMount {
                    name: "google-creds".into(),
                    mount_path: "/creds".into(),
                    ..Default::default()
                });
            }
            if provider == "GeminiVertexAI" {
                "gemini_vertex_ai"
            } else {
                "gemini_anthropic"
            }
        }
        "Ollama" => {
            let o = required("ollama")?;
            let host = s(o, "host");
            let host = if host.starts_with("http://") || host.starts_with("https://") {
                host.to_string()
            } else {
                format!("http://{host}")
            };
            pod.env.push(plain("OLLAMA_API_BASE", &host));
            put(&mut m, "options", o.get("options").filter(|v| v.as_object().is_some_and(|o| !o.is_empty())).cloned());
            "ollama"
        }
        "Gemini" => {
            api_key("GOOGLE_API_KEY", &mut pod);
            "gemini"
        }
        "Bedrock" => {
            let b = required("bedrock")?;
            pod.env.push(plain("AWS_REGION", s(b, "region")));
            if !passthrough && !key_secret.is_empty() {
                // kagent reads the Secret to choose bearer token or access keys; srt-controller
                // never reads it and references all four, optional: the pod gets whichever
                // keys the Secret has.
                for env in
                    ["AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
                {
                    pod.env.push(from_secret(env, key_secret, env, true));
                }
            }
            put(&mut m, "region", Some(json!(s(b, "region"))).filter(|r| r != ""));
            put(
                &mut m,
                "additional_model_request_fields",
                b.get("additionalModelRequestFields").filter(|v| v.is_object()).cloned(),
            );
            put(&mut m, "prompt_caching", b.get("promptCaching").filter(|v| *v == &json!(true)).cloned());
            put(&mut m, "cache_ttl", Some(json!(s(b, "cacheTTL"))).filter(|c| c != ""));
            "bedrock"
        }
        "SAPAICore" => {
            let c = required("sapAICore")?;
            if !passthrough && !key_secret.is_empty() {
                pod.env.push(from_secret("SAP_AI_CORE_CLIENT_ID", key_secret, "client_id", false));
                pod.env.push(from_secret("SAP_AI_CORE_CLIENT_SECRET", key_secret, "client_secret", false));
            }
            m.insert("base_url".into(), json!(s(c, "baseUrl")));
            put(&mut m, "resource_group", Some(json!(s(c, "resourceGroup"))).filter(|r| r != ""));
            put(&mut m, "auth_url", Some(json!(s(c, "authUrl"))).filter(|r| r != ""));
            "sap_ai_core"
        }
        other => return Err(Problem::invalid_model(name, format!("unsupported model provider: {other:?}"))),
    };
    m.insert("type".into(), json!(type_));
    // kagent sets api_key_passthrough on every provider but Gemini.
    if passthrough && provider != "Gemini" {
        m.insert("api_key_passthrough".into(), json!(true));
    }
    Ok((Value::Object(m), pod))
}

/// kagent's ModelToEmbeddingConfig: `{provider, model, base_url}` of a translated model.
pub fn embedding(model: &Value) -> Value {
    let mut e = json!({"provider": model["type"], "model": model["model"]});
    if let Some(b) = model.get("base_url").and_then(Value::as_str).filter(|b| !b.is_empty()) {
        e["base_url"] = json!(b);
    }
    e
}
