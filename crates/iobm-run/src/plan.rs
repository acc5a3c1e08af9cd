//! The result's `Config`, derived from what a command planned (its phases and where they run)
//! instead of written out by every command: one place decides how a plan is described.

use iobm_engine::{Op, Phase, StopRule};
use iobm_results::device::{DeviceMemory, MemoryConfig, TransferPath};
use iobm_results::{Config, RateConfig};
use iobm_stats::names::{FsyncPolicy, LayoutName, PatternName, RunFsync};
use iobm_target::memory::{DeviceKind, DevicePath, Devices};

/// Where a plan runs and what it leaves behind.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The directory (or endpoint) given on the command line.
    pub dir: String,
    /// The directory the run created there, or the data set or key prefix it works on.
    pub run_dir: String,
    /// The data is kept after the run.
    pub keep: bool,
    /// Processes that each run the phases (MPI ranks).
    pub ranks: u32,
}

/// The phases' one pattern (of at least one phase), else "per phase".
fn pattern(phases: &[Phase]) -> PatternName {
    let first = phases[0].pattern.name();
    match phases.iter().all(|p| p.pattern.name() == first) {
        true => first,
        false => PatternName::PerPhase,
    }
}

/// The configuration of a run of `phases` (at least one) placed at `at`. The first phase sets
/// the workers and block; sizes are the largest data set of any phase over all ranks; the fsync
/// policy is the writing phases'; the data written is the first writing phase's; `verify` and
/// `rwmix_pct` are those of any phase that checks what it reads or mixes reads and writes.
/// What no phase shows (`reorder`, `ops`) the command sets.
/// The open-loop rate of paced phases: the first one's, and with a sweep the last one's and
/// the steps.
fn rate(phases: &[Phase]) -> Option<RateConfig> {
    let paced: Vec<_> = phases.iter().filter_map(|p| p.pace).collect();
    let (first, last) = (paced.first()?, paced.last()?);
    let swept = paced.len() > 1
        && paced
            .iter()
            .any(|p| p.milli_ops_per_s != first.milli_ops_per_s);
    Some(RateConfig {
        ops_per_s: first.ops_per_s(),
        arrivals: first.arrivals,
        sweep_to_ops_per_s: swept.then(|| last.ops_per_s()),
        sweep_steps: swept.then_some(paced.len() as u32),
        slo_ns: None,
    })
}

/// The writing phases' one fsync policy, "never" without any, else "per phase".
fn fsync<'a>(mut writers: impl Iterator<Item = &'a Phase>) -> RunFsync {
    let first = writers.next().map_or(FsyncPolicy::Never, |p| p.fsync);
    match writers.all(|p| p.fsync == first) {
        true => RunFsync::Policy(first),
        false => RunFsync::PerPhase,
    }
}

pub fn config(phases: &[Phase], at: Placement) -> Config {
    let first = &phases[0];
    let (size_per_job, total, layout) = data_set(phases, at.ranks);
    let writer = phases.iter().find(|p| p.op.writes() && p.op != Op::Rewrite);
    let writers = phases.iter().filter(|p| p.op.writes());
    Config {
        dir: at.dir,
        run_dir: at.run_dir,
        jobs: first.workers as u32,
        size_per_job_bytes: size_per_job,
        total_bytes: total,
        block_bytes: first.block,
        layout,
        segments: first.interleave.map(|i| i.segments),
        pattern: pattern(phases),
        // Only writes are fsynced: reads do not make a stream's policy "per phase".
        fsync: fsync(writers),
        direct: phases.iter().any(|p| p.direct),
        engine: Some(first.engine),
        fadvise: first.fadvise,
        madvise: first.madvise,
        cpus: first.cpus.as_ref().map(|c| c.to_string()),
        numa: None,
        iodepth: first.iodepth,
        duration_s: match first.stop {
            StopRule::Duration(d) => Some(d.as_secs_f64()),
            StopRule::Once | StopRule::Ops(_) | StopRule::Stonewall(_) => None,
        },
        ramp_s: (!first.ramp.is_zero()).then_some(first.ramp.as_secs_f64()),
        until_stable: phases
            .iter()
            .find_map(|p| p.steady)
            .map(|s| [s.tolerance() * 100.0, s.window.as_secs_f64()]),
        data: writer.map_or("none written".to_string(), |p| p.data.name()),
        keep: at.keep,
        bonnie: None,
        replay: None,
        meta: None,
        io500: None,
        rate: rate(phases),
        s3: None,
        server_ram_bytes: None,
        server_metrics: Vec::new(),
        server_devices: Vec::new(),
        server_drop_cmd: None,
        line_rate_bytes_per_s: None,
        line_rate_source: None,
        reorder: false,
        verify: phases.iter().any(|p| p.verify.is_some()),
        rwmix_pct: phases.iter().find_map(|p| match p.op {
            Op::ReadWrite { read_pct } => Some([read_pct, 100 - read_pct]),
            _ => None,
        }),
        ops: None,
        memory: first.memory.devices().map(memory),
        access: phases.iter().map(access).find(|a| !a.is_uniform()),
        think_s: (first.rhythm)
            .filter(|r| !r.think.is_zero())
            .map(|r| r.think.as_secs_f64()),
        burst_s: (first.rhythm)
            .and_then(|r| r.burst)
            .map(|b| [b.on.as_secs_f64(), b.off.as_secs_f64()]),
    }
}

/// How a phase picked its blocks or objects.
fn access(phase: &Phase) -> iobm_stats::access::AccessDist {
    phase
        .objects
        .as_ref()
        .map_or(phase.pattern.access(), |o| o.access)
}

/// What memory stood for the devices, as results say.
pub fn device_memory(kind: DeviceKind) -> DeviceMemory {
    match kind {
        DeviceKind::Cuda => DeviceMemory::Gpu,
        DeviceKind::Fake(_) => DeviceMemory::FakeGpu,
    }
}

/// Where the workers' buffers were, as the result says.
fn memory(devices: &Devices) -> MemoryConfig {
    MemoryConfig {
        memory: device_memory(devices.kind),
        devices: devices.ids.clone(),
        path: match devices.path {
            DevicePath::Bounce => TransferPath::Bounce,
            DevicePath::Direct => TransferPath::Direct,
        },
    }
}

/// The phases' data set: the most bytes a job works on, the whole data set's bytes and its
/// layout's name.
fn data_set(phases: &[Phase], ranks: u32) -> (u64, u64, LayoutName) {
    let first = &phases[0];
    let ranks = u64::from(ranks.max(1));
    if let Some(spec) = &first.objects {
        return (
            spec.size.bounds().1,
            spec.total_bytes(),
            LayoutName::Objects,
        );
    }
    let per_job = phases
        .iter()
        .flat_map(|p| p.layout.regions.iter().map(|r| r.len))
        .max()
        .unwrap_or(0);
    // A phase's data set is its files (several workers may read one, as bonnie's seekers do);
    // each rank has its own files unless they share one.
    let total = phases
        .iter()
        .map(|p| {
            let files: u64 = p.layout.files.iter().map(|f| f.size).sum();
            if p.layout.shared {
                files
            } else {
                files * ranks
            }
        })
        .max()
        .unwrap_or(0);
    let name = match first.interleave {
        Some(_) => LayoutName::Strided,
        None => LayoutName::of(first.layout.shared),
    };
    (per_job, total, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_engine::{DataKind, FsyncPolicy, Layout, Pattern};
    use std::time::Duration;

    fn at(ranks: u32) -> Placement {
        Placement {
            dir: "/mnt".into(),
            run_dir: "/mnt/iobm-x".into(),
            keep: false,
            ranks,
        }
    }

    #[test]
    fn a_stream_is_described_by_its_write_and_read() {
        // Rank 0 of 2, 4 workers each, in one shared file of 8 MiB.
        let layout = Layout::for_rank(true, 0, 2, 4, 1 << 20);
        let write = Phase {
            fsync: FsyncPolicy::End,
            data: DataKind::Compressible(50),
            stop: StopRule::Duration(Duration::from_secs(30)),
            ..Phase::new("write", Op::Write, 4096, layout.clone())
        };
        let read = Phase {
            stop: StopRule::Duration(Duration::from_secs(30)),
            ..Phase::new("read", Op::Read, 4096, layout)
        };
        let c = config(&[write, read], at(2));
        assert_eq!((c.jobs, c.block_bytes), (4, 4096));
        assert_eq!(c.size_per_job_bytes, 1 << 20);
        assert_eq!(c.total_bytes, 8 << 20);
        assert_eq!(c.layout, LayoutName::SharedFile);
        assert_eq!(c.pattern, PatternName::Sequential);
        assert_eq!(c.fsync, RunFsync::Policy(FsyncPolicy::End));
        assert_eq!(c.data, "compressible:50");
        assert_eq!(c.duration_s, Some(30.0));
        assert!(!c.direct);
        assert!(!c.verify && c.rwmix_pct.is_none());
    }

    #[test]
    fn a_checked_read_and_a_mix_of_reads_and_writes_are_named() {
        let layout = Layout::file_per_worker(1, 1 << 20);
        let write = Phase::new("write", Op::Write, 4096, layout.clone());
        let mix = Phase {
            verify: Some(7),
            ..Phase::new("read-write", Op::ReadWrite { read_pct: 0 }, 4096, layout)
        };
        let c = config(&[write, mix], at(1));
        assert!(c.verify);
        assert_eq!(c.rwmix_pct, Some([0, 100]));
    }

    #[test]
    fn a_read_alone_wrote_nothing_and_random_order_is_named() {
        let read = Phase {
            pattern: Pattern::Random { seed: 1 },
            direct: true,
            ..Phase::new(
                "read",
                Op::Read,
                1 << 20,
                Layout::file_per_worker(2, 8 << 20),
            )
        };
        let c = config(&[read], at(1));
        assert_eq!(c.layout, LayoutName::FilePerJob);
        assert_eq!(c.pattern, PatternName::Random);
        assert_eq!(c.data, "none written");
        assert_eq!(c.fsync, RunFsync::Policy(FsyncPolicy::Never));
        assert!(c.direct);
        assert_eq!(c.total_bytes, 16 << 20);
    }
}
