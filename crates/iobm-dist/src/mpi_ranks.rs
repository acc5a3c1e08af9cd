//! MPI ranks through rsmpi: barrier, gather to rank 0 and broadcast of byte strings, and the
//! wall-clock offsets of the ranks (never MPI_Wtime, which Open MPI does not synchronise), and
//! a mailbox to rank 0 on a communicator of its own where the library takes calls from every
//! thread (MPI_THREAD_MULTIPLE), and the peers' messages between any two ranks on another.

use crate::{wall_ns, ClockOffset, Mailbox, Peers, Transport};
use mpi::environment::{Threading, Universe};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// Ping-pong exchanges per rank; the one with the shortest round trip is kept.
const CLOCK_ROUNDS: usize = 16;

pub struct MpiRanks {
    _universe: Universe,
    world: SimpleCommunicator,
    offsets: Vec<ClockOffset>,
    mailbox: Option<Arc<MpiMailbox>>,
    peers: Option<Arc<MpiPeers>>,
}

/// The mailbox's communicator, a duplicate of the world's, never freed: a holder of the
/// mailbox may outlive `MPI_Finalize`, after which freeing it aborts the process.
struct MpiMailbox {
    comm: ManuallyDrop<SimpleCommunicator>,
}

// SAFETY: made only where MPI was initialised with MPI_THREAD_MULTIPLE, under which any thread
// may call MPI on any communicator; this one carries only the mailbox's messages.
unsafe impl Send for MpiMailbox {}
unsafe impl Sync for MpiMailbox {}

impl Mailbox for MpiMailbox {
    fn post(&self, bytes: &[u8]) {
        self.comm.process_at_rank(0).send(bytes);
    }

    fn take(&self) -> (u32, Vec<u8>) {
        let (message, status) = self.comm.any_process().receive_vec::<u8>();
        (status.source_rank() as u32, message)
    }
}

/// The peers' communicator, another duplicate of the world's, never freed (as the mailbox's).
struct MpiPeers {
    comm: ManuallyDrop<SimpleCommunicator>,
}

// SAFETY: as the mailbox's: made only under MPI_THREAD_MULTIPLE, carrying only the peers'
// messages.
unsafe impl Send for MpiPeers {}
unsafe impl Sync for MpiPeers {}

impl Peers for MpiPeers {
    fn rank(&self) -> u32 {
        self.comm.rank() as u32
    }

    fn size(&self) -> u32 {
        self.comm.size() as u32
    }

    fn send(&self, to: u32, tag: u8, bytes: &[u8]) {
        (self.comm.process_at_rank(to as i32)).send_with_tag(bytes, i32::from(tag));
    }

    fn receive(&self, tag: u8) -> (u32, Vec<u8>) {
        let (message, status) =
            (self.comm.any_process()).receive_vec_with_tag::<u8>(i32::from(tag));
        (status.source_rank() as u32, message)
    }
}

impl MpiRanks {
    pub fn init() -> Result<MpiRanks, String> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or("MPI could not be initialised")?;
        let world = universe.world();
        // Every rank is given the same level by one library: all make the duplicate or none.
        let mailbox = (threading == Threading::Multiple).then(|| {
            Arc::new(MpiMailbox {
                comm: ManuallyDrop::new(world.duplicate()),
            })
        });
        let peers = (threading == Threading::Multiple).then(|| {
            Arc::new(MpiPeers {
                comm: ManuallyDrop::new(world.duplicate()),
            })
        });
        let mut ranks = MpiRanks {
            _universe: universe,
            world,
            offsets: Vec::new(),
            mailbox,
            peers,
        };
        ranks.offsets = ranks.measure_offsets();
        Ok(ranks)
    }

    /// Rank 0 sends its clock to each rank in turn and takes the reply; offset = reply minus the
    /// midpoint of the round trip, from the exchange with the shortest round trip.
    fn measure_offsets(&self) -> Vec<ClockOffset> {
        self.world.barrier();
        let rank = self.world.rank();
        let mut offsets = vec![ClockOffset {
            rank: 0,
            offset_ns: 0,
            uncertainty_ns: 0,
        }];
        for peer in 1..self.world.size() {
            if rank == 0 {
                let other = self.world.process_at_rank(peer);
                let mut best: Option<ClockOffset> = None;
                for _ in 0..CLOCK_ROUNDS {
                    let t0 = wall_ns();
                    other.send(&t0);
                    let (remote, _) = other.receive::<u64>();
                    let t1 = wall_ns();
                    let half_rtt = (t1 - t0) / 2;
                    let offset = remote as i64 - (t0 + half_rtt) as i64;
                    if best.is_none_or(|b| half_rtt < b.uncertainty_ns) {
                        best = Some(ClockOffset {
                            rank: peer as u32,
                            offset_ns: offset,
                            uncertainty_ns: half_rtt,
                        });
                    }
                }
                offsets.extend(best);
            } else if rank == peer {
                let root = self.world.process_at_rank(0);
                for _ in 0..CLOCK_ROUNDS {
                    let (_, _) = root.receive::<u64>();
                    root.send(&wall_ns());
                }
            }
        }
        self.world.barrier();
        offsets
    }
}

impl Transport for MpiRanks {
    fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    fn size(&self) -> u32 {
        self.world.size() as u32
    }

    fn barrier(&self) {
        self.world.barrier();
    }

    fn gather_each(&self, bytes: &[u8], each: &mut dyn FnMut(u32, &[u8])) {
        if self.world.rank() != 0 {
            self.world.process_at_rank(0).send(bytes);
            return;
        }
        each(0, bytes);
        for peer in 1..self.world.size() {
            let (message, _) = self.world.process_at_rank(peer).receive_vec::<u8>();
            each(peer as u32, &message);
        }
    }

    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.world.rank() == 0 {
            bytes.to_vec()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }

    fn mailbox(&self) -> Option<Arc<dyn Mailbox>> {
        self.mailbox.clone().map(|m| m as Arc<dyn Mailbox>)
    }

    fn peers(&self) -> Option<Arc<dyn Peers>> {
        self.peers.clone().map(|p| p as Arc<dyn Peers>)
    }

    fn library(&self) -> Option<String> {
        let text = mpi::environment::library_version().ok()?;
        // Open MPI's spans lines (repository, release date): the first names it. The C string
        // comes with its NUL (`May 26, 2022\0`): no control byte goes on into the reports.
        let first = text.lines().next().unwrap_or_default();
        let printable: String = first.chars().filter(|c| !c.is_control()).collect();
        Some(printable.trim().to_string())
    }

    fn clock_offsets(&self) -> Vec<ClockOffset> {
        if self.world.rank() == 0 {
            self.offsets.clone()
        } else {
            Vec::new()
        }
    }
}
