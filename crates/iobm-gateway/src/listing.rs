//! One page of a bucket listing (V1 and V2 share it): keys and common prefixes below
//! a prefix, after a marker, at most `max-keys`, read by [`crate::store::walk`]; links and other
//! non-objects are left out. With
//! `encoding-type=url` the keys and prefixes are sent URL-encoded ([`url_encoded`]).

use crate::errors::{io_error, store_error};
use crate::gateway::Gateway;
use crate::meta::load_etag;
use crate::meta::Grants;
use crate::store::walk::Found;
use s3s::dto::{CommonPrefix, ETag, EncodingType, Object, ObjectStorageClass, Owner, Timestamp};
use s3s::S3Result;
use std::os::fd::AsFd;

/// One page of a listing.
pub struct Page {
    pub prefix: String,
    pub max_keys: i32,
    pub objects: Vec<Object>,
    pub prefixes: Vec<CommonPrefix>,
    /// More keys follow; `next` is where the next page starts after.
    pub truncated: bool,
    /// The last key or prefix of a truncated page, as it is (a continuation token is opaque).
    pub next: Option<String>,
    /// Keys and prefixes are URL-encoded (`encoding-type=url`).
    pub url: bool,
}

/// What a listing request asks for.
pub(crate) struct Query {
    pub bucket: String,
    pub prefix: Option<String>,
    pub delimiter: Option<String>,
    /// The marker, continuation token or start-after: keys up to it are left out.
    pub after: Option<String>,
    pub max_keys: Option<i32>,
    pub encoding: Option<EncodingType>,
}

impl Gateway {
    /// One page of keys and common prefixes below the prefix and after the marker, at most
    /// `max_keys` (default and limit 1000), URL-encoded when asked (as boto3 does by default).
    /// Runs on a blocking thread: a directory read may take a while.
    pub(crate) async fn list(&self, query: Query) -> S3Result<Page> {
        let gateway = self.clone();
        tokio::task::spawn_blocking(move || gateway.list_now(query))
            .await
            .map_err(|e| s3s::s3_error!(InternalError, "listing failed: {e}"))?
    }

    fn list_now(&self, q: Query) -> S3Result<Page> {
        let url = q
            .encoding
            .as_ref()
            .is_some_and(|e| e.as_str() == EncodingType::URL);
        let prefix = q.prefix.unwrap_or_default();
        let max = q.max_keys.unwrap_or(1000).clamp(0, 1000) as usize;
        let dir = self.store.open_bucket(&q.bucket).map_err(store_error)?;
        let mut objects = Vec::new();
        let mut prefixes = Vec::new();
        let mut last = None;
        let mut truncated = false;
        let mut walk = self
            .store
            .walk(
                dir.as_fd(),
                &prefix,
                q.delimiter.as_deref(),
                q.after.as_deref(),
            )
            .map_err(io_error)?;
        while let Some(found) = walk.next_found().map_err(io_error)? {
            if objects.len() + prefixes.len() == max {
                // S3 answers max-keys=0 with an empty page that is not truncated.
                truncated = max > 0;
                break;
            }
            match found {
                Found::Prefix(common) => {
                    prefixes.push(CommonPrefix {
                        prefix: Some(common.clone()),
                    });
                    last = Some(common);
                }
                Found::Object(key) => {
                    // Gone since the walk, or replaced by something that is not an object.
                    let Ok(object) = self.store.open_object(dir.as_fd(), &q.bucket, &key) else {
                        continue;
                    };
                    let etag = load_etag(&object.file).map_err(io_error)?;
                    let uploader = Grants::owner_of(&object.file);
                    objects.push(Object {
                        owner: Some(uploader.map_or_else(owner, |name| Owner {
                            display_name: Some(name.clone()),
                            id: Some(name),
                        })),
                        key: Some(key.clone()),
                        size: Some(object.len as i64),
                        e_tag: Some(ETag::Strong(etag)),
                        last_modified: Some(Timestamp::from(object.modified)),
                        storage_class: Some(ObjectStorageClass::from_static(
                            ObjectStorageClass::STANDARD,
                        )),
                        ..Default::default()
                    });
                    last = Some(key);
                }
            }
        }
        Ok(Page {
            prefix,
            max_keys: max as i32,
            objects,
            prefixes,
            truncated,
            next: last.filter(|_| truncated),
            url,
        }
        .encoded())
    }
}

/// The owner shown for what has none recorded: the gateway's one account.
pub(crate) fn owner() -> Owner {
    Owner {
        display_name: Some(crate::accounts::SINGLE.into()),
        id: Some(crate::accounts::SINGLE.into()),
    }
}

/// `text` as S3 sends a key or prefix with `encoding-type=url`: every byte but the unreserved
/// ones and `/` percent-encoded. Clients decode with `unquote_plus`, so `+` and space are
/// encoded too.
pub(crate) fn url_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Page {
    /// The page with its prefix, keys and common prefixes URL-encoded if asked.
    fn encoded(mut self) -> Page {
        if self.url {
            self.prefix = url_encoded(&self.prefix);
            for o in &mut self.objects {
                o.key = o.key.as_deref().map(url_encoded);
            }
            for p in &mut self.prefixes {
                p.prefix = p.prefix.as_deref().map(url_encoded);
            }
        }
        self
    }

    /// A key, marker or delimiter of the request or the page sent back as the page's keys are.
    pub fn echo(&self, value: Option<String>) -> Option<String> {
        if self.url {
            value.as_deref().map(url_encoded)
        } else {
            value
        }
    }
}

#[cfg(test)]
mod tests {
    use super::url_encoded;

    #[test]
    fn url_encoding_keeps_unreserved_bytes_and_slashes() {
        assert_eq!(url_encoded("a/b-c_d.e~f"), "a/b-c_d.e~f");
        assert_eq!(url_encoded("%2e%2e/x"), "%252e%252e/x");
        assert_eq!(url_encoded("a b+c"), "a%20b%2Bc");
        assert_eq!(url_encoded("\u{fc}"), "%C3%BC");
    }
}
