//! The requests the gateway answers itself instead of through s3s's S3 operations, after s3s
//! has checked their signature: object reads with a Range header to be ignored ([`whole`]) and
//! scrapes of the counters at `/metrics` ([`metrics`]).

use crate::metrics::{self, Metrics};
use crate::s3::Gateway;
use crate::whole::{self, ignorable_range};
use hyper::http::Extensions;
use hyper::{HeaderMap, Method, Uri};
use s3s::route::S3Route;
use s3s::{s3_error, Body, S3Request, S3Response, S3Result};
use std::sync::Arc;

pub struct Routes {
    pub gateway: Gateway,
    pub metrics: Arc<Metrics>,
    /// Requests must be signed (the gateway is not anonymous).
    pub signed: bool,
}

#[async_trait::async_trait]
impl S3Route for Routes {
    fn is_match(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        _: &mut Extensions,
    ) -> bool {
        metrics::is_scrape(method, uri, headers) || ignorable_range(method, uri, headers)
    }

    async fn check_access(&self, req: &mut S3Request<Body>) -> S3Result<()> {
        if self.signed && req.credentials.is_none() {
            return Err(s3_error!(AccessDenied, "Signature is required"));
        }
        Ok(())
    }

    async fn call(&self, req: S3Request<Body>) -> S3Result<S3Response<Body>> {
        if metrics::is_scrape(&req.method, &req.uri, &req.headers) {
            let (parts, text) = metrics::response(&self.metrics).into_parts();
            let mut response = S3Response::new(Body::from(text));
            response.headers = parts.headers;
            return Ok(response);
        }
        whole::whole_object(&self.gateway, req).await
    }
}
