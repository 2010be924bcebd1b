//! The SandboxAgent CRD's schema, generated from the Rust types so that it equals kagent
//! v0.9.12's wherever kagent has a rule.
//!
//! schemars writes each Kubernetes type (k8s-openapi, built for Kubernetes 1.36 as kagent
//! v0.9.12's `k8s.io/api v0.36.2`) once, under its OpenAPI name; the markers controller-gen
//! reads from `k8s.io/api` and k8s-openapi drops (list and map types, defaults, quantity
//! patterns, see [`super::k8s_markers`]) are put on those definitions, which are then inlined
//! wherever the type is used, as controller-gen inlines them.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceValidation, JSONSchemaProps,
};
use kube::core::schema::{OptionalEnum, StructuralSchemaRewriter};
use kube::CustomResourceExt;
use serde_json::{json, Map, Value};

use super::{k8s_markers, SandboxAgent};

/// The schema with each named type as a `$ref` into `components.schemas`, markers applied.
pub fn referenced_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
            s.transforms.clear();
        })
        .into_generator();
    let mut root = generator.into_root_schema_for::<SandboxAgent>().to_value();
    let mut defs = match root.as_object_mut().and_then(|r| r.remove("components")) {
        Some(Value::Object(mut c)) => match c.remove("schemas") {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    // The transforms do not descend into `components`, so each definition gets them itself.
    transform(&mut root);
    for (name, def) in defs.iter_mut() {
        transform(def);
        k8s_markers::apply(name, def);
    }
    root["components"] = json!({ "schemas": defs });
    root
}

fn transform(v: &mut Value) {
    use schemars::transform::Transform;
    let Ok(mut schema) = schemars::Schema::try_from(v.take()) else { return };
    drop_null(&mut schema);
    StructuralSchemaRewriter.transform(&mut schema);
    OptionalEnum.transform(&mut schema);
    *v = schema.to_value();
}

/// An optional field is written by schemars as "this type, or null"; controller-gen writes the
/// type alone (the API server prunes nulls of a non-nullable field). Likewise a `$ref` with
/// keys beside it comes wrapped in a one-element `allOf`.
fn drop_null(schema: &mut schemars::Schema) {
    schemars::transform::transform_subschemas(&mut drop_null, schema);
    let Some(obj) = schema.as_object_mut() else { return };
    if let Some(Value::Array(types)) = obj.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 {
            obj.insert("type".into(), kept[0].clone());
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = obj.get(key) else { continue };
        let kept: Vec<Value> = options.iter().filter(|o| o.get("type") != Some(&json!("null"))).cloned().collect();
        if kept.len() == options.len() {
            continue;
        }
        obj.remove(key);
        match kept.as_slice() {
            [Value::Object(only)] => {
                for (k, v) in only {
                    obj.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            _ => {
                obj.insert(key.into(), Value::Array(kept));
            }
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf") {
        if let [Value::Object(only)] = all.as_slice() {
            let only = only.clone();
            obj.remove("allOf");
            for (k, v) in only {
                obj.entry(k).or_insert(v);
            }
        }
    }
}

/// The CRD kube-derive describes (names, columns, subresources) with the schema above.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = SandboxAgent::crd();
    crd.spec.names.list_kind = Some("SandboxAgentList".into());
    let root = referenced_schema();
    let defs = root.pointer("/components/schemas").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut schema = inline(root, &defs, 0);
    tidy(&mut schema);
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("components");
        obj.remove("title");
        let props = obj.entry("properties").or_insert_with(|| json!({}));
        props["apiVersion"] = json!({"type": "string"});
        props["kind"] = json!({"type": "string"});
        props["metadata"] = json!({"type": "object"});
    }
    // The schema is built from typed values; it always reads back as JSONSchemaProps.
    let props: Option<JSONSchemaProps> = serde_json::from_value(schema).ok();
    for version in &mut crd.spec.versions {
        version.schema = Some(CustomResourceValidation { open_api_v3_schema: props.clone() });
    }
    crd
}

/// Replaces every `$ref` by its definition; keys written beside the `$ref` (a field's
/// description, `nullable`) win, as controller-gen lets a field's markers override its type's.
fn inline(v: Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match v {
        Value::Object(mut obj) => {
            if let Some(Value::String(r)) = obj.remove("$ref") {
                let name = r.rsplit('/').next().unwrap_or_default();
                let mut def = defs.get(name).cloned().unwrap_or(Value::Null);
                // Kubernetes' types are not recursive (JSONSchemaProps aside, which is not used here).
                if depth < 64 {
                    def = inline(def, defs, depth + 1);
                }
                if let Value::Object(mut d) = def {
                    for (k, val) in obj {
                        d.insert(k, inline(val, defs, depth));
                    }
                    return Value::Object(d);
                }
                return Value::Object(obj);
            }
            Value::Object(obj.into_iter().map(|(k, val)| (k, inline(val, defs, depth))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|x| inline(x, defs, depth)).collect()),
        other => other,
    }
}

/// What schemars writes and controller-gen does not: `nullable` on optional fields (kagent
/// prunes nulls instead of storing them) and `title`s.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            obj.remove("nullable");
            if obj.get("title").is_some_and(Value::is_string) && obj.contains_key("type") {
                obj.remove("title");
            }
            for (k, child) in obj.iter_mut() {
                // `properties` and `x-kubernetes-*` maps are keyed by field name, not schema keywords.
                if k == "properties" {
                    if let Value::Object(p) = child {
                        p.values_mut().for_each(tidy);
                    }
                } else {
                    tidy(child);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Definitions by name, for tools and tests that compare types.
pub fn definitions() -> BTreeMap<String, Value> {
    referenced_schema()
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}
