//! iobm-gateway: `iobm serve`, an S3 gateway over a directory. s3s does HTTP, XML and SigV4
//! (headers and presigned URLs) behind [`guard`]'s stricter checks; [`s3::Gateway`] maps
//! buckets and keys to directories and files, confined to the directory by the kernel
//! ([`confine`]), with atomic writes. It also serves as the built-in S3 target of `iobm s3` and
//! `iobm quick`.

mod accept;
pub mod accounts;
pub mod acl;
mod attributes;
mod body_rate;
mod checksums;
mod chunked;
mod conditions;
pub mod confine;
mod conn;
mod counted;
mod errors;
mod gateway;
pub mod grants;
pub mod guard;
pub mod hashing;
mod listing;
mod meta;
pub mod metrics;
pub mod multipart;
mod post;
mod probe;
mod query;
mod routes;
pub mod s3;
mod service;
mod spool;
pub mod store;
mod tagging;
pub mod tls;
mod uploads;
pub mod versions;
mod whole;
mod wholebody;

use s3s::config::{S3Config, StaticConfigProvider};
use s3s::service::S3ServiceBuilder;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Who may call the gateway.
#[derive(Debug, Clone)]
pub enum Access {
    /// SigV4 with this key pair; anything else gets 403.
    Keys {
        access_key: String,
        secret_key: String,
    },
    /// SigV4 with the key pairs of a users file (`--users`, read once by
    /// [`accounts::Accounts::from_file`]), read again on SIGHUP; buckets belong to the account
    /// that made them ([`acl`]).
    Users(Arc<accounts::Accounts>),
    /// No signature required (`--anonymous`).
    Anonymous,
}

/// How the gateway serves: who may call it, where signatures must be scoped, and what one
/// connection may hold.
#[derive(Debug, Clone)]
pub struct Options {
    pub access: Access,
    /// fsync every object before it becomes visible.
    pub fsync: bool,
    /// The region signatures must name.
    pub region: String,
    /// Longest wait for a request's headers, counted from when the connection is ready for
    /// its next request: it also closes an idle keep-alive connection.
    pub header_timeout: Duration,
    /// Longest a request body may stop arriving, or a response stop being read.
    pub body_timeout: Duration,
    /// Bytes a second every request body must bring over a window of 10 s of waiting for it
    /// (0: no minimum); a slower one is cut with RequestTimeout.
    pub min_body_rate: u64,
    /// Connections served at once, lowered to what the descriptor limit allows. At the cap, a
    /// new connection closes the one idle longest (waiting for its first or next request); when
    /// none is idle, the one whose request body arrives slowest, if under 4 times
    /// `min_body_rate`; else more wait in the listen backlog.
    pub max_connections: usize,
    /// Multipart uploads started longer ago than this are removed (checked every minute or
    /// sooner).
    pub abort_incomplete_after: Option<Duration>,
    /// HTTPS instead of plain HTTP ([`tls::server_config`]).
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Options {
    pub fn new(access: Access) -> Options {
        Options {
            access,
            fsync: false,
            region: "us-east-1".into(),
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(60),
            min_body_rate: 16 << 10,
            max_connections: 1024,
            abort_incomplete_after: None,
            tls: None,
        }
    }
}

/// Serves `root` on `listener` until `stop` is set (checked every 100 ms); with
/// `metrics_listener`, also the counters at an unsigned `/metrics` there.
pub async fn serve(
    root: &Path,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    options: Options,
    stop: &AtomicBool,
) -> io::Result<()> {
    let served = Served::open(root, &options)?;
    let sweeper = Some(spawn_sweeper(
        served.store.clone(),
        served.completed.clone(),
        options.abort_incomplete_after,
    ));
    let scrapes = metrics_listener.map(|l| tokio::spawn(serve_metrics(l, served.metrics.clone())));
    let reloads = served
        .accounts
        .clone()
        .filter(|a| !a.is_single())
        .map(|a| tokio::spawn(reload_on_hangup(a)));
    accept::serve_connections(&listener, served.service(&options.region), &options, stop).await;
    for task in [sweeper, scrapes, reloads].into_iter().flatten() {
        task.abort();
    }
    served.completed.sweep(multipart::Completed::KEPT_FOR);
    served.completed.remove_if_empty(served.internal.as_fd());
    served.store.remove_bookkeeping();
    Ok(())
}

/// What a gateway serves from: its store and its own directory, the completions it keeps, its
/// counters, its accounts, and the S3 implementation over them.
struct Served {
    store: store::Store,
    internal: OwnedFd,
    completed: Arc<multipart::Completed>,
    metrics: Arc<metrics::Metrics>,
    accounts: Option<Arc<accounts::Accounts>>,
    gateway: gateway::Gateway,
}

impl Served {
    /// Opens the store beneath `root` and finishes what a stop interrupted there.
    fn open(root: &Path, options: &Options) -> io::Result<Served> {
        let store = store::Store::open(root, options.fsync)?;
        let internal = internal_dir(&store)?;
        let completed = Arc::new(multipart::Completed::open(internal.as_fd(), options.fsync)?);
        let recovered = uploads::recover(&store, &completed);
        if recovered != multipart::Recovered::default() {
            eprintln!(
                "iobm serve: completions interrupted by a stop: {} finished, {} given back as uploads",
                recovered.finished, recovered.rolled_back
            );
        }
        let metrics = Arc::new(metrics::Metrics::new(root.to_path_buf()));
        let accounts = match &options.access {
            Access::Keys {
                access_key,
                secret_key,
            } => Some(Arc::new(accounts::Accounts::single(access_key, secret_key))),
            Access::Users(accounts) => Some(accounts.clone()),
            Access::Anonymous => None,
        };
        let policy = accounts.clone().map(|accounts| acl::Policy {
            accounts,
            store: store.clone(),
        });
        let gateway = gateway::Gateway {
            store: store.clone(),
            metrics: metrics.clone(),
            completed: completed.clone(),
            hashers: Arc::new(hashing::Hashers::start()),
            policy,
        };
        Ok(Served {
            store,
            internal,
            completed,
            metrics,
            accounts,
            gateway,
        })
    }

    /// s3s over the gateway, its own routes beside it, the gate with its accounts, all behind
    /// the guard's checks.
    fn service(&self, region: &str) -> service::Guard {
        let mut builder = S3ServiceBuilder::new(self.gateway.clone());
        builder.set_route(routes::Routes {
            gateway: self.gateway.clone(),
            metrics: self.metrics.clone(),
        });
        let mut config = S3Config::default();
        config.xml_max_body_size = wholebody::MAX_XML_BODY as usize;
        builder.set_config(Arc::new(StaticConfigProvider::new(Arc::new(config))));
        let policy = self.gateway.policy.clone();
        let signed = policy.is_some();
        if let Some(policy) = policy {
            builder.set_auth(accounts::Auth(policy.accounts.clone()));
            builder.set_access(policy);
        }
        service::Guard {
            inner: builder.build(),
            region: region.into(),
            signed,
            store: self.store.clone(),
            gateway: self.gateway.clone(),
        }
    }
}

/// Forgets completions once they are kept long enough, and removes multipart uploads older
/// than `abort_after`, every minute or sooner.
fn spawn_sweeper(
    store: store::Store,
    completed: Arc<multipart::Completed>,
    abort_after: Option<Duration>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let period = abort_after.map_or(Duration::from_secs(60), |age| {
            (age / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
        });
        let mut every = tokio::time::interval(period);
        loop {
            every.tick().await;
            completed.sweep(multipart::Completed::KEPT_FOR);
            if let Some(age) = abort_after {
                multipart::sweep(store.uploads_dir(), age);
            }
        }
    })
}

/// The gateway's own directory beneath the root.
fn internal_dir(store: &store::Store) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let root = rustix::fs::open(store.root(), flags, Mode::empty())?;
    confine::open_beneath(root.as_fd(), store::INTERNAL, flags, Mode::empty())
}

/// Reads the users file again on every SIGHUP; a file that does not parse leaves the accounts
/// as they were, and says why (never a secret).
async fn reload_on_hangup(accounts: Arc<accounts::Accounts>) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        eprintln!("iobm serve: cannot catch SIGHUP: the users file is read only at start");
        return;
    };
    while hangups.recv().await.is_some() {
        match accounts.reload() {
            Ok(n) => eprintln!("iobm serve: SIGHUP: {n} accounts read"),
            Err(e) => eprintln!("iobm serve: SIGHUP: {e}; the accounts stay as they were"),
        }
    }
}

/// Answers `GET /metrics` on `listener` with the counters, unsigned (`--metrics-listen`: for
/// loopback or an operator's network, as Prometheus scrapes); anything else is 404.
async fn serve_metrics(listener: TcpListener, metrics: Arc<metrics::Metrics>) {
    let http = hyper::server::conn::http1::Builder::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(accept::ACCEPT_BACKOFF).await;
            continue;
        };
        let metrics = metrics.clone();
        let http = http.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: hyper::Request<_>| {
                let response = if req.method() == hyper::Method::GET
                    && req.uri().path() == metrics::PATH
                {
                    metrics::response(&metrics, &|_| true)
                } else {
                    let mut r =
                        hyper::Response::new(String::from("only GET /metrics is served here\n"));
                    *r.status_mut() = hyper::StatusCode::NOT_FOUND;
                    r
                };
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = http.serve_connection(io, service).await;
        });
    }
}

/// Binds `addr` (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
