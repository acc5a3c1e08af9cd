//! A request sent through s3s and the gate before its body is read: a [`Probe`] with the
//! request's head (and, for a form upload, its fields but an empty file). s3s checks its
//! signature, the gate ([`crate::acl::Policy`], or [`crate::routes`] for a form) decides, and an
//! admitted probe stops there ([`stop_admitted`]), so no operation ever runs with a probe's
//! body; only then is the real body read.

use bytes::Bytes;
use hyper::header::{HeaderValue, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::Request;
use s3s::auth::Credentials;
use s3s::Body;
use std::cell::RefCell;

/// Marks a probe request.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// A form upload's key (its `key` field, `${filename}` replaced): what the gate is asked
    /// to let the caller write.
    pub form_key: Option<String>,
    /// The bytes a form upload may bring (its Content-Length, or S3's most for one PUT): what
    /// an unsigned write may take of the disk ([`crate::acl::Policy::admit_with_body`]).
    pub form_len: u64,
}

/// What became of a probe.
pub enum Admission {
    /// Admitted, for the caller of these credentials (`None`: unsigned).
    Admitted(Option<Credentials>),
    /// Refused: the answer to send instead.
    Refused(s3s::HttpResponse),
}

tokio::task_local! {
    /// Whether the gate admitted the probe this task sent, and for whom.
    static ADMITTED: RefCell<Option<Option<Credentials>>>;
}

/// What the gate answers an admitted probe: it is marked admitted for [`admit`], and this
/// error keeps s3s from running the operation.
pub fn stop_admitted(credentials: Option<&Credentials>) -> s3s::S3Error {
    let _ = ADMITTED.try_with(|a| *a.borrow_mut() = Some(credentials.cloned()));
    s3s::s3_error!(InternalError, "a probe goes no further than the gate")
}

/// Sends the head of `parts` with `body` through s3s and the gate as `probe`. Run it inside
/// [`crate::acl::with_checked_bucket`], with the operation that follows an admission, so that
/// the operation uses the bucket the gate checked.
pub async fn admit(
    inner: &s3s::service::S3Service,
    parts: &hyper::http::request::Parts,
    body: Bytes,
    probe: Probe,
) -> Result<Admission, s3s::HttpError> {
    let mut req = Request::new(Body::empty());
    *req.method_mut() = parts.method.clone();
    *req.uri_mut() = parts.uri.clone();
    *req.version_mut() = parts.version;
    *req.headers_mut() = parts.headers.clone();
    req.headers_mut().remove(TRANSFER_ENCODING);
    if !body.is_empty() {
        req.headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
        *req.body_mut() = Body::from(body);
    }
    req.extensions_mut().insert(probe);
    let answer = inner.call(req);
    ADMITTED
        .scope(RefCell::new(None), async {
            let answer = answer.await?;
            Ok(match ADMITTED.with(|a| a.borrow_mut().take()) {
                Some(credentials) => Admission::Admitted(credentials),
                None => Admission::Refused(answer),
            })
        })
        .await
}
