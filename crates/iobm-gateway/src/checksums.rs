//! S3's additional checksums of a body (`x-amz-checksum-crc32`, `-crc32c`, `-crc64nvme`,
//! `-sha1`, `-sha256`): named by a request in a header with its value, or in `x-amz-trailer`
//! with its value after the body, or only by its algorithm (`x-amz-sdk-checksum-algorithm`);
//! computed as the body arrives, checked against the value sent, kept with the object
//! ([`crate::meta::StoredHeaders`]) and returned as S3 returns it.

pub use crate::meta::checksum::{Algorithm, Stored};
use hyper::HeaderMap;
use s3s::checksum::ChecksumHasher;
use s3s::dto::Checksum;
use s3s::{s3_error, S3Result, TrailingHeaders};

impl Algorithm {
    /// The header (or trailer) that carries its value.
    pub fn header(self) -> &'static str {
        match self {
            Algorithm::Crc32 => "x-amz-checksum-crc32",
            Algorithm::Crc32c => "x-amz-checksum-crc32c",
            Algorithm::Crc64Nvme => "x-amz-checksum-crc64nvme",
            Algorithm::Sha1 => "x-amz-checksum-sha1",
            Algorithm::Sha256 => "x-amz-checksum-sha256",
        }
    }

    /// Bytes of its digest.
    fn digest_len(self) -> usize {
        match self {
            Algorithm::Crc32 | Algorithm::Crc32c => 4,
            Algorithm::Crc64Nvme => 8,
            Algorithm::Sha1 => 20,
            Algorithm::Sha256 => 32,
        }
    }

    fn by_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
    }

    fn by_header(header: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.header().eq_ignore_ascii_case(header.trim()))
    }

    fn hasher(self) -> ChecksumHasher {
        let mut h = ChecksumHasher::default();
        match self {
            Algorithm::Crc32 => h.crc32 = Some(Default::default()),
            Algorithm::Crc32c => h.crc32c = Some(Default::default()),
            Algorithm::Crc64Nvme => h.crc64nvme = Some(Default::default()),
            Algorithm::Sha1 => h.sha1 = Some(s3s::crypto::Checksum::new()),
            Algorithm::Sha256 => h.sha256 = Some(s3s::crypto::Checksum::new()),
        }
        h
    }

    fn value_in(self, sums: Checksum) -> Option<String> {
        match self {
            Algorithm::Crc32 => sums.checksum_crc32,
            Algorithm::Crc32c => sums.checksum_crc32c,
            Algorithm::Crc64Nvme => sums.checksum_crc64nvme,
            Algorithm::Sha1 => sums.checksum_sha1,
            Algorithm::Sha256 => sums.checksum_sha256,
        }
    }
}

impl Stored {
    /// The value in the field of S3's outputs that carries its algorithm.
    pub fn fields(&self) -> Checksum {
        let value = Some(self.value.clone());
        let mut c = Checksum::default();
        match self.algorithm {
            Algorithm::Crc32 => c.checksum_crc32 = value,
            Algorithm::Crc32c => c.checksum_crc32c = value,
            Algorithm::Crc64Nvme => c.checksum_crc64nvme = value,
            Algorithm::Sha1 => c.checksum_sha1 = value,
            Algorithm::Sha256 => c.checksum_sha256 = value,
        }
        c
    }
}

/// Where the value a body is checked against comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// Sent in its header, before the body.
    Header(String),
    /// Sent in the trailer after the body (named by `x-amz-trailer`).
    Trailer,
    /// Not sent: the algorithm alone was named; the gateway computes and keeps it.
    Computed,
}

/// The checksum a request's body must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    algorithm: Algorithm,
    source: Source,
}

fn invalid(message: String) -> s3s::S3Error {
    s3_error!(InvalidRequest, "{message}")
}

/// Whether `value` is the base64 of a digest of `algorithm`'s length.
fn well_formed(algorithm: Algorithm, value: &str) -> bool {
    let bytes = value.trim_end_matches('=').len();
    let padded = value.len().is_multiple_of(4);
    let digits = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=');
    padded && digits && bytes * 6 / 8 == algorithm.digest_len()
}

/// What a request's headers ask of its body's checksum (`None`: nothing). More than one
/// checksum header, an unknown algorithm or trailer, or a value of the wrong form is S3's
/// 400 InvalidRequest, before the body is read.
pub fn wanted(headers: &HeaderMap) -> S3Result<Option<Wanted>> {
    let mut given = Algorithm::ALL
        .into_iter()
        .filter(|a| headers.contains_key(a.header()));
    let header = given.next();
    if given.next().is_some() {
        return Err(invalid(
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."
                .into(),
        ));
    }
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let trailer = match text("x-amz-trailer") {
        None => None,
        Some(t) => Some(Algorithm::by_header(t).ok_or_else(|| {
            invalid(format!(
                "The value specified in the x-amz-trailer header is not supported: {t}"
            ))
        })?),
    };
    let named = match text("x-amz-sdk-checksum-algorithm") {
        None => None,
        Some(n) => Some(Algorithm::by_name(n).ok_or_else(|| {
            invalid(format!(
                "Value for x-amz-sdk-checksum-algorithm header is invalid: {n}"
            ))
        })?),
    };
    let wanted = match (header, trailer) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "Expecting a single x-amz-checksum- header: a value is sent in a header or a trailer, not both".into(),
            ))
        }
        (Some(a), None) => {
            let value = text(a.header()).unwrap_or_default().trim().to_string();
            if !well_formed(a, &value) {
                return Err(invalid(format!("Value for {} header is invalid.", a.header())));
            }
            Some(Wanted {
                algorithm: a,
                source: Source::Header(value),
            })
        }
        (None, Some(a)) => Some(Wanted {
            algorithm: a,
            source: Source::Trailer,
        }),
        (None, None) => named.map(|a| Wanted {
            algorithm: a,
            source: Source::Computed,
        }),
    };
    if let (Some(w), Some(n)) = (&wanted, named) {
        if w.algorithm != n {
            return Err(invalid(format!(
                "Value for x-amz-sdk-checksum-algorithm header is invalid: {} with {}",
                n.name(),
                w.algorithm.header()
            )));
        }
    }
    Ok(wanted)
}

/// A checksum computed as a body arrives.
pub struct Running {
    wanted: Wanted,
    hasher: ChecksumHasher,
}

impl Running {
    pub fn new(wanted: Wanted) -> Running {
        Running {
            hasher: wanted.algorithm.hasher(),
            wanted,
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
    }

    /// The body's checksum, checked against the value sent (in its header, or in the
    /// trailer, which has arrived once the body has): S3's 400 BadDigest if they differ.
    pub fn finish(self, trailers: Option<&TrailingHeaders>) -> S3Result<Stored> {
        let algorithm = self.wanted.algorithm;
        let computed = algorithm
            .value_in(self.hasher.finalize())
            .expect("the hasher computes its algorithm");
        let sent = match self.wanted.source {
            Source::Header(value) => Some(value),
            Source::Trailer => {
                let values = trailers
                    .and_then(|t| {
                        t.read(|h| {
                            h.get_all(algorithm.header())
                                .iter()
                                .cloned()
                                .collect::<Vec<_>>()
                        })
                    })
                    .unwrap_or_default();
                if values.len() > 1 {
                    return Err(s3_error!(
                        InvalidRequest,
                        "the trailer {} is sent more than once",
                        algorithm.header()
                    ));
                }
                let value = (values.first())
                    .and_then(|v| v.to_str().ok().map(|v| v.trim().to_string()))
                    .ok_or_else(|| {
                        s3_error!(
                            IncompleteBody,
                            "the trailer {} named by x-amz-trailer did not arrive",
                            algorithm.header()
                        )
                    })?;
                Some(value)
            }
            Source::Computed => None,
        };
        if sent.is_some_and(|sent| sent != computed) {
            return Err(s3_error!(
                BadDigest,
                "The {} you specified did not match the calculated checksum.",
                algorithm.name()
            ));
        }
        Ok(Stored {
            algorithm,
            value: computed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    fn sum(wanted: Wanted, body: &[u8]) -> S3Result<Stored> {
        let mut running = Running::new(wanted);
        running.update(&body[..3]);
        running.update(&body[3..]);
        running.finish(None)
    }

    #[test]
    fn a_header_value_is_checked_against_the_body() {
        // CRC32 of "hello world" is 0x0d4a1185.
        let good = headers(&[("x-amz-checksum-crc32", "DUoRhQ==")]);
        let stored = sum(wanted(&good).unwrap().unwrap(), b"hello world").unwrap();
        assert_eq!(stored.algorithm, Algorithm::Crc32);
        assert_eq!(stored.value, "DUoRhQ==");
        assert_eq!(stored.fields().checksum_crc32.as_deref(), Some("DUoRhQ=="));
        let bad = headers(&[("x-amz-checksum-crc32", "AAAAAA==")]);
        let err = sum(wanted(&bad).unwrap().unwrap(), b"hello world").unwrap_err();
        assert_eq!(err.code().as_str(), "BadDigest");
        // SHA-256 of "hello world".
        let sha = headers(&[(
            "x-amz-checksum-sha256",
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
        )]);
        assert!(sum(wanted(&sha).unwrap().unwrap(), b"hello world").is_ok());
    }

    #[test]
    fn malformed_or_several_checksums_are_refused_before_the_body() {
        let code = |pairs: &[(&'static str, &str)]| {
            wanted(&headers(pairs))
                .unwrap_err()
                .code()
                .as_str()
                .to_string()
        };
        assert_eq!(
            code(&[("x-amz-checksum-crc32", "not base64!")]),
            "InvalidRequest"
        );
        // The right alphabet, the wrong length (a SHA-1's value for CRC32).
        assert_eq!(
            code(&[("x-amz-checksum-crc32", "Kq5sNclPz7QV2+lfQIuc6R7oRu0=")]),
            "InvalidRequest"
        );
        assert_eq!(
            code(&[
                ("x-amz-checksum-crc32", "DUoRhQ=="),
                ("x-amz-checksum-crc32c", "yZRlqg==")
            ]),
            "InvalidRequest"
        );
        assert_eq!(
            code(&[("x-amz-trailer", "x-amz-checksum-md4")]),
            "InvalidRequest"
        );
        assert_eq!(
            code(&[
                ("x-amz-sdk-checksum-algorithm", "SHA256"),
                ("x-amz-checksum-crc32", "DUoRhQ==")
            ]),
            "InvalidRequest"
        );
        assert_eq!(wanted(&headers(&[])).unwrap(), None);
    }

    #[test]
    fn an_algorithm_alone_is_computed_and_kept() {
        let named = headers(&[("x-amz-sdk-checksum-algorithm", "crc32")]);
        let stored = sum(wanted(&named).unwrap().unwrap(), b"hello world").unwrap();
        assert_eq!(stored.value, "DUoRhQ==");
    }

    #[test]
    fn a_trailer_that_never_came_is_an_incomplete_body() {
        let trailer = headers(&[("x-amz-trailer", "x-amz-checksum-crc32")]);
        let err = sum(wanted(&trailer).unwrap().unwrap(), b"hello world").unwrap_err();
        assert_eq!(err.code().as_str(), "IncompleteBody");
    }

    #[test]
    fn the_stored_form_names_the_algorithm_as_s3_does() {
        let stored = Stored {
            algorithm: Algorithm::Crc64Nvme,
            value: "AAAAAAAAAAA=".into(),
        };
        let json = serde_json::to_string(&stored).unwrap();
        assert_eq!(json, r#"{"algorithm":"CRC64NVME","value":"AAAAAAAAAAA="}"#);
        assert_eq!(serde_json::from_str::<Stored>(&json).unwrap(), stored);
    }
}
