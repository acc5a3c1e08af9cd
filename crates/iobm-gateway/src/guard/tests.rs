//! Unit tests of the checks before s3s: signed headers, payload hashes, presigned URLs and refused
//! bodies.

use super::*;
use hyper::Method;

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.append(
            hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    map
}

const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=00";

fn code(r: Result<(), Refusal>) -> &'static str {
    r.map_or_else(|e| e.code, |()| "ok")
}

#[test]
fn header_signatures_must_cover_every_amz_header_and_name_this_region() {
    let base = [
        ("authorization", AUTH),
        ("x-amz-date", "20261130T000000Z"),
        ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"),
    ];
    let ok = headers(&base);
    assert_eq!(code(check(&Method::PUT, "", &ok, "us-east-1", true)), "ok");
    let mut added = base.to_vec();
    added.push(("x-amz-meta-injected", "1"));
    let refused = check(&Method::PUT, "", &headers(&added), "us-east-1", true).unwrap_err();
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.message.contains("x-amz-meta-injected"));
    assert_eq!(
        code(check(&Method::PUT, "", &ok, "eu-west-1", true)),
        "AuthorizationHeaderMalformed"
    );
    let ec2 = AUTH.replace("/s3/", "/ec2/");
    let mut other = base.to_vec();
    other[0] = ("authorization", &ec2);
    assert_eq!(
        code(check(&Method::GET, "", &headers(&other), "us-east-1", true)),
        "AuthorizationHeaderMalformed"
    );
    let no_host = AUTH.replace("host;", "");
    other[0] = ("authorization", &no_host);
    assert_eq!(
        code(check(&Method::GET, "", &headers(&other), "us-east-1", true)),
        "AccessDenied"
    );
    // Anonymous gateways do not look at signatures.
    assert_eq!(
        code(check(
            &Method::PUT,
            "",
            &headers(&added),
            "eu-west-1",
            false
        )),
        "ok"
    );
}

#[test]
fn payload_hashes_are_hex_or_a_named_kind() {
    for (value, want) in [
        ("zz", "InvalidArgument"),
        ("UNSIGNED-PAYLOAD", "ok"),
        ("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "ok"),
        (
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "ok",
        ),
        (
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",
            "InvalidArgument",
        ),
    ] {
        let h = headers(&[("x-amz-content-sha256", value)]);
        assert_eq!(
            code(check(&Method::PUT, "", &h, "us-east-1", false)),
            want,
            "{value}"
        );
    }
}

#[test]
fn presigned_urls_live_at_most_seven_days_in_this_region() {
    let url = |region: &str, expires: u64| {
        format!(
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20261130%2F{region}%2Fs3%2Faws4_request&X-Amz-Date=20261130T000000Z&X-Amz-Expires={expires}&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
        )
    };
    let none = HeaderMap::new();
    let get = |q: &str, h: &HeaderMap| code(check(&Method::GET, q, h, "us-east-1", true));
    assert_eq!(get(&url("us-east-1", 3600), &none), "ok");
    assert_eq!(get(&url("us-east-1", 604_800), &none), "ok");
    assert_eq!(
        get(&url("us-east-1", 115 * 86_400), &none),
        "AuthorizationQueryParametersError"
    );
    assert_eq!(
        get(&url("ap-south-1", 60), &none),
        "AuthorizationQueryParametersError"
    );
    let extra = headers(&[("x-amz-meta-a", "1")]);
    assert_eq!(get(&url("us-east-1", 60), &extra), "AccessDenied");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let v2 = |expires: u64| format!("AWSAccessKeyId=AK&Signature=x&Expires={expires}");
    assert_eq!(get(&v2(now + 3600), &none), "ok");
    assert_eq!(
        get(&v2(now + 115 * 86_400), &none),
        "AuthorizationQueryParametersError"
    );
}

#[test]
fn query_parameters_are_checked_as_s3s_decodes_them() {
    let none = HeaderMap::new();
    let get = |q: &str, h: &HeaderMap| code(check(&Method::GET, q, h, "us-east-1", true));
    // A 115-day SigV4 URL whose parameter names are percent-encoded is still 115 days.
    let far = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credentia%6C=AK%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T000000Z&X-Amz-Expire%73=9936000&X-Amz-SignedHeaders=host&X-Amz-Signature=00";
    assert_eq!(get(far, &none), "AuthorizationQueryParametersError");
    // Unsigned headers beside an encoded presigned URL are refused.
    let near = far.replace("9936000", "60");
    let injected = headers(&[("x-amz-copy-source", "/a/b")]);
    assert_eq!(get(&near, &injected), "AccessDenied");
    // A SigV2 URL with an encoded Expires, ten years out.
    let v2 = format!(
        "AWSAccessKeyId=AK&Signatur%65=x&Expire%73={}",
        now_unix() + 315_360_000
    );
    assert_eq!(get(&v2, &none), "AuthorizationQueryParametersError");
    // A header credential beside encoded query credentials: two forms.
    let both = headers(&[("authorization", AUTH)]);
    assert_eq!(get(&near, &both), "InvalidArgument");
    // A credential parameter given twice.
    assert_eq!(
        get(&format!("{near}&X-Amz-Signature=11"), &none),
        "InvalidArgument"
    );
}

#[test]
fn puts_over_five_gib_are_refused_unread() {
    let put = |h: &[(&str, &str)]| code(check(&Method::PUT, "", &headers(h), "us-east-1", false));
    assert_eq!(put(&[("content-length", "10000000000")]), "EntityTooLarge");
    assert_eq!(put(&[("content-length", "5368709120")]), "ok");
    assert_eq!(
        put(&[
            ("content-length", "100"),
            ("x-amz-decoded-content-length", "5368709121")
        ]),
        "EntityTooLarge"
    );
}

#[test]
fn oversized_delete_bodies_are_refused_unread() {
    let big = headers(&[("content-length", "300000000")]);
    assert_eq!(
        code(check(&Method::POST, "delete", &big, "us-east-1", false)),
        "MalformedXML"
    );
    let small = headers(&[("content-length", "3000")]);
    assert_eq!(
        code(check(&Method::POST, "delete=", &small, "us-east-1", false)),
        "ok"
    );
}

#[test]
fn error_documents_are_s3_xml() {
    let r = Refusal::new(StatusCode::FORBIDDEN, "AccessDenied", "a < b");
    assert!(r
        .document()
        .ends_with("<Error><Code>AccessDenied</Code><Message>a &lt; b</Message></Error>"));
    assert_eq!(r.response().status(), StatusCode::FORBIDDEN);
}
