//! Browser-form uploads (POST Object: a `multipart/form-data` body to a bucket). The form's
//! fields are read ([`form::read_head`], at most [`form::FIELDS_MAX`] bytes) and the request is
//! authenticated (its policy's signature, by s3s) and authorized (the gate, for a PutObject of
//! the form's key) as a [`Probe`] whose file is empty, before a byte of the file is read. An
//! admitted upload then has its policy's conditions checked (its expiry, each field) and
//! streams its file into the gateway's PutObject ([`form::FileStream`]): never held whole in
//! memory, its size held to the policy's `content-length-range`.

mod form;

use crate::body_rate::Metered;
use crate::gateway::Gateway;
use crate::guard::error_document;
use crate::probe::{Admission, Probe};
use bytes::Bytes;
use hyper::header::{CONTENT_TYPE, ETAG, LOCATION};
use hyper::{Method, Request, Response, StatusCode};
use s3s::auth::Credentials;
use s3s::dto::{ObjectCannedACL, PutObjectInput, StreamingBlob, Timestamp, TimestampFormat};
use s3s::post_policy::{PostPolicy, PostPolicyCondition};
use s3s::{s3_error, Body, HttpResponse, S3Error, S3Request, S3Result, S3};
use std::collections::HashMap;

/// The bucket a path names alone (`/bucket` or `/bucket/`).
fn bucket_of(path: &str) -> Option<&str> {
    let bucket = path.strip_prefix('/')?;
    let bucket = bucket.strip_suffix('/').unwrap_or(bucket);
    (!bucket.is_empty() && !bucket.contains('/')).then_some(bucket)
}

/// Whether a request is a form upload: a POST to a bucket with any query (s3s takes every
/// such POST of a form as PostObject), any of whose Content-Type headers is a form.
pub fn wanted<B>(req: &Request<B>) -> bool {
    let form = |v: &hyper::header::HeaderValue| {
        let media = v
            .to_str()
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default();
        media.trim().eq_ignore_ascii_case("multipart/form-data")
    };
    req.method() == Method::POST
        && bucket_of(req.uri().path()).is_some()
        && req.headers().get_all(CONTENT_TYPE).iter().any(form)
}

/// The form's boundary, from its one Content-Type header.
fn boundary<B>(req: &Request<B>) -> S3Result<String> {
    let mut types = req.headers().get_all(CONTENT_TYPE).iter();
    let (Some(content_type), None) = (types.next(), types.next()) else {
        return Err(s3_error!(
            MalformedPOSTRequest,
            "a form has one Content-Type"
        ));
    };
    let content_type = content_type.to_str().unwrap_or_default();
    form::boundary(content_type).ok_or_else(|| {
        s3_error!(
            MalformedPOSTRequest,
            "the form's Content-Type has no boundary"
        )
    })
}

/// The answer of an S3 error.
fn answer(e: &S3Error) -> HttpResponse {
    let status = e.status_code().unwrap_or(StatusCode::BAD_REQUEST);
    error_document(status, e.code().as_str(), e.message().unwrap_or_default())
}

/// Answers a form upload (`signed`: the gateway checks signatures and decides by its gate).
pub async fn serve(
    req: Request<Metered>,
    inner: s3s::service::S3Service,
    gateway: Gateway,
    signed: bool,
) -> Result<HttpResponse, s3s::HttpError> {
    let boundary = match boundary(&req) {
        Ok(boundary) => boundary,
        Err(e) => return Ok(answer(&e)),
    };
    let (parts, mut body) = req.into_parts();
    let bucket = bucket_of(parts.uri.path()).expect("a form upload names a bucket");
    let head = match form::read_head(&mut body, &boundary).await {
        Ok(head) => head,
        Err(e) => return Ok(answer(&e)),
    };
    let key = match head.field("key") {
        Some(key) => key.replace("${filename}", &head.filename),
        None => {
            let e = s3_error!(
                InvalidArgument,
                "Bucket POST must contain a field named 'key'."
            );
            return Ok(answer(&e));
        }
    };
    crate::acl::with_checked_bucket(async {
        let credentials = if signed {
            let mut probe_body = head.prefix.to_vec();
            probe_body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
            let form_len = (parts.headers.get(hyper::header::CONTENT_LENGTH))
                .and_then(|v| v.to_str().ok()?.parse().ok())
                .unwrap_or(crate::guard::MAX_PUT);
            let probe = Probe {
                form_key: Some(key.clone()),
                form_len,
            };
            match crate::probe::admit(&inner, &parts, Bytes::from(probe_body), probe).await? {
                Admission::Refused(answer) => return Ok(answer),
                Admission::Admitted(credentials) => credentials,
            }
        } else {
            None
        };
        let upload = Upload {
            bucket: bucket.to_string(),
            key,
            head,
            credentials,
        };
        Ok(upload
            .run(&gateway, body, &boundary)
            .await
            .unwrap_or_else(|e| answer(&e)))
    })
    .await
}

/// An admitted form upload.
struct Upload {
    bucket: String,
    key: String,
    head: form::Head,
    credentials: Option<Credentials>,
}

impl Upload {
    async fn run(self, gateway: &Gateway, body: Metered, boundary: &str) -> S3Result<HttpResponse> {
        let sizes = match self.head.field("policy") {
            Some(policy) => checked_policy(policy, &self.head, &self.bucket)?,
            // Unsigned: no policy to keep to (the gate let it write the bucket).
            None => 0..=crate::guard::MAX_PUT,
        };
        let file = form::FileStream::new(body, boundary, self.head.rest.clone(), sizes);
        let input = self.input(StreamingBlob::wrap(file))?;
        let req = S3Request {
            input,
            method: Method::PUT,
            uri: hyper::Uri::from_static("/"),
            headers: Default::default(),
            extensions: Default::default(),
            credentials: self.credentials.clone(),
            region: None,
            service: None,
            trailing_headers: None,
        };
        let put = gateway.put_object(req).await?;
        let etag = put
            .output
            .e_tag
            .map(|e| e.value().to_string())
            .unwrap_or_default();
        self.success(&etag)
    }

    /// The PutObject the form asks for: its key, ACL, content type, standard headers and user
    /// metadata, with the file as its body.
    fn input(&self, body: StreamingBlob) -> S3Result<PutObjectInput> {
        let field = |name: &str| self.head.field(name).map(str::to_string);
        let metadata: HashMap<String, String> = (self.head.fields.iter())
            .filter_map(|(n, v)| Some((n.strip_prefix("x-amz-meta-")?.to_string(), v.clone())))
            .collect();
        let expires = match self.head.field("expires") {
            None => None,
            Some(date) => Some(Timestamp::parse(TimestampFormat::HttpDate, date).map_err(
                |_| s3_error!(InvalidArgument, "the expires field is not an HTTP date"),
            )?),
        };
        PutObjectInput::builder()
            .bucket(self.bucket.clone())
            .key(self.key.clone())
            .body(Some(body))
            .acl(field("acl").map(ObjectCannedACL::from))
            .content_type(field("content-type"))
            .cache_control(field("cache-control"))
            .content_disposition(field("content-disposition"))
            .content_encoding(field("content-encoding"))
            .expires(expires)
            .metadata((!metadata.is_empty()).then_some(metadata))
            .build()
            .map_err(|e| s3_error!(InvalidArgument, "{e}"))
    }

    /// S3's answer to a stored upload: a redirect to `success_action_redirect`, or the status
    /// `success_action_status` asks for (201 with a PostResponse document, 200, or 204).
    fn success(&self, etag: &str) -> S3Result<HttpResponse> {
        let location = format!("/{}/{}", self.bucket, encode(&self.key));
        let redirect = self
            .head
            .field("success_action_redirect")
            .or(self.head.field("redirect"));
        let mut response = match (redirect, self.head.field("success_action_status")) {
            (Some(url), _) => {
                if url.chars().any(char::is_control) {
                    return Err(s3_error!(
                        InvalidArgument,
                        "success_action_redirect holds control characters"
                    ));
                }
                let join = if url.contains('?') { '&' } else { '?' };
                let quoted = format!("\"{etag}\"");
                let to = format!(
                    "{url}{join}bucket={}&key={}&etag={}",
                    encode(&self.bucket),
                    encode(&self.key),
                    encode(&quoted)
                );
                let mut r = Response::new(Body::empty());
                *r.status_mut() = StatusCode::SEE_OTHER;
                r.headers_mut().insert(
                    LOCATION,
                    to.parse().map_err(|_| s3_error!(InvalidArgument))?,
                );
                return Ok(with_etag(r, etag));
            }
            (None, Some("201")) => {
                let xml = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>{}</Location><Bucket>{}</Bucket><Key>{}</Key><ETag>&quot;{etag}&quot;</ETag></PostResponse>",
                    escape(&location),
                    escape(&self.bucket),
                    escape(&self.key)
                );
                let mut r = Response::new(Body::from(xml));
                *r.status_mut() = StatusCode::CREATED;
                r.headers_mut()
                    .insert(CONTENT_TYPE, "application/xml".parse().expect("valid"));
                r
            }
            (None, Some("200")) => Response::new(Body::empty()),
            (None, _) => {
                let mut r = Response::new(Body::empty());
                *r.status_mut() = StatusCode::NO_CONTENT;
                r
            }
        };
        if let Ok(location) = location.parse() {
            response.headers_mut().insert(LOCATION, location);
        }
        Ok(with_etag(response, etag))
    }
}

fn with_etag(mut response: HttpResponse, etag: &str) -> HttpResponse {
    if let Ok(value) = format!("\"{etag}\"").parse() {
        response.headers_mut().insert(ETAG, value);
    }
    response
}

/// Percent-encoding of everything but S3's unreserved characters and `/`.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Whether `t` is later than now.
fn in_future(t: &Timestamp) -> bool {
    let mut seconds = Vec::new();
    let _ = t.format(TimestampFormat::EpochSeconds, &mut seconds);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    std::str::from_utf8(&seconds)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .is_some_and(|t| t > now)
}

/// Fields a policy need not name (S3's list).
fn exempt(name: &str) -> bool {
    matches!(
        name,
        "x-amz-signature" | "signature" | "awsaccesskeyid" | "file" | "policy"
    ) || name.starts_with("x-ignore-")
}

/// The policy's checks of the form, S3's rules: not expired, each `eq` and `starts-with`
/// condition met (`bucket` by the URL's bucket), every field named by a condition. Returns the
/// sizes its `content-length-range` allows the file.
fn checked_policy(
    policy: &str,
    head: &form::Head,
    bucket: &str,
) -> S3Result<std::ops::RangeInclusive<u64>> {
    let invalid = |why: String| s3_error!(AccessDenied, "Invalid according to Policy: {why}");
    let policy =
        PostPolicy::from_base64(policy).map_err(|e| s3_error!(InvalidPolicyDocument, "{e}"))?;
    if !in_future(&policy.expiration) {
        return Err(invalid("Policy expired.".into()));
    }
    let value = |field: &str| match field {
        "bucket" => Some(bucket),
        f => head.field(f),
    };
    let mut sizes = 0..=crate::guard::MAX_PUT;
    for condition in &policy.conditions {
        match condition {
            PostPolicyCondition::Eq { field, value: want } if value(field) != Some(want) => {
                return Err(invalid(format!(
                    "Policy Condition failed: [\"eq\", \"${field}\", \"{want}\"]"
                )));
            }
            PostPolicyCondition::StartsWith { field, prefix }
                if !value(field)
                    .unwrap_or_default()
                    .starts_with(prefix.as_str()) =>
            {
                return Err(invalid(format!(
                    "Policy Condition failed: [\"starts-with\", \"${field}\", \"{prefix}\"]"
                )));
            }
            PostPolicyCondition::ContentLengthRange { min, max } => {
                sizes = *min..=(*max).min(*sizes.end());
            }
            _ => {}
        }
    }
    let named = |name: &str| {
        policy.conditions.iter().any(|c| match c {
            PostPolicyCondition::Eq { field, .. }
            | PostPolicyCondition::StartsWith { field, .. } => field == name,
            PostPolicyCondition::ContentLengthRange { .. } => false,
        })
    };
    if let Some((extra, _)) = head.fields.iter().find(|(n, _)| !exempt(n) && !named(n)) {
        return Err(invalid(format!("Extra input fields: {extra}")));
    }
    Ok(sizes)
}
