//! iobm-dist: the processes that make up one run. By default one process; started by an MPI
//! launcher (mpirun, srun) and built with the `mpi` feature, one MPI rank per process. The run
//! needs only a few collective steps: barriers around phases, gathering bytes at rank 0,
//! broadcasting from it, and each rank's wall-clock offset from rank 0.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(feature = "mpi")]
mod mpi_ranks;
mod peers;

pub use peers::{LocalPeers, Peers};

/// A rank's wall clock relative to rank 0's, estimated by ping-pong after a barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOffset {
    pub rank: u32,
    /// This rank's wall clock minus rank 0's, in ns.
    pub offset_ns: i64,
    /// Half the round trip of the best exchange: the offset is right to within this.
    pub uncertainty_ns: u64,
}

/// The collective operations a run needs.
pub trait Transport {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Waits until every rank has arrived.
    fn barrier(&self);
    /// Rank 0 hands each rank's bytes to `each` in rank order, one message at a time, as it
    /// arrives (its own first); the other ranks send theirs.
    fn gather_each(&self, bytes: &[u8], each: &mut dyn FnMut(u32, &[u8]));
    /// Rank 0 gets every rank's bytes in rank order; the other ranks get None.
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let mut all = Vec::new();
        self.gather_each(bytes, &mut |_, b| all.push(b.to_vec()));
        (self.rank() == 0).then_some(all)
    }
    /// Every rank gets rank 0's bytes (the argument is ignored elsewhere).
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8>;
    /// Every rank's clock offset from rank 0, at rank 0 (empty elsewhere).
    fn clock_offsets(&self) -> Vec<ClockOffset>;
    /// The MPI library's own name and version; None without MPI.
    fn library(&self) -> Option<String> {
        None
    }
    /// Messages to rank 0 that any thread of a rank may send while the main thread runs the
    /// collectives; None in one process, or where the MPI library cannot take calls from
    /// several threads at once.
    fn mailbox(&self) -> Option<Arc<dyn Mailbox>> {
        None
    }
    /// Messages between any two ranks from any thread (a find's work stealing); None in one
    /// process, or where the MPI library cannot take calls from several threads at once.
    fn peers(&self) -> Option<Arc<dyn Peers>> {
        None
    }
    /// Whether every rank says yes.
    fn all(&self, yes: bool) -> bool {
        let votes = self.gather(&[u8::from(yes)]);
        let verdict = votes.map_or(vec![0], |v| vec![u8::from(v.iter().all(|b| b == &[1]))]);
        self.broadcast(&verdict) == [1]
    }
}

/// Messages from every rank to rank 0 apart from the collectives (a communicator of their
/// own): a rank's messages arrive in the order it sent them.
pub trait Mailbox: Send + Sync {
    /// A rank other than 0 sends `bytes` to rank 0.
    fn post(&self, bytes: &[u8]);
    /// Rank 0 waits for the next message of any rank: its rank and bytes.
    fn take(&self) -> (u32, Vec<u8>);
}

/// The one process of a run without MPI.
#[derive(Debug, Default)]
pub struct Single;

impl Transport for Single {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn barrier(&self) {}
    fn gather_each(&self, bytes: &[u8], each: &mut dyn FnMut(u32, &[u8])) {
        each(0, bytes);
    }
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }
    fn clock_offsets(&self) -> Vec<ClockOffset> {
        vec![ClockOffset {
            rank: 0,
            offset_ns: 0,
            uncertainty_ns: 0,
        }]
    }
}

/// Wall-clock time in ns since the Unix epoch.
pub fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The number of ranks a launcher says this process is one of, from its environment: Open MPI
/// (`OMPI_COMM_WORLD_SIZE`), MPICH and Intel MPI (`PMI_SIZE`), Slurm's srun (`SLURM_NTASKS`
/// with `SLURM_PROCID`).
pub fn launcher_ranks() -> Option<u32> {
    let var = |name: &str| std::env::var(name).ok()?.trim().parse::<u32>().ok();
    var("OMPI_COMM_WORLD_SIZE")
        .or_else(|| var("PMI_SIZE"))
        .or_else(|| var("SLURM_PROCID").and(var("SLURM_NTASKS")))
}

/// Whether this build can run as MPI ranks.
pub const MPI_BUILD: bool = cfg!(feature = "mpi");

/// The processes of this run: MPI ranks when a launcher started several, else one process.
/// Refuses to run N independent benchmarks when the build has no MPI, and to run as a world
/// of one when the launcher says otherwise (an MPI library that is not the launcher's).
pub fn connect() -> Result<Box<dyn Transport>, String> {
    let launched = launcher_ranks().unwrap_or(1);
    #[cfg(feature = "mpi")]
    if launched > 1 {
        let ranks = mpi_ranks::MpiRanks::init()?;
        if ranks.size() != launched {
            return Err(format!(
                "the launcher started {launched} ranks but MPI sees a world of {}: iobm was built \
                 against another MPI library than the launcher's (use the mpirun of the MPI iobm \
                 was built with)",
                ranks.size()
            ));
        }
        return Ok(Box::new(ranks));
    }
    if launched > 1 {
        return Err(format!(
            "started by an MPI launcher as one of {launched} ranks, but this iobm was built without \
             MPI support and would run {launched} independent benchmarks: rebuild with \
             `cargo build --release --features mpi`"
        ));
    }
    Ok(Box::new(Single))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_process_is_rank_0_of_1() {
        let t = Single;
        assert_eq!((t.rank(), t.size()), (0, 1));
        assert_eq!(t.gather(b"x"), Some(vec![b"x".to_vec()]));
        assert_eq!(t.broadcast(b"y"), b"y");
        assert!(t.all(true));
        assert!(!t.all(false));
        assert_eq!(t.clock_offsets()[0].offset_ns, 0);
    }
}
