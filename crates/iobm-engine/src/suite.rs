//! Suites as data: the bonnie-style characterisation is a list of phases in bonnie++'s order
//! (per-char, block and rewrite output; per-char and block input; random seeks; sequential and
//! random create, stat and delete), built here and run by the same runner as everything else.

use crate::permute::mix;
use crate::workload::{
    DataKind, FileSpec, FsyncPolicy, Layout, Op, Pattern, PerChar, Phase, Region, StopRule,
};
use iobm_stats::names::bonnie::*;

/// The name of the file the byte tests use.
pub const BONNIE_FILE: &str = "bonnie.dat";

/// The metadata tests' files (bonnie++ `-n number:max:min:dirs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaSpec {
    /// Files to create (bonnie++ counts in units of 1024).
    pub count: u64,
    /// Largest file size in bytes (0: empty files).
    pub max_size: u64,
    /// Smallest file size in bytes.
    pub min_size: u64,
    /// Directories to spread the files over (0: all in one).
    pub dirs: u64,
}

/// What `iobm bonnie` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BonnieSpec {
    /// Size of the test file.
    pub size: u64,
    /// Bytes per operation ("chunk", 8 KiB in bonnie++).
    pub chunk: u64,
    pub per_char: PerChar,
    pub fsync: FsyncPolicy,
    pub direct: bool,
    /// Drop the file's cached pages before each read test.
    pub drop_cache: bool,
    /// Drop the whole system's page cache before each read test (as root; `--drop-caches`).
    pub drop_system_cache: bool,
    pub data: DataKind,
    /// Random seeks in all, and the workers doing them (bonnie++ 2.x: 8192 and 5).
    pub seeks: u64,
    pub seekers: usize,
    /// Percentage of seeks whose block is changed and written back (bonnie++: 10).
    pub seek_rewrite_pct: u8,
    pub files: Option<MetaSpec>,
    pub seed: u64,
    /// Put before every file and directory name, so MPI ranks sharing a directory each have
    /// their own (`r3.bonnie.dat`).
    pub prefix: String,
}

/// The phases, and the directories the metadata tests need made before and removed after.
#[derive(Debug, Clone)]
pub struct BonniePlan {
    pub phases: Vec<Phase>,
    pub dirs: Vec<String>,
    /// Every file name the plan may create, for clean-up.
    pub files: Vec<String>,
}

/// Bytes the per-char tests move: the whole file when buffered (bonnie++ 1.0x), 1/64 of it with
/// one system call per byte (bonnie++ 1.92 and later), in whole chunks.
pub fn per_char_bytes(spec: &BonnieSpec) -> u64 {
    match spec.per_char {
        PerChar::Buffered => spec.size,
        PerChar::Syscall => (spec.size / 64 / spec.chunk).max(1) * spec.chunk,
    }
}

/// bonnie's one file, `len` bytes of it for each of `workers`.
fn the_file(spec: &BonnieSpec, len: u64, workers: usize) -> Layout {
    Layout {
        shared: false,
        files: vec![FileSpec {
            name: format!("{}{BONNIE_FILE}", spec.prefix),
            size: spec.size,
        }],
        regions: vec![
            Region {
                file: 0,
                offset: 0,
                len,
                visit: None,
            };
            workers
        ],
    }
}

pub fn bonnie(spec: &BonnieSpec) -> BonniePlan {
    let file = |len: u64, workers: usize| the_file(spec, len, workers);
    let phase = |name: &str, op: Op, layout: Layout| Phase {
        fsync: spec.fsync,
        direct: spec.direct,
        drop_cache: spec.drop_cache && !spec.direct && op.reads() && op != Op::Rewrite,
        drop_system_cache: spec.drop_system_cache
            && !spec.direct
            && op.reads()
            && op != Op::Rewrite,
        data: spec.data,
        ..Phase::new(name, op, spec.chunk, layout)
    };
    let per_char = per_char_bytes(spec);
    let mut phases = vec![
        Phase {
            truncate: true,
            ..phase(
                PER_CHAR_WRITE,
                Op::PutChar(spec.per_char),
                file(per_char, 1),
            )
        },
        Phase {
            truncate: true,
            ..phase(BLOCK_WRITE, Op::Write, file(spec.size, 1))
        },
        phase(REWRITE, Op::Rewrite, file(spec.size, 1)),
        phase(PER_CHAR_READ, Op::GetChar(spec.per_char), file(per_char, 1)),
        phase(BLOCK_READ, Op::Read, file(spec.size, 1)),
        Phase {
            stop: StopRule::Ops(spec.seeks),
            ..phase(
                SEEKS,
                Op::Seek {
                    rewrite_pct: spec.seek_rewrite_pct,
                },
                file(spec.size, spec.seekers.max(1)),
            )
        },
    ];
    let mut dirs = Vec::new();
    let mut files = vec![format!("{}{BONNIE_FILE}", spec.prefix)];
    if let Some(meta) = spec.files.filter(|m| m.count > 0) {
        let specs;
        (dirs, specs) = small_files(spec, &meta);
        files.extend(specs.iter().map(|f| f.name.clone()));
        let layout = Layout::many_files(1, specs);
        let random = Pattern::Random { seed: spec.seed };
        for (name, op, pattern) in [
            (SEQUENTIAL_CREATE, Op::Create, Pattern::Sequential),
            (SEQUENTIAL_STAT, Op::Stat, Pattern::Sequential),
            (SEQUENTIAL_DELETE, Op::Delete, Pattern::Sequential),
            (RANDOM_CREATE, Op::Create, random),
            (RANDOM_STAT, Op::Stat, random),
            (RANDOM_DELETE, Op::Delete, random),
        ] {
            phases.push(Phase {
                pattern,
                drop_cache: false,
                drop_system_cache: false,
                ..phase(name, op, layout.clone())
            });
        }
    }
    BonniePlan {
        phases,
        dirs,
        files,
    }
}

/// The directories and files of the small-file tests, their sizes drawn from the seed.
fn small_files(spec: &BonnieSpec, meta: &MetaSpec) -> (Vec<String>, Vec<FileSpec>) {
    let prefix = &spec.prefix;
    let dirs: Vec<String> = (0..meta.dirs).map(|d| format!("{prefix}d{d:04}")).collect();
    let specs = (0..meta.count)
        .map(|i| {
            let name = if dirs.is_empty() {
                format!("{prefix}f{i:08}")
            } else {
                format!("{}/f{i:08}", dirs[(i % meta.dirs) as usize])
            };
            let span = meta.max_size.saturating_sub(meta.min_size);
            let size = meta.min_size + mix(spec.seed ^ i) % (span + 1);
            FileSpec { name, size }
        })
        .collect();
    (dirs, specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BonnieSpec {
        BonnieSpec {
            size: 1 << 20,
            chunk: 8192,
            per_char: PerChar::Syscall,
            fsync: FsyncPolicy::End,
            direct: false,
            drop_cache: true,
            drop_system_cache: false,
            data: DataKind::Random,
            seeks: 100,
            seekers: 5,
            seek_rewrite_pct: 10,
            files: Some(MetaSpec {
                count: 30,
                max_size: 100,
                min_size: 10,
                dirs: 3,
            }),
            seed: 1,
            prefix: String::new(),
        }
    }

    #[test]
    fn a_prefix_names_every_file_and_directory() {
        let plan = bonnie(&BonnieSpec {
            prefix: "r2.".into(),
            ..spec()
        });
        assert!(
            plan.files.iter().all(|f| f.starts_with("r2.")),
            "{:?}",
            plan.files
        );
        assert!(plan.dirs.iter().all(|d| d.starts_with("r2.")));
    }

    #[test]
    fn phases_in_bonnie_order() {
        let plan = bonnie(&spec());
        let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
        let bonnie_order: Vec<&str> = BYTE_TESTS
            .into_iter()
            .chain([SEEKS])
            .chain(META_TESTS)
            .collect();
        assert_eq!(names, bonnie_order);
        assert_eq!(plan.phases[0].layout.total_bytes(), 16384);
        assert_eq!(plan.phases[5].layout.workers(), 5);
        assert_eq!(plan.dirs, ["d0000", "d0001", "d0002"]);
        let sizes: Vec<u64> = plan.phases[6].layout.files.iter().map(|f| f.size).collect();
        assert!(sizes.iter().all(|s| (10..=100).contains(s)), "{sizes:?}");
        assert_eq!(plan.files.len(), 31);
    }
}
