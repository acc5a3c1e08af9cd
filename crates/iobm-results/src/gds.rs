//! Which path a `--gds` phase's bytes took, from evidence, never from configuration alone:
//! what nvidia-fs counted over the phase (its read and write counters count GPU-direct I/O
//! only; cuFile's compatibility mode, POSIX I/O into host memory and a copy, leaves them
//! still), judged by the first of [`RULES`] that fires: GPU-direct, compatibility mode, or
//! unknown, each with its evidence in one line. The counters are the machine's: another
//! process's GPU-direct I/O during the phase counts too.

use crate::PhaseResult;
use iobm_stats::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where nvidia-fs says its counters, as the evidence names it.
pub const NVFS_STATS: &str = "/proc/driver/nvidia-fs/stats";

/// nvidia-fs's counters count MiB: fewer bytes than this are not told from rounding (one MiB
/// lost at each of the two readings).
pub const NVFS_SLACK: u64 = 2 << 20;

/// A `--gds` phase's evidence of its path, and the path judged from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GdsEvidence {
    /// What nvidia-fs counted over the phase (its stats read before and after); null where
    /// there was no stats file (nvidia-fs not loaded).
    pub nvfs: Option<NvfsMoved>,
    /// The path judged from the evidence (`iobm report` judges it again).
    #[serde(default)]
    pub path: Option<GdsPath>,
}

/// The bytes nvidia-fs moved GPU-direct over a phase, from its MiB counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NvfsMoved {
    /// Bytes nvidia-fs read GPU-direct over the phase (its `readMiB` counter, in bytes).
    pub read_bytes: u64,
    /// Bytes nvidia-fs wrote GPU-direct over the phase (its `writeMiB` counter, in bytes).
    pub written_bytes: u64,
}

/// Which path the bytes took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GdsVerdict {
    /// nvidia-fs moved the phase's bytes: storage straight to and from GPU memory.
    GpuDirect,
    /// nvidia-fs moved none of them, or only some: cuFile's compatibility mode moved the rest
    /// (POSIX I/O into host memory and a copy).
    CompatMode,
    /// Nothing tells: no nvidia-fs counters, or too few bytes for them.
    Unknown,
}

impl fmt::Display for GdsVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GdsVerdict::GpuDirect => "GPU-direct",
            GdsVerdict::CompatMode => "compatibility mode",
            GdsVerdict::Unknown => "unknown",
        })
    }
}

/// The path and its evidence, in one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GdsPath {
    /// gpu-direct, compat-mode (cuFile's compatibility mode moved some or all of the bytes)
    /// or unknown.
    pub verdict: GdsVerdict,
    /// Why, in one line, with the figures.
    pub evidence: String,
}

/// What the rules judge by: the bytes the phase moved and nvidia-fs's.
struct Seen {
    moved: u64,
    nvfs: Option<u64>,
    /// The machines the phase's workers ran on (one machine's counters are read).
    hosts: usize,
}

/// One rule: it fires with the path, or passes.
type GdsRule = fn(&Seen) -> Option<GdsPath>;

/// The rules, in order; the last always fires.
const RULES: [GdsRule; 5] = [
    several_hosts,
    no_counters,
    too_few_bytes,
    all_direct,
    compat_mode,
];

fn path(verdict: GdsVerdict, evidence: String) -> Option<GdsPath> {
    Some(GdsPath { verdict, evidence })
}

fn several_hosts(s: &Seen) -> Option<GdsPath> {
    (s.hosts > 1)
        .then(|| {
            format!(
                "the workers ran on {} machines and one machine's nvidia-fs counters were read",
                s.hosts
            )
        })
        .and_then(|e| path(GdsVerdict::Unknown, e))
}

fn no_counters(s: &Seen) -> Option<GdsPath> {
    s.nvfs.is_none().then(|| format!("no nvidia-fs counters ({NVFS_STATS} absent: the nvidia-fs module is not loaded), so which path cuFile took is not known"))
        .and_then(|e| path(GdsVerdict::Unknown, e))
}

fn too_few_bytes(s: &Seen) -> Option<GdsPath> {
    (s.moved < NVFS_SLACK)
        .then(|| {
            format!(
                "the phase moved {}, fewer than nvidia-fs's MiB counters tell from rounding ({})",
                format_bytes(s.moved),
                format_bytes(NVFS_SLACK)
            )
        })
        .and_then(|e| path(GdsVerdict::Unknown, e))
}

fn all_direct(s: &Seen) -> Option<GdsPath> {
    let nvfs = s.nvfs?;
    (nvfs + NVFS_SLACK >= s.moved)
        .then(|| {
            format!(
                "nvidia-fs moved {} of the {} the phase moved",
                format_bytes(nvfs),
                format_bytes(s.moved)
            )
        })
        .and_then(|e| path(GdsVerdict::GpuDirect, e))
}

fn compat_mode(s: &Seen) -> Option<GdsPath> {
    let nvfs = s.nvfs.unwrap_or(0);
    let evidence = if nvfs == 0 {
        format!("nvidia-fs moved 0 B of the {} the phase moved: cuFile ran in compatibility mode (POSIX I/O into host memory and a copy)", format_bytes(s.moved))
    } else {
        format!("nvidia-fs moved only {} of the {} the phase moved: the rest went through cuFile's compatibility mode (POSIX I/O into host memory and a copy)", format_bytes(nvfs), format_bytes(s.moved))
    };
    path(GdsVerdict::CompatMode, evidence)
}

/// The path of a `--gds` phase, from its evidence; None for a phase without (not `--gds`).
pub fn judge(phase: &PhaseResult) -> Option<GdsPath> {
    let evidence = phase.gds.as_ref()?;
    let mut hosts: Vec<&str> = phase.workers.iter().map(|w| w.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let seen = Seen {
        moved: phase.bytes(),
        nvfs: evidence.nvfs.map(|n| n.read_bytes + n.written_bytes),
        hosts: hosts.len(),
    };
    RULES.iter().find_map(|rule| rule(&seen))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(moved: u64, nvfs: Option<u64>) -> GdsPath {
        on_hosts(moved, nvfs, 1)
    }

    fn on_hosts(moved: u64, nvfs: Option<u64>, hosts: usize) -> GdsPath {
        let seen = Seen { moved, nvfs, hosts };
        RULES.iter().find_map(|rule| rule(&seen)).unwrap()
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn counters_that_moved_the_bytes_are_gpu_direct() {
        let p = judged(4 * GIB, Some(4 * GIB));
        assert_eq!(p.verdict, GdsVerdict::GpuDirect);
        assert_eq!(
            p.evidence,
            "nvidia-fs moved 4.00 GiB of the 4.00 GiB the phase moved"
        );
        // Rounded down to MiB at both readings.
        assert_eq!(
            judged(4 * GIB, Some(4 * GIB - (1 << 20))).verdict,
            GdsVerdict::GpuDirect
        );
    }

    #[test]
    fn counters_that_did_not_move_are_compatibility_mode() {
        let p = judged(4 * GIB, Some(0));
        assert_eq!(p.verdict, GdsVerdict::CompatMode);
        assert!(p.evidence.starts_with("nvidia-fs moved 0 B of the 4.00 GiB the phase moved: cuFile ran in compatibility mode"), "{}", p.evidence);
        let partly = judged(4 * GIB, Some(GIB));
        assert_eq!(partly.verdict, GdsVerdict::CompatMode);
        assert!(
            partly
                .evidence
                .starts_with("nvidia-fs moved only 1.00 GiB of the 4.00 GiB"),
            "{}",
            partly.evidence
        );
    }

    #[test]
    fn no_counters_or_too_few_bytes_are_unknown() {
        let none = judged(4 * GIB, None);
        assert_eq!(none.verdict, GdsVerdict::Unknown);
        assert!(
            none.evidence.contains("nvidia-fs module is not loaded"),
            "{}",
            none.evidence
        );
        let several = on_hosts(4 * GIB, Some(4 * GIB), 2);
        assert_eq!(several.verdict, GdsVerdict::Unknown);
        assert!(
            several
                .evidence
                .starts_with("the workers ran on 2 machines"),
            "{}",
            several.evidence
        );
        let few = judged(1 << 20, Some(0));
        assert_eq!(few.verdict, GdsVerdict::Unknown);
        assert!(
            few.evidence
                .starts_with("the phase moved 1.00 MiB, fewer than"),
            "{}",
            few.evidence
        );
    }
}
