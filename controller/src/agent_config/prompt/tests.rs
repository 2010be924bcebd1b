//! Table tests against Go: `go-text-template.json` holds templates from kagent's docs, its
//! tests and testdata, and the rest of text/template, each with the output or error that
//! Go's own text/template gave for it (go1.19.8, Debian's golang-1.19, running kagent
//! v0.9.12's function map over its `PromptTemplateContext`; the program is not kept).
//! Cases marked `srt` are answered differently on purpose; cases with `equivalent` use a
//! Go >= 1.23 construct, and Go rendered the equivalent older form.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::*;

const FIXTURE: &str = include_str!("../../../tests/fixtures/prompt-templates/go-text-template.json");

fn data(j: &Json) -> Data {
    let s = |k: &str| j[k].as_str().unwrap_or_default().to_string();
    let l = |k: &str| j[k].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect();
    Data {
        agent_name: s("AgentName"),
        agent_namespace: s("AgentNamespace"),
        description: s("Description"),
        tool_names: l("ToolNames"),
        skill_names: l("SkillNames"),
    }
}

fn lookup(j: &Json) -> BTreeMap<String, String> {
    j.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect()
}

fn run(case: &Json, fixture: &Json) -> Result<(), String> {
    let name = case["name"].as_str().unwrap_or_default();
    let template = case["template"].as_str().unwrap_or_default();
    let ctx = &fixture["contexts"][case["context"].as_str().unwrap_or_default()];
    let lookup = lookup(if case["lookup"].is_object() { &case["lookup"] } else { &fixture["lookup"] });
    let got = execute(template, &lookup, data(ctx)).map_err(|e| e.to_string());
    let fail = |want: String| Err(format!("{name}: {template:?}\n   got {got:?}\n  want {want}"));
    if let Some(srt) = case["srt"].as_str() {
        return match &got {
            Err(e) if e.contains(srt) => Ok(()),
            _ => fail(format!("an error naming {srt:?}")),
        };
    }
    match (case["output"].as_str(), case["error"].as_str()) {
        (Some(out), _) if got.as_deref() == Ok(out) => Ok(()),
        (Some(out), _) => fail(format!("{out:?}")),
        (_, Some(err)) if got.as_ref().err().map(String::as_str) == Some(err) => Ok(()),
        (_, Some(err)) => fail(format!("Err({err:?})")),
        _ => fail("a case with output or error".into()),
    }
}

#[test]
fn renders_as_go_text_template_does() {
    let fixture: Json = serde_json::from_str(FIXTURE).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 100, "{} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| run(c, &fixture).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Go:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn refusals_name_the_construct_and_line() {
    let lookup = BTreeMap::new();
    let err = |t: &str| execute(t, &lookup, Data::default()).unwrap_err().to_string();
    assert_eq!(
        err("a\n{{define \"x\"}}y{{end}}"),
        "template: systemMessage:2: {{define}} is not supported by srt-controller (Go's text/template has it, \
         no kagent prompt uses it); write the template without it"
    );
    assert!(
        err("{{if true}}\n\n{{template \"x\"}}{{end}}").starts_with("template: systemMessage:3: {{template}} is not")
    );
    assert!(err("{{printf \"%p\" .ToolNames}}").contains(": %p (a list's address) is not supported"));
    assert!(err("{{printf \"%[1]s\" 1}}").contains("printf argument index ([n]) is not supported"));
    assert!(err("{{printf \"%d\" -0xE}}").contains(": floating-point constant -0xE is not supported"));
    assert!(err("{{\"\\xff\"}}").contains("string constant \"\\xff\" (its bytes are not UTF-8) is not supported"));
    assert!(err("{{slice .ToolNames 0 1}}").contains("slice of a list past its length (1 > 0"));
    assert_eq!(err("{{range 1000000000000}}{{end}}"), "template: systemMessage: rendering stopped after 1000000 steps");
    let parens = format!("{{{{{}1{}}}}}", "(".repeat(150), ")".repeat(150));
    assert!(err(&parens).contains(": nesting deeper than 100 levels is not supported"), "{}", err(&parens));
    let ifs = format!("{}x{}", "{{if 1}}".repeat(150), "{{end}}".repeat(150));
    assert!(err(&ifs).contains(": nesting deeper than 100 levels is not supported"));
    let fine = format!("{}x{}", "{{if 1}}".repeat(90), "{{end}}".repeat(90));
    assert_eq!(execute(&fine, &lookup, Data::default()), Ok("x".to_string()));
}

#[test]
fn the_agent_is_refused_with_gos_message() {
    let ctx =
        Context { agent_name: "a", agent_namespace: "ns", description: "", tool_names: vec![], skill_names: vec![] };
    let problem = render("x\n{{else}}", &BTreeMap::new(), &ctx).unwrap_err();
    let rejection = problem.rejection().unwrap();
    assert_eq!(rejection.reason, "InvalidPromptTemplate");
    assert_eq!(rejection.message, "spec.declarative.systemMessage: template: systemMessage:2: unexpected {{else}}");
}
