//! The checks that run before s3s sees a request, where AWS is stricter than s3s: every
//! `x-amz-*` header and `host` must be signed, the signature's scope must name this gateway's
//! region and the service `s3`, `x-amz-content-sha256` must be a hex SHA-256 or one of the
//! named payload kinds, a header named signed must be in the request, a presigned URL lives at
//! most 7 days, an unsigned GET or HEAD takes no `response-*` overrides, and a body s3s would
//! read whole is refused by its length before it is read ([`crate::wholebody`]). A request
//! whose body was cut for its rate ([`crate::body_rate`]) is answered `RequestTimeout`,
//! whichever step read the body.

use crate::body_rate::{Cut, Metered};
use crate::probe::{Admission, Probe};
use bytes::Bytes;
use hyper::header::{HeaderMap, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use s3s::service::S3Service;
use s3s::{Body, HttpError, HttpResponse};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Longest a presigned URL may be valid, in seconds (AWS's limit: 7 days).
pub const MAX_PRESIGNED_EXPIRY_S: u64 = 7 * 24 * 3600;

const PAYLOAD_KINDS: [&str; 6] = [
    "UNSIGNED-PAYLOAD",
    "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
    "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD",
    "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER",
];

/// Why a request is refused before it reaches s3s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub(crate) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    /// The S3 error document.
    pub fn document(&self) -> String {
        document(self.code, &self.message)
    }

    pub fn response(&self) -> HttpResponse {
        error_document(self.status, self.code, &self.message)
    }
}

fn document(code: &str, message: &str) -> String {
    let message = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    )
}

/// An S3 error document as the answer, with `status`.
pub(crate) fn error_document(status: StatusCode, code: &str, message: &str) -> HttpResponse {
    let mut response = Response::new(Body::from(document(code, message)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, "application/xml".parse().expect("valid"));
    response
}

/// What a request's signature says of itself.
struct Scope<'a> {
    region: &'a str,
    service: &'a str,
    signed_headers: Vec<&'a str>,
}

/// `AK/date/region/service/aws4_request`.
fn parse_credential(credential: &str) -> Option<(&str, &str)> {
    let parts: Vec<&str> = credential.split('/').collect();
    match parts.as_slice() {
        [_, _, region, service, "aws4_request"] => Some((region, service)),
        _ => None,
    }
}

fn header_scope(authorization: &str) -> Result<Scope<'_>, Refusal> {
    let malformed = |m: &str| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "AuthorizationHeaderMalformed",
            format!("The authorization header is malformed; {m}"),
        )
    };
    let fields = authorization
        .strip_prefix("AWS4-HMAC-SHA256")
        .ok_or_else(|| malformed("the algorithm is not AWS4-HMAC-SHA256"))?;
    let mut credential = None;
    let mut signed = None;
    for field in fields.split(',') {
        let field = field.trim();
        if let Some(v) = field.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = field.strip_prefix("SignedHeaders=") {
            signed = Some(v);
        }
    }
    let (region, service) = credential
        .and_then(parse_credential)
        .ok_or_else(|| malformed("the Credential is not AK/date/region/service/aws4_request"))?;
    let signed = signed.ok_or_else(|| malformed("it has no SignedHeaders"))?;
    Ok(Scope {
        region,
        service,
        signed_headers: signed.split(';').collect(),
    })
}

/// A query string decoded as s3s decodes it (`application/x-www-form-urlencoded`: `+` is a
/// space, `%XX` a byte), names and values alike: what the guard checks is what s3s will verify,
/// so an encoded name (`X-Amz-Credentia%6C`) is the parameter it spells.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: &str) -> Query {
        let decode = |s: &str| {
            let plus = s.replace('+', " ");
            percent_decode_lossy(&plus)
        };
        Query(
            query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (name, value) = p.split_once('=').unwrap_or((p, ""));
                    (decode(name), decode(value))
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    fn count(&self, name: &str) -> usize {
        self.0.iter().filter(|(n, _)| n == name).count()
    }
}

/// `%XX` escapes decoded, bytes that are not UTF-8 replaced.
fn percent_decode_lossy(text: &str) -> String {
    String::from_utf8_lossy(&percent_bytes(text)).into_owned()
}

/// The query parameters that carry a credential; each may appear once.
pub(crate) const CREDENTIAL_PARAMS: [&str; 10] = [
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Signature",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Security-Token",
    "AWSAccessKeyId",
    "Signature",
    "Expires",
];

/// `%XX` escapes decoded; `None` if the result is not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    String::from_utf8(percent_bytes(text)).ok()
}

/// The bytes of `text` with its `%XX` escapes decoded.
fn percent_bytes(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn check_scope(
    region: &str,
    service: &str,
    expected_region: &str,
    code: &'static str,
) -> Result<(), Refusal> {
    if region != expected_region {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            code,
            format!("the region '{region}' is wrong; expecting '{expected_region}'"),
        ));
    }
    if service != "s3" {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            code,
            format!("the service '{service}' is wrong; expecting 's3'"),
        ));
    }
    Ok(())
}

fn check_signed_headers(
    headers: &HeaderMap,
    signed: &[&str],
    exempt: &[&str],
) -> Result<(), Refusal> {
    if !signed.contains(&"host") {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            "the host header must be signed",
        ));
    }
    // s3s leaves a signed header it does not find out of what it checks; S3 refuses it.
    if let Some(missing) = signed.iter().find(|n| !headers.contains_key(**n)) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            format!("The header {missing} is named in SignedHeaders but is not in the request"),
        ));
    }
    let mut unsigned: Vec<&str> = headers
        .keys()
        .map(|n| n.as_str())
        .filter(|n| n.starts_with("x-amz-") && !signed.contains(n) && !exempt.contains(n))
        .collect();
    if unsigned.is_empty() {
        return Ok(());
    }
    unsigned.sort_unstable();
    unsigned.dedup();
    Err(Refusal::new(
        StatusCode::FORBIDDEN,
        "AccessDenied",
        format!(
            "There were headers present in the request which were not signed: {}",
            unsigned.join(", ")
        ),
    ))
}

/// The query parameters that set a GET's response headers (`response-content-type` and its
/// kin): S3 takes them only from signed requests.
const RESPONSE_OVERRIDES: [&str; 6] = [
    "response-content-type",
    "response-content-language",
    "response-expires",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
];

/// An unsigned GET or HEAD (no Authorization header, no credential parameter) that asks to
/// set its response's headers is 400 `InvalidRequest`, as S3 answers it.
fn no_anonymous_overrides(
    method: &hyper::Method,
    query: &Query,
    headers: &HeaderMap,
) -> Result<(), Refusal> {
    let read = method == hyper::Method::GET || method == hyper::Method::HEAD;
    let anonymous =
        !headers.contains_key(AUTHORIZATION) && !CREDENTIAL_PARAMS.iter().any(|p| query.has(p));
    if read && anonymous && RESPONSE_OVERRIDES.iter().any(|p| query.has(p)) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
            "Request specific response headers cannot be used for anonymous GET requests.",
        ));
    }
    Ok(())
}

/// Longest a SigV2 header-signed request may be from the gateway's clock, either way (S3's 15
/// minutes; SigV4's window is s3s's).
pub const MAX_SKEW_S: u64 = 15 * 60;

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A request carries exactly one credential form: the Authorization header, SigV4 query
/// parameters or SigV2 query parameters. With two, S3 refuses it: each form's own checks (its
/// expiry above all) must not be skipped because another form is what gets verified.
fn one_credential_form(query: &Query, headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(twice) = CREDENTIAL_PARAMS.iter().find(|p| query.count(p) > 1) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidArgument",
            format!("the query parameter {twice} is given more than once"),
        ));
    }
    let header = headers.get_all(AUTHORIZATION).iter().count();
    if header > 1 {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidArgument",
            "the Authorization header is given more than once",
        ));
    }
    let header = header == 1;
    let v4 = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"]
        .iter()
        .any(|p| query.has(p));
    let v2 = query.has("Signature") || query.has("AWSAccessKeyId");
    if [header, v4, v2].iter().filter(|&&f| f).count() > 1 {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidArgument",
            "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified",
        ));
    }
    Ok(())
}

/// Whether a request carries a credential in any form (the Authorization header, SigV4 or
/// SigV2 query parameters).
fn carries_credential(query: &Query, headers: &HeaderMap) -> bool {
    headers.contains_key(AUTHORIZATION)
        || [
            "X-Amz-Credential",
            "X-Amz-Signature",
            "Signature",
            "AWSAccessKeyId",
        ]
        .iter()
        .any(|p| query.has(p))
}

/// An aws-chunked body is decoded (its chunks, declared length and trailer checked) only for a
/// signed request: an unsigned one sending it would have its framing stored as the object, or
/// its declared length taken for the disk room it needs, so it is refused.
fn unsigned_chunks(query: &Query, headers: &HeaderMap) -> Result<(), Refusal> {
    let streaming = headers
        .get("x-amz-content-sha256")
        .is_some_and(|v| v.as_bytes().starts_with(b"STREAMING-"));
    let chunked = headers
        .get_all(hyper::header::CONTENT_ENCODING)
        .iter()
        .any(|v| {
            v.to_str()
                .unwrap_or_default()
                .split(',')
                .any(|e| e.trim().eq_ignore_ascii_case("aws-chunked"))
        });
    if (streaming || chunked || headers.contains_key("x-amz-decoded-content-length"))
        && !carries_credential(query, headers)
    {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
            "an aws-chunked body (x-amz-decoded-content-length, a STREAMING- payload) must be signed",
        ));
    }
    Ok(())
}

/// A SigV2 header-signed request is valid for 15 minutes either side of its time: its
/// `x-amz-date` if it has one (as S3 reads it), else its `Date`.
fn check_sigv2_date(headers: &HeaderMap, now: u64) -> Result<(), Refusal> {
    let date = headers
        .get("x-amz-date")
        .or_else(|| headers.get(hyper::header::DATE))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v.trim()).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let Some(date) = date else {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            "AWS authentication requires a valid Date or x-amz-date header",
        ));
    };
    if date.abs_diff(now) > MAX_SKEW_S {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "RequestTimeTooSkewed",
            "The difference between the request time and the current time is too large.",
        ));
    }
    Ok(())
}

/// The length a request declares of its body: `x-amz-decoded-content-length` (an aws-chunked
/// body's), else Content-Length.
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    ["x-amz-decoded-content-length", "content-length"]
        .iter()
        .find_map(|h| headers.get(*h)?.to_str().ok()?.parse::<u64>().ok())
}

/// Checks one request's head. `signed`: the gateway requires signatures.
pub fn check(
    method: &hyper::Method,
    query: &str,
    headers: &HeaderMap,
    region: &str,
    signed: bool,
) -> Result<(), Refusal> {
    let query = &Query::parse(query);
    if let Some(value) = headers.get("x-amz-content-sha256") {
        let value = value.to_str().unwrap_or_default();
        let hash = value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit());
        if !hash && !PAYLOAD_KINDS.contains(&value) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidArgument",
                "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a STREAMING- value or a hex SHA-256",
            ));
        }
    }
    if method == hyper::Method::PUT {
        // S3 takes at most 5 GiB in one PUT (an object or a part), refused before the body.
        if declared_length(headers).is_some_and(|n| n > crate::spool::MAX_SPOOLED) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                "Your proposed upload exceeds the maximum allowed size (5 GiB in one PUT)",
            ));
        }
    }
    unsigned_chunks(query, headers)?;
    no_anonymous_overrides(method, query, headers)?;
    if !signed {
        return Ok(());
    }
    one_credential_form(query, headers)?;
    if let Some(authorization) = headers.get(AUTHORIZATION) {
        let authorization = authorization.to_str().unwrap_or_default();
        if authorization.starts_with("AWS ") {
            check_sigv2_date(headers, now_unix())?;
        } else if !authorization.starts_with("AWS4-HMAC-SHA256 ") {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidArgument",
                "Unsupported Authorization Type: only AWS4-HMAC-SHA256 and AWS (SigV2) are accepted",
            ));
        } else {
            let scope = header_scope(authorization)?;
            check_scope(
                scope.region,
                scope.service,
                region,
                "AuthorizationHeaderMalformed",
            )?;
            check_signed_headers(headers, &scope.signed_headers, &[])?;
        }
    } else if let Some(credential) = query.get("X-Amz-Credential") {
        let bad = |m: String| {
            Refusal::new(
                StatusCode::BAD_REQUEST,
                "AuthorizationQueryParametersError",
                m,
            )
        };
        let (cred_region, service) = parse_credential(credential).ok_or_else(|| {
            bad("X-Amz-Credential is not AK/date/region/service/aws4_request".into())
        })?;
        check_scope(
            cred_region,
            service,
            region,
            "AuthorizationQueryParametersError",
        )?;
        let expires = query
            .get("X-Amz-Expires")
            .and_then(|v| v.parse::<u64>().ok());
        if !expires.is_some_and(|s| (1..=MAX_PRESIGNED_EXPIRY_S).contains(&s)) {
            return Err(bad(format!(
                "X-Amz-Expires must be a number of seconds from 1 to {MAX_PRESIGNED_EXPIRY_S} (7 days)"
            )));
        }
        let signed_headers: Vec<&str> = query
            .get("X-Amz-SignedHeaders")
            .unwrap_or_default()
            .split(';')
            .collect();
        // The payload hash of a presigned request is checked against the body by s3s.
        check_signed_headers(headers, &signed_headers, &["x-amz-content-sha256"])?;
    } else if query.has("Signature") || query.has("AWSAccessKeyId") {
        // A SigV2 presigned URL: `Expires` is when it stops working, in Unix seconds.
        let now = now_unix();
        let expires = query.get("Expires").unwrap_or_default();
        if expires
            .parse::<u64>()
            .map_or(true, |t| t > now + MAX_PRESIGNED_EXPIRY_S)
        {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "AuthorizationQueryParametersError",
                format!(
                    "Expires must be at most {MAX_PRESIGNED_EXPIRY_S} seconds (7 days) from now"
                ),
            ));
        }
    }
    Ok(())
}

/// A SigV2-signed request of a bucket named by a path-style `/bucket` is signed by clients
/// (botocore, the aws CLI) with the resource `/bucket/`, as S3 canonicalizes it: the path is
/// given its slash so that s3s, which signs the path as it is, computes the same string.
fn sigv2_bucket_path<B>(req: &mut Request<B>) {
    let query = req.uri().query().unwrap_or_default();
    let v2 = Query::parse(query).has("AWSAccessKeyId")
        || req
            .headers()
            .get(AUTHORIZATION)
            .is_some_and(|a| a.as_bytes().starts_with(b"AWS "));
    let path = req.uri().path();
    if !v2 || path.len() < 2 || path[1..].contains('/') {
        return;
    }
    let target = if query.is_empty() {
        format!("{path}/")
    } else {
        format!("{path}/?{query}")
    };
    if let Ok(target) = target.parse::<hyper::http::uri::PathAndQuery>() {
        let mut parts = req.uri().clone().into_parts();
        parts.path_and_query = Some(target);
        if let Ok(uri) = hyper::Uri::from_parts(parts) {
            *req.uri_mut() = uri;
        }
    }
}

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
    pub gateway: crate::s3::Gateway,
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

#[cfg(test)]
mod tests;
