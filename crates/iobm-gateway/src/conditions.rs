//! Conditional requests as S3 answers them. Reads (GET, HEAD) with `If-Match`,
//! `If-Unmodified-Since`, `If-None-Match` and `If-Modified-Since`: 412 PreconditionFailed or 304
//! Not Modified, in RFC 9110's order (a matching `If-Match` overrides `If-Unmodified-Since`; an
//! `If-None-Match` that does not match overrides `If-Modified-Since`). Copies with the
//! `x-amz-copy-source-if-*` headers: the same checks of the source, each failure a 412. Writes
//! (PUT, CompleteMultipartUpload) with `If-None-Match` or `If-Match`: what [`WriteCondition`]
//! allows, checked by the store as it moves the new object into place
//! ([`crate::store::Store::publish_if`]).

use crate::store::{Etag, WriteCondition};
use hyper::header::{HeaderValue, ETAG, LAST_MODIFIED};
use hyper::{HeaderMap, StatusCode};
use s3s::dto::{ETagCondition, Timestamp, TimestampFormat};
use s3s::{s3_error, S3Error, S3Result};
use std::time::{Duration, SystemTime};

impl Etag {
    fn from_condition(c: &ETagCondition) -> Etag {
        match c {
            ETagCondition::Any => Etag::Any,
            ETagCondition::ETag(e) => Etag::Value(e.value().to_string()),
        }
    }
}

/// The four conditions of a read, or of a copy's source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadConditions {
    pub if_match: Option<Etag>,
    pub if_none_match: Option<Etag>,
    pub if_modified_since: Option<SystemTime>,
    pub if_unmodified_since: Option<SystemTime>,
}

/// Why a read's conditions refuse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    PreconditionFailed,
    NotModified,
}

/// A request's date as a time (a date before 1970 as 1970, before every object).
fn time(t: &Timestamp) -> Option<SystemTime> {
    let mut text = Vec::new();
    t.format(TimestampFormat::EpochSeconds, &mut text).ok()?;
    let secs: f64 = std::str::from_utf8(&text).ok()?.parse().ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs.max(0.0).floor() as u64))
}

/// Whole seconds: what Last-Modified says of a time, and what a date in a request can name.
fn seconds(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl ReadConditions {
    /// From a request's parsed headers (GetObject and HeadObject inputs, or a copy's
    /// `x-amz-copy-source-if-*`).
    pub fn new(
        if_match: Option<&ETagCondition>,
        if_none_match: Option<&ETagCondition>,
        if_modified_since: Option<&Timestamp>,
        if_unmodified_since: Option<&Timestamp>,
    ) -> ReadConditions {
        ReadConditions {
            if_match: if_match.map(Etag::from_condition),
            if_none_match: if_none_match.map(Etag::from_condition),
            if_modified_since: if_modified_since.and_then(time),
            if_unmodified_since: if_unmodified_since.and_then(time),
        }
    }

    /// From raw headers (requests the gateway answers without s3s's parsing). Values that do
    /// not parse are ignored, as RFC 9110 says of dates.
    pub fn from_headers(headers: &HeaderMap) -> ReadConditions {
        let etag = |name: &str| {
            let v = headers.get(name)?.as_bytes();
            ETagCondition::parse_http_header(v)
                .ok()
                .map(|c| Etag::from_condition(&c))
        };
        let date = |name: &str| {
            let v = headers.get(name)?.to_str().ok()?;
            time(&Timestamp::parse(TimestampFormat::HttpDate, v).ok()?)
        };
        ReadConditions {
            if_match: etag("if-match"),
            if_none_match: etag("if-none-match"),
            if_modified_since: date("if-modified-since"),
            if_unmodified_since: date("if-unmodified-since"),
        }
    }

    /// What the conditions say of an object of ETag `etag` last modified at `modified`.
    pub fn evaluate(&self, etag: &str, modified: SystemTime) -> Result<(), Refused> {
        let modified = seconds(modified);
        match &self.if_match {
            Some(want) if !want.matches(etag) => return Err(Refused::PreconditionFailed),
            Some(_) => {}
            None => {
                if self
                    .if_unmodified_since
                    .is_some_and(|since| modified > seconds(since))
                {
                    return Err(Refused::PreconditionFailed);
                }
            }
        }
        match &self.if_none_match {
            Some(unwanted) if unwanted.matches(etag) => Err(Refused::NotModified),
            Some(_) => Ok(()),
            None => match self.if_modified_since {
                Some(since) if modified <= seconds(since) => Err(Refused::NotModified),
                _ => Ok(()),
            },
        }
    }

    /// A GET's or HEAD's answer: 412, or 304 with the object's ETag and Last-Modified (and no
    /// body), as S3 sends them.
    pub fn check_read(&self, etag: &str, modified: SystemTime) -> S3Result<()> {
        match self.evaluate(etag, modified) {
            Ok(()) => Ok(()),
            Err(Refused::PreconditionFailed) => Err(precondition_failed()),
            Err(Refused::NotModified) => Err(not_modified(etag, modified)),
        }
    }

    /// A copy's answer: every refusal is a 412.
    pub fn check_copy_source(&self, etag: &str, modified: SystemTime) -> S3Result<()> {
        self.evaluate(etag, modified)
            .map_err(|_| precondition_failed())
    }
}

pub fn precondition_failed() -> S3Error {
    s3_error!(
        PreconditionFailed,
        "At least one of the pre-conditions you specified did not hold"
    )
}

fn not_modified(etag: &str, modified: SystemTime) -> S3Error {
    let mut e = S3Error::with_message(s3s::S3ErrorCode::NotModified, "Not Modified");
    e.set_status_code(StatusCode::NOT_MODIFIED);
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{etag}\"")) {
        headers.insert(ETAG, v);
    }
    let mut date = Vec::new();
    if Timestamp::from(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds(modified)))
        .format(TimestampFormat::HttpDate, &mut date)
        .is_ok()
    {
        if let Ok(v) = HeaderValue::from_bytes(&date) {
            headers.insert(LAST_MODIFIED, v);
        }
    }
    e.set_headers(headers);
    e
}

impl WriteCondition {
    pub fn new(
        if_match: Option<&ETagCondition>,
        if_none_match: Option<&ETagCondition>,
    ) -> WriteCondition {
        WriteCondition {
            if_match: if_match.map(Etag::from_condition),
            if_none_match: if_none_match.map(Etag::from_condition),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: &str = "5d41402abc4b2a76b9719d911017c592";

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn value(e: &str) -> Option<Etag> {
        Some(Etag::Value(e.into()))
    }

    #[test]
    fn reads_follow_s3s_precedence() {
        // Modified at 1000.5 s: Last-Modified says 1000.
        let modified = at(1000) + Duration::from_millis(500);
        let check = |c: ReadConditions| c.evaluate(E, modified);
        let cond = |m: Option<Etag>, n: Option<Etag>, ms: Option<u64>, us: Option<u64>| {
            check(ReadConditions {
                if_match: m,
                if_none_match: n,
                if_modified_since: ms.map(at),
                if_unmodified_since: us.map(at),
            })
        };
        use Refused::*;
        assert_eq!(cond(None, None, None, None), Ok(()));
        assert_eq!(cond(value(E), None, None, None), Ok(()));
        assert_eq!(cond(Some(Etag::Any), None, None, None), Ok(()));
        assert_eq!(
            cond(value("other"), None, None, None),
            Err(PreconditionFailed)
        );
        assert_eq!(cond(None, value(E), None, None), Err(NotModified));
        assert_eq!(cond(None, Some(Etag::Any), None, None), Err(NotModified));
        assert_eq!(cond(None, value("other"), None, None), Ok(()));
        // Dates compare in whole seconds, as Last-Modified shows them.
        assert_eq!(cond(None, None, Some(1000), None), Err(NotModified));
        assert_eq!(cond(None, None, Some(999), None), Ok(()));
        assert_eq!(cond(None, None, None, Some(1000)), Ok(()));
        assert_eq!(cond(None, None, None, Some(999)), Err(PreconditionFailed));
        // A matching If-Match overrides a failing If-Unmodified-Since.
        assert_eq!(cond(value(E), None, None, Some(999)), Ok(()));
        // An If-None-Match that does not match overrides If-Modified-Since.
        assert_eq!(cond(None, value("other"), Some(2000), None), Ok(()));
        // A matching If-None-Match is 304 whatever If-Modified-Since says.
        assert_eq!(cond(None, value(E), Some(10), None), Err(NotModified));
        // 412 comes before 304.
        assert_eq!(
            cond(value("other"), value(E), None, None),
            Err(PreconditionFailed)
        );
        assert_eq!(
            cond(None, value(E), None, Some(999)),
            Err(PreconditionFailed)
        );
    }

    #[test]
    fn not_modified_carries_the_validators() {
        let e = ReadConditions {
            if_none_match: Some(Etag::Any),
            ..Default::default()
        }
        .check_read(E, at(784_111_777))
        .unwrap_err();
        assert_eq!(e.status_code(), Some(StatusCode::NOT_MODIFIED));
        let h = e.headers().unwrap();
        assert_eq!(h[ETAG], format!("\"{E}\"").as_str());
        assert_eq!(h[LAST_MODIFIED], "Sun, 06 Nov 1994 08:49:37 GMT");
        let copy = ReadConditions {
            if_none_match: Some(Etag::Any),
            ..Default::default()
        }
        .check_copy_source(E, at(1))
        .unwrap_err();
        assert_eq!(copy.status_code(), Some(StatusCode::PRECONDITION_FAILED));
    }

    #[test]
    fn raw_headers_parse_like_s3s() {
        let mut h = HeaderMap::new();
        h.insert("if-match", format!("\"{E}\"").parse().unwrap());
        h.insert("if-none-match", "*".parse().unwrap());
        h.insert(
            "if-modified-since",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        h.insert("if-unmodified-since", "not a date".parse().unwrap());
        let c = ReadConditions::from_headers(&h);
        assert_eq!(c.if_match, value(E));
        assert_eq!(c.if_none_match, Some(Etag::Any));
        assert_eq!(c.if_modified_since, Some(at(784_111_777)));
        assert_eq!(c.if_unmodified_since, None);
        assert_eq!(
            ReadConditions::from_headers(&HeaderMap::new()),
            ReadConditions::default()
        );
    }
}
