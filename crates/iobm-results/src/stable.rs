//! `--until-stable`: what a phase's watch for a steady rate found (the window over which its
//! rate held, which ended the phase), and its configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A phase that was to end once its rate held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StableResult {
    /// The time over which the rate had to hold, in seconds.
    pub window_s: f64,
    /// How far from the window's mean each interval's rate could be, in percent.
    pub tolerance_pct: f64,
    /// Each interval's rate was of "bytes" (phases that move data) or "operations".
    pub unit: String,
    /// The window that held, seconds into the phase (start, end), and its mean rate in `unit`
    /// per second. Absent: the phase ended (its duration, Ctrl-C, an error) before it held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldWindow>,
}

/// The window over which a phase's rate held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeldWindow {
    /// When the window began, seconds into the phase.
    pub start_s: f64,
    /// When it ended (and the phase with it), seconds into the phase.
    pub end_s: f64,
    /// Its mean rate, in the result's `unit` per second.
    pub mean_per_s: f64,
}

/// `--until-stable` in the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StableConfig {
    /// The time over which each phase's rate had to hold, in seconds (`--stable-window`).
    pub window_s: f64,
    /// How far from the window's mean each interval's rate could be, in percent
    /// (`--stable-tolerance`).
    pub tolerance_pct: f64,
}
