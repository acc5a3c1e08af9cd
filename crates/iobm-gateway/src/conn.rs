//! The gateway's connections: a socket with a limit on how long a write may wait (a client
//! that stops reading a response, its window full for the body timeout, is cut off instead of
//! holding a connection slot and a descriptor for ever; reads need no such limit here: hyper
//! bounds the wait for request headers, and the gateway the wait for each piece of a body), and
//! the [`Registry`] of connections that makes the connection limit fair: a connection is busy
//! from a request's headers until its response is written, idle otherwise (before its first
//! request once it was first read from, between keep-alive requests, while its headers trickle
//! in), and at the cap the
//! connection idle longest is closed for a new one, or with none idle the one whose request
//! body arrives slowest ([`choose`]), so neither idle sockets nor slow bodies can hold out
//! clients that send requests; the cap itself is kept within the descriptor limit
//! ([`within_descriptors`]).

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{sleep, Instant, Sleep};

/// At the cap with no connection idle, a request body slower than this many times the minimum
/// body rate may be cut to make room (a faster one never is: a new connection that may send
/// nothing does not end an upload that is going well).
const SLOW_AT_THE_CAP: u64 = 4;
/// Descriptors kept for the files requests open, beyond one per connection: a quarter of the
/// limit, at least this many.
const FILES_RESERVE: u64 = 64;

/// The connections being served.
#[derive(Debug)]
pub struct Registry {
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    /// When the registry began: connections' idle times count from it.
    epoch: Instant,
    /// Told when a connection becomes idle or ends.
    changed: Notify,
    /// Bytes a second below which a request body may be cut to make room.
    slow: u64,
}

/// One connection in the [`Registry`]; removed from it when dropped.
#[derive(Debug)]
pub struct Conn {
    id: u64,
    registry: Arc<Registry>,
    /// Requests whose response is not yet written whole.
    requests: AtomicUsize,
    /// A write to the socket is waiting for the client to read.
    pub(crate) writing: AtomicBool,
    /// Not read from yet: what its client sent may be waiting unread, so it is not idle yet.
    fresh: AtomicBool,
    /// Bytes a second its request body brings ([`crate::body_rate::Metered`]); [`NO_RATE`] when none is being
    /// read or it is not measured yet.
    body_rate: AtomicU64,
    /// Nanoseconds from the registry's epoch to when it last became idle.
    idle_since: AtomicU64,
    /// Chosen to be closed to make room ([`Registry::evict_one`]).
    evicted: AtomicBool,
    told: Notify,
}

/// What [`Conn::body_rate`] holds when there is no rate.
const NO_RATE: u64 = u64::MAX;

/// What the registry sees of a connection when it must make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    id: u64,
    /// When it became idle, if it is.
    idle_since: Option<u64>,
    /// Bytes a second its request body brings, while one is read and measured.
    body_rate: Option<u64>,
}

/// Whom to close to make room: the connection idle longest, else the one whose request body
/// arrives slowest, if slower than `slow` bytes a second.
fn choose(seen: &[Seen], slow: u64) -> Option<u64> {
    let idle = seen
        .iter()
        .filter_map(|c| Some((c.idle_since?, c.id)))
        .min();
    let slowest = || {
        seen.iter()
            .filter_map(|c| Some((c.body_rate?, c.id)))
            .filter(|&(rate, _)| rate < slow)
            .min()
    };
    idle.or_else(slowest).map(|(_, id)| id)
}

/// The connection cap that leaves room for the files requests open within `limit`
/// descriptors (`None`: no limit).
fn cap_for(wanted: usize, limit: Option<u64>) -> usize {
    let Some(limit) = limit else {
        return wanted;
    };
    let room = limit.saturating_sub(FILES_RESERVE.max(limit / 4)).max(1);
    wanted.min(usize::try_from(room).unwrap_or(usize::MAX))
}

/// `wanted` connections, or fewer if the descriptor limit cannot hold them with the files their
/// requests open: the soft limit is raised to the hard one first, and a cap lowered is said
/// once on stderr.
pub fn within_descriptors(wanted: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit reads into one valid rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return wanted;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            ..limit
        };
        // SAFETY: setrlimit reads one valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    let soft = (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur);
    let cap = cap_for(wanted, soft);
    if cap < wanted {
        eprintln!(
            "iobm serve: --max-connections {wanted} lowered to {cap}: the descriptor limit is {}",
            limit.rlim_cur
        );
    }
    cap
}

impl Registry {
    /// No connections yet; at the cap, a request body slower than `SLOW_AT_THE_CAP` times
    /// `min_body_rate` may be cut to make room (with 0, none is).
    pub fn new(min_body_rate: u64) -> Registry {
        Registry {
            conns: Mutex::default(),
            next: AtomicU64::new(0),
            epoch: Instant::now(),
            changed: Notify::new(),
            slow: min_body_rate.saturating_mul(SLOW_AT_THE_CAP),
        }
    }

    /// Adds a connection, idle from now.
    pub fn register(self: &Arc<Self>) -> Arc<Conn> {
        let conn = Arc::new(Conn {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            registry: self.clone(),
            requests: AtomicUsize::new(0),
            writing: AtomicBool::new(false),
            body_rate: AtomicU64::new(NO_RATE),
            idle_since: AtomicU64::new(self.now()),
            evicted: AtomicBool::new(false),
            fresh: AtomicBool::new(true),
            told: Notify::new(),
        });
        self.lock().insert(conn.id, conn.clone());
        conn
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Picks a connection to be closed ([`choose`]), unless one picked before is on its way
    /// out (still idle, or its body still to be cut: it frees a slot soon). Returns whether a
    /// connection is on its way out.
    pub fn evict_one(&self) -> bool {
        let conns = self.lock();
        let leaving = |c: &Conn| c.evicted() && (c.is_idle() || c.body_rate().is_some());
        if conns.values().any(|c| leaving(c)) {
            return true;
        }
        let seen: Vec<Seen> = conns
            .values()
            .filter(|c| !c.evicted())
            .map(|c| Seen {
                id: c.id,
                idle_since: (c.is_idle() && !c.fresh.load(Ordering::Relaxed))
                    .then(|| c.idle_since.load(Ordering::Relaxed)),
                body_rate: c.body_rate(),
            })
            .collect();
        match choose(&seen, self.slow).and_then(|id| conns.get(&id)) {
            Some(conn) => {
                conn.evicted.store(true, Ordering::Relaxed);
                conn.told.notify_waiters();
                true
            }
            None => false,
        }
    }

    /// Waits until a connection becomes idle or ends.
    pub async fn changed(&self) {
        self.changed.notified().await
    }
}

impl Conn {
    pub fn is_idle(&self) -> bool {
        self.requests.load(Ordering::Acquire) == 0 && !self.writing.load(Ordering::Relaxed)
    }

    /// Whether it was chosen to be closed to make room.
    pub fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Waits until the connection is chosen to be closed.
    pub async fn until_evicted(&self) {
        loop {
            let told = self.told.notified();
            tokio::pin!(told);
            // Listening before looking: a choice made in between is not missed.
            told.as_mut().enable();
            if self.evicted() {
                return;
            }
            told.await;
        }
    }

    /// Says the connection's socket is being read from.
    fn read_from(&self) {
        self.fresh.store(false, Ordering::Relaxed);
    }

    /// Says how fast its request body arrives (`None`: no body read, or not measured yet).
    pub fn set_body_rate(&self, rate: Option<u64>) {
        let rate = rate.map_or(NO_RATE, |r| r.min(NO_RATE - 1));
        self.body_rate.store(rate, Ordering::Relaxed);
    }

    fn body_rate(&self) -> Option<u64> {
        Some(self.body_rate.load(Ordering::Relaxed)).filter(|&r| r != NO_RATE)
    }

    pub(crate) fn request_started(&self) {
        self.requests.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn request_done(&self) {
        if self.requests.fetch_sub(1, Ordering::AcqRel) == 1 {
            let registry = &self.registry;
            self.idle_since.store(registry.now(), Ordering::Relaxed);
            registry.changed.notify_one();
        }
    }
}

/// Removes a connection from its registry when its task ends.
pub struct Closing(pub Arc<Conn>);

impl Drop for Closing {
    fn drop(&mut self) {
        let registry = &self.0.registry;
        registry.lock().remove(&self.0.id);
        registry.changed.notify_one();
    }
}

pub struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    /// Armed while a write is waiting; reset by any progress.
    waiting: Option<Pin<Box<Sleep>>>,
    /// Told whether a write is waiting (a connection writing is not idle).
    conn: Option<Arc<Conn>>,
}

impl<S> WriteDeadline<S> {
    pub fn new(inner: S, limit: Duration, conn: Option<Arc<Conn>>) -> Self {
        WriteDeadline {
            inner,
            limit,
            waiting: None,
            conn,
        }
    }

    /// Turns a pending write into a timeout once it has waited `limit`.
    fn stalled<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if let Some(conn) = &self.conn {
            conn.writing.store(poll.is_pending(), Ordering::Relaxed);
        }
        if poll.is_ready() {
            self.waiting = None;
            return poll;
        }
        let limit = self.limit;
        let timer = self.waiting.get_or_insert_with(|| Box::pin(sleep(limit)));
        if timer.as_mut().poll(cx).is_ready() {
            timer.as_mut().reset(Instant::now() + limit);
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            )));
        }
        Poll::Pending
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(conn) = &self.conn {
            conn.read_from();
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.stalled(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.stalled(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.stalled(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A connection registered and read from.
    fn read(registry: &Arc<Registry>) -> Arc<Conn> {
        let conn = registry.register();
        conn.read_from();
        conn
    }

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_connection_idle_longest_is_closed_never_a_busy_one() {
        let registry = Arc::new(Registry::new(0));
        // Never read from: its request may be waiting unread, so it is never closed for room.
        let unread = registry.register();
        let _unread = Closing(unread.clone());
        let oldest = read(&registry);
        tokio::time::advance(Duration::from_secs(1)).await;
        let busy = read(&registry);
        busy.request_started();
        tokio::time::advance(Duration::from_secs(1)).await;
        let newer = read(&registry);
        let closing = [&oldest, &busy, &newer].map(|c| Closing(c.clone()));

        assert!(registry.evict_one());
        assert!(oldest.evicted() && !busy.evicted() && !newer.evicted());
        tokio::time::timeout(Duration::from_secs(1), oldest.until_evicted())
            .await
            .expect("the connection is told");
        // One on its way out is enough: no second is picked until it is gone.
        assert!(registry.evict_one());
        assert!(!newer.evicted());
        let [gone, busy_closing, newer_closing] = closing;
        drop(gone);
        assert!(registry.evict_one());
        assert!(newer.evicted() && !busy.evicted());
        drop(newer_closing);
        // Only a busy connection left: nothing can be closed until its response is done.
        assert!(!registry.evict_one());
        busy.request_done();
        assert!(registry.evict_one() && busy.evicted());
        drop(busy_closing);
        assert!(!registry.evict_one() && !unread.evicted());
    }

    #[test]
    fn the_idle_longest_go_first_then_the_slowest_body_under_the_limit() {
        let idle = |id, since| Seen {
            id,
            idle_since: Some(since),
            body_rate: None,
        };
        let body = |id, rate| Seen {
            id,
            idle_since: None,
            body_rate: rate,
        };
        let slow = 64 << 10;
        let busy = [
            body(1, Some(20 << 10)),
            body(2, Some(18 << 10)),
            body(3, None),
        ];
        assert_eq!(choose(&busy, slow), Some(2), "the slowest body");
        let mut with_idle = busy.to_vec();
        with_idle.extend([idle(7, 50), idle(8, 40)]);
        assert_eq!(
            choose(&with_idle, slow),
            Some(8),
            "the idle longest, before any body"
        );
        // Bodies at or above the limit, or not measured yet, are never cut for room.
        let fast = [body(1, Some(slow)), body(2, Some(100 << 20)), body(3, None)];
        assert_eq!(choose(&fast, slow), None);
        assert_eq!(choose(&busy, 0), None, "no minimum rate: no body is cut");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_body_is_chosen_only_when_none_is_idle_and_one_at_a_time() {
        let registry = Arc::new(Registry::new(16 << 10));
        let [slow, slower, idle] = [(); 3].map(|_| read(&registry));
        let _closing = [&slow, &slower, &idle].map(|c| Closing(c.clone()));
        for (conn, rate) in [(&slow, 60 << 10), (&slower, 10 << 10)] {
            conn.request_started();
            conn.set_body_rate(Some(rate));
        }
        assert!(registry.evict_one() && idle.evicted() && !slower.evicted());
        idle.request_started();
        // The idle one chosen is busy now (a request came first): the slowest body goes.
        assert!(registry.evict_one() && slower.evicted());
        tokio::time::timeout(Duration::from_secs(1), slower.until_evicted())
            .await
            .expect("the connection is told");
        // Until its body is cut, no other is chosen.
        assert!(registry.evict_one() && !slow.evicted());
        slower.set_body_rate(None);
        assert!(registry.evict_one() && slow.evicted());
    }

    #[test]
    fn the_cap_leaves_descriptors_for_files() {
        assert_eq!(cap_for(1024, None), 1024);
        assert_eq!(cap_for(1024, Some(1 << 20)), 1024);
        assert_eq!(cap_for(1024, Some(1024)), 768);
        assert_eq!(cap_for(1024, Some(128)), 64);
        assert_eq!(cap_for(16, Some(128)), 16);
        assert_eq!(cap_for(1024, Some(10)), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_that_stops_is_cut_off_and_one_that_reads_is_not() {
        let (client, server) = tokio::io::duplex(1024);
        let mut server = WriteDeadline::new(server, Duration::from_secs(5), None);
        // The client reads nothing: the write fills the pipe and then times out.
        let err = server.write_all(&[0u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);

        let (mut client, server) = tokio::io::duplex(1024);
        let mut server = WriteDeadline::new(server, Duration::from_secs(5), None);
        let reader = tokio::spawn(async move {
            let mut sink = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut client, &mut sink)
                .await
                .unwrap();
            sink.len()
        });
        server.write_all(&[0u8; 64 * 1024]).await.unwrap();
        drop(server);
        assert_eq!(reader.await.unwrap(), 64 * 1024);
    }
}
