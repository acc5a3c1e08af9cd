//! One page of a bucket listing (V1, V2 and versions share it): keys and common prefixes below
//! a prefix, after a marker, at most `max-keys`; links and other non-objects are left out.

use crate::errors::{io_error, store_error};
use crate::s3::Gateway;
use crate::store::load_meta;
use s3s::dto::{CommonPrefix, ETag, Object, ObjectStorageClass, Timestamp};
use s3s::S3Result;
use std::collections::BTreeSet;
use std::os::fd::AsFd;

/// One page of a listing.
pub struct Page {
    pub prefix: String,
    pub max_keys: i32,
    pub objects: Vec<Object>,
    pub prefixes: Vec<CommonPrefix>,
    /// More keys follow; `next` is where the next page starts after.
    pub truncated: bool,
    pub next: Option<String>,
}

impl Gateway {
    /// One page of keys and common prefixes below `prefix` and after `after`, at most
    /// `max_keys` (default and limit 1000).
    pub(crate) fn list(
        &self,
        bucket: &str,
        prefix: Option<&str>,
        delimiter: Option<&str>,
        after: Option<&str>,
        max_keys: Option<i32>,
    ) -> S3Result<Page> {
        let prefix = prefix.unwrap_or_default();
        let max = max_keys.unwrap_or(1000).clamp(0, 1000) as usize;
        let dir = self.store.open_bucket(bucket).map_err(store_error)?;
        let mut objects = Vec::new();
        let mut prefixes: BTreeSet<String> = BTreeSet::new();
        let mut last = None;
        let mut truncated = false;
        for key in self.store.keys(dir.as_fd(), prefix).map_err(io_error)? {
            if after.is_some_and(|a| key.as_str() <= a) {
                continue;
            }
            let common = delimiter.filter(|d| !d.is_empty()).and_then(|d| {
                key[prefix.len()..]
                    .find(d)
                    .map(|i| key[..prefix.len() + i + d.len()].to_string())
            });
            if objects.len() + prefixes.len() >= max
                && common.as_ref().is_none_or(|c| !prefixes.contains(c))
            {
                truncated = true;
                break;
            }
            match common {
                Some(c) => {
                    if after.is_some_and(|a| c.as_str() <= a) {
                        continue;
                    }
                    prefixes.insert(c.clone());
                    last = Some(c);
                }
                None => {
                    // Gone since the walk, or replaced by something that is not an object.
                    let Ok(object) = self.store.open_object(dir.as_fd(), bucket, &key) else {
                        continue;
                    };
                    let etag = load_meta(&object.file).map_err(io_error)?.etag;
                    objects.push(Object {
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
        let prefixes = prefixes
            .into_iter()
            .map(|p| CommonPrefix { prefix: Some(p) })
            .collect();
        Ok(Page {
            prefix: prefix.to_string(),
            max_keys: max as i32,
            objects,
            prefixes,
            truncated,
            next: last.filter(|_| truncated),
        })
    }
}
