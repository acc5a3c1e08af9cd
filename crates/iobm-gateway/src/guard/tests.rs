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

/// The headers [`AUTH`] signs, and `extra`.
fn signed(extra: &[(&str, &str)]) -> HeaderMap {
    let mut all = vec![
        ("authorization", AUTH),
        ("host", "127.0.0.1:9000"),
        ("x-amz-date", "20261130T000000Z"),
        ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"),
    ];
    all.extend_from_slice(extra);
    headers(&all)
}

/// What a presigned URL's request has: its host.
fn host() -> HeaderMap {
    headers(&[("host", "127.0.0.1:9000")])
}

fn code(r: Result<(), Refusal>) -> &'static str {
    r.map_or_else(|e| e.code, |()| "ok")
}

#[test]
fn header_signatures_must_cover_every_amz_header_and_name_this_region() {
    let base = [
        ("authorization", AUTH),
        ("host", "h"),
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
        // Signed (the signature itself is s3s's to check): a STREAMING- body is one of them.
        let h = headers(&[
            ("x-amz-content-sha256", value),
            ("authorization", "AWS4-HMAC-SHA256 x"),
        ]);
        assert_eq!(
            code(check(&Method::PUT, "", &h, "us-east-1", false)),
            want,
            "{value}"
        );
    }
    // Unsigned, an aws-chunked body would not be decoded: refused.
    let h = headers(&[("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")]);
    assert_eq!(
        code(check(&Method::PUT, "", &h, "us-east-1", false)),
        "InvalidRequest"
    );
    let h = headers(&[("x-amz-decoded-content-length", "5")]);
    assert_eq!(
        code(check(
            &Method::PUT,
            "X-Amz-Credential=x",
            &h,
            "us-east-1",
            false
        )),
        "ok"
    );
}

#[test]
fn presigned_urls_live_at_most_seven_days_in_this_region() {
    let url = |region: &str, expires: u64| {
        format!(
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20261130%2F{region}%2Fs3%2Faws4_request&X-Amz-Date=20261130T000000Z&X-Amz-Expires={expires}&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
        )
    };
    let none = host();
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
    let extra = headers(&[("host", "h"), ("x-amz-meta-a", "1")]);
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
    let injected = headers(&[("host", "h"), ("x-amz-copy-source", "/a/b")]);
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
fn error_documents_are_s3_xml() {
    let r = Refusal::new(StatusCode::FORBIDDEN, "AccessDenied", "a < b");
    assert!(r
        .document()
        .ends_with("<Error><Code>AccessDenied</Code><Message>a &lt; b</Message></Error>"));
    assert_eq!(r.response().status(), StatusCode::FORBIDDEN);
}

/// An HTTP date `at` seconds after the epoch, as a `Date` or `x-amz-date` header carries it.
fn http_date(at: u64) -> String {
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(at))
}

#[test]
fn sigv2_header_requests_are_taken_fifteen_minutes_either_side_of_their_date() {
    let now = 1_800_000_000;
    let at = |name: &str, t: u64| headers(&[(name, &http_date(t))]);
    // S3's 15 minutes: 900 seconds either way are taken, 901 are not.
    for t in [now, now - 900, now + 900] {
        assert_eq!(code(check_sigv2_date(&at("date", t), now)), "ok", "{t}");
    }
    for t in [now - 901, now + 901, now - 86_400] {
        assert_eq!(
            code(check_sigv2_date(&at("date", t), now)),
            "RequestTimeTooSkewed",
            "{t}"
        );
    }
    // x-amz-date, where there is one, is the request's time; the Date beside it is not.
    let both = |amz: u64, date: u64| {
        headers(&[("x-amz-date", &http_date(amz)), ("date", &http_date(date))])
    };
    assert_eq!(code(check_sigv2_date(&both(now, now - 86_400), now)), "ok");
    assert_eq!(
        code(check_sigv2_date(&both(now - 86_400, now), now)),
        "RequestTimeTooSkewed"
    );
    // No date, or one that is not an HTTP date: refused, never taken as now.
    assert_eq!(
        code(check_sigv2_date(&HeaderMap::new(), now)),
        "AccessDenied"
    );
    let bad = headers(&[("date", "yesterday")]);
    assert_eq!(code(check_sigv2_date(&bad, now)), "AccessDenied");
    // Through the guard, against its clock: a SigV2 header is checked for its date, and an
    // Authorization of another kind is refused.
    let sigv2 = |date: &str| headers(&[("authorization", "AWS AK:c2ln"), ("date", date)]);
    let get = |h: &HeaderMap| code(check(&Method::GET, "", h, "us-east-1", true));
    assert_eq!(
        get(&sigv2(&httpdate::fmt_http_date(
            std::time::SystemTime::now()
        ))),
        "ok"
    );
    assert_eq!(
        get(&sigv2(&http_date(now_unix() - 3600))),
        "RequestTimeTooSkewed"
    );
    assert_eq!(
        get(&headers(&[("authorization", "Bearer xyz")])),
        "InvalidArgument"
    );
    // An anonymous gateway does not look at it.
    let stale = sigv2(&http_date(0));
    assert_eq!(
        code(check(&Method::GET, "", &stale, "us-east-1", false)),
        "ok"
    );
}

#[test]
fn a_request_carries_one_credential_form_whichever_parameter_names_the_second() {
    let auth = signed(&[]);
    let get = |q: &str, h: &HeaderMap| code(check(&Method::GET, q, h, "us-east-1", true));
    assert_eq!(get("", &auth), "ok");
    // Beside the Authorization header, any one parameter of another form is a second form.
    for q in [
        "Signature=x",
        "AWSAccessKeyId=AK",
        "X-Amz-Algorithm=AWS4-HMAC-SHA256",
        "X-Amz-Signature=00",
    ] {
        assert_eq!(get(q, &auth), "InvalidArgument", "{q}");
    }
    // Parameters of other requests are not credentials.
    assert_eq!(get("uploads&prefix=a", &auth), "ok");
    // Two Authorization headers.
    let twice = signed(&[("authorization", AUTH)]);
    assert_eq!(get("", &twice), "InvalidArgument");
    // An unsigned request to a gateway with keys is left to s3s (and the gate).
    assert_eq!(get("", &HeaderMap::new()), "ok");
}

#[test]
fn sigv2_presigned_urls_live_at_most_seven_days_whichever_parameter_marks_them() {
    let get = |q: &str| code(check(&Method::GET, q, &HeaderMap::new(), "us-east-1", true));
    let far = now_unix() + 30 * 86_400;
    for q in [
        format!("Signature=x&Expires={far}"),
        format!("AWSAccessKeyId=AK&Expires={far}"),
        "AWSAccessKeyId=AK&Signature=x".to_string(),
        "AWSAccessKeyId=AK&Signature=x&Expires=soon".to_string(),
    ] {
        assert_eq!(get(&q), "AuthorizationQueryParametersError", "{q}");
    }
    // Exactly seven days from the test's clock: the guard's clock is no earlier, so within.
    let week = now_unix() + MAX_PRESIGNED_EXPIRY_S;
    assert_eq!(
        get(&format!("AWSAccessKeyId=AK&Signature=x&Expires={week}")),
        "ok"
    );
    // An expiry already past is s3s's to refuse (it knows the signature); not the guard's.
    assert_eq!(get("AWSAccessKeyId=AK&Signature=x&Expires=1"), "ok");
}

#[test]
fn presigned_sigv4_expiry_is_one_second_to_seven_days() {
    let url = |expires: &str| {
        format!(
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T000000Z&X-Amz-Expires={expires}&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
        )
    };
    let get = |q: &str| code(check(&Method::GET, q, &host(), "us-east-1", true));
    assert_eq!(get(&url("1")), "ok");
    for bad in ["0", "604801", "-1", "a"] {
        assert_eq!(get(&url(bad)), "AuthorizationQueryParametersError", "{bad}");
    }
    assert_eq!(
        get(&url("60").replace("&X-Amz-Expires=60", "")),
        "AuthorizationQueryParametersError"
    );
    // A credential that is not AK/date/region/service/aws4_request.
    let short = url("60").replace("%2Faws4_request", "");
    assert_eq!(get(&short), "AuthorizationQueryParametersError");
    // The signed headers of a presigned URL may leave out its payload hash.
    let h = headers(&[("host", "h"), ("x-amz-content-sha256", "UNSIGNED-PAYLOAD")]);
    assert_eq!(
        code(check(&Method::GET, &url("60"), &h, "us-east-1", true)),
        "ok"
    );
}

#[test]
fn a_header_signature_names_its_credential_and_signed_headers() {
    let get = |auth: &str| {
        let mut h = signed(&[]);
        h.insert(AUTHORIZATION, auth.parse().unwrap());
        code(check(&Method::GET, "", &h, "us-east-1", true))
    };
    assert_eq!(get(AUTH), "ok");
    let no_signed =
        "AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, Signature=00";
    assert_eq!(get(no_signed), "AuthorizationHeaderMalformed");
    let no_credential = "AWS4-HMAC-SHA256 SignedHeaders=host, Signature=00";
    assert_eq!(get(no_credential), "AuthorizationHeaderMalformed");
    let short = AUTH.replace("/aws4_request", "");
    assert_eq!(get(&short), "AuthorizationHeaderMalformed");
    let long = AUTH.replace("/aws4_request", "/aws4_request/x");
    assert_eq!(get(&long), "AuthorizationHeaderMalformed");
}

fn rewritten(uri: &str, authorization: Option<&str>) -> String {
    let mut req = Request::builder().uri(uri);
    if let Some(a) = authorization {
        req = req.header(AUTHORIZATION, a);
    }
    let mut req = req.body(()).unwrap();
    sigv2_bucket_path(&mut req);
    req.uri().to_string()
}

#[test]
fn sigv2_requests_of_a_path_style_bucket_get_its_slash() {
    let v2q = "AWSAccessKeyId=AK&Signature=x&Expires=1";
    assert_eq!(
        rewritten(&format!("/bucket?{v2q}"), None),
        format!("/bucket/?{v2q}")
    );
    assert_eq!(rewritten("/bucket", Some("AWS AK:c2ln")), "/bucket/");
    assert_eq!(
        rewritten("/b?acl", Some("AWS AK:c2ln")),
        "/b/?acl",
        "a one-letter bucket"
    );
    // Not SigV2, not a bucket alone, or the root: as it came.
    assert_eq!(rewritten("/bucket", Some(AUTH)), "/bucket");
    assert_eq!(rewritten("/bucket", None), "/bucket");
    assert_eq!(rewritten("/bucket/key", Some("AWS AK:c2ln")), "/bucket/key");
    assert_eq!(
        rewritten(&format!("/bucket/key?{v2q}"), None),
        format!("/bucket/key?{v2q}")
    );
    assert_eq!(rewritten("/", Some("AWS AK:c2ln")), "/");
    assert_eq!(rewritten("/bucket/", Some("AWS AK:c2ln")), "/bucket/");
}

#[test]
fn every_header_named_signed_is_in_the_request() {
    let get = |h: &HeaderMap| code(check(&Method::GET, "", h, "us-east-1", true));
    assert_eq!(get(&signed(&[])), "ok");
    let mut missing = signed(&[]);
    missing.remove("x-amz-date");
    let refused = check(&Method::GET, "", &missing, "us-east-1", true).unwrap_err();
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        refused.message.contains("x-amz-date"),
        "{}",
        refused.message
    );
    let auth = AUTH.replace("x-amz-date", "x-amz-date;x-amz-meta-gone");
    let mut named = signed(&[]);
    named.insert(AUTHORIZATION, auth.parse().unwrap());
    assert_eq!(get(&named), "AccessDenied");
    // So with a presigned URL's.
    let url = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bcontent-md5&X-Amz-Signature=00";
    let presigned = |h: &HeaderMap| code(check(&Method::GET, url, h, "us-east-1", true));
    assert_eq!(presigned(&host()), "AccessDenied");
    assert_eq!(
        presigned(&headers(&[("host", "h"), ("content-md5", "x")])),
        "ok"
    );
}

#[test]
fn unsigned_reads_take_no_response_header_overrides() {
    for signed_gateway in [true, false] {
        let get =
            |m: Method, q: &str, h: &HeaderMap| code(check(&m, q, h, "us-east-1", signed_gateway));
        let none = HeaderMap::new();
        for q in [
            "response-content-type=x",
            "response-content-language=x",
            "response-expires=x",
            "response-cache-control=x",
            "response-content-disposition=x",
            "response-content-encoding=x",
        ] {
            assert_eq!(get(Method::GET, q, &none), "InvalidRequest", "{q}");
            assert_eq!(get(Method::HEAD, q, &none), "InvalidRequest", "{q}");
        }
        // Signed, in a header or a presigned URL, they are taken; other parameters are too.
        let q = "response-content-type=x";
        assert_eq!(get(Method::GET, q, &signed(&[])), "ok");
        let v2 = format!(
            "{q}&AWSAccessKeyId=AK&Signature=x&Expires={}",
            now_unix() + 60
        );
        assert_eq!(get(Method::GET, &v2, &none), "ok");
        assert_eq!(get(Method::GET, "versionId=null", &none), "ok");
        assert_eq!(get(Method::PUT, q, &none), "ok");
    }
}
