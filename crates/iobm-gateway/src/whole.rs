//! GET and HEAD of an object with a Range header that RFC 9110 says to ignore (not one valid
//! byte range: reversed, past what a length can be, several ranges, another unit): S3 answers
//! with the whole object, where s3s would refuse the header. Answered through [`crate::routes`],
//! so the request's signature is checked first as for any other.

use crate::gateway::Gateway;
use crate::query::percent_decode;
use crate::s3::file_body;
use hyper::header::{HeaderName, HeaderValue, ACCEPT_RANGES, CONTENT_LENGTH, CONTENT_TYPE, ETAG};
use hyper::{HeaderMap, Method, Uri};
use s3s::dto::{Range, Timestamp, TimestampFormat};
use s3s::{s3_error, Body, S3Request, S3Response, S3Result};

/// The query parameters a plain GetObject may carry: a presigned URL's credential (SigV4 or
/// SigV2), response header overrides, a version.
fn plain_object_query(query: &str) -> bool {
    crate::query::Query::parse(query).names().all(|name| {
        name.starts_with("X-Amz-")
            || crate::query::CREDENTIAL_PARAMS.contains(&name)
            || name.starts_with("response-")
            || name == "versionId"
    })
}

/// Bucket and key of a path-style object URI, percent-decoded.
pub(crate) fn bucket_and_key(uri: &Uri) -> Option<(String, String)> {
    let (bucket, key) = uri.path().strip_prefix('/')?.split_once('/')?;
    let key = percent_decode(key)?;
    (!bucket.is_empty() && !key.is_empty()).then_some((percent_decode(bucket)?, key))
}

pub fn ignorable_range(method: &Method, uri: &Uri, headers: &HeaderMap) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && plain_object_query(uri.query().unwrap_or_default())
        && bucket_and_key(uri).is_some()
        && headers
            .get(hyper::header::RANGE)
            .is_some_and(|r| r.to_str().map_or(true, |r| Range::parse(r).is_err()))
}

/// The whole object, as S3 answers a GET or HEAD whose Range header is to be ignored.
pub async fn whole_object(gateway: &Gateway, req: S3Request<Body>) -> S3Result<S3Response<Body>> {
    let (bucket, key) = bucket_and_key(&req.uri).ok_or_else(|| s3_error!(NoSuchKey))?;
    let version = crate::query::asked_version(&req.uri);
    let (object, meta) = gateway.object(&bucket, &key, version.as_deref())?;
    crate::conditions::ReadConditions::from_headers(&req.headers)
        .check_read(&meta.etag, object.modified)?;
    let mut headers = HeaderMap::new();
    let value = |s: &str| HeaderValue::from_str(s).map_err(|e| s3_error!(e, InternalError));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(object.len));
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert(ETAG, value(&format!("\"{}\"", meta.etag))?);
    let mut date = Vec::new();
    if Timestamp::from(object.modified)
        .format(TimestampFormat::HttpDate, &mut date)
        .is_ok()
    {
        headers.insert(
            hyper::header::LAST_MODIFIED,
            value(&String::from_utf8_lossy(&date))?,
        );
    }
    if let Some(ct) = &meta.content_type {
        headers.insert(CONTENT_TYPE, value(ct)?);
    }
    for (name, v) in meta.headers.pairs() {
        headers.insert(HeaderName::from_static(name), value(v)?);
    }
    if let Some(id) = meta.version.map(|v| v.version_id()) {
        headers.insert("x-amz-version-id", value(&id)?);
    }
    if let Some(n) = crate::tagging::count(&meta.headers.tags) {
        headers.insert("x-amz-tagging-count", HeaderValue::from(n));
    }
    let enabled = (req.headers.get("x-amz-checksum-mode"))
        .is_some_and(|m| m.as_bytes().eq_ignore_ascii_case(b"ENABLED"));
    if let (true, Some(sum)) = (enabled, &meta.headers.checksum) {
        headers.insert(sum.algorithm.header(), value(&sum.value)?);
    }
    for (k, v) in &meta.metadata {
        if let Ok(name) = HeaderName::from_bytes(format!("x-amz-meta-{k}").as_bytes()) {
            headers.insert(name, value(v)?);
        }
    }
    let body = if req.method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(file_body(
            object.file,
            (0, object.len),
            gateway.metrics.bucket(&bucket),
        ))
    };
    let mut response = S3Response::new(body);
    response.headers = headers;
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_object_reads_with_an_unusable_range_are_taken() {
        let get = Method::GET;
        let uri: Uri = "/bkt/a%20b/c".parse().unwrap();
        let with = |range: &str| {
            let mut h = HeaderMap::new();
            h.insert(hyper::header::RANGE, range.parse().unwrap());
            h
        };
        for ignored in [
            "bytes=5-2",
            "bytes=0-99999999999999999999",
            "bytes=0-1,3-4",
            "lines=1-2",
        ] {
            assert!(ignorable_range(&get, &uri, &with(ignored)), "{ignored}");
        }
        for usable in ["bytes=0-1", "bytes=-10", "bytes=5-"] {
            assert!(!ignorable_range(&get, &uri, &with(usable)), "{usable}");
        }
        assert!(!ignorable_range(&get, &uri, &HeaderMap::new()));
        assert!(!ignorable_range(&Method::PUT, &uri, &with("bytes=5-2")));
        let bucket_only: Uri = "/bkt".parse().unwrap();
        assert!(!ignorable_range(&get, &bucket_only, &with("bytes=5-2")));
        // Presigned, SigV4 or SigV2.
        for presigned in [
            "/bkt/k?X-Amz-Credential=c&X-Amz-Signature=s",
            "/bkt/k?AWSAccessKeyId=a&Signature=s&Expires=1",
        ] {
            let uri: Uri = presigned.parse().unwrap();
            assert!(
                ignorable_range(&get, &uri, &with("bytes=5-2")),
                "{presigned}"
            );
        }
        let parts: Uri = "/bkt/k?uploadId=1".parse().unwrap();
        assert!(!ignorable_range(&get, &parts, &with("bytes=5-2")));
        assert_eq!(
            bucket_and_key(&uri),
            Some(("bkt".to_string(), "a b/c".to_string()))
        );
    }
}
