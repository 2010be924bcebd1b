use serde_json::json;

use super::*;

fn spec(yaml: &str) -> SandboxAgentSpec {
    yaml_serde::from_str(yaml).unwrap()
}

fn lookup(objects: &[serde_json::Value]) -> Lookup {
    let mut l = Lookup::complete();
    for o in objects {
        let kind = Kind::of(o["apiVersion"].as_str().unwrap(), o["kind"].as_str().unwrap()).unwrap();
        let r =
            ObjRef::new(kind, o["metadata"]["namespace"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap());
        l.insert(r, Some(o.clone()));
    }
    l
}

fn openai() -> serde_json::Value {
    json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig", "metadata": {"name": "gpt", "namespace": "kagent"},
           "spec": {"provider": "OpenAI", "model": "gpt-4o", "apiKeySecret": "openai", "apiKeySecretKey": "key",
                    "openAI": {"temperature": "0.2", "maxTokens": 100}}})
}

fn render_one(
    s: &SandboxAgentSpec,
    l: &Lookup,
) -> Result<(serde_json::Value, serde_json::Value, PodAdditions), Problem> {
    let r = render("k8s-agent", "kagent", s, s.declarative.as_ref().unwrap(), l)?;
    Ok((serde_json::from_str(&r.config_json).unwrap(), serde_json::from_str(&r.agent_card_json).unwrap(), r.pod))
}

#[test]
fn the_model_comes_from_its_model_config_and_the_key_stays_in_its_secret() {
    let s = spec("type: Declarative\ndescription: Helps.\ndeclarative: {modelConfig: gpt, systemMessage: Hi., executeCodeBlocks: true,\n  a2aConfig: {skills: [{name: Summarize}]}}\nsandbox: {network: {allowedDomains: [api.github.com]}}");
    let (config, card, pod) = render_one(&s, &lookup(&[openai()])).unwrap();
    assert_eq!(
        config["model"],
        json!({"type": "openai", "model": "gpt-4o", "base_url": "", "temperature": 0.2, "max_tokens": 100})
    );
    assert_eq!(config["instruction"], "Hi.");
    assert_eq!(config["execute_code"], true);
    assert_eq!(config["stream"], false);
    assert_eq!(config["network"], json!({"allowed_domains": ["api.github.com"]}));
    assert_eq!(pod.env.len(), 1);
    let key = &pod.env[0];
    assert_eq!(key.name, "OPENAI_API_KEY");
    assert!(key.value.is_none(), "the key's value is never copied");
    let sel = key.value_from.as_ref().unwrap().secret_key_ref.as_ref().unwrap();
    assert_eq!((sel.name.as_str(), sel.key.as_str()), ("openai", "key"));
    assert_eq!(card["name"], "k8s_agent");
    assert_eq!(card["skills"][0], json!({"id": "", "name": "Summarize", "description": "", "tags": null}));
    assert_eq!(card["supportedInterfaces"][1]["protocolVersion"], "1.0");
}

#[test]
fn a_missing_object_is_named_and_an_unknown_one_asked_for() {
    let s = spec("type: Declarative\ndeclarative: {modelConfig: gpt, systemMessage: Hi.}");
    let e = render_one(&s, &Lookup::complete()).unwrap_err();
    let r = e.rejection().unwrap();
    assert_eq!(r.reason, "ModelConfigNotFound");
    assert!(r.message.contains("ModelConfig kagent/gpt"), "{}", r.message);
    let e = render_one(&s, &Lookup::default()).unwrap_err();
    assert_eq!(e, Problem::Needs(ObjRef::new(Kind::ModelConfig, "kagent", "gpt")));
    assert!(e.rejection().is_none());
}

#[test]
fn values_from_secrets_are_refused_not_read() {
    for yaml in [
        "type: Declarative\ndeclarative: {modelConfig: gpt, systemMessageFrom: {type: Secret, name: s, key: k}}",
        "type: Declarative\ndeclarative: {modelConfig: gpt, systemMessage: x, tools: [{type: Agent, agent: {name: b}, headersFrom: [{name: H, valueFrom: {type: Secret, name: s, key: k}}]}]}",
    ] {
        let b = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "Agent", "metadata": {"name": "b", "namespace": "kagent"},
            "spec": {"type": "BYO"}});
        let e = render_one(&spec(yaml), &lookup(&[openai(), b])).unwrap_err();
        let r = e.rejection().unwrap();
        assert_eq!(r.reason, "SecretValueNotRead", "{yaml}");
        assert!(r.message.contains("Secret kagent/s key k"), "{}", r.message);
    }
}

#[test]
fn tools_and_agents_as_kagent_writes_them() {
    let s = spec(
        "type: Declarative\ndeclarative: {modelConfig: gpt, systemMessage: x, tools: [\
         {type: McpServer, mcpServer: {name: tools, kind: RemoteMCPServer, toolNames: [a]}, headersFrom: [{name: X, value: '1'}]},\
         {type: Agent, agent: {name: helper}}]}",
    );
    let rms = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "RemoteMCPServer", "metadata": {"name": "tools", "namespace": "kagent"},
        "spec": {"url": "http://tools.kagent:8084/mcp", "timeout": "30s", "protocol": "SSE", "description": "d"}});
    let helper = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "Agent", "metadata": {"name": "helper", "namespace": "kagent"},
        "spec": {"type": "BYO", "description": "Helps."}});
    let (config, _, _) = render_one(&s, &lookup(&[openai(), rms, helper])).unwrap();
    assert_eq!(
        config["sse_tools"],
        json!([{"params": {"url": "http://tools.kagent:8084/mcp", "headers": {"X": "1"}, "timeout": 30}, "tools": ["a"]}])
    );
    assert_eq!(
        config["remote_agents"],
        json!([{"name": "kagent__NS__helper", "url": "http://helper.kagent:8080", "description": "Helps."}])
    );
}

#[test]
fn agents_calling_each_other_in_a_circle_are_refused() {
    let s = spec("type: Declarative\ndeclarative: {modelConfig: gpt, systemMessage: x, tools: [{type: Agent, agent: {name: a}}]}");
    let a = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "Agent", "metadata": {"name": "a", "namespace": "kagent"},
        "spec": {"type": "Declarative", "declarative": {"tools": [{"type": "Agent", "agent": {"name": "k8s-agent", "kind": "SandboxAgent"}}]}}});
    let e = render_one(&s, &lookup(&[openai(), a])).unwrap_err();
    assert_eq!(e.rejection().unwrap().reason, "AgentToolCycle");
}

/// Each reason an agent's references can be refused with, and the message naming what is
/// wrong (the README's Status table).
#[test]
fn every_refusal_names_its_reason_and_the_object() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "prompts", "namespace": "kagent"},
        "data": {"other": "x"}});
    let mcp = json!({"apiVersion": "kagent.dev/v1alpha1", "kind": "MCPServer", "metadata": {"name": "portless", "namespace": "kagent"},
        "spec": {"deployment": {}}});
    let far = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "RemoteMCPServer", "metadata": {"name": "far", "namespace": "other"},
        "spec": {"url": "http://far.other:8084/mcp", "description": "d"}});
    let odd = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "ModelConfig", "metadata": {"name": "odd", "namespace": "kagent"},
        "spec": {"provider": "Mystery", "model": "m"}});
    let cases = [
        ("{modelConfig: gpt, systemMessage: x, tools: [{type: Agent, agent: {name: nobody}}]}", "ToolAgentNotFound", "Agent kagent/nobody"),
        ("{modelConfig: gpt, systemMessage: x, tools: [{type: McpServer, mcpServer: {name: gone, kind: RemoteMCPServer}}]}", "ToolServerNotFound", "RemoteMCPServer kagent/gone"),
        ("{modelConfig: gpt, systemMessage: x, tools: [{type: McpServer, mcpServer: {name: portless, kind: MCPServer, apiGroup: kagent.dev}}]}", "InvalidToolServer", "portless"),
        ("{modelConfig: gpt, systemMessage: x, tools: [{type: McpServer, mcpServer: {name: far, namespace: other, kind: RemoteMCPServer}}]}", "CrossNamespaceReferenceNotAllowed", "other"),
        ("{modelConfig: gpt, systemMessageFrom: {type: ConfigMap, name: absent, key: k}}", "ConfigMapNotFound", "ConfigMap kagent/absent"),
        ("{modelConfig: gpt, systemMessageFrom: {type: ConfigMap, name: prompts, key: k}}", "ConfigMapKeyNotFound", "ConfigMap kagent/prompts has no key \"k\""),
        ("{modelConfig: odd, systemMessage: x}", "InvalidModelConfig", "ModelConfig odd"),
        ("{modelConfig: gpt}", "SystemMessageMissing", "systemMessage"),
    ];
    for (declarative, reason, names) in cases {
        let s = spec(&format!("type: Declarative\ndeclarative: {declarative}"));
        let e = render_one(&s, &lookup(&[openai(), cm.clone(), mcp.clone(), far.clone(), odd.clone()])).unwrap_err();
        let r = e.rejection().unwrap_or_else(|| panic!("{declarative}: {e:?}"));
        assert_eq!(r.reason, reason, "{declarative}: {}", r.message);
        assert!(r.message.contains(names), "{declarative}: {}", r.message);
    }
}
