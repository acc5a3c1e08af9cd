//! What a writing phase offered the storage: a sample of its data (the start of every file, or
//! the first objects), regenerated after the phase, compressed with zstd at level 3 and
//! searched for duplicate 4 KiB blocks, so a reader sees what compression or deduplication
//! could have made of it.

use iobm_engine::data::{file_key, Generator};
use iobm_engine::{ObjectOp, Op, Phase};
use iobm_results::DataOffered;
use std::collections::HashSet;

/// Bytes sampled per phase.
const SAMPLE: usize = 16 << 20;
const BLOCK: usize = 4096;

/// The sample's measure, for phases that write data (not metadata or rewrites).
pub fn measure(phase: &Phase, run_id: u64) -> Option<DataOffered> {
    let writes_data = matches!(
        phase.op,
        Op::Write
            | Op::PutChar(_)
            | Op::Object(
                ObjectOp::Put | ObjectOp::Multipart | ObjectOp::Mixed | ObjectOp::Versioned
            )
    );
    if !writes_data {
        return None;
    }
    let generator = Generator::new(phase.data, run_id);
    // (id, bytes from its start) of what is sampled.
    let pieces: Vec<(u64, usize)> = match &phase.objects {
        Some(spec) => {
            let mut pieces = Vec::new();
            let mut taken = 0;
            for k in 0..10_000u64 {
                let n = (spec.size_of(k) as usize).min(SAMPLE - taken);
                if n == 0 {
                    break;
                }
                pieces.push((k, n));
                taken += n;
            }
            pieces
        }
        None => {
            let files = &phase.layout.files;
            let each = (SAMPLE / files.len().max(1)).max(BLOCK) / BLOCK * BLOCK;
            files
                .iter()
                .map(|f| (file_key(&f.name), each.min(f.size as usize)))
                .filter(|&(_, n)| n > 0)
                .collect()
        }
    };
    let total: usize = pieces.iter().map(|&(_, n)| n).sum::<usize>().min(SAMPLE);
    if total == 0 {
        return None;
    }
    let mut sample = vec![0u8; total];
    let mut at = 0;
    for (id, n) in pieces {
        let n = n.min(total - at);
        generator.fill(&mut sample[at..at + n], id, 0);
        at += n;
        if at == total {
            break;
        }
    }
    let compressed = zstd::bulk::compress(&sample, 3).map_or(sample.len(), |c| c.len().max(1));
    let mut seen = HashSet::new();
    let blocks = sample.chunks(BLOCK).count();
    let duplicates = sample.chunks(BLOCK).filter(|b| !seen.insert(*b)).count();
    Some(DataOffered {
        sample_bytes: total as u64,
        zstd3_ratio: total as f64 / compressed as f64,
        duplicate_4k_share: duplicates as f64 / blocks as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_engine::{DataKind, Layout};

    fn write_of(data: DataKind) -> Phase {
        Phase {
            data,
            ..Phase::new(
                "write",
                Op::Write,
                1 << 20,
                Layout::file_per_worker(2, 8 << 20),
            )
        }
    }

    #[test]
    fn each_kind_of_data_is_measured_as_what_it_is() {
        let random = measure(&write_of(DataKind::Random), 1).unwrap();
        assert_eq!(random.sample_bytes, 16 << 20);
        assert!(random.zstd3_ratio < 1.01, "{random:?}");
        assert_eq!(random.duplicate_4k_share, 0.0);
        let half = measure(&write_of(DataKind::Compressible(50)), 1).unwrap();
        assert!((1.8..2.2).contains(&half.zstd3_ratio), "{half:?}");
        let dups = measure(&write_of(DataKind::Dedupe(50)), 1).unwrap();
        assert!((0.45..0.55).contains(&dups.duplicate_4k_share), "{dups:?}");
        let zero = measure(&write_of(DataKind::Zero), 1).unwrap();
        assert!(zero.zstd3_ratio > 100.0, "{zero:?}");
        let read = Phase::new(
            "read",
            Op::Read,
            1 << 20,
            Layout::file_per_worker(1, 1 << 20),
        );
        assert!(measure(&read, 1).is_none());
    }
}
