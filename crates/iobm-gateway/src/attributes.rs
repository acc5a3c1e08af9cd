//! GetObjectAttributes answered with the ETag as S3 writes it there: without quotes (every
//! other answer quotes it, and s3s's XML always does). The request is taken by
//! [`crate::routes`] after the gate, parsed here, answered by the gateway's
//! `get_object_attributes`, and its XML written by s3s with the ETag put in unquoted.

use crate::gateway::Gateway;
use crate::whole::bucket_and_key;
use hyper::header::{HeaderValue, CONTENT_TYPE, LAST_MODIFIED};
use hyper::Method;
use hyper::Uri;
use s3s::dto::{GetObjectAttributesInput, ObjectAttributes, TimestampFormat};
use s3s::xml::{Serialize, Serializer};
use s3s::{s3_error, Body, S3Request, S3Response, S3Result, S3};

/// The root element s3s writes, up to the end of its start tag.
const ROOT: &str =
    "<GetObjectAttributesResponse xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";

/// A GetObjectAttributes request (`GET /bucket/key?attributes`, path style).
pub fn is_request(method: &Method, uri: &Uri) -> bool {
    method == Method::GET
        && uri.query().is_some_and(|q| {
            q.split('&')
                .any(|p| p == "attributes" || p == "attributes=")
        })
        && bucket_and_key(uri).is_some()
}

fn number(req: &S3Request<Body>, name: &str) -> S3Result<Option<i32>> {
    let Some(v) = req.headers.get(name) else {
        return Ok(None);
    };
    let parsed = v.to_str().ok().and_then(|v| v.trim().parse::<i32>().ok());
    match parsed {
        Some(n) => Ok(Some(n)),
        None => Err(s3_error!(InvalidArgument, "{name} must be an integer")),
    }
}

pub async fn answer(gateway: &Gateway, req: S3Request<Body>) -> S3Result<S3Response<Body>> {
    let (bucket, key) = bucket_and_key(&req.uri).ok_or_else(|| s3_error!(NoSuchKey))?;
    let object_attributes = (req.headers.get_all("x-amz-object-attributes").iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|a| ObjectAttributes::from(a.trim().to_string()))
        .collect::<Vec<_>>();
    if object_attributes.is_empty() {
        return Err(s3_error!(
            InvalidArgument,
            "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty"
        ));
    }
    let input = GetObjectAttributesInput {
        bucket,
        key,
        max_parts: number(&req, "x-amz-max-parts")?,
        part_number_marker: number(&req, "x-amz-part-number-marker")?,
        object_attributes,
        expected_bucket_owner: None,
        request_payer: None,
        sse_customer_algorithm: None,
        sse_customer_key: None,
        sse_customer_key_md5: None,
        version_id: crate::query::asked_version(&req.uri),
    };
    let mut output = gateway
        .get_object_attributes(req.map_input(|_| input))
        .await?
        .output;
    let etag = output.e_tag.take();
    let mut xml = Vec::new();
    let mut ser = Serializer::new(&mut xml);
    ser.decl()
        .and_then(|()| output.serialize(&mut ser))
        .map_err(|e| s3_error!(e, InternalError))?;
    let mut xml = String::from_utf8(xml).map_err(|e| s3_error!(e, InternalError))?;
    if let Some(etag) = etag {
        let at = xml.find(ROOT).map(|i| i + ROOT.len()).ok_or_else(|| {
            s3_error!(
                InternalError,
                "GetObjectAttributes written without its root"
            )
        })?;
        // An ETag is hex digits and `-`: nothing to escape.
        xml.insert_str(at, &format!("<ETag>{}</ETag>", etag.value()));
    }
    let mut response = S3Response::new(Body::from(xml));
    response
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/xml"));
    if let Some(modified) = output.last_modified {
        let mut date = Vec::new();
        if modified
            .format(TimestampFormat::HttpDate, &mut date)
            .is_ok()
        {
            if let Ok(v) = HeaderValue::from_bytes(&date) {
                response.headers.insert(LAST_MODIFIED, v);
            }
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_attribute_requests_of_objects_are_taken() {
        let uri = |u: &str| u.parse::<Uri>().unwrap();
        assert!(is_request(&Method::GET, &uri("/b/k?attributes")));
        assert!(is_request(
            &Method::GET,
            &uri("/b/a/k?attributes=&versionId=null")
        ));
        assert!(!is_request(&Method::HEAD, &uri("/b/k?attributes")));
        assert!(!is_request(&Method::GET, &uri("/b/k")));
        assert!(!is_request(&Method::GET, &uri("/b/k?attributesx")));
        assert!(!is_request(&Method::GET, &uri("/b?attributes")));
    }

    #[test]
    fn the_root_is_what_s3s_writes() {
        let out = s3s::dto::GetObjectAttributesOutput::default();
        let mut xml = Vec::new();
        out.serialize(&mut Serializer::new(&mut xml)).unwrap();
        assert!(String::from_utf8(xml).unwrap().starts_with(ROOT));
    }
}
