//! S3 versioning on a [`Client`]: the bucket's versioning state (GetBucketVersioning) and
//! turning it on (PutBucketVersioning), and one page of ListObjectVersions under the run's
//! prefix: every version and delete marker, each as its key and version id.

use crate::client::{Client, Payload};
use crate::{sigv4, xml, S3Config};
use std::io;

/// A bucket's versioning, as GetBucketVersioning answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versioning {
    /// Never turned on: one version per key, deleted for good.
    Off,
    /// Every PUT keeps a new version; a DELETE without a version leaves a delete marker.
    Enabled,
    /// Turned on once, then suspended: the versions kept meanwhile stay.
    Suspended,
}

impl Versioning {
    /// Whether the bucket may hold versions besides each key's current one.
    pub fn keeps_versions(self) -> bool {
        self != Versioning::Off
    }
}

/// Where a listing of versions goes on: the key and version id markers of its next page,
/// written as one token (`key`, a NUL, `version id`) for [`iobm_target::ListPage::next`].
fn next_token(key: &str, version: &str) -> String {
    format!("{key}\0{version}")
}

/// One page of a listing of versions: each entry's key and version id, and the next page's
/// token.
pub(crate) struct VersionsPage {
    pub(crate) entries: Vec<(String, String)>,
    pub(crate) next: Option<String>,
}

impl Client {
    /// The bucket's versioning state; `Off` when the server does not answer it (no
    /// versioning there), an error when it cannot be reached or the bucket is gone.
    pub(crate) fn versioning(&mut self, config: &S3Config) -> io::Result<Versioning> {
        let head = self.request(config, "GET", None, &[("versioning", "")], &[], None)?;
        if head.status != 200 {
            let error = self.error(&head);
            return match crate::no_such_bucket(&error) {
                true => Err(error),
                false => Ok(Versioning::Off),
            };
        }
        let body = self.conn.body_bytes(&head)?;
        let body = String::from_utf8_lossy(&body);
        Ok(match xml::text(&body, "Status").as_deref() {
            Some("Enabled") => Versioning::Enabled,
            Some("Suspended") => Versioning::Suspended,
            _ => Versioning::Off,
        })
    }

    /// Turns the bucket's versioning on (PutBucketVersioning `Enabled`).
    pub(crate) fn enable_versioning(&mut self, config: &S3Config) -> io::Result<()> {
        let document =
            "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
                        <Status>Enabled</Status></VersioningConfiguration>";
        let md5 = <md5::Md5 as md5::Digest>::digest(document.as_bytes());
        let md5 = sigv4::base64(&md5);
        let head = self.request(
            config,
            "PUT",
            None,
            &[("versioning", "")],
            &[("content-md5", md5.as_str())],
            Some(Payload::Bytes(document.as_bytes())),
        )?;
        self.expect_ok(&head)
    }

    /// One page of up to `max` versions and delete markers under the run's prefix, after
    /// `after` (a token of [`VersionsPage::next`]).
    pub(crate) fn versions_page(
        &mut self,
        config: &S3Config,
        after: Option<&str>,
        max: u32,
    ) -> io::Result<VersionsPage> {
        let max = max.to_string();
        let (key, version) = after.and_then(|a| a.split_once('\0')).unzip();
        // Sorted by name, as the signature wants them.
        let mut query = Vec::with_capacity(5);
        query.extend(key.map(|k| ("key-marker", k)));
        query.push(("max-keys", max.as_str()));
        query.push(("prefix", config.prefix.as_str()));
        query.extend(version.map(|v| ("version-id-marker", v)));
        query.push(("versions", ""));
        let head = self.request(config, "GET", None, &query, &[], None)?;
        if head.status != 200 {
            return Err(self.error(&head));
        }
        let body = self.conn.body_bytes(&head)?;
        Ok(parse_versions(&String::from_utf8_lossy(&body)))
    }
}

/// The entries of a ListVersionsResult (`Version` and `DeleteMarker` alike) and the token of
/// its next page, if it is truncated.
fn parse_versions(body: &str) -> VersionsPage {
    let mut entries = Vec::new();
    for (open, close) in [
        ("<Version>", "</Version>"),
        ("<DeleteMarker>", "</DeleteMarker>"),
    ] {
        for entry in body.split(open).skip(1) {
            let entry = entry.split(close).next().unwrap_or_default();
            if let (Some(key), Some(id)) = (xml::text(entry, "Key"), xml::text(entry, "VersionId"))
            {
                entries.push((key, id));
            }
        }
    }
    let truncated = xml::text(body, "IsTruncated").is_some_and(|t| t == "true");
    let next = (xml::text(body, "NextKeyMarker"))
        .zip(xml::text(body, "NextVersionIdMarker"))
        .filter(|_| truncated)
        .map(|(k, v)| next_token(&k, &v));
    VersionsPage { entries, next }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_of_versions_gives_every_version_and_delete_marker_and_where_to_go_on() {
        let body = "<ListVersionsResult><IsTruncated>true</IsTruncated>\
            <NextKeyMarker>p/obj.1</NextKeyMarker><NextVersionIdMarker>v3</NextVersionIdMarker>\
            <Version><Key>p/obj.0</Key><VersionId>v1</VersionId><IsLatest>true</IsLatest></Version>\
            <DeleteMarker><Key>p/obj.1</Key><VersionId>v2</VersionId></DeleteMarker>\
            <Version><Key>p/obj.1</Key><VersionId>v3</VersionId></Version>\
            </ListVersionsResult>";
        let page = parse_versions(body);
        let mut entries = page.entries;
        entries.sort();
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            entries,
            pairs(&[("p/obj.0", "v1"), ("p/obj.1", "v2"), ("p/obj.1", "v3")])
        );
        assert_eq!(page.next.as_deref(), Some("p/obj.1\0v3"));
        let last = body.replace("<IsTruncated>true", "<IsTruncated>false");
        assert_eq!(parse_versions(&last).next, None);
    }
}
