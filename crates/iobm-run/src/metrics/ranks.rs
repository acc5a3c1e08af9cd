//! The sum over the ranks that rank 0 serves under MPI: every other rank posts its whole counts
//! so far each time its workers pass an interval, and its last ones when its run ends; rank 0
//! keeps each rank's latest (a thread of its own takes the posts) and, when the run ends, waits
//! for every rank's last before its final document is written.

use super::{ByPhase, Counts, Metrics};
use crate::exit::Failure;
use crate::ranks::Ranks;
use iobm_dist::Mailbox;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What a rank posts to rank 0: its counts so far, or its last ones.
#[derive(Serialize, Deserialize)]
pub(super) enum Post {
    Counts(Vec<((String, String), Counts)>),
    Ended(Vec<((String, String), Counts)>),
}

impl Post {
    pub(super) fn counts(counts: &ByPhase) -> Post {
        Post::Counts(counts.clone().into_iter().collect())
    }

    pub(super) fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("counts serialise")
    }
}

/// This rank's part in summing the ranks' counters, for the run's length.
pub struct Summing {
    metrics: Option<Arc<Metrics>>,
    role: Role,
}

enum Role {
    /// One process, or a run without `--metrics-listen`.
    Alone,
    /// Rank 0 of several: the thread taking the other ranks' posts.
    Root(Option<JoinHandle<()>>),
    /// Another rank: posts to rank 0.
    Other(Arc<dyn Mailbox>),
}

impl Summing {
    /// Rank 0's `served` counters (those of `--metrics-listen`'s endpoint, None without it),
    /// summed over the ranks; on another rank, counters posted to rank 0 when rank 0 serves.
    /// Refused on every rank where the MPI library has no mailbox.
    pub fn start(served: Option<Arc<Metrics>>, ranks: &Ranks) -> Result<Summing, Failure> {
        let listening = ranks.share(&served.is_some());
        if !listening || ranks.size() == 1 {
            let role = Role::Alone;
            return Ok(Summing {
                metrics: served,
                role,
            });
        }
        let mailbox = ranks.mailbox().ok_or_else(|| {
            Failure::input(
                "--metrics-listen: this MPI library takes no calls from several threads at once \
                 (MPI_THREAD_MULTIPLE), which summing the ranks' counters at rank 0 needs",
            )
        });
        let mailbox = ranks.agreed(mailbox)?;
        Ok(match served {
            Some(metrics) => {
                let (counts, others) = (metrics.clone(), ranks.size() - 1);
                let thread = std::thread::Builder::new()
                    .name("iobm-metrics-ranks".into())
                    .spawn(move || collect(&counts, mailbox.as_ref(), others))
                    .map_err(|e| Failure::run(format!("--metrics-listen: {e}")))?;
                Summing {
                    metrics: Some(metrics),
                    role: Role::Root(Some(thread)),
                }
            }
            None => Summing {
                metrics: Some(Arc::new(Metrics::posting(mailbox.clone()))),
                role: Role::Other(mailbox),
            },
        })
    }

    /// The counters the run's intervals are added to on this rank.
    pub fn metrics(&self) -> Option<Arc<Metrics>> {
        self.metrics.clone()
    }
}

impl Drop for Summing {
    /// The run has ended: another rank posts its last counts; rank 0 waits for every rank's.
    fn drop(&mut self) {
        match &mut self.role {
            Role::Alone => {}
            Role::Root(thread) => {
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
            Role::Other(mailbox) => {
                let metrics = self.metrics.as_ref().expect("a posting rank counts");
                let counts = metrics.counts.lock().unwrap();
                mailbox.post(&Post::Ended(counts.clone().into_iter().collect()).bytes());
            }
        }
    }
}

/// Rank 0 takes the posts of the `others` ranks until each has posted its last.
fn collect(metrics: &Metrics, mailbox: &dyn Mailbox, others: u32) {
    let mut ended = 0;
    while ended < others {
        let (rank, bytes) = mailbox.take();
        let (counts, last) = match serde_json::from_slice::<Post>(&bytes) {
            Ok(Post::Counts(counts)) => (counts, false),
            Ok(Post::Ended(counts)) => (counts, true),
            Err(_) => continue,
        };
        (metrics.others.lock().unwrap()).insert(rank, counts.into_iter().collect());
        ended += u32::from(last);
    }
}
