//! The system message: `systemMessage`, or a ConfigMap key named by `systemMessageFrom`, and
//! with `promptTemplate` the subset of Go's text/template kagent's prompts use: text,
//! `{{include "source/key"}}`, the fields `.AgentName`, `.AgentNamespace`, `.Description`,
//! `{{range .ToolNames}}...{{end}}` / `{{range .SkillNames}}` with `{{.}}`, `{{if .Field}}
//! ...{{else}}...{{end}}`, comments and `{{-`/`-}}` trimming. Anything else is refused with
//! the action named (never rendered wrongly).

use std::collections::BTreeMap;

use super::resolve::Problem;

/// What the template's fields hold.
pub struct Context<'a> {
    pub agent_name: &'a str,
    pub agent_namespace: &'a str,
    pub description: &'a str,
    pub tool_names: Vec<String>,
    pub skill_names: Vec<String>,
}

enum Node {
    Text(String),
    Action(String),
    Range(String, Vec<Node>),
    If(String, Vec<Node>, Vec<Node>),
}

fn bad(msg: impl Into<String>) -> Problem {
    Problem::Template(msg.into())
}

/// Splits `src` into text and actions, applying `{{-` / `-}}` trimming.
fn lex(src: &str) -> Result<Vec<(bool, String)>, Problem> {
    let mut out: Vec<(bool, String)> = Vec::new();
    let mut rest = src;
    while let Some(start) = rest.find("{{") {
        let mut text = rest[..start].to_string();
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| bad("unclosed action: a {{ without }}"))?;
        let mut inner = &after[..end];
        if let Some(t) = inner.strip_prefix("- ") {
            text = text.trim_end().to_string();
            inner = t;
        } else if inner == "-" || inner.starts_with("-\t") || inner.starts_with("-\n") {
            text = text.trim_end().to_string();
            inner = &inner[1..];
        }
        let mut trim_next = false;
        if let Some(t) = inner.strip_suffix(" -") {
            trim_next = true;
            inner = t;
        }
        out.push((false, text));
        out.push((true, inner.trim().to_string()));
        rest = &after[end + 2..];
        if trim_next {
            rest = rest.trim_start();
        }
    }
    out.push((false, rest.to_string()));
    Ok(out)
}

fn parse(
    tokens: &mut std::vec::IntoIter<(bool, String)>,
    until_end: bool,
) -> Result<(Vec<Node>, Option<String>), Problem> {
    let mut nodes = Vec::new();
    while let Some((action, t)) = tokens.next() {
        if !action {
            nodes.push(Node::Text(t));
            continue;
        }
        if t.starts_with("/*") && t.ends_with("*/") {
            continue;
        }
        if t == "end" || t == "else" {
            if !until_end {
                return Err(bad(format!("{{{{{t}}}}} without a matching range or if")));
            }
            return Ok((nodes, Some(t)));
        }
        if let Some(field) = t.strip_prefix("range ") {
            let (body, stop) = parse(tokens, true)?;
            if stop.as_deref() != Some("end") {
                return Err(bad("{{range}} without {{end}}"));
            }
            nodes.push(Node::Range(field.trim().to_string(), body));
        } else if let Some(field) = t.strip_prefix("if ") {
            let (then, stop) = parse(tokens, true)?;
            let otherwise = match stop.as_deref() {
                Some("else") => {
                    let (o, stop) = parse(tokens, true)?;
                    if stop.as_deref() != Some("end") {
                        return Err(bad("{{if}} ... {{else}} without {{end}}"));
                    }
                    o
                }
                Some("end") => Vec::new(),
                _ => return Err(bad("{{if}} without {{end}}")),
            };
            nodes.push(Node::If(field.trim().to_string(), then, otherwise));
        } else {
            nodes.push(Node::Action(t));
        }
    }
    if until_end {
        return Err(bad("a {{range}} or {{if}} is not closed with {{end}}"));
    }
    Ok((nodes, None))
}

fn list<'a>(field: &str, ctx: &'a Context<'_>) -> Result<&'a [String], Problem> {
    match field {
        ".ToolNames" => Ok(&ctx.tool_names),
        ".SkillNames" => Ok(&ctx.skill_names),
        other => Err(bad(format!("{{{{range {other}}}}}: only .ToolNames and .SkillNames can be ranged over"))),
    }
}

fn scalar(field: &str, ctx: &Context<'_>) -> Option<String> {
    Some(match field {
        ".AgentName" => ctx.agent_name.to_string(),
        ".AgentNamespace" => ctx.agent_namespace.to_string(),
        ".Description" => ctx.description.to_string(),
        _ => return None,
    })
}

fn run(
    nodes: &[Node],
    ctx: &Context<'_>,
    lookup: &BTreeMap<String, String>,
    dot: Option<&str>,
    out: &mut String,
) -> Result<(), Problem> {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Action(a) if a == "." => match dot {
                Some(d) => out.push_str(d),
                None => return Err(bad("{{.}} outside {{range}} would print the whole context")),
            },
            Node::Action(a) => {
                if let Some(v) = scalar(a, ctx) {
                    out.push_str(&v);
                } else if let Some(arg) = a.strip_prefix("include ") {
                    let key = arg
                        .trim()
                        .strip_prefix('"')
                        .and_then(|k| k.strip_suffix('"'))
                        .ok_or_else(|| bad(format!("{{{{{a}}}}}: include takes one quoted \"source/key\"")))?;
                    let content = lookup.get(key).ok_or_else(|| {
                        bad(format!(
                            "prompt template {key:?} not found in promptSources, available: {:?}",
                            lookup.keys().collect::<Vec<_>>()
                        ))
                    })?;
                    out.push_str(content);
                } else {
                    return Err(bad(format!("{{{{{a}}}}} is outside the template subset srt-controller renders")));
                }
            }
            Node::Range(field, body) => {
                for item in list(field, ctx)? {
                    run(body, ctx, lookup, Some(item), out)?;
                }
            }
            Node::If(field, then, otherwise) => {
                let truthy = match field.as_str() {
                    ".ToolNames" | ".SkillNames" => !list(field, ctx)?.is_empty(),
                    f => !scalar(f, ctx).ok_or_else(|| bad(format!("{{{{if {f}}}}}: unknown field")))?.is_empty(),
                };
                run(if truthy { then } else { otherwise }, ctx, lookup, dot, out)?;
            }
        }
    }
    Ok(())
}

/// Renders `template` with `include` reading `lookup` ("alias/key" -> text).
pub fn render(template: &str, lookup: &BTreeMap<String, String>, ctx: &Context<'_>) -> Result<String, Problem> {
    let (nodes, _) = parse(&mut lex(template)?.into_iter(), false)?;
    let mut out = String::new();
    run(&nodes, ctx, lookup, None, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context<'static> {
        Context {
            agent_name: "k8s-agent",
            agent_namespace: "kagent",
            description: "Helps",
            tool_names: vec!["a".into(), "b".into()],
            skill_names: vec![],
        }
    }

    #[test]
    fn kagents_template_features() {
        let lookup = BTreeMap::from([("builtin/safety".to_string(), "Be safe.".to_string())]);
        let out = render(
            "{{include \"builtin/safety\"}}\nI am {{.AgentName}} in {{ .AgentNamespace }}: {{.Description}}.\n\
             Tools: {{range .ToolNames}}{{.}}, {{end}}\n{{- if .SkillNames}}skills{{else}} no skills{{end}}{{/* c */}}",
            &lookup,
            &ctx(),
        )
        .unwrap();
        // `{{- if` trims the newline before it; the else branch brings its own space.
        assert_eq!(out, "Be safe.\nI am k8s-agent in kagent: Helps.\nTools: a, b,  no skills");
    }

    #[test]
    fn what_is_outside_the_subset_is_refused() {
        for t in [
            "{{printf \"%s\" .AgentName}}",
            "{{range .Tools}}{{end}}",
            "{{.}}",
            "{{include \"x/y\"}}",
            "{{if .AgentName}}",
        ] {
            assert!(render(t, &BTreeMap::new(), &ctx()).is_err(), "{t}");
        }
    }
}
