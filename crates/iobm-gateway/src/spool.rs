//! A signed PUT sent with `Transfer-Encoding: chunked` and no Content-Length (what an HTTP
//! client does with a body of unknown length). s3s needs the length to check the request (AWS
//! answers such a PUT with 411), so the gateway first writes the body to one of its temporary
//! files, at most [`MAX_PUT`] bytes (S3's limit for one PUT), then hands the request on
//! with that length and the body read back from the file.
//!
//! Nothing is kept before the request is admitted: its head first goes through s3s and the
//! gate as a [`crate::probe::Probe`] without a body (the signature, its time window, and who may write
//! there), and only an admitted request is spooled. Spooled bytes count against
//! [`SPOOL_QUOTA`] for the whole gateway and never take the file system below a tenth free;
//! a body that arrives too slowly is cut as any other ([`crate::body_rate`]).

use crate::body_rate::Metered;
use crate::guard::{Refusal, MAX_PUT};
use crate::store::room::room_for;
use crate::store::{Store, Temp};
use bytes::Bytes;
use futures::Stream;
use hyper::body::Body as _;
use hyper::header::{HeaderValue, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::{Method, Request, StatusCode};
use s3s::stream::{ByteStream, RemainingLength};
use s3s::Body;
use std::io;
use std::os::unix::fs::FileExt;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Bytes read back from the file at a time.
const CHUNK: usize = 1 << 20;
/// Most bytes all spools of one gateway hold at once.
pub const SPOOL_QUOTA: u64 = 16 << 30;

/// Bytes held by all spools of this process.
static SPOOLED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The bytes one spool holds, given back when it ends.
struct Held(u64);

impl Held {
    fn take(&mut self, n: u64) -> bool {
        let before = SPOOLED.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        self.0 += n;
        before + n <= SPOOL_QUOTA
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        SPOOLED.fetch_sub(self.0, std::sync::atomic::Ordering::Relaxed);
    }
}

fn storage_full(message: &str) -> Refusal {
    Refusal::new(
        StatusCode::INSUFFICIENT_STORAGE,
        "XMinioStorageFull",
        message.to_string(),
    )
}

/// Whether a request is a PUT whose body comes chunked with no length given (aws-chunked
/// bodies give theirs in `x-amz-decoded-content-length`).
pub fn wanted<B>(req: &Request<B>) -> bool {
    let headers = req.headers();
    req.method() == Method::PUT
        && !headers.contains_key(CONTENT_LENGTH)
        && !headers.contains_key("x-amz-decoded-content-length")
        && headers
            .get(TRANSFER_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
}

/// The request with its body written to a temporary file and its length set.
pub async fn spool(req: Request<Metered>, store: &Store) -> Result<Request<Body>, Refusal> {
    let failed = |e: io::Error| match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            storage_full("no space left on the gateway's file system")
        }
        _ => Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("cannot keep the body: {e}"),
        ),
    };
    let (mut parts, mut body) = req.into_parts();
    let temp = store.create_temp().map_err(failed)?;
    let mut held = Held(0);
    let mut len = 0u64;
    loop {
        let frame = match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            None => break,
            Some(Err(e)) => {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "IncompleteBody",
                    format!("the request body ended early: {e}"),
                ))
            }
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        let n = data.len() as u64;
        if len + n > MAX_PUT {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                format!("a PUT without a Content-Length takes at most {MAX_PUT} bytes"),
            ));
        }
        if !held.take(n) || !room_for(&temp.file, n) {
            return Err(storage_full(
                "the gateway keeps no more bodies of unknown length now: send a Content-Length",
            ));
        }
        tokio::task::block_in_place(|| temp.file.write_all_at(&data, len)).map_err(failed)?;
        len += n;
    }
    parts.headers.remove(TRANSFER_ENCODING);
    parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    let body = FileBody {
        temp,
        offset: 0,
        len,
        _held: held,
    };
    Ok(Request::from_parts(
        parts,
        Body::from(Box::pin(body) as s3s::stream::DynByteStream),
    ))
}

/// A spooled body read back; the file (and its share of the quota) goes when the body does.
struct FileBody {
    temp: Temp,
    offset: u64,
    len: u64,
    _held: Held,
}

impl Stream for FileBody {
    type Item = Result<Bytes, s3s::StdError>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.offset == this.len {
            return Poll::Ready(None);
        }
        let want = CHUNK.min((this.len - this.offset) as usize);
        let mut buf = vec![0u8; want];
        // A local file just written: read here, on a worker thread that may block.
        let read =
            tokio::task::block_in_place(|| this.temp.file.read_exact_at(&mut buf, this.offset));
        Poll::Ready(Some(match read {
            Ok(()) => {
                this.offset += want as u64;
                Ok(Bytes::from(buf))
            }
            Err(e) => Err(Box::new(e)),
        }))
    }
}

impl ByteStream for FileBody {
    fn remaining_length(&self) -> RemainingLength {
        RemainingLength::new_exact((self.len - self.offset) as usize)
    }
}
