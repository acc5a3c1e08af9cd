//! `iobm write`, `iobm read` and `iobm stream`: check the input, lay out the data set in the
//! run's own directory, run the phases, report, save, and clean up.

use crate::cli::{data_name, FsyncArg, IoArgs, ReadArgs, WriteArgs};
use crate::execute::execute;
use crate::exit::{Exit, Failure};
use crate::record::{fsync_name, pattern_name};
use crate::rundir::{locate, Manifest, RunDir};
use crate::session::{self, describe_io, say, RunId};
use iobm_engine::{
    prepare_objects, Control, DataKind, FsyncPolicy, Layout, Op, Pattern, Phase, StopRule,
};
use iobm_report::{render_footer, render_header, render_phase};
use iobm_results::{env, Config, RunResult, RunStatus};
use iobm_stats::format_bytes;
use iobm_target::posix::PosixTarget;
use std::ffi::OsString;
use std::sync::Arc;

const DEFAULT_BLOCK: u64 = 1 << 20;
const DEFAULT_TOTAL: u64 = 1 << 30;
/// `O_DIRECT` needs block sizes and offsets aligned to the device's logical block; 4 KiB is
/// safe on every device.
const DIRECT_ALIGN: u64 = 4096;

/// Checks block against the per-job size and `--direct`, naming the flag at fault.
fn check_block(block: u64, per_job: u64, direct: bool) -> Result<(), Failure> {
    if block > per_job {
        return Err(Failure::input(format!(
            "--block {} is larger than the size per job ({})",
            format_bytes(block),
            format_bytes(per_job)
        )));
    }
    if direct && block % DIRECT_ALIGN != 0 {
        return Err(Failure::input(format!(
            "--block {block}: --direct needs a multiple of 4 KiB (4096 bytes)"
        )));
    }
    Ok(())
}

/// The phases' common shape.
fn phase(name: &str, op: Op, io: &IoArgs, block: u64, seed: u64, layout: &Layout) -> Phase {
    Phase {
        name: name.to_string(),
        op,
        block,
        pattern: if io.random {
            Pattern::Random { seed }
        } else {
            Pattern::Sequential
        },
        fsync: FsyncPolicy::Never,
        direct: io.direct,
        truncate: false,
        drop_cache: op == Op::Read && !io.direct && !io.keep_cache,
        stop: io.duration.map_or(StopRule::Once, StopRule::Duration),
        data: DataKind::Random,
        layout: layout.clone(),
    }
}

/// Runs the phases and prints the report as it goes.
fn run_and_report(
    target: &PosixTarget,
    phases: Vec<Phase>,
    run: &mut RunResult,
    control: &Arc<Control>,
) {
    say(&render_header(run));
    execute(target, phases, run, control, |r| {
        let latest = r.phases.last().expect("a phase just ran");
        say(&format!("\n{}", render_phase(latest, &r.environment)));
    });
}

/// `iobm write DIR` and `iobm stream DIR`.
pub fn write(args: WriteArgs, stream: bool, argv: &[OsString]) -> Result<Exit, Failure> {
    let io = &args.io;
    session::writable_dir(&args.dir)?;
    session::json_path_ok(io.json.as_deref())?;
    let jobs = args.jobs as u64;
    let block = io.block.unwrap_or(DEFAULT_BLOCK);
    let asked_per_job = match (args.size, args.size_per_job) {
        (_, Some(per_job)) => per_job,
        (Some(total), None) => total / jobs,
        (None, None) => DEFAULT_TOTAL / jobs,
    };
    check_block(block, asked_per_job, io.direct)?;
    let per_job = asked_per_job / block * block;
    let total = per_job * jobs;
    // File systems that report no size at all (ramfs, some FUSE mounts) are not checked.
    let available = env::space(&args.dir)
        .filter(|&(size, _)| size > 0)
        .map(|(_, avail)| avail);
    if let Some(avail) = available.filter(|&a| a < total && !args.ignore_free_space) {
        return Err(Failure::input(format!(
            "--size: the data set ({}) does not fit in the {} free at {} (--ignore-free-space to try anyway)",
            format_bytes(total),
            format_bytes(avail),
            args.dir.display()
        )));
    }

    let run_id = RunId::generate();
    let rundir = RunDir::create(&args.dir, &run_id.text)?;
    let target = PosixTarget::new(&rundir.path);
    if io.direct {
        if let Err(f) = session::probe_direct(&target, &args.dir) {
            let _ = rundir.remove(&Layout::file_per_worker(0, 0));
            return Err(f);
        }
    }
    let layout_name = if args.shared_file {
        "shared_file"
    } else {
        "file_per_job"
    };
    let layout = if args.shared_file {
        Layout::shared_file(jobs as usize, per_job)
    } else {
        Layout::file_per_worker(jobs as usize, per_job)
    };
    if per_job != asked_per_job {
        eprintln!(
            "iobm: note: {} per job rounded down to {} (a whole number of {} blocks)",
            format_bytes(asked_per_job),
            format_bytes(per_job),
            format_bytes(block)
        );
    }

    let mut write_phase = phase("write", Op::Write, io, block, run_id.seed, &layout);
    write_phase.fsync = match args.fsync {
        FsyncArg::Never => FsyncPolicy::Never,
        FsyncArg::End => FsyncPolicy::End,
        FsyncArg::Each => FsyncPolicy::Each,
    };
    write_phase.data = args.data;
    let mut phases = vec![write_phase];
    if stream {
        // The same order as the write, so a time-limited random write is read back exactly.
        phases.push(phase("read", Op::Read, io, block, run_id.seed, &layout));
    }

    let control = session::control(&run_id, jobs as usize);
    let config = Config {
        dir: args.dir.display().to_string(),
        run_dir: rundir.path.display().to_string(),
        jobs: args.jobs,
        size_per_job_bytes: per_job,
        total_bytes: total,
        block_bytes: block,
        layout: layout_name.to_string(),
        pattern: pattern_name(phases[0].pattern).to_string(),
        fsync: fsync_name(phases[0].fsync).to_string(),
        direct: io.direct,
        duration_s: io.duration.map(|d| d.as_secs_f64()),
        data: data_name(args.data),
        keep: args.keep,
        bonnie: None,
    };
    let environment = env::capture(Some(&args.dir));
    let kind = if stream { "stream" } else { "write" };
    let mut run = session::skeleton(kind, &run_id, argv, config, environment, &control);

    let mut manifest = Manifest::new(
        &run_id.text,
        layout_name,
        &layout,
        block,
        data_name(args.data),
    );
    let prepared = rundir
        .save_manifest(&manifest)
        .and_then(|_| prepare_objects(&target, &layout));
    if let Err(e) = prepared {
        let _ = rundir.remove(&layout);
        return Err(Failure::run(format!(
            "{}: cannot create the data files: {}",
            rundir.path.display(),
            describe_io(&e)
        )));
    }
    run_and_report(&target, phases, &mut run, &control);

    // Complete, and (when stopped by time) every region covered at least once.
    let wrote_all = run.phases.first().is_some_and(|p| {
        p.status == RunStatus::Complete && p.workers.iter().all(|w| w.span.bytes >= per_job)
    });
    if args.keep && wrote_all {
        manifest.complete = true;
        if let Err(e) = rundir.save_manifest(&manifest) {
            run.warnings
                .push(format!("could not mark the data set complete: {e}"));
        }
        run.warnings.push(format!(
            "data kept in {} (read it with: iobm read {})",
            rundir.path.display(),
            rundir.path.display()
        ));
    } else {
        if args.keep {
            run.warnings.push(
                "--keep: the write did not complete or did not cover the data set, so it was removed"
                    .to_string(),
            );
        }
        if let Err(e) = rundir.remove(&layout) {
            run.warnings.push(e);
        }
    }
    say(&format!("\n{}", render_footer(&run)));
    session::finish(&run, io.json.as_deref())
}

/// `iobm read PATH`: reads a kept data set; never changes or removes it.
pub fn read(args: ReadArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    let io = &args.io;
    session::json_path_ok(io.json.as_deref())?;
    let (data_dir, manifest) = locate(&args.path)?;
    let layout = manifest.layout();
    let block = io.block.unwrap_or(manifest.block_bytes);
    check_block(block, manifest.size_per_job_bytes, io.direct)?;
    let target = PosixTarget::new(&data_dir);
    if io.direct {
        session::writable_dir(&data_dir)?;
        session::probe_direct(&target, &data_dir)?;
    }
    let run_id = RunId::generate();
    let control = session::control(&run_id, layout.workers());
    let read_phase = phase("read", Op::Read, io, block, run_id.seed, &layout);
    let config = Config {
        dir: args.path.display().to_string(),
        run_dir: data_dir.display().to_string(),
        jobs: manifest.jobs,
        size_per_job_bytes: manifest.size_per_job_bytes,
        total_bytes: layout.total_bytes(),
        block_bytes: block,
        layout: manifest.layout.clone(),
        pattern: pattern_name(read_phase.pattern).to_string(),
        fsync: "never".to_string(),
        direct: io.direct,
        duration_s: io.duration.map(|d| d.as_secs_f64()),
        data: manifest.data.clone(),
        keep: true,
        bonnie: None,
    };
    let environment = env::capture(Some(&data_dir));
    let mut run = session::skeleton("read", &run_id, argv, config, environment, &control);
    run_and_report(&target, vec![read_phase], &mut run, &control);
    say(&format!("\n{}", render_footer(&run)));
    session::finish(&run, io.json.as_deref())
}
