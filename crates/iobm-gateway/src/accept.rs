//! The gateway's accept loop: connections taken within the cap (at the cap one makes room,
//! [`conn::Registry::evict_one`]; out of descriptors, accepting pauses), each served on a task
//! of its own, over TLS where the gateway speaks it, until `stop` is set.

use crate::body_rate::BodyLimits;
use crate::service::Guard;
use crate::{conn, counted, Options};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// How long accepting pauses when the process is out of descriptors.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How often `stop` is looked at.
const STOP_POLL: Duration = Duration::from_millis(100);

fn out_of_resources(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)
    )
}

/// Accepts connections on `listener` and serves each with `service` until `stop` is set.
pub(crate) async fn serve_connections(
    listener: &TcpListener,
    service: Guard,
    options: &Options,
    stop: &AtomicBool,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    let tls = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let cap = conn::within_descriptors(options.max_connections.max(1));
    let slots = Arc::new(Semaphore::new(cap));
    let registry = Arc::new(conn::Registry::new(options.min_body_rate));
    let limits = BodyLimits {
        min_rate: options.min_body_rate,
        timeout: options.body_timeout,
    };
    let mut told_exhausted = false;
    while !stop.load(Ordering::Relaxed) {
        let stream = match tokio::time::timeout(STOP_POLL, listener.accept()).await {
            Err(_) => continue,
            Ok(Ok((stream, _))) => stream,
            Ok(Err(e)) if out_of_resources(&e) => {
                // Keep serving the connections there are, less the one idle longest; try
                // again shortly instead of spinning.
                if !told_exhausted {
                    eprintln!("iobm serve: cannot accept connections: {e}; pausing accepts");
                    told_exhausted = true;
                }
                registry.evict_one();
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
            Ok(Err(_)) => continue, // the client gave up before the accept (ECONNABORTED and kin)
        };
        told_exhausted = false;
        let Some(slot) = slot_for_next(&slots, &registry, stop).await else {
            break;
        };
        let _ = stream.set_nodelay(true);
        let conn = registry.register();
        let stream = conn::WriteDeadline::new(stream, options.body_timeout, Some(conn.clone()));
        let connection = Connection {
            http: http.clone(),
            service: service.clone(),
            conn,
            limits,
            tls: tls.clone(),
            handshake_timeout: options.header_timeout,
        };
        tokio::spawn(async move {
            connection.serve(stream).await;
            drop(slot);
        });
    }
}

/// What one connection is served with.
struct Connection {
    http: hyper::server::conn::http1::Builder,
    service: Guard,
    conn: Arc<conn::Conn>,
    limits: BodyLimits,
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// Longest a TLS handshake may take (a request's headers' limit).
    handshake_timeout: Duration,
}

impl Connection {
    /// Serves the connection until it ends, over TLS where the gateway speaks it.
    async fn serve(self, stream: conn::WriteDeadline<TcpStream>) {
        let Connection {
            http,
            service,
            conn,
            limits,
            tls,
            handshake_timeout,
        } = self;
        let _closing = conn::Closing(conn.clone());
        match tls {
            None => serve_connection(&http, stream, service, conn, limits).await,
            Some(acceptor) => {
                // A handshake is bounded like a request's headers, and is idle time.
                let handshake = tokio::time::timeout(handshake_timeout, acceptor.accept(stream));
                tokio::select! {
                    done = handshake => if let Ok(Ok(stream)) = done {
                        serve_connection(&http, stream, service, conn, limits).await;
                    },
                    () = conn.until_evicted() => {}
                }
            }
        }
    }
}

/// A connection slot for the next connection: at the cap, a connection makes room
/// ([`conn::Registry::evict_one`]); with none to close, the next connections wait in the
/// kernel's backlog. `None` once `stop` is set.
async fn slot_for_next(
    slots: &Arc<Semaphore>,
    registry: &conn::Registry,
    stop: &AtomicBool,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    loop {
        if let Ok(slot) = slots.clone().try_acquire_owned() {
            return Some(slot);
        }
        registry.evict_one();
        tokio::select! {
            slot = slots.clone().acquire_owned() => {
                return Some(slot.expect("the semaphore is never closed"));
            }
            () = registry.changed() => {}
            () = tokio::time::sleep(STOP_POLL) => {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
            }
        }
    }
}

/// Serves HTTP on one connection until it ends, or until it is chosen to make room
/// ([`conn::Registry::evict_one`]): then it is closed at once if it is still idle (no request
/// in flight, nothing waiting to be written), else once its response is written (a request
/// body being read is cut first, [`crate::body_rate::Metered`]).
async fn serve_connection<I>(
    http: &hyper::server::conn::http1::Builder,
    io: I,
    service: Guard,
    conn: Arc<conn::Conn>,
    limits: BodyLimits,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let counted = counted::Counted {
        inner: service,
        conn: conn.clone(),
        limits,
    };
    let served = http.serve_connection(hyper_util::rt::TokioIo::new(io), counted);
    tokio::pin!(served);
    tokio::select! {
        _ = served.as_mut() => return,
        () = conn.until_evicted() => {}
    }
    // Idle, hyper holds at most part of a request's headers: dropping the connection loses
    // nothing sent to the client.
    if !conn.is_idle() {
        served.as_mut().graceful_shutdown();
        let _ = served.await;
    }
}
