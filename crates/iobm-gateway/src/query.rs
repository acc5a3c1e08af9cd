//! Query strings as s3s decodes them, read before s3s by the guard and by the gateway's own
//! routes: names and values decoded alike, and the version a request names.

/// A query string decoded as s3s decodes it (`application/x-www-form-urlencoded`: `+` is a
/// space, `%XX` a byte), names and values alike: what the guard checks is what s3s will verify,
/// so an encoded name (`X-Amz-Credentia%6C`) is the parameter it spells.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: &str) -> Query {
        let decode = |s: &str| {
            let plus = s.replace('+', " ");
            percent_decode_lossy(&plus)
        };
        Query(
            query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (name, value) = p.split_once('=').unwrap_or((p, ""));
                    (decode(name), decode(value))
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    pub(crate) fn count(&self, name: &str) -> usize {
        self.0.iter().filter(|(n, _)| n == name).count()
    }
}

/// `%XX` escapes decoded, bytes that are not UTF-8 replaced.
fn percent_decode_lossy(text: &str) -> String {
    String::from_utf8_lossy(&percent_bytes(text)).into_owned()
}

/// The query parameters that carry a credential; each may appear once.
pub(crate) const CREDENTIAL_PARAMS: [&str; 10] = [
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Signature",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Security-Token",
    "AWSAccessKeyId",
    "Signature",
    "Expires",
];

/// `%XX` escapes decoded; `None` if the result is not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    String::from_utf8(percent_bytes(text)).ok()
}

/// The bytes of `text` with its `%XX` escapes decoded.
fn percent_bytes(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The version a request's URI names (`versionId`), if any.
pub fn asked_version(uri: &hyper::Uri) -> Option<String> {
    let query = Query::parse(uri.query()?);
    query.get("versionId").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_escapes_decode_as_s3s_decodes_them() {
        assert_eq!(percent_decode("a%2Fb%2fc").as_deref(), Some("a/b/c"));
        assert_eq!(percent_decode("%41%7a").as_deref(), Some("Az"));
        // What is no escape stays as it is.
        assert_eq!(percent_decode("%zz%4").as_deref(), Some("%zz%4"));
        assert_eq!(percent_decode("100%").as_deref(), Some("100%"));
        assert_eq!(percent_decode("").as_deref(), Some(""));
        // Bytes that are not UTF-8: none, and replaced where lossy.
        assert_eq!(percent_decode("%ff"), None);
        assert_eq!(percent_decode_lossy("a%ffb"), "a\u{fffd}b");
        let q = Query::parse("a=1&&b&c=x+y%2B&%61=2&d=");
        assert_eq!(q.names().collect::<Vec<_>>(), ["a", "b", "c", "a", "d"]);
        assert_eq!(q.get("a"), Some("1"));
        assert_eq!(q.get("b"), Some(""));
        assert_eq!(q.get("c"), Some("x y+"));
        assert_eq!(q.get("d"), Some(""));
        assert_eq!(q.get("e"), None);
        assert!(q.has("b") && !q.has("e"));
        assert_eq!((q.count("a"), q.count("c"), q.count("e")), (2, 1, 0));
    }
}
