//! A signed PUT sent with `Transfer-Encoding: chunked` and no Content-Length (what an HTTP
//! client does with a body of unknown length). s3s needs the length to check the request (AWS
//! answers such a PUT with 411), so the gateway first writes the body to one of its temporary
//! files, at most [`MAX_SPOOLED`] bytes (S3's limit for one PUT), then hands the request on
//! with that length and the body read back from the file.

use crate::guard::Refusal;
use crate::store::{Store, Temp};
use bytes::Bytes;
use futures::Stream;
use hyper::body::{Body as _, Incoming};
use hyper::header::{HeaderValue, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::{Method, Request, StatusCode};
use s3s::stream::{ByteStream, RemainingLength};
use s3s::Body;
use std::io;
use std::os::unix::fs::FileExt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Largest body taken without a Content-Length: 5 GiB, S3's limit for one PUT.
pub const MAX_SPOOLED: u64 = 5 << 30;
/// Bytes read back from the file at a time.
const CHUNK: usize = 1 << 20;

/// Whether a request is a PUT whose body comes chunked with no length given (aws-chunked
/// bodies give theirs in `x-amz-decoded-content-length`).
pub fn wanted(req: &Request<Incoming>) -> bool {
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
pub async fn spool(
    req: Request<Incoming>,
    store: &Store,
    body_timeout: Duration,
) -> Result<Request<Body>, Refusal> {
    let failed = |e: io::Error| {
        Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("cannot keep the body: {e}"),
        )
    };
    let (mut parts, mut body) = req.into_parts();
    let temp = store.create_temp().map_err(failed)?;
    let mut len = 0u64;
    loop {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        let frame = match tokio::time::timeout(body_timeout, frame).await {
            Err(_) => {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "RequestTimeout",
                    "the request body stopped arriving",
                ))
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "IncompleteBody",
                    format!("the request body ended early: {e}"),
                ))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if len + data.len() as u64 > MAX_SPOOLED {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                format!("a PUT without a Content-Length takes at most {MAX_SPOOLED} bytes"),
            ));
        }
        tokio::task::block_in_place(|| temp.file.write_all_at(&data, len)).map_err(failed)?;
        len += data.len() as u64;
    }
    parts.headers.remove(TRANSFER_ENCODING);
    parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    let body = FileBody {
        temp,
        offset: 0,
        len,
    };
    Ok(Request::from_parts(
        parts,
        Body::from(Box::pin(body) as s3s::stream::DynByteStream),
    ))
}

/// A spooled body read back; the file goes when the body does.
struct FileBody {
    temp: Temp,
    offset: u64,
    len: u64,
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
