//! The requests the gateway answers itself instead of through s3s's S3 operations, after s3s
//! has checked their signature and [`crate::acl::Policy`] has let them through, as for any
//! other request: object reads with a Range header to be ignored ([`whole`]),
//! GetObjectAttributes (whose ETag s3s would quote: [`attributes`]) and scrapes of the counters
//! at `/metrics` ([`metrics`]), which show an account only its own buckets.

use crate::attributes;
use crate::gateway::Gateway;
use crate::metrics::{self, Metrics};
use crate::whole::{self, ignorable_range};
use hyper::http::Extensions;
use hyper::{HeaderMap, Method, Uri};
use s3s::path::S3Path;
use s3s::route::S3Route;
use s3s::{s3_error, Body, S3Request, S3Response, S3Result};
use std::sync::Arc;

/// The key a form upload's probe asks to write, and the bytes it may bring ([`crate::post`]).
fn form_probe(extensions: &mut Extensions) -> Option<(String, u64)> {
    let probe = extensions.get::<crate::probe::Probe>()?;
    Some((probe.form_key.clone()?, probe.form_len))
}

pub struct Routes {
    pub gateway: Gateway,
    pub metrics: Arc<Metrics>,
}

#[async_trait::async_trait]
impl S3Route for Routes {
    fn is_match(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        extensions: &mut Extensions,
    ) -> bool {
        form_probe(extensions).is_some()
            || metrics::is_scrape(method, uri, headers)
            || attributes::is_request(method, uri)
            || ignorable_range(method, uri, headers)
    }

    async fn check_access(&self, req: &mut S3Request<Body>) -> S3Result<()> {
        let Some(policy) = &self.gateway.policy else {
            return Ok(()); // an anonymous gateway: no one to tell apart
        };
        if let Some((key, len)) = form_probe(&mut req.extensions) {
            // A form upload's probe: may its caller write the form's key? It goes no further.
            let bucket = req.uri.path().trim_matches('/').to_string();
            let credentials = req.credentials.as_ref();
            let path = S3Path::object(&bucket, &key);
            policy.admit_with_body(credentials, "PutObject", &path, len, None)?;
            return Err(crate::probe::stop_admitted(credentials));
        }
        if metrics::is_scrape(&req.method, &req.uri, &req.headers) {
            // Any account; what it sees is filtered in `call`.
            return policy.admit(req.credentials.as_ref(), "ListBuckets", &S3Path::Root);
        }
        let (bucket, key) = whole::bucket_and_key(&req.uri).ok_or_else(|| s3_error!(NoSuchKey))?;
        let op = if attributes::is_request(&req.method, &req.uri) {
            "GetObjectAttributes"
        } else if req.method == Method::HEAD {
            "HeadObject"
        } else {
            "GetObject"
        };
        let path = S3Path::object(&bucket, &key);
        let version = crate::query::asked_version(&req.uri);
        let credentials = req.credentials.as_ref();
        policy.admit_with_body(credentials, op, &path, 0, version.as_deref())
    }

    async fn call(&self, req: S3Request<Body>) -> S3Result<S3Response<Body>> {
        if metrics::is_scrape(&req.method, &req.uri, &req.headers) {
            let shown = |bucket: &str| match &self.gateway.policy {
                None => true,
                Some(policy) => {
                    policy.owns_bucket(&policy.caller(req.credentials.as_ref()), bucket)
                }
            };
            let (parts, text) = metrics::response(&self.metrics, &shown).into_parts();
            let mut response = S3Response::new(Body::from(text));
            response.headers = parts.headers;
            return Ok(response);
        }
        if attributes::is_request(&req.method, &req.uri) {
            return attributes::answer(&self.gateway, req).await;
        }
        whole::whole_object(&self.gateway, req).await
    }
}
