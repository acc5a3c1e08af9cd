//! A connection's service: each request counted in flight on its connection ([`crate::conn`])
//! from its headers until its response body is done, and its body [`Metered`] as it is read.

use crate::body_rate::{BodyLimits, Metered};
use crate::conn::Conn;
use hyper::body::{Body, Frame, SizeHint};
use hyper::{Request, Response};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A connection's service: marks the connection busy from each request's headers until its
/// response body is done, and hands the request on with its body [`Metered`].
#[derive(Debug, Clone)]
pub struct Counted<S> {
    pub inner: S,
    pub conn: Arc<Conn>,
    pub limits: BodyLimits,
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
    S: hyper::service::Service<Request<Metered>, Response = Response<B>>,
    S::Future: Unpin,
{
    type Response = Response<CountedBody<B>>;
    type Error = S::Error;
    type Future = CountedFuture<S::Future>;

    fn call(&self, req: Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = InFlight::new(&self.conn);
        let req = req.map(|body| Metered::new(body, self.conn.clone(), self.limits));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::{Closing, Registry};
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    #[tokio::test]
    async fn a_request_keeps_its_connection_busy_until_its_response_body_is_dropped() {
        let registry = Arc::new(Registry::new(0));
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
}
