//! The checks that run before s3s sees a request, where AWS is stricter than s3s: every
//! `x-amz-*` header and `host` must be signed, the signature's scope must name this gateway's
//! region and the service `s3`, `x-amz-content-sha256` must be a hex SHA-256 or one of the
//! named payload kinds, a header named signed must be in the request, a presigned URL lives at
//! most 7 days, an unsigned GET or HEAD takes no `response-*` overrides, and a body s3s would
//! read whole is refused by its length before it is read ([`crate::wholebody`]). A request
//! whose body was cut for its rate ([`crate::body_rate`]) is answered `RequestTimeout`,
//! whichever step read the body.

use crate::query::{Query, CREDENTIAL_PARAMS};
use hyper::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use s3s::{Body, HttpResponse};

/// Largest body one PUT takes: 5 GiB, S3's limit. A longer declared length is refused before
/// the body is read; a body of unknown length is kept up to it ([`crate::spool`]).
pub const MAX_PUT: u64 = 5 << 30;
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
    check_payload(method, headers)?;
    unsigned_chunks(query, headers)?;
    no_anonymous_overrides(method, query, headers)?;
    if !signed {
        return Ok(());
    }
    one_credential_form(query, headers)?;
    if let Some(authorization) = headers.get(AUTHORIZATION) {
        check_authorization(authorization.to_str().unwrap_or_default(), headers, region)
    } else if let Some(credential) = query.get("X-Amz-Credential") {
        check_sigv4_query(credential, query, headers, region)
    } else if query.has("Signature") || query.has("AWSAccessKeyId") {
        check_sigv2_query(query)
    } else {
        Ok(())
    }
}

/// `x-amz-content-sha256` names a payload kind or is a hex SHA-256, and a PUT declares at most
/// [`MAX_PUT`] bytes.
fn check_payload(method: &hyper::Method, headers: &HeaderMap) -> Result<(), Refusal> {
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
    // S3 takes at most 5 GiB in one PUT (an object or a part), refused before the body.
    if method == hyper::Method::PUT && declared_length(headers).is_some_and(|n| n > MAX_PUT) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "EntityTooLarge",
            "Your proposed upload exceeds the maximum allowed size (5 GiB in one PUT)",
        ));
    }
    Ok(())
}

/// An Authorization header: SigV2 within its time window, or SigV4 scoped to this gateway with
/// every header that must be signed signed.
fn check_authorization(
    authorization: &str,
    headers: &HeaderMap,
    region: &str,
) -> Result<(), Refusal> {
    if authorization.starts_with("AWS ") {
        return check_sigv2_date(headers, now_unix());
    }
    if !authorization.starts_with("AWS4-HMAC-SHA256 ") {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidArgument",
            "Unsupported Authorization Type: only AWS4-HMAC-SHA256 and AWS (SigV2) are accepted",
        ));
    }
    let scope = header_scope(authorization)?;
    check_scope(
        scope.region,
        scope.service,
        region,
        "AuthorizationHeaderMalformed",
    )?;
    check_signed_headers(headers, &scope.signed_headers, &[])
}

/// A SigV4 presigned URL: scoped to this gateway, valid at most 7 days, every header that must
/// be signed signed.
fn check_sigv4_query(
    credential: &str,
    query: &Query,
    headers: &HeaderMap,
    region: &str,
) -> Result<(), Refusal> {
    let bad = |m: String| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "AuthorizationQueryParametersError",
            m,
        )
    };
    let (cred_region, service) = parse_credential(credential)
        .ok_or_else(|| bad("X-Amz-Credential is not AK/date/region/service/aws4_request".into()))?;
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
    check_signed_headers(headers, &signed_headers, &["x-amz-content-sha256"])
}

/// A SigV2 presigned URL: `Expires` is when it stops working, in Unix seconds, at most 7 days
/// from now.
fn check_sigv2_query(query: &Query) -> Result<(), Refusal> {
    let now = now_unix();
    let expires = query.get("Expires").unwrap_or_default();
    if expires
        .parse::<u64>()
        .map_or(true, |t| t > now + MAX_PRESIGNED_EXPIRY_S)
    {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "AuthorizationQueryParametersError",
            format!("Expires must be at most {MAX_PRESIGNED_EXPIRY_S} seconds (7 days) from now"),
        ));
    }
    Ok(())
}

/// A SigV2-signed request of a bucket named by a path-style `/bucket` is signed by clients
/// (botocore, the aws CLI) with the resource `/bucket/`, as S3 canonicalizes it: the path is
/// given its slash so that s3s, which signs the path as it is, computes the same string.
pub(crate) fn sigv2_bucket_path<B>(req: &mut Request<B>) {
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

#[cfg(test)]
mod tests;
