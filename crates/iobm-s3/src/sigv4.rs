//! AWS Signature Version 4 in headers, without I/O: the canonical request, the string to sign
//! and the signature, with the day's signing key derived once per day instead of per request.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// `x-amz-content-sha256` when the payload is not hashed.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// SHA-256 of nothing, for requests without a body.
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// An access key and its secret, and the session token of temporary credentials (STS's, sent
/// and signed as `x-amz-security-token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key: String,
    pub secret_key: String,
    pub session_token: Option<String>,
}

/// Signs requests for one region and service, reusing its buffers: no allocation per request
/// once warm.
pub struct Signer {
    credentials: Credentials,
    region: String,
    service: String,
    /// The date (`YYYYMMDD`) the cached key is for, and the key.
    day_key: Option<(String, [u8; 32])>,
    canonical: String,
    to_sign: String,
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Standard base64 with padding (Content-MD5).
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    push_base64(&mut out, bytes);
    out
}

/// Appends the standard base64 with padding of `bytes` to `out` (S3's additional checksums,
/// into a reused buffer).
pub fn push_base64(out: &mut String, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
}

/// Appends the lower-case hex of `bytes` to `out`.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

/// Percent-encodes `s` as SigV4 wants it: everything but `A-Za-z0-9-_.~` (and `/` when
/// `keep_slash`, for paths).
pub fn uri_encode(out: &mut String, s: &str, keep_slash: bool) {
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

impl Signer {
    pub fn new(credentials: Credentials, region: &str, service: &str) -> Signer {
        Signer {
            credentials,
            region: region.to_string(),
            service: service.to_string(),
            day_key: None,
            canonical: String::with_capacity(512),
            to_sign: String::with_capacity(256),
        }
    }

    fn key_for(&mut self, day: &str) -> [u8; 32] {
        match &self.day_key {
            Some((d, key)) if d == day => *key,
            _ => {
                let secret = format!("AWS4{}", self.credentials.secret_key);
                let k = hmac(secret.as_bytes(), day.as_bytes());
                let k = hmac(&k, self.region.as_bytes());
                let k = hmac(&k, self.service.as_bytes());
                let k = hmac(&k, b"aws4_request");
                self.day_key = Some((day.to_string(), k));
                k
            }
        }
    }

    /// Signs a request and appends its `Authorization` value to `out`. `path` is already
    /// URI-encoded; `query` holds encoded `key=value` pairs sorted by key; `headers` are
    /// lower-case names with trimmed values, sorted by name, and must include `host`,
    /// `x-amz-content-sha256` and `x-amz-date` (= `amz_date`).
    #[allow(clippy::too_many_arguments)]
    pub fn sign(
        &mut self,
        out: &mut String,
        method: &str,
        path: &str,
        query: &str,
        headers: &[(&str, &str)],
        payload_hash: &str,
        amz_date: &str,
    ) {
        let day = &amz_date[..8];
        let c = &mut self.canonical;
        c.clear();
        let _ = write!(c, "{method}\n{path}\n{query}\n");
        for (name, value) in headers {
            let _ = writeln!(c, "{name}:{value}");
        }
        c.push('\n');
        let signed_headers_start = c.len();
        for (i, (name, _)) in headers.iter().enumerate() {
            if i > 0 {
                c.push(';');
            }
            c.push_str(name);
        }
        let signed_headers_end = c.len();
        c.push('\n');
        c.push_str(payload_hash);
        let t = &mut self.to_sign;
        t.clear();
        let _ = write!(
            t,
            "AWS4-HMAC-SHA256\n{amz_date}\n{day}/{}/{}/aws4_request\n",
            self.region, self.service
        );
        push_hex(t, &Sha256::digest(self.canonical.as_bytes()));
        let key = self.key_for(day);
        let signature = hmac(&key, self.to_sign.as_bytes());
        let _ = write!(
            out,
            "AWS4-HMAC-SHA256 Credential={}/{day}/{}/{}/aws4_request, SignedHeaders={}, Signature=",
            self.credentials.access_key,
            self.region,
            self.service,
            &self.canonical[signed_headers_start..signed_headers_end]
        );
        push_hex(out, &signature);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    /// The example of AWS's S3 documentation ("Signature Calculations for the Authorization
    /// Header: Transferring Payload in a Single Chunk", GET Object with a Range header).
    #[test]
    fn matches_the_s3_documentation_example() {
        let mut signer = Signer::new(
            Credentials {
                access_key: "AKIAIOSFODNN7EXAMPLE".into(),
                secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                session_token: None,
            },
            "us-east-1",
            "s3",
        );
        let mut authorization = String::new();
        signer.sign(
            &mut authorization,
            "GET",
            "/test.txt",
            "",
            &[
                ("host", "examplebucket.s3.amazonaws.com"),
                ("range", "bytes=0-9"),
                ("x-amz-content-sha256", EMPTY_SHA256),
                ("x-amz-date", "20130524T000000Z"),
            ],
            EMPTY_SHA256,
            "20130524T000000Z",
        );
        assert_eq!(
            authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn encodes_like_aws() {
        let mut s = String::new();
        uri_encode(&mut s, "a b/c~d*é", true);
        assert_eq!(s, "a%20b/c~d%2A%C3%A9");
        s.clear();
        uri_encode(&mut s, "x/y", false);
        assert_eq!(s, "x%2Fy");
    }
}
