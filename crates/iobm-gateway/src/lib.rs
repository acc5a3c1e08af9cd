//! iobm-gateway: `iobm serve`, an S3 gateway over a directory. s3s does HTTP, XML and SigV4
//! (headers and presigned URLs); [`s3::Gateway`] maps buckets and keys to directories and files
//! with atomic writes. It also serves as the built-in S3 target of `iobm s3` and `iobm quick`.

pub mod s3;
pub mod store;

use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// No signature required (`--anonymous`).
    Anonymous,
}

/// Serves `root` on `listener` until `stop` is set (checked every 100 ms).
pub async fn serve(
    root: &Path,
    listener: TcpListener,
    access: Access,
    fsync: bool,
    stop: &AtomicBool,
) -> io::Result<()> {
    let store = store::Store::open(root, fsync)?;
    let bookkeeping = store.bookkeeping_dirs();
    let mut builder = S3ServiceBuilder::new(s3::Gateway { store });
    if let Access::Keys {
        access_key,
        secret_key,
    } = access
    {
        builder.set_auth(SimpleAuth::from_single(access_key, secret_key));
    }
    let service = builder.build();
    let http = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(_) => continue,
            },
            _ = tick.tick() => {
                if stop.load(Ordering::Relaxed) {
                    for dir in &bookkeeping {
                        let _ = std::fs::remove_dir(dir);
                    }
                    return Ok(());
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let http = http.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = http.serve_connection(io, service).await;
        });
    }
}

/// Binds `addr` (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
