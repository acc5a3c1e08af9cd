//! Whose kernel made the entries a metadata phase looks up (this client, another rank on its
//! host, or clients on other hosts, by `--stride`), which the verdict of a lookup
//! (`verdict/rules/lookups.rs`) judges by.

use crate::RankInfo;

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
}
