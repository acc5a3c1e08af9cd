//! The gateway's connections: a socket with a limit on how long a write may wait (a client
//! that stops reading a response, its window full for the body timeout, is cut off instead of
//! holding a connection slot and a descriptor for ever; reads need no such limit here: hyper
//! bounds the wait for request headers, and the gateway the wait for each piece of a body), and
//! the [`Registry`] of connections that makes the connection limit fair: a connection is busy
//! from a request's headers until its response is written, idle otherwise (before its first
//! request, between keep-alive requests, while its headers trickle in), and at the cap the
//! connection idle longest is closed for a new one, so idle sockets cannot hold out clients
//! that send requests.

use hyper::body::{Body, Frame, SizeHint};
use hyper::{Request, Response};
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

/// The connections being served.
#[derive(Debug)]
pub struct Registry {
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    /// When the registry began: connections' idle times count from it.
    epoch: Instant,
    /// Told when a connection becomes idle or ends.
    changed: Notify,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            conns: Mutex::default(),
            next: AtomicU64::new(0),
            epoch: Instant::now(),
            changed: Notify::new(),
        }
    }
}

/// One connection in the [`Registry`]; removed from it when dropped.
#[derive(Debug)]
pub struct Conn {
    id: u64,
    registry: Arc<Registry>,
    /// Requests whose response is not yet written whole.
    requests: AtomicUsize,
    /// A write to the socket is waiting for the client to read.
    writing: AtomicBool,
    /// Nanoseconds from the registry's epoch to when it last became idle.
    idle_since: AtomicU64,
    /// Chosen to be closed to make room ([`Registry::evict_one`]).
    evicted: AtomicBool,
    told: Notify,
}

impl Registry {
    /// Adds a connection, idle from now.
    pub fn register(self: &Arc<Self>) -> Arc<Conn> {
        let conn = Arc::new(Conn {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            registry: self.clone(),
            requests: AtomicUsize::new(0),
            writing: AtomicBool::new(false),
            idle_since: AtomicU64::new(self.now()),
            evicted: AtomicBool::new(false),
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

    /// Picks the connection idle longest to be closed, unless one picked before is still idle
    /// and on its way out (it frees a slot soon). Returns whether a connection is on its way
    /// out.
    pub fn evict_one(&self) -> bool {
        let conns = self.lock();
        if conns.values().any(|c| c.evicted() && c.is_idle()) {
            return true;
        }
        let oldest = conns
            .values()
            .filter(|c| !c.evicted() && c.is_idle())
            .min_by_key(|c| c.idle_since.load(Ordering::Relaxed));
        match oldest {
            Some(conn) => {
                conn.evicted.store(true, Ordering::Relaxed);
                conn.told.notify_one();
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

    fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Waits until the connection is chosen to be closed.
    pub async fn until_evicted(&self) {
        while !self.evicted() {
            self.told.notified().await;
        }
    }

    fn request_started(&self) {
        self.requests.fetch_add(1, Ordering::AcqRel);
    }

    fn request_done(&self) {
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

/// A connection's service: marks the connection busy from each request's headers until its
/// response body is done.
#[derive(Debug, Clone)]
pub struct Counted<S> {
    pub inner: S,
    pub conn: Arc<Conn>,
}

/// A request in flight on its connection; done when dropped.
#[derive(Debug)]
struct InFlight(Arc<Conn>);

impl InFlight {
    fn new(conn: &Arc<Conn>) -> InFlight {
        conn.request_started();
        InFlight(conn.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_done();
    }
}

impl<S, B> hyper::service::Service<Request<hyper::body::Incoming>> for Counted<S>
where
    S: hyper::service::Service<Request<hyper::body::Incoming>, Response = Response<B>>,
    S::Future: Unpin,
{
    type Response = Response<CountedBody<B>>;
    type Error = S::Error;
    type Future = CountedFuture<S::Future>;

    fn call(&self, req: Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = InFlight::new(&self.conn);
        CountedFuture {
            inner: self.inner.call(req),
            in_flight: Some(in_flight),
        }
    }
}

/// A response on its way; the request stays in flight until its body is done.
pub struct CountedFuture<F> {
    inner: F,
    in_flight: Option<InFlight>,
}

impl<F, B, E> Future for CountedFuture<F>
where
    F: Future<Output = Result<Response<B>, E>> + Unpin,
{
    type Output = Result<Response<CountedBody<B>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let response = std::task::ready!(Pin::new(&mut self.inner).poll(cx));
        let in_flight = self.in_flight.take();
        Poll::Ready(response.map(|r| {
            r.map(|inner| CountedBody {
                inner,
                _in_flight: in_flight,
            })
        }))
    }
}

/// A response body; its request is done when hyper drops it (sent whole, or the connection
/// closed).
pub struct CountedBody<B> {
    inner: B,
    _in_flight: Option<InFlight>,
}

impl<B: Body + Unpin> Body for CountedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
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

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_connection_idle_longest_is_closed_never_a_busy_one() {
        let registry = Arc::new(Registry::default());
        let oldest = registry.register();
        tokio::time::advance(Duration::from_secs(1)).await;
        let busy = registry.register();
        busy.request_started();
        tokio::time::advance(Duration::from_secs(1)).await;
        let newer = registry.register();
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
    }

    #[tokio::test]
    async fn a_request_keeps_its_connection_busy_until_its_response_body_is_dropped() {
        let registry = Arc::new(Registry::default());
        let conn = registry.register();
        let _closing = Closing(conn.clone());
        let response = CountedFuture {
            inner: std::future::ready(Ok::<_, ()>(Response::new(String::from("body")))),
            in_flight: Some(InFlight::new(&conn)),
        };
        assert!(!conn.is_idle());
        let response = response.await.unwrap();
        assert!(!conn.is_idle(), "the body is still to be sent");
        // A connection writing to a client that does not read is not idle either.
        conn.writing.store(true, Ordering::Relaxed);
        drop(response);
        assert!(!conn.is_idle());
        conn.writing.store(false, Ordering::Relaxed);
        assert!(conn.is_idle());
        let told = tokio::time::timeout(Duration::from_secs(5), registry.changed()).await;
        assert!(told.is_ok(), "the accept loop is told");
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
