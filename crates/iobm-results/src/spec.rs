//! The run's spec as the result records it: the command and the options it was given, by their
//! long names, from which `iobm rerun` runs the same workload again.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The current [`RunSpec::spec`] version.
pub const SPEC_VERSION: u32 = 1;

/// A run as data: what `iobm <command> --print-spec` prints as TOML and `iobm run PLAN.toml`
/// reads, the same keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Version of the spec's form (1).
    pub spec: u32,
    /// The command: "write", "read", "stream", "bonnie", "s3", "quick", "merge".
    pub command: String,
    /// The options given, each under its long name without the dashes ("obj-size",
    /// "size-per-job"), the arguments without a flag under their names ("dir", "op"). Options
    /// left at their defaults are absent, as are secrets (--access-key, --secret-key) and where
    /// outputs went (--json, --csv, --html, --bonnie-csv).
    pub options: BTreeMap<String, SpecValue>,
}

/// One option's value in a [`RunSpec`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SpecValue {
    /// A flag: given (true) or not (false).
    Flag(bool),
    /// A value as it was written ("8MiB", "4", "/mnt/nfs").
    Text(String),
    /// An option given several values (--endpoint a,b), in order.
    List(Vec<String>),
}
