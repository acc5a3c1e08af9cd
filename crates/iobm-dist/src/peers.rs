//! Messages between any two ranks, apart from the collectives and the mailbox: what a phase
//! whose ranks share work sends while it runs (a find's directories stolen across ranks). Any
//! thread may send or receive; a message carries a tag, and a receive takes only its tag's.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

/// Point-to-point messages among the ranks of a run, on a communicator of their own (under
/// MPI, where the library takes calls from every thread). Messages from one rank with one tag
/// arrive in the order it sent them.
pub trait Peers: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Sends `bytes` to rank `to` (which may be this rank) under `tag`.
    fn send(&self, to: u32, tag: u8, bytes: &[u8]);
    /// Waits for the next message under `tag` from any rank: its sender and bytes.
    fn receive(&self, tag: u8) -> (u32, Vec<u8>);
}

/// One box of messages: what rank r has received, by tag.
type Inbox = Mutex<VecDeque<(u32, u8, Vec<u8>)>>;

/// Ranks as threads of one process, for tests of what ranks do together without a launcher.
pub struct LocalPeers {
    rank: u32,
    boxes: Arc<Vec<(Inbox, Condvar)>>,
}

impl LocalPeers {
    /// `ranks` connected peers, one for each rank.
    pub fn ranks(ranks: u32) -> Vec<LocalPeers> {
        let boxes: Arc<Vec<(Inbox, Condvar)>> =
            Arc::new((0..ranks).map(|_| Default::default()).collect());
        (0..ranks)
            .map(|rank| LocalPeers {
                rank,
                boxes: boxes.clone(),
            })
            .collect()
    }
}

impl Peers for LocalPeers {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.boxes.len() as u32
    }

    fn send(&self, to: u32, tag: u8, bytes: &[u8]) {
        let (inbox, arrived) = &self.boxes[to as usize];
        inbox
            .lock()
            .unwrap()
            .push_back((self.rank, tag, bytes.to_vec()));
        arrived.notify_all();
    }

    fn receive(&self, tag: u8) -> (u32, Vec<u8>) {
        let (inbox, arrived) = &self.boxes[self.rank as usize];
        let mut inbox = inbox.lock().unwrap();
        loop {
            if let Some(at) = inbox.iter().position(|m| m.1 == tag) {
                let (from, _, bytes) = inbox.remove(at).unwrap();
                return (from, bytes);
            }
            inbox = arrived.wait(inbox).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receive_takes_its_tags_messages_in_the_order_sent() {
        let peers = LocalPeers::ranks(2);
        peers[0].send(1, 7, b"a");
        peers[0].send(1, 3, b"other");
        peers[0].send(1, 7, b"b");
        assert_eq!(peers[1].receive(7), (0, b"a".to_vec()));
        assert_eq!(peers[1].receive(7), (0, b"b".to_vec()));
        assert_eq!(peers[1].receive(3), (0, b"other".to_vec()));
        assert_eq!((peers[1].rank(), peers[1].size()), (1, 2));
    }
}
