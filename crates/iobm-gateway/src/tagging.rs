//! Object tags as S3 keeps them: at most 10 per object, keys of 1 to 128 and values of at most
//! 256 Unicode characters, each key once, none under `aws:` (400 InvalidTag otherwise). Set by
//! PutObjectTagging or by `x-amz-tagging` (URL-query form) on PutObject, CreateMultipartUpload
//! (applied at completion) and CopyObject (with `x-amz-tagging-directive` REPLACE; COPY keeps
//! the source's); read by GetObjectTagging and counted by `x-amz-tagging-count` on GET and
//! HEAD. Kept in an extended attribute of the object's file beside its other metadata
//! ([`crate::meta`]), so a tag set is read through the descriptor that serves the bytes.

use crate::errors::custom;
use crate::errors::meta_error;
use crate::gateway::Gateway;
use crate::meta::{save_tags, TagSet};
use hyper::StatusCode;
use s3s::dto::*;
use s3s::{S3Error, S3Request, S3Response, S3Result};

/// Most tags an object may have.
pub const MAX_TAGS: usize = 10;
/// Longest tag key and value, in Unicode characters.
pub const MAX_KEY_CHARS: usize = 128;
pub const MAX_VALUE_CHARS: usize = 256;

fn invalid_tag(message: impl Into<String>) -> S3Error {
    custom("InvalidTag", StatusCode::BAD_REQUEST, message.into())
}

/// A tag set from its pairs, checked against S3's limits.
pub fn tag_set(pairs: impl IntoIterator<Item = (String, String)>) -> S3Result<TagSet> {
    let mut tags = TagSet::new();
    for (key, value) in pairs {
        let chars = key.chars().count();
        if chars == 0 || chars > MAX_KEY_CHARS {
            return Err(invalid_tag(format!(
                "The TagKey you have provided is invalid: a tag key is 1 to {MAX_KEY_CHARS} \
                 characters, this one {chars}"
            )));
        }
        if value.chars().count() > MAX_VALUE_CHARS {
            return Err(invalid_tag(format!(
                "The TagValue you have provided is invalid: a tag value is at most \
                 {MAX_VALUE_CHARS} characters"
            )));
        }
        if key.starts_with("aws:") {
            return Err(invalid_tag("Your TagKey cannot be prefixed with aws:"));
        }
        if tags.insert(key, value).is_some() {
            return Err(invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(invalid_tag(format!(
            "Object tags cannot be greater than {MAX_TAGS}"
        )));
    }
    Ok(tags)
}

/// The tags of an `x-amz-tagging` header: `key=value` pairs joined by `&`, URL-encoded (`+` a
/// space); a pair without `=` has an empty value.
pub fn from_header(header: Option<&str>) -> S3Result<TagSet> {
    let Some(header) = header.filter(|h| !h.is_empty()) else {
        return Ok(TagSet::new());
    };
    let decode = |s: &str| {
        crate::query::percent_decode(&s.replace('+', " "))
            .ok_or_else(|| invalid_tag("The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates."))
    };
    let pairs = header
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect::<S3Result<Vec<_>>>()?;
    tag_set(pairs)
}

/// The tags of a Tagging document (PutObjectTagging's body).
fn from_document(tagging: Tagging) -> S3Result<TagSet> {
    let pairs = tagging
        .tag_set
        .into_iter()
        .map(|t| match t.key {
            Some(key) => Ok((key, t.value.unwrap_or_default())),
            None => Err(invalid_tag("The TagKey you have provided is invalid")),
        })
        .collect::<S3Result<Vec<_>>>()?;
    tag_set(pairs)
}

/// `x-amz-tagging-count`: how many tags, when there are any.
pub fn count(tags: &TagSet) -> Option<i32> {
    (!tags.is_empty()).then_some(tags.len() as i32)
}

impl Gateway {
    /// Replaces the tags of the object at `key` (its current version or `version`; none:
    /// removes them), on its file in place: the file the gate decided from.
    fn set_tags(
        &self,
        (bucket, key): (&str, &str),
        version: Option<&str>,
        tags: &TagSet,
    ) -> S3Result<()> {
        let (object, _) = self.object(bucket, key, version)?;
        save_tags(&object.file, tags).map_err(meta_error)
    }

    pub(crate) async fn get_object_tagging_at(
        &self,
        req: S3Request<GetObjectTaggingInput>,
    ) -> S3Result<S3Response<GetObjectTaggingOutput>> {
        let input = req.input;
        let version = input.version_id.as_deref();
        let (_, meta) = self.object(&input.bucket, &input.key, version)?;
        let tag_set = (meta.headers.tags.into_iter())
            .map(|(key, value)| Tag {
                key: Some(key),
                value: Some(value),
            })
            .collect();
        Ok(S3Response::new(GetObjectTaggingOutput {
            tag_set,
            version_id: meta.version.map(|v| v.version_id()),
        }))
    }

    pub(crate) async fn put_object_tagging_at(
        &self,
        req: S3Request<PutObjectTaggingInput>,
    ) -> S3Result<S3Response<PutObjectTaggingOutput>> {
        let input = req.input;
        let tags = from_document(input.tagging)?;
        let version = input.version_id.as_deref();
        self.set_tags((&input.bucket, &input.key), version, &tags)?;
        Ok(S3Response::new(PutObjectTaggingOutput::default()))
    }

    pub(crate) async fn delete_object_tagging_at(
        &self,
        req: S3Request<DeleteObjectTaggingInput>,
    ) -> S3Result<S3Response<DeleteObjectTaggingOutput>> {
        let input = req.input;
        let version = input.version_id.as_deref();
        self.set_tags((&input.bucket, &input.key), version, &TagSet::new())?;
        Ok(S3Response::new(DeleteObjectTaggingOutput::default()))
    }
}

/// The tags a copy gets: the source's (`x-amz-tagging-directive` COPY, the default), or those
/// of its `x-amz-tagging` (REPLACE).
pub fn for_copy(
    source: TagSet,
    directive: Option<&TaggingDirective>,
    header: Option<&str>,
) -> S3Result<TagSet> {
    match directive.map(|d| d.as_str()) {
        None | Some(TaggingDirective::COPY) => Ok(source),
        Some(TaggingDirective::REPLACE) => from_header(header),
        Some(other) => Err(s3s::s3_error!(
            InvalidArgument,
            "Unknown tagging directive: {other}"
        )),
    }
}

/// The [`StoredHeaders`] of a request's input: `PutObjectInput`, `CreateMultipartUploadInput`
/// and `CopyObjectInput` have the same five fields (moved out of the input) and
/// `x-amz-tagging` (checked before: [`from_header`]).
macro_rules! stored_headers {
    ($input:expr) => {
        $crate::meta::StoredHeaders::from_request(
            $input.cache_control,
            $input.content_disposition,
            $input.content_encoding,
            $input.content_language,
            $input.expires,
        )
        .with_tags($crate::tagging::from_header($input.tagging.as_deref()).unwrap_or_default())
    };
}
pub(crate) use stored_headers;

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: S3Result<TagSet>) -> String {
        r.unwrap_err().code().as_str().to_string()
    }

    #[test]
    fn headers_decode_as_url_queries() {
        let tags = from_header(Some("foo=bar&bar&a%20b=c+d&%C3%A9t%C3%A9=%26%3D")).unwrap();
        let got: Vec<_> = tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [("a b", "c d"), ("bar", ""), ("foo", "bar"), ("été", "&=")]
        );
        assert!(from_header(None).unwrap().is_empty());
        assert!(from_header(Some("")).unwrap().is_empty());
        assert_eq!(code(from_header(Some("a=1&a=2"))), "InvalidTag");
        assert_eq!(code(from_header(Some("=v"))), "InvalidTag");
        assert_eq!(code(from_header(Some("aws:k=v"))), "InvalidTag");
        assert_eq!(code(from_header(Some("k=%FF"))), "InvalidTag");
    }

    #[test]
    fn limits_count_unicode_characters() {
        let pairs = |n: usize, k: usize, v: usize| {
            (0..n)
                .map(move |i| (format!("{i:02}{}", "é".repeat(k - 2)), "ü".repeat(v)))
                .collect::<Vec<_>>()
        };
        assert_eq!(tag_set(pairs(10, 128, 256)).unwrap().len(), 10);
        assert_eq!(code(tag_set(pairs(11, 3, 3))), "InvalidTag");
        assert_eq!(code(tag_set(pairs(1, 129, 3))), "InvalidTag");
        assert_eq!(code(tag_set(pairs(1, 3, 257))), "InvalidTag");
        let e = tag_set(pairs(11, 3, 3)).unwrap_err();
        assert_eq!(e.status_code(), Some(StatusCode::BAD_REQUEST));
    }

    #[test]
    fn copies_keep_or_replace_the_source_tags() {
        let source = tag_set([("s".to_string(), "1".to_string())]).unwrap();
        assert_eq!(for_copy(source.clone(), None, Some("x=y")).unwrap(), source);
        let copy = TaggingDirective::from_static(TaggingDirective::COPY);
        assert_eq!(for_copy(source.clone(), Some(&copy), None).unwrap(), source);
        let replace = TaggingDirective::from_static(TaggingDirective::REPLACE);
        let replaced = for_copy(source.clone(), Some(&replace), Some("x=y")).unwrap();
        assert_eq!(
            replaced.into_iter().collect::<Vec<_>>(),
            [("x".into(), "y".into())]
        );
        assert!(for_copy(source, Some(&replace), None).unwrap().is_empty());
    }
}
