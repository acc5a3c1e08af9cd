//! Helpers shared by the end-to-end tests.
#![allow(dead_code)] // each test crate uses its own share of them

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The names in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A JSON file.
pub fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A JSON number that must be an unsigned integer.
pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// Bytes moved by all workers of a phase.
pub fn phase_bytes(phase: &Value) -> u64 {
    phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["span"]["bytes"]))
        .sum()
}

/// Fails unless `result` matches the checked-in JSON Schema of the result contract.
pub fn assert_matches_schema(result: &Value) {
    let schema_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/iobm-result-v1.schema.json");
    let schema = load(&schema_path);
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema: {errors:#?}"
    );
}

/// Lets `child` run for 1.5 s, sends it SIGINT (Ctrl-C) and waits: it must exit with 130.
pub fn interrupt(child: std::process::Child) -> std::process::Output {
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill sends a signal to the child process we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
