//! Which task a worker of a file phase runs: a find's walk, metadata operations, or block
//! operations on its region of a file, done one at a time, kept in flight through io_uring or
//! copied to and from the file's mapping, or a replayed trace's stream.

use crate::data::Generator;
use crate::mapped::MappedTask;
use crate::queued::QueuedTask;
use crate::task::Task;
use crate::tasks::{
    block_task, buffer, data_source,
    find::{FindTask, Walk},
    meta::MetaTask,
    replay::ReplayTask,
    seed,
};
use crate::workload::Phase;
use iobm_target::Target;
use std::io;

/// Builds worker `index`'s task for a file phase (opening files and filling buffers: untimed);
/// a find's workers share `walk`.
/// An error comes with what was being done.
pub(super) fn file_task<'a>(
    target: &'a dyn Target,
    phase: &'a Phase,
    run_id: u64,
    index: usize,
    walk: Option<&'a Walk<'a>>,
) -> Result<Box<dyn Task + 'a>, (io::Error, String)> {
    if let (Some(work), Some(walk)) = (&phase.find, walk) {
        return Ok(Box::new(FindTask::new(target, work, walk)));
    }
    if phase.replay.is_some() {
        return ReplayTask::new(target, phase, run_id, index)
            .map(|t| Box::new(t) as Box<dyn Task + 'a>);
    }
    if phase.op.is_metadata() {
        let (seed, data) = (seed(run_id, index), data_source(phase, run_id));
        let buf = buffer(phase, index, phase.block as usize)
            .map_err(|e| (e, "place buffers".to_string()))?;
        return MetaTask::new(target, phase, index, seed, data, buf)
            .map(|t| Box::new(t) as Box<dyn Task + 'a>);
    }
    // io_uring: a buffer per request in flight, filled by the queued task itself.
    let queued = crate::needs::queued(phase);
    let task = block_task(target, phase, run_id, index, queued)?;
    if crate::needs::mapped(phase) {
        return MappedTask::new(task)
            .map(|t| Box::new(t) as Box<dyn Task + 'a>)
            .map_err(|e| (e, "map the file".to_string()));
    }
    if !queued {
        return Ok(Box::new(task));
    }
    let generator = phase
        .op
        .writes()
        .then(|| Generator::new(phase.data, run_id));
    let depth = phase.iodepth.max(1) as usize;
    QueuedTask::new(task, depth, generator)
        .map(|t| Box::new(t) as Box<dyn Task + 'a>)
        .map_err(|e| (e, "start io_uring".to_string()))
}
