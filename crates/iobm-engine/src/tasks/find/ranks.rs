//! A find's work stolen across ranks (pfind's job stealing between MPI processes): a rank whose
//! workers have nothing left tells rank 0's coordinator, which asks a busy rank for work; that
//! rank sends the thief half of its queued pieces (at once, or when it next queues some) and
//! tells the coordinator how many it sent. The coordinator ends the walk on every rank once
//! every rank has said it is idle after receiving all the work sent to it, and every request
//! it made has been answered, so no message of the walk outlives its phase.

use super::{Entry, Piece, Queue};
use iobm_dist::Peers;

/// The tag of messages to a rank's broker, and of those to rank 0's coordinator.
#[derive(Clone, Copy)]
enum To {
    Broker = 0,
    Coordinator = 1,
}

/// What a rank's broker receives.
enum ToBroker {
    /// Send work to this thief (or say, through the coordinator, that there is none).
    Steal(u32),
    /// Work from another rank.
    Work(Vec<Piece>),
    /// The walk is over on every rank.
    Done,
}

/// What the coordinator receives.
enum ToCoordinator {
    /// The sender's workers hold nothing and its queue is empty, having received this many
    /// `Work` messages.
    Idle(u64),
    /// The sender answered the coordinator's request for this thief: whether it sent work.
    Gave { thief: u32, sent: bool },
}

/// What a rank knows of the stealing, kept in its walk's queue.
#[derive(Default)]
pub(super) struct Across {
    /// An `Idle` was sent and no work has arrived since.
    idle_sent: bool,
    /// `Work` messages received.
    received: u64,
    /// The coordinator ended the walk.
    pub(super) done: bool,
    /// Every local worker has ended: work that arrives is dropped.
    ended: bool,
    /// Thieves asked for while the queue was empty, served when it next holds pieces.
    owed: Vec<u32>,
}

/// A rank's side of the stealing: its peers, and the queue it shares with its workers.
pub(super) struct Link<'a> {
    pub(super) peers: &'a dyn Peers,
}

impl Link<'_> {
    /// The rank's workers hold nothing and its queue is empty: answers the thieves it owes (it
    /// has nothing for them) and tells the coordinator, once per idle spell.
    pub(super) fn idle(&self, queue: &mut Queue) {
        let across = &mut queue.across;
        if across.idle_sent || across.done {
            return;
        }
        for thief in std::mem::take(&mut across.owed) {
            self.gave(thief, false);
        }
        across.idle_sent = true;
        let received = across.received;
        self.to_coordinator(&ToCoordinator::Idle(received));
    }

    /// Pieces were queued: the thieves owed get their share.
    pub(super) fn queued(&self, queue: &mut Queue) {
        while !queue.pieces.is_empty() {
            let Some(thief) = queue.across.owed.pop() else {
                return;
            };
            self.steal(queue, thief);
        }
    }

    /// Every local worker has ended: nothing more will be examined here.
    pub(super) fn ended(&self, queue: &mut Queue) {
        queue.across.ended = true;
        queue.pieces.clear();
        if queue.holding == 0 {
            self.idle(queue);
        }
    }

    /// `thief` asks: half the queued pieces (the oldest, nearest the roots) go to it; with
    /// none queued it is owed while this rank's workers still hold work.
    fn steal(&self, queue: &mut Queue, thief: u32) {
        if queue.pieces.is_empty() {
            match queue.across.idle_sent || queue.across.ended {
                true => self.gave(thief, false),
                false => queue.across.owed.push(thief),
            }
            return;
        }
        let half = queue.pieces.len().div_ceil(2);
        let given: Vec<Piece> = queue.pieces.drain(..half).collect();
        let mut bytes = vec![1u8];
        encode_pieces(&given, &mut bytes);
        self.peers.send(thief, To::Broker as u8, &bytes);
        self.gave(thief, true);
    }

    fn gave(&self, thief: u32, sent: bool) {
        self.to_coordinator(&ToCoordinator::Gave { thief, sent });
    }

    fn to_coordinator(&self, message: &ToCoordinator) {
        let bytes = match message {
            ToCoordinator::Idle(received) => [&[0u8][..], &received.to_le_bytes()].concat(),
            ToCoordinator::Gave { thief, sent } => {
                [&[1u8][..], &thief.to_le_bytes(), &[u8::from(*sent)]].concat()
            }
        };
        self.peers.send(0, To::Coordinator as u8, &bytes);
    }
}

/// Runs `run` (a phase's workers) with `walk`'s broker, and rank 0's coordinator, beside it
/// when the walk is shared across ranks; returns once the walk is over on every rank.
pub(crate) fn serving<R>(walk: Option<&super::Walk>, run: impl FnOnce() -> R) -> R {
    let Some((walk, link)) = walk.and_then(|w| Some((w, w.link.as_ref()?))) else {
        return run();
    };
    std::thread::scope(|s| {
        s.spawn(|| walk.broker(link));
        if link.peers.rank() == 0 {
            s.spawn(|| coordinate(link.peers));
        }
        let ran = run();
        link.ended(&mut walk.queue.lock().unwrap());
        ran
    })
}

impl super::Walk<'_> {
    /// Answers requests and takes work from other ranks until the coordinator ends the walk.
    fn broker(&self, link: &Link) {
        loop {
            let (_, bytes) = link.peers.receive(To::Broker as u8);
            let message = decode_to_broker(&bytes);
            let mut queue = self.queue.lock().unwrap();
            match message {
                ToBroker::Steal(thief) => link.steal(&mut queue, thief),
                ToBroker::Work(pieces) => {
                    queue.across.received += 1;
                    queue.across.idle_sent = false;
                    if queue.across.ended {
                        link.idle(&mut queue);
                        continue;
                    }
                    queue.pieces.extend(pieces);
                    self.changed.notify_all();
                }
                ToBroker::Done => {
                    queue.across.done = true;
                    self.changed.notify_all();
                    return;
                }
            }
        }
    }
}

/// What the coordinator knows of each rank.
#[derive(Default, Clone)]
struct Seen {
    /// `Work` messages sent to it, as their senders reported.
    sent_to: u64,
    /// The most `Work` it said it had received when it last said it was idle.
    idle_at: Option<u64>,
    /// A request for work is out for it.
    requested: bool,
}

impl Seen {
    /// Idle, having received everything sent to it: it can hold nothing.
    fn idle(&self) -> bool {
        self.idle_at == Some(self.sent_to)
    }
}

/// Rank 0's coordinator: sends each idle rank's request to a rank that may have work, and ends
/// the walk once every rank is idle with nothing in flight.
fn coordinate(peers: &dyn Peers) {
    let ranks = peers.size() as usize;
    let mut seen = vec![Seen::default(); ranks];
    let mut next_victim = 0usize;
    loop {
        let (from, bytes) = peers.receive(To::Coordinator as u8);
        match decode_to_coordinator(&bytes) {
            ToCoordinator::Idle(received) => {
                let at = &mut seen[from as usize];
                at.idle_at = at.idle_at.max(Some(received));
            }
            ToCoordinator::Gave { thief, sent } => {
                let thief = &mut seen[thief as usize];
                thief.requested = false;
                thief.sent_to += u64::from(sent);
            }
        }
        if seen.iter().all(|s| s.idle() && !s.requested) {
            for rank in 0..ranks {
                peers.send(rank as u32, To::Broker as u8, &[2]);
            }
            return;
        }
        // Each idle rank's request goes to the next rank that may hold work.
        for thief in 0..ranks {
            if !seen[thief].idle() || seen[thief].requested {
                continue;
            }
            let victim = (1..=ranks)
                .map(|k| (next_victim + k) % ranks)
                .find(|&v| v != thief && !seen[v].idle());
            let Some(victim) = victim else { continue };
            next_victim = victim;
            seen[thief].requested = true;
            let message = [&[0u8][..], &(thief as u32).to_le_bytes()].concat();
            peers.send(victim as u32, To::Broker as u8, &message);
        }
    }
}

fn encode_pieces(pieces: &[Piece], out: &mut Vec<u8>) {
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s.as_bytes());
    };
    for piece in pieces {
        match piece {
            Piece::Dir(dir) => {
                out.push(0);
                text(out, dir);
            }
            Piece::Entries(entries) => {
                out.push(1);
                out.extend((entries.len() as u32).to_le_bytes());
                for (path, dir) in entries {
                    out.push(u8::from(*dir));
                    text(out, path);
                }
            }
        }
    }
}

/// Reads what [`encode_pieces`] wrote.
struct Reader<'b>(&'b [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.0[0];
        self.0 = &self.0[1..];
        b
    }
    fn u32(&mut self) -> u32 {
        let (n, rest) = self.0.split_at(4);
        self.0 = rest;
        u32::from_le_bytes(n.try_into().unwrap())
    }
    fn text(&mut self) -> String {
        let len = self.u32() as usize;
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        String::from_utf8_lossy(s).into_owned()
    }
    fn pieces(&mut self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        while !self.0.is_empty() {
            pieces.push(match self.byte() {
                0 => Piece::Dir(self.text()),
                _ => {
                    let n = self.u32();
                    let entries: Vec<Entry> = (0..n)
                        .map(|_| {
                            let dir = self.byte() == 1;
                            (self.text(), dir)
                        })
                        .collect();
                    Piece::Entries(entries)
                }
            });
        }
        pieces
    }
}

fn decode_to_broker(bytes: &[u8]) -> ToBroker {
    let mut r = Reader(bytes);
    match r.byte() {
        0 => ToBroker::Steal(r.u32()),
        1 => ToBroker::Work(r.pieces()),
        _ => ToBroker::Done,
    }
}

fn decode_to_coordinator(bytes: &[u8]) -> ToCoordinator {
    match bytes[0] {
        0 => ToCoordinator::Idle(u64::from_le_bytes(bytes[1..9].try_into().unwrap())),
        _ => ToCoordinator::Gave {
            thief: u32::from_le_bytes(bytes[1..5].try_into().unwrap()),
            sent: bytes[5] == 1,
        },
    }
}
