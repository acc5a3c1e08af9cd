//! `iobm write` and `iobm stream` on a raw block device (`--destroy-data-on`): each rank's
//! device taken from the flag's list or `{rank}` pattern and claimed (named exactly, unused,
//! held with `O_EXCL`), the sizes checked against it, each job's file a region of it. There is
//! no run directory and nothing to remove afterwards: the device's former contents are gone.

use super::{Sizes, WritePlan};
use crate::cli::WriteArgs;
use crate::targets::{self, Storage};
use iobm_engine::{prepare_objects, Layout};
use iobm_results::RunResult;
use iobm_run::exit::Failure;
use iobm_run::lifecycle::{Hooks, Stage};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::format_bytes;
use iobm_target::device;
use iobm_target::Target;
use std::path::PathBuf;
use std::sync::Arc;

/// This rank's claimed device and its target.
pub(super) struct Device {
    pub target: Arc<dyn Target>,
    /// The device, as this rank's entry of DIR names it.
    pub path: String,
}

/// A device's writes bypass the page cache unless `--buffered` says otherwise.
pub(super) fn direct_by_default(args: &mut WriteArgs) {
    if args.destroy_data_on.is_some() && !args.buffered {
        args.io.direct = true;
    }
}

/// DIR's check: a directory iobm may write in, or, with `--destroy-data-on`, left to
/// [`claim`]; a block device without the flag is refused.
pub(super) fn check_dir(args: &WriteArgs) -> Result<(), Failure> {
    if args.destroy_data_on.is_some() {
        return Ok(());
    }
    if device::is_block_device(&args.dir) {
        return Err(Failure::input(format!(
            "{} is a block device: iobm writes to one only with --destroy-data-on {} (everything on it is lost)",
            args.dir.display(),
            args.dir.display()
        )));
    }
    session::writable_dir(&args.dir)
}

/// Entry `rank` of a device list (`a,b`, one per rank) or pattern (`/dev/nvme{rank}n1`).
pub(crate) fn for_rank(
    spec: &str,
    rank: usize,
    ranks: usize,
    flag: &str,
) -> Result<PathBuf, Failure> {
    if spec.contains("{rank}") {
        return Ok(PathBuf::from(spec.replace("{rank}", &rank.to_string())));
    }
    let list: Vec<&str> = spec.split(',').collect();
    if let Some(twice) = (1..list.len()).find(|&i| list[..i].contains(&list[i])) {
        return Err(Failure::input(format!(
            "{flag} {spec}: {} is named twice: two ranks would write one device",
            list[twice]
        )));
    }
    match list.len() {
        1 if ranks == 1 => Ok(PathBuf::from(spec)),
        n if n == ranks => Ok(PathBuf::from(list[rank])),
        n => Err(Failure::input(format!(
            "{flag} {spec}: {n} device(s) for {ranks} ranks (one per rank: a comma list, or a pattern with {{rank}})"
        ))),
    }
}

/// With `--destroy-data-on`, this rank's device claimed and checked against the write's
/// sizes and flags; None for a write in a directory.
pub(super) fn claim(
    args: &WriteArgs,
    sizes: &Sizes,
    ranks: &Ranks,
) -> Result<Option<Device>, Failure> {
    let Some(named) = &args.destroy_data_on else {
        return Ok(None);
    };
    for (flag, set) in [
        ("--keep", args.keep),
        ("--shared-file", args.shared_file),
        ("--segments", args.segments.is_some()),
        ("--reorder", args.io.reorder),
    ] {
        if set {
            return Err(Failure::input(format!(
                "{flag} with --destroy-data-on: each rank's device holds its own jobs' regions, and nothing of it is kept as a data set"
            )));
        }
    }
    let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
    let dir_spec = args.dir.to_string_lossy();
    let target = for_rank(&dir_spec, rank, size, "DIR")?;
    let named = for_rank(named, rank, size, "--destroy-data-on")?;
    let claim = device::claim(&target, &named).map_err(|r| Failure::input(r.0))?;
    check_fits(&claim, sizes, args.io.direct)?;
    let shown = claim.path.display().to_string();
    let storage = Storage::Device {
        claim,
        slot: sizes.per_job,
    };
    let target: Arc<dyn Target> = Arc::from(targets::open(storage));
    if args.io.direct {
        target.probe_direct("direct").map_err(|e| {
            Failure::input(format!(
                "--destroy-data-on: {shown} refuses O_DIRECT ({e}; --buffered to go through the page cache)"
            ))
        })?;
    }
    Ok(Some(Device {
        target,
        path: shown,
    }))
}

/// The rank's data set fits on the device, in blocks `O_DIRECT` can move.
fn check_fits(claim: &device::Claim, sizes: &Sizes, direct: bool) -> Result<(), Failure> {
    let total = sizes.per_job.checked_mul(sizes.jobs as u64);
    if total.is_none_or(|t| t > claim.size) {
        return Err(Failure::input(format!(
            "--size: this rank's data ({}) does not fit on {} ({})",
            total.map_or("more than 16 EiB".to_string(), format_bytes),
            claim.path.display(),
            format_bytes(claim.size)
        )));
    }
    if direct && !sizes.block.is_multiple_of(claim.logical_block) {
        return Err(Failure::input(format!(
            "--block {}: O_DIRECT on {} needs a multiple of its logical block ({} bytes; --buffered to go through the page cache)",
            sizes.block,
            claim.path.display(),
            claim.logical_block
        )));
    }
    Ok(())
}

impl Device {
    /// One repetition on the device: each job's region made, the phases, no run directory.
    pub(super) fn set_up<'a>(
        &self,
        plan: &'a WritePlan<'a>,
        run_id: &RunId,
        ranks: &'a Ranks,
    ) -> Result<Stage<'a>, Failure> {
        let layout = plan.layout(ranks);
        let made = prepare_objects(self.target.as_ref(), &layout)
            .map_err(|e| Failure::run(format!("cannot lay out the regions: {}", describe_io(&e))));
        ranks.agree(made)?;
        let phases = plan.phases(&layout, run_id.seed, ranks);
        let config = plan.config(&phases, self.path.clone(), ranks);
        let (target, jobs) = (self.target.clone(), plan.sizes.jobs);
        let stage = Stage::new(target.clone(), phases, jobs, config, None);
        Ok(stage.with(Regions { target, layout }))
    }
}

/// The regions of one repetition, freed for the next (the bytes stay on the device).
struct Regions {
    target: Arc<dyn Target>,
    layout: Layout,
}

impl Hooks for Regions {
    fn tear_down(self: Box<Self>, _: &mut RunResult, _: &Ranks) {
        for file in &self.layout.files {
            let _ = self.target.remove(&file.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_rank;
    use std::path::PathBuf;

    #[test]
    fn each_rank_takes_its_entry_of_a_list_or_pattern() {
        let list = "/dev/loop3,/dev/loop5";
        assert_eq!(
            for_rank(list, 1, 2, "--f").unwrap(),
            PathBuf::from("/dev/loop5")
        );
        assert_eq!(
            for_rank("/dev/nvme{rank}n1", 3, 4, "--f").unwrap(),
            PathBuf::from("/dev/nvme3n1")
        );
        assert_eq!(
            for_rank("/dev/sdb", 0, 1, "--f").unwrap(),
            PathBuf::from("/dev/sdb")
        );
        let short = for_rank("/dev/sdb", 0, 2, "--f").unwrap_err();
        assert!(
            short.to_string().contains("1 device(s) for 2 ranks"),
            "{short}"
        );
        let twice = for_rank("/dev/sdb,/dev/sdc,/dev/sdb", 0, 3, "--f").unwrap_err();
        assert!(
            twice.to_string().contains("/dev/sdb is named twice"),
            "{twice}"
        );
    }
}
