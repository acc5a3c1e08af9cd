//! The cache verdict of a metadata phase that looks up what an earlier phase made (a stat, a
//! read of a small file): whose kernel made those entries (this client, another rank on its
//! host, or clients on other hosts, by `--stride`) and whether its dentry, inode and page
//! caches were dropped before.

use crate::{CacheVerdict, PhaseResult, RankInfo, Verdict};

/// Where the entries a metadata phase looks up were made, as seen from the clients looking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadeBy {
    /// By the same process: its kernel holds them in its caches.
    ThisClient,
    /// By another rank on the same host (`--stride` within a host): the host's caches, which
    /// its ranks share, hold them.
    SameHost,
    /// By ranks on other hosts (`--stride` across hosts): this client's caches did not make
    /// them.
    OtherHosts,
}

/// Whose entries a meta run's lookups were, from its stride and where its ranks ran.
pub fn made_by(stride: u32, ranks: &[RankInfo]) -> MadeBy {
    let n = ranks.len();
    if stride == 0 || n < 2 {
        return MadeBy::ThisClient;
    }
    let step = stride as usize % n;
    let crosses = (0..n).all(|r| ranks[r].host != ranks[(r + step) % n].host);
    if crosses {
        MadeBy::OtherHosts
    } else {
        MadeBy::SameHost
    }
}

/// The operations (as results name them) that look up entries made before, reading what the
/// caches may hold: stats, and reads of the files' bytes.
const LOOKUPS: [&str; 3] = ["dir-stat", "file-stat", "file-read"];

/// The verdict of a metadata phase of a meta run whose entries were made as `made` says; None
/// for a phase that looks nothing up (creations, renames, removals).
pub fn verdict(phase: &PhaseResult, made: MadeBy) -> Option<CacheVerdict> {
    if !LOOKUPS.contains(&phase.op.as_str()) {
        return None;
    }
    let dropped = phase.settings.cache_dropped.contains("system");
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
                "the entries were made by {} in an earlier phase and the caches were not dropped: its kernel can answer from its dentry and inode caches{} without the file system (--drop-caches as root, or --stride with ranks on other hosts)",
                match by {
                    MadeBy::SameHost => "another rank on this host (--stride)",
                    _ => "this client",
                },
                if phase.op == "file-read" {
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

    fn ranks(hosts: &[&str]) -> Vec<RankInfo> {
        hosts
            .iter()
            .enumerate()
            .map(|(rank, host)| RankInfo {
                rank: rank as u32,
                host: host.to_string(),
                clock_offset_ns: 0,
                clock_uncertainty_ns: 0,
            })
            .collect()
    }

    #[test]
    fn a_stride_across_hosts_is_told_from_one_within_a_host() {
        let two_hosts = ranks(&["a", "a", "b", "b"]);
        assert_eq!(made_by(0, &two_hosts), MadeBy::ThisClient);
        assert_eq!(
            made_by(1, &two_hosts),
            MadeBy::SameHost,
            "rank 0 reads rank 1's, both on a"
        );
        assert_eq!(made_by(2, &two_hosts), MadeBy::OtherHosts);
        assert_eq!(
            made_by(3, &two_hosts),
            MadeBy::SameHost,
            "rank 1 reads rank 0's"
        );
        assert_eq!(made_by(1, &ranks(&["a", "b"])), MadeBy::OtherHosts);
        assert_eq!(made_by(1, &ranks(&["a"])), MadeBy::ThisClient);
        assert_eq!(made_by(1, &[]), MadeBy::ThisClient);
    }

    fn phase(op: &str, dropped: &str) -> PhaseResult {
        let mut p: PhaseResult =
            serde_json::from_str(include_str!("../../iobm/tests/fixtures/stream.json"))
                .map(|r: crate::RunResult| r.phases[0].clone())
                .unwrap();
        p.op = op.to_string();
        p.settings.cache_dropped = dropped.to_string();
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
            "file-create",
            "dir-create",
            "file-remove",
            "file-rename",
            "tree-create",
        ] {
            assert_eq!(v(op, "nothing", MadeBy::ThisClient), None, "{op}");
        }
        let same = verdict(&phase("file-stat", "nothing"), MadeBy::SameHost).unwrap();
        assert!(
            same.evidence.contains("another rank on this host"),
            "{}",
            same.evidence
        );
    }
}
