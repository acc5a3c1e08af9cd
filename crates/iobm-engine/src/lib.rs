//! iobm-engine: runs workloads (phases described as data) across worker threads, with a barrier
//! before each phase, and times every operation the same way whatever the target.

pub mod control;
pub mod cpu;
pub mod data;
pub mod live;
mod mapped;
pub mod needs;
mod objects;
pub mod outcome;
pub mod pace;
pub mod permute;
pub mod pin;
pub mod queued;
pub mod requests;
pub mod rhythm;
pub mod runner;
pub mod steady;
pub mod stonewall;
pub mod suite;
mod task;
mod tasks;
pub mod trial;
pub mod workload;

pub use control::{Control, LivePhase};
pub use live::{IntervalObserver, LiveInterval};
pub use needs::{needs, refusal};
pub use outcome::{ErrorCount, PhaseEnd, PhaseOutcome, WorkerOutcome};
pub use pace::{Arrivals, Pace, PaceOutcome};
pub use requests::{Request, RequestChunk, RequestSink};
pub use runner::{prepare_objects, run_phase, Ranked};
pub use steady::{Steady, SteadyOutcome, Tally};
pub use stonewall::{Agree, Stonewall};
pub use workload::{
    object_name, DataKind, Engine, Fadvise, FileSpec, FindWork, FsyncPolicy, Interleave, ItemName,
    ItemsPer, Layout, Madvise, MetaOp, Mix, ObjectOp, ObjectSpec, Op, Opening, Pattern, PerChar,
    Phase, Region, Replay, ReplayIo, ReplayStream, StopRule, Tree, TreeWork,
};
