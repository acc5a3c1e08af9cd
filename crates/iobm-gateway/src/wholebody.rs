//! The bodies s3s reads whole before an operation runs (the XML documents of ACLs, tags,
//! DeleteObjects, completions, bucket settings), at most [`MAX_XML_BODY`] bytes; an object's or
//! a part's bytes are streamed instead. s3s answers such a body over the limit, or one whose
//! bytes differ from its signed `x-amz-content-sha256`, with a bare 500 (its full-body reader
//! maps both to `InternalError`): the gateway refuses the first by its declared length before
//! a byte is read ([`check`]), and hashes the second as s3s reads it ([`watched`]), so that both
//! get S3's 400.

use crate::body_rate::Metered;
use crate::guard::{declared_length, Refusal};
use crate::query::Query;
use bytes::Bytes;
use futures::Stream;
use hyper::body::Body as _;
use hyper::{Method, Request, StatusCode, Uri};
use s3s::crypto::Checksum;
use s3s::stream::{ByteStream, RemainingLength};
use s3s::Body;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// Largest body s3s reads whole (its `xml_max_body_size`): 1000 DeleteObjects keys of up to
/// 1024 bytes, or 10,000 parts of a completion, fit with room to spare.
pub const MAX_XML_BODY: u64 = 4 << 20;

/// The query parameters of a PUT of an object or a part besides its credential.
const UPLOAD_PARAMS: [&str; 3] = ["partNumber", "uploadId", "x-id"];

/// Whether a request's body is streamed by its operation (PutObject, UploadPart, and the
/// browser upload PostObject) rather than read whole by s3s.
fn streamed(method: &Method, uri: &Uri) -> bool {
    let query = Query::parse(uri.query().unwrap_or_default());
    let plain = |name: &str| {
        UPLOAD_PARAMS.contains(&name)
            || name.starts_with("X-Amz-")
            || crate::query::CREDENTIAL_PARAMS.contains(&name)
    };
    (method == Method::PUT
        && crate::whole::bucket_and_key(uri).is_some()
        && query.names().all(plain))
        || (method == Method::POST && query.names().next().is_none())
}

/// A body s3s would read whole is refused by its declared length: a DeleteObjects body over
/// the limit is `MalformedXML` (as S3 answers too many keys), any other
/// `MaxMessageLengthExceeded`.
pub fn check(method: &Method, uri: &Uri, headers: &hyper::HeaderMap) -> Result<(), Refusal> {
    if streamed(method, uri) || declared_length(headers).is_none_or(|n| n <= MAX_XML_BODY) {
        return Ok(());
    }
    let delete =
        method == Method::POST && Query::parse(uri.query().unwrap_or_default()).has("delete");
    let (code, message) = if delete {
        ("MalformedXML", "a DeleteObjects body")
    } else {
        ("MaxMessageLengthExceeded", "a request body read whole")
    };
    Err(Refusal::new(
        StatusCode::BAD_REQUEST,
        code,
        format!("Your request was too big: {message} is at most {MAX_XML_BODY} bytes"),
    ))
}

/// Set when the body passed through [`Hashed`] differs from its declared SHA-256.
#[derive(Debug, Clone, Default)]
pub struct Mismatch(Arc<AtomicBool>);

impl Mismatch {
    /// What answers a request whose body differed from its hash, where s3s failed it.
    pub fn answer(&self, response: s3s::HttpResponse) -> s3s::HttpResponse {
        if !self.0.load(Ordering::Relaxed) || response.status().is_success() {
            return response;
        }
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "XAmzContentSHA256Mismatch",
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        )
        .response()
    }
}

/// The request with its body hashed as it is read when s3s reads it whole against a hex
/// `x-amz-content-sha256` (else as it is), and what the hash will say.
pub fn watched(req: Request<Metered>) -> (Request<Body>, Mismatch) {
    let mismatch = Mismatch::default();
    let expected = req
        .headers()
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok())
        .filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase);
    let length = declared_length(req.headers()).filter(|&n| n > 0);
    let (Some(expected), Some(left)) = (expected, length) else {
        return (req.map(Body::http_body), mismatch);
    };
    if streamed(req.method(), req.uri()) {
        return (req.map(Body::http_body), mismatch);
    }
    let watch = mismatch.clone();
    let req = req.map(move |inner| {
        let hashed = Hashed {
            inner,
            hasher: Some(s3s::crypto::Sha256::new()),
            expected,
            left,
            mismatch: watch,
        };
        Body::from(Box::pin(hashed) as s3s::stream::DynByteStream)
    });
    (req, mismatch)
}

/// A body passed on as it is, hashed: once its declared length has passed, a hash other than
/// the one declared sets [`Mismatch`].
struct Hashed {
    inner: Metered,
    hasher: Option<s3s::crypto::Sha256>,
    /// Lowercase hex.
    expected: String,
    /// Bytes still to come.
    left: u64,
    mismatch: Mismatch,
}

impl Stream for Hashed {
    type Item = Result<Bytes, s3s::StdError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                None => return Poll::Ready(None),
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                Some(Ok(frame)) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            this.left = this.left.saturating_sub(data.len() as u64);
            if let Some(hasher) = &mut this.hasher {
                hasher.update(&data);
            }
            if this.left == 0 {
                if let Some(hasher) = this.hasher.take() {
                    let differs = crate::meta::hex(&hasher.finalize()) != this.expected;
                    this.mismatch.0.store(differs, Ordering::Relaxed);
                }
            }
            return Poll::Ready(Some(Ok(data)));
        }
    }
}

impl ByteStream for Hashed {
    fn remaining_length(&self) -> RemainingLength {
        RemainingLength::new_exact(usize::try_from(self.left).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn length(n: u64) -> hyper::HeaderMap {
        let mut h = hyper::HeaderMap::new();
        h.insert(hyper::header::CONTENT_LENGTH, n.into());
        h
    }

    fn code(method: Method, uri: &str, len: u64) -> &'static str {
        check(&method, &uri.parse().unwrap(), &length(len)).map_or_else(|e| e.code, |()| "ok")
    }

    #[test]
    fn bodies_read_whole_are_refused_past_the_limit_by_their_length() {
        let over = MAX_XML_BODY + 1;
        assert_eq!(code(Method::POST, "/b?delete", MAX_XML_BODY), "ok");
        assert_eq!(code(Method::POST, "/b?delete=", over), "MalformedXML");
        for uri in ["/b?acl", "/b/k?tagging", "/b/k?acl", "/b"] {
            assert_eq!(
                code(Method::PUT, uri, over),
                "MaxMessageLengthExceeded",
                "{uri}"
            );
        }
        assert_eq!(
            code(Method::POST, "/b/k?uploadId=1", over),
            "MaxMessageLengthExceeded"
        );
        // Objects and parts are streamed, whatever their size; so is a browser upload.
        for uri in [
            "/b/k",
            "/b/k?partNumber=1&uploadId=1",
            "/b/k?X-Amz-Credential=c&X-Amz-Signature=s",
            "/b/k?AWSAccessKeyId=a&Signature=s&Expires=1",
            "/b/k?x-id=PutObject",
        ] {
            assert_eq!(code(Method::PUT, uri, 1 << 30), "ok", "{uri}");
        }
        assert_eq!(code(Method::POST, "/b", 1 << 30), "ok");
        // A PUT named `delete` is no DeleteObjects.
        assert_eq!(
            code(Method::PUT, "/b/k?delete", over),
            "MaxMessageLengthExceeded"
        );
    }
}
