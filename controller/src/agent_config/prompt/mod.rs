//! The system message: `systemMessage`, or a ConfigMap key named by `systemMessageFrom`,
//! rendered with Go's `text/template` when `promptTemplate.dataSources` is set, as kagent
//! v0.9.12 (b459905) renders it:
//!
//! * Only then: `go/core/internal/controller/translator/agent/compiler.go:361-374` renders
//!   when `promptTemplate` has data sources, after the tools are translated, and fails the
//!   translation with `failed to execute system message template: <Go's error>`; kagent's
//!   reconciler then sets `Accepted=False`, reason `ReconcileFailed`, with that message
//!   (`reconciler/reconciler.go:312-335`), and the agent is not deployed. Here the agent
//!   is refused the same way: `Accepted=False`, reason `InvalidPromptTemplate`, message
//!   `spec.declarative.systemMessage: <Go's error>`.
//! * The data (`translator/agent/template.go:18-29`, filled at 64-95):
//!   `PromptTemplateContext{AgentName, AgentNamespace, Description string; ToolNames,
//!   SkillNames []string}`: the tool names of the translated `http_tools` then `sse_tools`,
//!   the skill names of `skills.refs` then `skills.gitRefs`. Both lists are nil when empty.
//! * The functions (template.go:100-127): `template.New("systemMessage")`, a `FuncMap` with
//!   only `include` (a `"source/key"` of the data sources' ConfigMaps, inserted as plain
//!   text; unknown: `prompt template "x" not found in promptSources, available: [a b]`),
//!   so text/template's builtins are the rest: `and or not len index slice eq ne lt le gt
//!   ge print printf println html js urlquery call`. Default options (no `missingkey`).
//! * Go: kagent builds with Go >= 1.26.3 (`go/go.mod:3`), so `{{else with}}` (Go 1.23) and
//!   `{{range}}` over an integer (Go 1.24) work there, and are supported here.
//!
//! What renders here, with Go's semantics: text, `{{/* */}}`, trim markers, `{{pipeline}}`
//! (a `[]string` prints `[a b]`, the context `{name ns desc [tools] [skills]}`, no value
//! `<no value>`), `if`/`else if`/`else`, `with`/`else with`/`else` (rebinding dot), `range`
//! (lists and integers, `$i, $e :=`, `else`, `break`, `continue`), variables (`$x :=`,
//! `$x =`, `$`), pipelines, parentheses, fields and chains, string, raw-string, integer,
//! character and boolean constants, `nil`, and every function above but `call`, with Go's
//! argument checks and error texts; `printf` with fmt's verbs, flags, width and precision.
//! Refused, naming the construct and its line (`InvalidPromptTemplate`), although Go renders
//! them, because no kagent document or prompt uses them: `{{define}}`, `{{template}}`,
//! `{{block}}`, `call` (kagent's data holds no functions, so in Go it only fails),
//! floating-point and complex constants, `{{range $x = ...}}`, and in `printf`: `*`
//! widths, `[n]` argument indexes, `%p` of a list, and the `0` flag on a non-number.
//! Differences that remain: `%q`, `%#v`, `%U` and `js` decide which non-ASCII characters are
//! printable without Unicode tables (unassigned code points count as printable here), and a
//! render stops at 1 MiB of output or a million steps (a ConfigMap holds 1 MiB).
//!
//! The expected outputs in `controller/tests/fixtures/prompt-templates/go-text-template.json`
//! come from Go's own text/template (see `tests.rs`).

mod ast;
mod error;
mod exec;
mod funcs;
mod gofmt;
mod item;
mod lex;
mod number;
mod parse;
mod quote;
mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::rc::Rc;

use super::resolve::Problem;
pub use error::TemplateError;
pub use value::Data;

/// What the template's fields hold.
pub struct Context<'a> {
    pub agent_name: &'a str,
    pub agent_namespace: &'a str,
    pub description: &'a str,
    pub tool_names: Vec<String>,
    pub skill_names: Vec<String>,
}

/// Renders `template` over `data` with `include` reading `lookup` ("alias/key" -> text).
pub fn execute(template: &str, lookup: &BTreeMap<String, String>, data: Data) -> Result<String, TemplateError> {
    let tree = parse::parse(template)?;
    let data = value::Value::Context(Rc::new(data));
    exec::Exec::new(template, lookup, data.clone()).run(&data, &tree)
}

/// Renders the system message as kagent does.
pub fn render(template: &str, lookup: &BTreeMap<String, String>, ctx: &Context<'_>) -> Result<String, Problem> {
    let data = Data {
        agent_name: ctx.agent_name.to_string(),
        agent_namespace: ctx.agent_namespace.to_string(),
        description: ctx.description.to_string(),
        tool_names: ctx.tool_names.clone(),
        skill_names: ctx.skill_names.clone(),
    };
    execute(template, lookup, data).map_err(|e| Problem::Template(e.to_string()))
}
