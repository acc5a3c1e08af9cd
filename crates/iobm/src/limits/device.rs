//! The device's limits of `iobm limits DIR`: a file of the run's own written and read with
//! O_DIRECT, then its points (block sizes and queue depths through io_uring, where the sweeps
//! of `iobm_results::limits::sweep` say).

use iobm_engine::data::fill_random;
use iobm_engine::{
    run_phase, Control, Engine, FileSpec, Layout, Op, Phase, Ranked, Region, StopRule,
};
use iobm_results::env;
use iobm_results::limits::sweep::{sweeps, until_stable};
use iobm_results::limits::{DeviceLimits, DevicePoint};
use iobm_run::exit::Failure;
use iobm_run::session::{self, describe_io};
use iobm_target::memory::AlignedHostMemory;
use iobm_target::{Access, OpenOptions, Target};
use std::path::Path;
use std::time::{Duration, Instant};

/// The file `name` of `bytes` in `target` read, then written, sequentially with O_DIRECT
/// through io_uring for `time` each, each figure until two takes agree: at the depths of each
/// [`sweeps`] of the file and of the judged workload's shapes (`like`: block size, requests in
/// flight).
fn device_points(
    target: &dyn Target,
    name: &str,
    bytes: u64,
    time: Duration,
    like: &[(u64, u32)],
) -> Result<Vec<DevicePoint>, String> {
    let layout = Layout {
        files: vec![FileSpec {
            name: name.to_string(),
            size: bytes,
        }],
        regions: vec![Region {
            file: 0,
            offset: 0,
            len: bytes,
            visit: None,
        }],
        shared: false,
    };
    let control = Control::new(1, 1);
    let rate_of = |op: Op, block: u64, depth: u32| -> Result<f64, String> {
        let phase = Phase {
            direct: true,
            engine: Engine::IoUring,
            iodepth: depth,
            stop: StopRule::Duration(time),
            ..Phase::new("limits", op, block, layout.clone())
        };
        let outcome = run_phase(target, &phase, &control, &Ranked::ALONE);
        if let Some(e) = outcome.errors.first() {
            return Err(format!("{} at {} x {depth}: {}", op.name(), block, e.first));
        }
        let seconds = outcome.end_ns.saturating_sub(outcome.start_ns) as f64 / 1e9;
        Ok(if seconds > 0.0 {
            outcome.bytes() as f64 / seconds
        } else {
            0.0
        })
    };
    let point = |block: u64, depth: u32| -> Result<DevicePoint, String> {
        Ok(DevicePoint {
            block_bytes: block,
            iodepth: depth,
            read_bytes_per_s: until_stable(|| rate_of(Op::Read, block, depth))?,
            write_bytes_per_s: until_stable(|| rate_of(Op::Write, block, depth))?,
        })
    };
    let mut points: Vec<DevicePoint> = Vec::new();
    for mut sweep in sweeps(bytes, like) {
        while let Some(depth) = sweep.next() {
            let p = point(sweep.block, depth)?;
            sweep.record(depth, p.read_bytes_per_s, p.write_bytes_per_s);
            points.push(p);
        }
    }
    Ok(points)
}

/// Sequential O_DIRECT write (then fsync) and read of one file of the run's own in `dir` in
/// `block` requests, then its [`device_points`]; the file removed afterwards.
pub(super) fn device(
    dir: &Path,
    bytes: u64,
    block: usize,
    time: Duration,
    like: &[(u64, u32)],
) -> Result<DeviceLimits, Failure> {
    let target = crate::targets::open(crate::targets::Storage::Directory(dir));
    let target = target.as_ref();
    let name = format!("iobm-limits-{}", session::RunId::generate().text);
    let fail = |what: &str, e: std::io::Error| {
        Failure::run(format!("{}: {what}: {}", dir.display(), describe_io(&e)))
    };
    let open = |access| {
        target.open(
            &name,
            OpenOptions {
                access,
                direct: true,
            },
        )
    };
    let mut buf = AlignedHostMemory.host(block);
    fill_random(&mut buf, 4);
    let measured = (|| -> Result<(f64, f64, Vec<DevicePoint>), Failure> {
        let mut file = open(Access::Create).map_err(|e| fail("O_DIRECT open", e))?;
        let start = Instant::now();
        let mut offset = 0;
        while offset < bytes {
            file.write_at(&buf, offset)
                .map_err(|e| fail("O_DIRECT write", e))?;
            offset += block as u64;
        }
        file.sync().map_err(|e| fail("fsync", e))?;
        let write = bytes as f64 / start.elapsed().as_secs_f64();
        file.close().map_err(|e| fail("close", e))?;
        let mut file = open(Access::Read).map_err(|e| fail("O_DIRECT open", e))?;
        let start = Instant::now();
        let mut offset = 0;
        while offset < bytes {
            file.read_at(&mut buf, offset)
                .map_err(|e| fail("O_DIRECT read", e))?;
            offset += block as u64;
        }
        let read = bytes as f64 / start.elapsed().as_secs_f64();
        file.close().map_err(|e| fail("close", e))?;
        let points = device_points(target, &name, bytes, time, like).map_err(|e| {
            Failure::run(format!("{}: O_DIRECT through io_uring: {e}", dir.display()))
        })?;
        Ok((write, read, points))
    })();
    let _ = target.remove(&name);
    let (write, read, points) = measured?;
    let storage = env::storage_info(dir);
    Ok(DeviceLimits {
        dir: dir.display().to_string(),
        fs_type: storage
            .as_ref()
            .map_or(String::new(), |s| s.fs_type.clone()),
        device: storage.map_or(String::new(), |s| s.device),
        bytes,
        block_bytes: block as u64,
        write_bytes_per_s: write,
        read_bytes_per_s: read,
        points,
        judged_run: None,
    })
}
