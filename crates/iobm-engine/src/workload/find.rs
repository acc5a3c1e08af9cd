//! The find phase as data (IO500's `find`, pfind's walk): the directories the walk starts from,
//! which of them each worker of each rank walks, and what makes a file match.

/// What a find phase ([`crate::MetaOp::Find`]) walks and looks for, on one rank: one operation
/// is one directory entry examined (its directory listed when the walk reaches it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindWork {
    /// The directories the walk starts from, the same list on every rank; global worker g
    /// walks those at g, g + workers, ... and everything below them.
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

    /// The roots local worker `local` of this rank walks.
    pub fn roots_of(&self, local: usize) -> Vec<String> {
        let global = self.rank * self.jobs + local;
        self.roots
            .iter()
            .skip(global)
            .step_by(self.workers().max(1))
            .cloned()
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
    fn every_root_is_walked_by_exactly_one_worker_of_one_rank() {
        let mut walked: Vec<String> = (0..2)
            .flat_map(|rank| (0..2).flat_map(move |w| work(rank, 7).roots_of(w)))
            .collect();
        assert_eq!(work(1, 7).roots_of(1), ["r3"]);
        assert_eq!(work(0, 7).roots_of(0), ["r0", "r4"]);
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
