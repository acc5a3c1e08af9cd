//! The checked-in JSON Schema is the generated one, and documents every field.

use serde_json::Value;
use std::path::PathBuf;

fn schema_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../schema/{name}.schema.json"))
}

/// The documents iobm writes, each with its checked-in schema.
fn schemas() -> [(&'static str, Value); 2] {
    [
        ("iobm-result-v2", iobm_results::schema()),
        ("iobm-limits-v1", iobm_results::limits::schema()),
    ]
}

#[test]
fn checked_in_schemas_match_the_types() {
    for (name, schema) in schemas() {
        let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(schema_path(name), &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(schema_path(name)).expect("schema file exists");
        assert!(
            checked_in == generated,
            "schema/{name} is stale: run `UPDATE_SCHEMA=1 cargo test -p iobm-results --test schema`"
        );
    }
}

/// Walks every object schema and collects properties without a description.
fn undocumented(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    if prop.get("description").is_none() {
                        out.push(format!("{path}.{name}"));
                    }
                }
            }
            for (k, v) in map {
                undocumented(v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for v in items {
                undocumented(v, path, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_is_documented() {
    let mut missing = Vec::new();
    for (name, schema) in schemas() {
        undocumented(&schema, name, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "fields without a description: {missing:?}"
    );
}
