//! A metadata phase that looks up what an earlier phase made (a stat, a read of a small
//! file): judged by whose kernel made those entries and whether its dentry, inode and page
//! caches were dropped before.

use crate::metadata::MadeBy;
use crate::verdict::rule::{Evidence, Rule};
use crate::{CacheVerdict, PhaseResult, Verdict};
use iobm_stats::names::{CacheDrop, OpName};

pub struct Lookups;

impl Rule for Lookups {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        verdict(e.phase, e.machine.meta_made_by?)
    }
}

/// The operations (as results name them) that look up entries made before, reading what the
/// caches may hold: stats, and reads of the files' bytes.
const LOOKUPS: [OpName; 3] = [OpName::DirStat, OpName::FileStat, OpName::FileRead];

/// The verdict of a metadata phase of a meta or io500 run whose entries were made as `made`
/// says; None
/// for a phase that looks nothing up (creations, renames, removals).
fn verdict(phase: &PhaseResult, made: MadeBy) -> Option<CacheVerdict> {
    if !LOOKUPS.contains(&phase.op) {
        return None;
    }
    let dropped = phase.settings.cache_dropped.client == Some(CacheDrop::System);
    let (verdict, evidence) = match (dropped, made) {
        (true, _) => (
            Verdict::Uncached,
            "the system's dentry, inode and page caches were dropped before the phase (--drop-caches): each lookup went to the file system".to_string(),
        ),
        (false, MadeBy::OtherHosts) => (
            Verdict::Unknown,
            "the entries were made by clients on other hosts (--stride): this client's dentry and inode caches did not hold them, the file system's servers may".to_string(),
        ),
        (false, by) => (
            Verdict::Cached,
            format!(
                "the entries were made by {} in an earlier phase and the caches were not dropped: its kernel can answer from its dentry and inode caches{} without the file system (for uncached lookups: iobm meta --drop-caches as root, or --stride with ranks on other hosts)",
                match by {
                    MadeBy::SameHost => "another rank on this host (--stride)",
                    _ => "this client",
                },
                if phase.op == OpName::FileRead {
                    ", and the files' bytes from its page cache,"
                } else {
                    ""
                }
            ),
        ),
    };
    Some(CacheVerdict { verdict, evidence })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(op: OpName, dropped: &str) -> PhaseResult {
        let mut p: PhaseResult =
            serde_json::from_str(include_str!("../../../../iobm/tests/fixtures/stream.json"))
                .map(|r: crate::RunResult| r.phases[0].clone())
                .unwrap();
        p.op = op;
        p.settings.cache_dropped = dropped.to_string().try_into().unwrap();
        p
    }

    #[test]
    fn lookups_of_this_clients_entries_are_cached_unless_dropped() {
        let v = |op, dropped, made| verdict(&phase(op, dropped), made).map(|v| v.verdict);
        for op in LOOKUPS {
            assert_eq!(v(op, "nothing", MadeBy::ThisClient), Some(Verdict::Cached));
            assert_eq!(v(op, "nothing", MadeBy::SameHost), Some(Verdict::Cached));
            assert_eq!(v(op, "nothing", MadeBy::OtherHosts), Some(Verdict::Unknown));
            assert_eq!(v(op, "system", MadeBy::ThisClient), Some(Verdict::Uncached));
            assert_eq!(
                v(op, "system+servers", MadeBy::SameHost),
                Some(Verdict::Uncached)
            );
            // Only a file's own pages dropped: its entries are still cached.
            assert_eq!(v(op, "files", MadeBy::ThisClient), Some(Verdict::Cached));
        }
        for op in [
            OpName::FileCreate,
            OpName::DirCreate,
            OpName::FileRemove,
            OpName::FileRename,
            OpName::TreeCreate,
        ] {
            assert_eq!(v(op, "nothing", MadeBy::ThisClient), None, "{op}");
        }
        let same = verdict(&phase(OpName::FileStat, "nothing"), MadeBy::SameHost).unwrap();
        assert!(
            same.evidence.contains("another rank on this host"),
            "{}",
            same.evidence
        );
    }

    #[test]
    fn an_io500_runs_lookups_are_judged_as_a_meta_runs() {
        let text = include_str!("../../../../iobm/tests/fixtures/io500.json");
        let run: crate::RunResult = serde_json::from_str(text).unwrap();
        let machine = crate::machine::Machine::of(&run);
        assert_eq!(machine.meta_made_by, Some(MadeBy::ThisClient));
        for name in ["mdtest-easy-stat", "mdtest-hard-stat", "mdtest-hard-read"] {
            let phase = run.phases.iter().find(|p| p.name == name).unwrap();
            let judged = Lookups.judge(&Evidence::of(phase, &machine));
            assert_eq!(judged.map(|v| v.verdict), Some(Verdict::Cached), "{name}");
        }
    }
}
