//! `http_tools`, `sse_tools` and `remote_agents` as kagent v0.9.12's translator writes them:
//! each McpServer tool from its RemoteMCPServer, MCPServer (kmcp) or Service; each Agent tool
//! from the Agent or SandboxAgent it names; headers from `headersFrom` (values and
//! ConfigMap keys; a Secret's value is never read, see [`super::resolve::Problem::SecretValue`]).
//! Cross-namespace references follow kagent's reconciler: allowed only to a
//! RemoteMCPServer or Agent whose `allowedNamespaces` lets the agent's namespace in.

use serde_json::{json, Map, Value};

use super::model;
use super::resolve::{Problem, Resolver};
use crate::crd::{McpServerTool, Tool, TypedReference, ValueRef, ValueSourceType};
use crate::refs::{Kind, ObjRef};

/// kagent's MCP service annotations (ConvertServiceToRemoteMCPServer).
const SVC_PORT: &str = "kagent.dev/mcp-service-port";
const SVC_PATH: &str = "kagent.dev/mcp-service-path";
const SVC_PROTOCOL: &str = "kagent.dev/mcp-service-protocol";

/// The headers of `refs` in `namespace`: inline values and ConfigMap keys.
pub fn headers(
    r: &mut Resolver<'_>,
    namespace: &str,
    refs: &[ValueRef],
    whose: &str,
) -> Result<Map<String, Value>, Problem> {
    let mut out = Map::new();
    for h in refs {
        let value = match (&h.value, &h.value_from) {
            (Some(v), _) => v.clone(),
            (None, Some(from)) if from.type_ == ValueSourceType::Secret => {
                return Err(Problem::SecretValue(format!(
                    "{whose} header {:?} takes its value from Secret {namespace}/{} key {}",
                    h.name, from.name, from.key
                )))
            }
            (None, Some(from)) => {
                r.configmap_key(namespace, &from.name, &from.key, &format!("{whose} header {:?}", h.name))?
            }
            (None, None) => String::new(),
        };
        out.insert(h.name.clone(), json!(value));
    }
    Ok(out)
}

/// Go's time.Duration.Seconds() of a metav1.Duration string ("30s", "5m0s", "1h30m", "500ms").
pub fn duration_seconds(text: &str) -> Option<f64> {
    let mut rest = text;
    let mut total = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let n: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_end..];
    }
    Some(total)
}

fn group_kind(t: &TypedReference) -> (&str, &str) {
    (t.api_group.as_deref().unwrap_or(""), t.kind.as_deref().unwrap_or(""))
}

fn ns_of<'a>(t: &'a TypedReference, agent_ns: &'a str) -> &'a str {
    t.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(agent_ns)
}

/// Whether an object's `allowedNamespaces` lets `from` refer to it (kagent's AllowsNamespace;
/// `Selector` needs the namespace's labels, which srt-controller does not read).
fn allows(obj: &Value, from: &str, target: &str, what: &str) -> Result<(), Problem> {
    if from == target {
        return Ok(());
    }
    match obj["spec"]["allowedNamespaces"]["from"].as_str() {
        Some("All") => Ok(()),
        Some("Selector") => Err(Problem::CrossNamespace(format!(
            "{what} admits namespaces by label selector, which srt-controller does not read (it reads no Namespaces); \
             use allowedNamespaces.from: All, or keep the agent in namespace {target}"
        ))),
        _ => Err(Problem::CrossNamespace(format!(
            "cross-namespace reference to {what} is not allowed from namespace {from} (its allowedNamespaces)"
        ))),
    }
}

/// Adds one McpServer tool to `config` (http_tools or sse_tools).
pub fn mcp(
    r: &mut Resolver<'_>,
    config: &mut Map<String, Value>,
    pod: &mut model::PodAdditions,
    agent_ns: &str,
    tool: &McpServerTool,
    agent_headers: Map<String, Value>,
) -> Result<(), Problem> {
    let target = &tool.target;
    let ns = ns_of(target, agent_ns);
    let (url, protocol, server_headers, timeout, sse_timeout, terminate, tls) = match group_kind(target) {
        ("", "") | ("", "MCPServer") | ("kagent.dev", "MCPServer") => {
            let o = ObjRef::new(Kind::MCPServer, ns, &target.name);
            if ns != agent_ns {
                return Err(Problem::CrossNamespace(format!(
                    "cross-namespace reference to MCPServer {ns}/{} is not allowed from namespace {agent_ns}: MCPServer does not support cross-namespace references",
                    target.name
                )));
            }
            let s = r.require(&o)?;
            let port = s["spec"]["deployment"]["port"].as_i64().unwrap_or(0);
            if port == 0 {
                return Err(Problem::InvalidToolServer(format!(
                    "cannot determine port for MCP server {}",
                    target.name
                )));
            }
            let timeout = s["spec"]["timeout"].as_str().and_then(duration_seconds).or(Some(30.0));
            (
                format!("http://{}.{ns}:{port}/mcp", target.name),
                "STREAMABLE_HTTP".to_string(),
                Map::new(),
                timeout,
                None,
                None,
                None,
            )
        }
        ("", "RemoteMCPServer") | ("kagent.dev", "RemoteMCPServer") => {
            let o = ObjRef::new(Kind::RemoteMCPServer, ns, &target.name);
            let s = r.require(&o)?.clone();
            allows(&s, agent_ns, ns, &format!("RemoteMCPServer {ns}/{}", target.name))?;
            let refs: Vec<ValueRef> = serde_json::from_value(s["spec"]["headersFrom"].clone()).unwrap_or_default();
            let h = headers(r, ns, &refs, &format!("RemoteMCPServer {ns}/{}", target.name))?;
            let spec = &s["spec"];
            (
                spec["url"].as_str().unwrap_or_default().to_string(),
                spec["protocol"].as_str().unwrap_or("STREAMABLE_HTTP").to_string(),
                h,
                spec["timeout"].as_str().and_then(duration_seconds),
                spec["sseReadTimeout"].as_str().and_then(duration_seconds),
                spec["terminateOnClose"].as_bool(),
                spec.get("tls").cloned(),
            )
        }
        ("", "Service") | ("core", "Service") => {
            if ns != agent_ns {
                return Err(Problem::CrossNamespace(format!(
                    "cross-namespace reference to Service {ns}/{} is not allowed from namespace {agent_ns}: Service does not support cross-namespace references",
                    target.name
                )));
            }
            let svc = r.require(&ObjRef::new(Kind::Service, ns, &target.name))?.clone();
            let (url, protocol) = service_url(&svc, &target.name, ns)?;
            (url, protocol, Map::new(), None, None, None, None)
        }
        (g, k) => return Err(Problem::InvalidToolServer(format!("unknown tool server type: {g}/{k}"))),
    };
    let mut h = server_headers;
    h.extend(agent_headers);
    let mut params = Map::new();
    params.insert("url".into(), json!(url));
    params.insert("headers".into(), Value::Object(h));
    if let Some(t) = timeout {
        params.insert("timeout".into(), model::go_float(t));
    }
    if let Some(t) = sse_timeout {
        params.insert("sse_read_timeout".into(), model::go_float(t));
    }
    let sse = protocol == "SSE";
    if let (Some(t), false) = (terminate, sse) {
        params.insert("terminate_on_close".into(), json!(t));
    }
    model::tls(tls.as_ref(), &mut params, pod);
    let mut entry = Map::new();
    entry.insert("params".into(), Value::Object(params));
    for (k, v) in [
        ("tools", &tool.tool_names),
        ("allowed_headers", &tool.allowed_headers),
        ("require_approval", &tool.require_approval),
    ] {
        if !v.is_empty() {
            entry.insert(k.into(), json!(v));
        }
    }
    let key = if sse { "sse_tools" } else { "http_tools" };
    if let Value::Array(list) = config.entry(key).or_insert_with(|| json!([])) {
        list.push(Value::Object(entry));
    }
    Ok(())
}

/// kagent's ConvertServiceToRemoteMCPServer.
fn service_url(svc: &Value, name: &str, ns: &str) -> Result<(String, String), Problem> {
    let ann = &svc["metadata"]["annotations"];
    let mut port: i64 = 0;
    if let Some(p) = ann[SVC_PORT].as_str() {
        port = p.parse().map_err(|e| {
            Problem::InvalidToolServer(format!("port in annotation {SVC_PORT} is not a valid integer: {e}"))
        })?;
    }
    let protocol = match ann[SVC_PROTOCOL].as_str() {
        Some("SSE") => "SSE",
        _ => "STREAMABLE_HTTP",
    };
    let path = ann[SVC_PATH].as_str().unwrap_or("/mcp");
    if port == 0 {
        let ports = svc["spec"]["ports"].as_array().cloned().unwrap_or_default();
        if ports.len() == 1 {
            port = ports[0]["port"].as_i64().unwrap_or(0);
        } else if let Some(p) =
            ports.iter().find(|p| p["appProtocol"].as_str().is_some_and(|a| a.eq_ignore_ascii_case("mcp")))
        {
            port = p["port"].as_i64().unwrap_or(0);
        }
    }
    if port == 0 {
        return Err(Problem::InvalidToolServer(format!("no port found for service {name} with protocol {protocol}")));
    }
    Ok((format!("http://{name}.{ns}:{port}{path}"), protocol.to_string()))
}

/// Adds one Agent tool to `remote_agents`.
pub fn agent(
    r: &mut Resolver<'_>,
    config: &mut Map<String, Value>,
    agent_ns: &str,
    agent_name: &str,
    t: &TypedReference,
    headers: Map<String, Value>,
) -> Result<(), Problem> {
    let ns = ns_of(t, agent_ns);
    let kind = match t.kind.as_deref().unwrap_or("") {
        "" | "Agent" => Kind::Agent,
        "SandboxAgent" => Kind::SandboxAgent,
        other => {
            return Err(Problem::InvalidToolServer(format!(
                "unsupported agent tool kind {other:?} for agent {ns}/{}",
                t.name
            )))
        }
    };
    if kind == Kind::SandboxAgent && ns == agent_ns && t.name == agent_name {
        return Err(Problem::InvalidToolServer(format!(
            "agent tool cannot be used to reference itself, {ns}/{agent_name}"
        )));
    }
    let target = r.require(&ObjRef::new(kind, ns, &t.name))?.clone();
    allows(&target, agent_ns, ns, &format!("{} {ns}/{}", kind.name(), t.name))?;
    // kagent's toolAgentURL: an Agent's Service; a SandboxAgent srt-controller runs has the
    // headless Service agent-sandbox names after its Sandbox (kagent would route through
    // its controller's /api/a2a-sandboxes proxy instead).
    let url = format!("http://{}.{ns}:8080", t.name);
    let mut entry = Map::new();
    entry.insert("name".into(), json!(format!("{ns}/{}", t.name).replace('-', "_").replace('/', "__NS__")));
    entry.insert("url".into(), json!(url));
    if !headers.is_empty() {
        entry.insert("headers".into(), Value::Object(headers));
    }
    if let Some(d) = target["spec"]["description"].as_str().filter(|d| !d.is_empty()) {
        entry.insert("description".into(), json!(d));
    }
    if let Value::Array(list) = config.entry("remote_agents").or_insert_with(|| json!([])) {
        list.push(Value::Object(entry));
    }
    Ok(())
}

/// The Agent tools of a tool agent's spec, for kagent's cycle check.
pub fn agent_tools(spec: &Value) -> Vec<TypedReference> {
    spec["declarative"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value::<Tool>(t.clone()).ok())
        .filter_map(|t| t.agent)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(duration_seconds("30s"), Some(30.0));
        assert_eq!(duration_seconds("5m0s"), Some(300.0));
        assert_eq!(duration_seconds("1h30m"), Some(5400.0));
        assert_eq!(duration_seconds("500ms"), Some(0.5));
        assert_eq!(duration_seconds("soon"), None);
    }
}
