//! The HTTP service in front of s3s: each request's head checked first ([`crate::guard`]),
//! then its body taken the way it comes (read whole and watched, spooled when its length is
//! unknown, a browser form streamed, aws-chunked to its final chunk), every operation run within
//! the gate's checked bucket, and the answer finished the same way for all.

use crate::body_rate::{Cut, Metered};
use crate::guard::{check, sigv2_bucket_path, Refusal};
use crate::probe::{Admission, Probe};
use bytes::Bytes;
use hyper::header::{HeaderMap, CONTENT_LENGTH};
use hyper::{Request, StatusCode};
use s3s::service::S3Service;
use s3s::{Body, HttpError, HttpResponse};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Whether a request has a body, or awaits `100 Continue` to send one. Answered with an error,
/// it may leave the body unread, or the client unsure whether to send it (a key refused before
/// the upload, say): the connection then closes after the answer, or what follows would be
/// read as the next request.
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(hyper::header::TRANSFER_ENCODING)
        || headers.contains_key(hyper::header::EXPECT)
        || headers
            .get(CONTENT_LENGTH)
            .is_some_and(|l| l.as_bytes() != b"0")
}

/// s3s behind [`check`].
#[derive(Clone)]
pub struct Guard {
    pub inner: S3Service,
    pub region: Arc<str>,
    pub signed: bool,
    /// Where a chunked PUT of unknown length is kept until it is whole ([`crate::spool`]).
    pub store: crate::store::Store,
    /// What takes a form upload's file once it is admitted ([`crate::post`]).
    pub gateway: crate::gateway::Gateway,
}

/// A chunked PUT of unknown length, authenticated and authorized before a byte is kept: its
/// head goes through s3s and the gate first, with no body, then its body is spooled
/// ([`crate::spool`]) and the request served with it.
async fn spooled(
    req: Request<Metered>,
    inner: S3Service,
    store: crate::store::Store,
) -> Result<HttpResponse, HttpError> {
    let (parts, body) = req.into_parts();
    let probe = crate::probe::admit(&inner, &parts, Bytes::new(), Probe::default());
    if let Admission::Refused(answer) = crate::acl::with_checked_bucket(probe).await? {
        return Ok(answer);
    }
    let req = Request::from_parts(parts, body);
    match crate::spool::spool(req, &store).await {
        Ok(req) => crate::acl::with_checked_bucket(inner.call(req)).await,
        Err(refusal) => Ok(refusal.response()),
    }
}

impl hyper::service::Service<Request<Metered>> for Guard {
    type Response = HttpResponse;
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send>>;

    fn call(&self, mut req: Request<Metered>) -> Self::Future {
        if self.signed {
            sigv2_bucket_path(&mut req);
        }
        let has_body = has_body(req.headers());
        let cut = req.body().verdict();
        let verdict = check(
            req.method(),
            req.uri().query().unwrap_or_default(),
            req.headers(),
            &self.region,
            self.signed,
        )
        .and_then(|()| match crate::post::wanted(&req) {
            true => Ok(()), // a form's file is streamed, never read whole
            false => crate::wholebody::check(req.method(), req.uri(), req.headers()),
        });
        let answer: Self::Future = match verdict {
            Ok(()) if self.signed && crate::spool::wanted(&req) => {
                Box::pin(spooled(req, self.inner.clone(), self.store.clone()))
            }
            Ok(()) if crate::post::wanted(&req) => Box::pin(crate::post::serve(
                req,
                self.inner.clone(),
                self.gateway.clone(),
                self.signed,
            )),
            Ok(()) if crate::chunked::wanted(req.headers()) => {
                let inner = self.inner.clone();
                let req = with_final_chunk(req);
                Box::pin(async move { crate::acl::with_checked_bucket(inner.call(req)).await })
            }
            Ok(()) => {
                let inner = self.inner.clone();
                let (req, mismatch) = crate::wholebody::watched(req);
                Box::pin(async move {
                    let answer = crate::acl::with_checked_bucket(inner.call(req)).await?;
                    Ok(mismatch.answer(answer))
                })
            }
            Err(refusal) => {
                let response = refusal.response();
                Box::pin(async move { Ok(response) })
            }
        };
        Box::pin(async move { Ok(finished(answer.await?, has_body, cut.get().copied())) })
    }
}

/// An aws-chunked request, its body to be failed if it ends before its final chunk.
fn with_final_chunk(req: Request<Metered>) -> Request<Body> {
    let (parts, body) = req.into_parts();
    let length = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let body = crate::chunked::FinalChunk::new(body, length);
    Request::from_parts(
        parts,
        Body::from(Box::pin(body) as s3s::stream::DynByteStream),
    )
}

/// The answer as sent: `RequestTimeout` if the body was cut, whatever step read it; marked as
/// iobm's (`iobm s3` then reads the gateway's counters); closing the connection after an
/// error to a request with a body.
fn finished(mut response: HttpResponse, has_body: bool, cut: Option<Cut>) -> HttpResponse {
    if let Some(cut) = cut {
        response =
            Refusal::new(StatusCode::BAD_REQUEST, "RequestTimeout", cut.to_string()).response();
    }
    let close = has_body && !response.status().is_success();
    let headers = response.headers_mut();
    headers.insert(
        crate::metrics::HEADER,
        hyper::header::HeaderValue::from_static(env!("CARGO_PKG_VERSION")),
    );
    if close {
        headers.insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
    }
    response
}
