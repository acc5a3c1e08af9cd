//! The find phase as data (IO500's `find`, pfind's walk): the directories the walk starts from,
//! which of them each rank walks (its workers share them and everything below), and what makes a
//! file match.

/// What a find phase ([`crate::MetaOp::Find`]) walks and looks for, on one rank: one operation
/// is one file examined (pfind's `total_files`: every entry that is not a directory); the
/// directories met are queued for whichever worker of the rank is free to list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindWork {
    /// The directories the walk starts from, the same list on every rank; rank r walks those
    /// at g, g + workers, ... for each of its global workers g (see [`FindWork::rank_roots`]).
    pub roots: Vec<String>,
    pub rank: usize,
    pub ranks: usize,
    /// Workers per rank; rank r's local worker w is global worker `r * jobs + w`.
    pub jobs: usize,
    /// A file matches when its own name contains this (IO500's `-name *01*`).
    pub name_contains: String,
    /// ... and it has this many bytes (`-size 3901c`), which a stat tells; None: any size.
    pub size: Option<u64>,
}

impl FindWork {
    /// Workers of every rank.
    pub fn workers(&self) -> usize {
        self.ranks * self.jobs
    }

    /// The roots this rank walks: root i is global worker `i % workers`'s, and so the rank's
    /// holding that worker. Its workers share them and what lies below (one queue per rank).
    pub fn rank_roots(&self) -> Vec<String> {
        let workers = self.workers().max(1);
        let jobs = self.jobs.max(1);
        (self.roots.iter().enumerate())
            .filter(|(i, _)| (i % workers) / jobs == self.rank)
            .map(|(_, root)| root.clone())
            .collect()
    }

    /// Whether a file's own name could match (before its size is asked).
    pub fn name_matches(&self, name: &str) -> bool {
        name.contains(&self.name_contains)
    }
}

impl crate::Phase {
    /// A find phase: this rank's workers walking `work`'s roots, one pass.
    pub fn find(name: impl Into<String>, work: FindWork) -> crate::Phase {
        let no_files = crate::Layout {
            files: Vec::new(),
            regions: Vec::new(),
            shared: false,
        };
        crate::Phase {
            workers: work.jobs,
            find: Some(work),
            ..crate::Phase::new(name, crate::Op::Meta(crate::MetaOp::Find), 0, no_files)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(rank: usize, roots: usize) -> FindWork {
        FindWork {
            roots: (0..roots).map(|i| format!("r{i}")).collect(),
            rank,
            ranks: 2,
            jobs: 2,
            name_contains: "01".into(),
            size: Some(3901),
        }
    }

    #[test]
    fn every_root_is_walked_by_exactly_one_rank() {
        let mut walked: Vec<String> = (0..2).flat_map(|rank| work(rank, 7).rank_roots()).collect();
        assert_eq!(work(1, 7).rank_roots(), ["r2", "r3", "r6"]);
        assert_eq!(work(0, 7).rank_roots(), ["r0", "r1", "r4", "r5"]);
        walked.sort();
        assert_eq!(walked, work(0, 7).roots);
    }

    #[test]
    fn a_name_matches_by_what_it_contains() {
        let w = work(0, 1);
        assert!(w.name_matches("f.3.101"));
        assert!(w.name_matches("01"));
        assert!(!w.name_matches("f.0.10"));
    }
}
