//! What is kept about an object besides its bytes: its ETag, content type, the standard headers
//! S3 keeps (Cache-Control, Content-Disposition, Content-Encoding, Content-Language, Expires),
//! user metadata and tags, in extended attributes of the object's file, written and read through
//! its descriptor. A folder marker (a key ending in `/`) keeps them on its directory. Reading
//! lists the attributes first and reads only those there, so a plain object costs one system
//! call more than it has attributes.

use crate::versions::Name;
use md5_many::Md5State;
use rustix::fs::{fgetxattr, flistxattr, fremovexattr, fsetxattr, XattrFlags};
use rustix::io::Errno;
use s3s::dto::{Timestamp, TimestampFormat};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

pub mod checksum;
pub(crate) mod grants;
pub use grants::{Grants, Unreadable};

const XATTR_ETAG: &str = "user.iobm.etag";
const XATTR_CONTENT_TYPE: &str = "user.iobm.content-type";
const XATTR_METADATA: &str = "user.iobm.metadata";
const XATTR_HEADERS: &str = "user.iobm.headers";
const XATTR_PARTS: &str = "user.iobm.parts";
const XATTR_TAGS: &str = "user.iobm.tags";
/// In a bucket that keeps versions: the object's version ([`crate::versions::Name`]).
const XATTR_VERSION: &str = "user.iobm.version";
/// On a directory: it is also a folder marker, the empty object whose key is the directory's
/// path with a `/` after it.
const XATTR_FOLDER: &str = "user.iobm.folder";
const ALL: [&str; 10] = [
    XATTR_ETAG,
    XATTR_CONTENT_TYPE,
    XATTR_METADATA,
    XATTR_HEADERS,
    XATTR_PARTS,
    XATTR_TAGS,
    XATTR_FOLDER,
    XATTR_VERSION,
    grants::XATTR_OWNER,
    grants::XATTR_ACL,
];

/// An object's tags, by key (S3 lists them in key order).
pub type TagSet = BTreeMap<String, String>;

/// What is kept about an object besides its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// Hex MD5 (or MD5-of-MD5s with `-N` for multipart uploads), without quotes.
    pub etag: String,
    pub content_type: Option<String>,
    pub metadata: HashMap<String, String>,
    pub headers: StoredHeaders,
    /// A multipart upload's part sizes, in order (empty for an object put whole).
    pub parts: Vec<u64>,
    /// Who uploaded it and its canned ACL ([`crate::acl`]), saved with the object. Not read
    /// back by [`load_meta`]: no GET or HEAD answers with it, and the access checks read it
    /// themselves ([`Grants::read`]), so a GET pays no system call for it.
    pub grants: Grants,
    /// Its version, where its bucket keeps versions. Read back, never written by
    /// [`store_meta`]: a version is named as it is published ([`save_version`]).
    pub version: Option<Name>,
}

impl Meta {
    /// Where part `n` (from 1) lies: its first byte and length, and how many parts there are.
    /// An object put whole is its own part 1, of no count.
    pub fn part(&self, n: i32, len: u64) -> Option<(u64, u64, Option<i32>)> {
        if self.parts.is_empty() {
            return (n == 1).then_some((0, len, None));
        }
        let index = usize::try_from(n).ok()?.checked_sub(1)?;
        let size = *self.parts.get(index)?;
        let start = self.parts[..index].iter().sum();
        Some((start, size, Some(self.parts.len() as i32)))
    }
}

/// The standard headers an object keeps and returns, as S3 does, and its tags (set by
/// `x-amz-tagging` or PutObjectTagging, counted by `x-amz-tagging-count`; kept in an attribute
/// of their own, so that retagging leaves the rest alone).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredHeaders {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_disposition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_encoding: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_language: Option<String>,
    /// As an HTTP date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: TagSet,
    /// The checksum the body was sent with, checked when it arrived (`crate::checksums`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<checksum::Stored>,
}

impl StoredHeaders {
    /// From a request's headers; `aws-chunked`, the transfer's own encoding, is not kept.
    pub fn from_request(
        cache_control: Option<String>,
        content_disposition: Option<String>,
        content_encoding: Option<String>,
        content_language: Option<String>,
        expires: Option<Timestamp>,
    ) -> StoredHeaders {
        let content_encoding = content_encoding
            .map(|e| {
                let kept: Vec<&str> = e
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.eq_ignore_ascii_case("aws-chunked"))
                    .collect();
                kept.join(", ")
            })
            .filter(|e| !e.is_empty());
        let expires = expires.and_then(|t| {
            let mut date = Vec::new();
            t.format(TimestampFormat::HttpDate, &mut date).ok()?;
            String::from_utf8(date).ok()
        });
        StoredHeaders {
            cache_control,
            content_disposition,
            content_encoding,
            content_language,
            expires,
            tags: TagSet::new(),
            checksum: None,
        }
    }

    pub fn with_tags(self, tags: TagSet) -> StoredHeaders {
        StoredHeaders { tags, ..self }
    }

    pub fn expires(&self) -> Option<Timestamp> {
        let date = self.expires.as_deref()?;
        Timestamp::parse(TimestampFormat::HttpDate, date).ok()
    }

    /// Each header's name and value.
    pub fn pairs(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("cache-control", &self.cache_control),
            ("content-disposition", &self.content_disposition),
            ("content-encoding", &self.content_encoding),
            ("content-language", &self.content_language),
            ("expires", &self.expires),
        ]
        .into_iter()
        .filter_map(|(name, v)| v.as_deref().map(|v| (name, v)))
    }
}

fn xattr(file: &File, name: &str) -> Option<Vec<u8>> {
    let mut small = [0u8; 1024];
    match fgetxattr(file, name, &mut small[..]) {
        Ok(n) => Some(small[..n].to_vec()),
        Err(Errno::RANGE) => {
            let mut big = vec![0u8; 64 * 1024];
            let n = fgetxattr(file, name, &mut big[..]).ok()?;
            big.truncate(n);
            Some(big)
        }
        Err(_) => None,
    }
}

/// Whether a directory is also a folder marker.
pub fn is_folder(dir: impl AsFd) -> bool {
    fgetxattr(dir, XATTR_FOLDER, &mut [0u8; 1][..]).is_ok()
}

/// Makes a directory a folder marker with `meta`, replacing what it kept before; fails where
/// the file system keeps no extended attributes (the marker would not exist).
pub fn mark_folder(dir: &File, meta: &Meta) -> io::Result<()> {
    unmark_folder(dir);
    fsetxattr(dir, XATTR_FOLDER, b"1", XattrFlags::empty())?;
    store_meta(dir, meta)
}

/// Makes a directory a plain directory again (it no longer holds a folder marker).
pub fn unmark_folder(dir: impl AsFd) {
    for name in ALL {
        let _ = fremovexattr(&dir, name);
    }
}

/// Saves an object's metadata on its (temporary) file. File systems without user extended
/// attributes keep only the bytes (the ETag is then recomputed when asked for) unless user
/// metadata, tags, an owner or an ACL were asked for, which they cannot keep: `Unsupported`. An
/// attribute the file system has no room for fails the save ([`meta_error`] says how to
/// answer).
pub fn store_meta(file: &File, meta: &Meta) -> io::Result<()> {
    if meta.grants != Grants::default() {
        meta.grants.save(file)?;
    }
    match fsetxattr(file, XATTR_ETAG, meta.etag.as_bytes(), XattrFlags::empty()) {
        Ok(()) => {}
        Err(Errno::NOTSUP) if meta.metadata.is_empty() && meta.headers.tags.is_empty() => {
            return Ok(())
        }
        Err(Errno::NOTSUP) => return Err(io::ErrorKind::Unsupported.into()),
        Err(e) => return Err(e.into()),
    }
    if let Some(ct) = &meta.content_type {
        fsetxattr(file, XATTR_CONTENT_TYPE, ct.as_bytes(), XattrFlags::empty())?;
    }
    if !meta.metadata.is_empty() {
        let json = serde_json::to_vec(&meta.metadata).expect("a string map serialises");
        fsetxattr(file, XATTR_METADATA, &json, XattrFlags::empty())?;
    }
    if !meta.parts.is_empty() {
        let json = serde_json::to_vec(&meta.parts).expect("sizes serialise");
        fsetxattr(file, XATTR_PARTS, &json, XattrFlags::empty())?;
    }
    let tags = &meta.headers.tags;
    let untagged = StoredHeaders {
        tags: TagSet::new(),
        ..meta.headers.clone()
    };
    if untagged != StoredHeaders::default() {
        let json = serde_json::to_vec(&untagged).expect("headers serialise");
        fsetxattr(file, XATTR_HEADERS, &json, XattrFlags::empty())?;
    }
    if !tags.is_empty() {
        save_tags(file, tags)?;
    }
    Ok(())
}

/// Replaces an object's tags (none: removes them), on the object in place.
pub fn save_tags(file: impl AsFd, tags: &TagSet) -> io::Result<()> {
    if tags.is_empty() {
        return match fremovexattr(&file, XATTR_TAGS) {
            Ok(()) | Err(Errno::NODATA) | Err(Errno::NOTSUP) => Ok(()),
            Err(e) => Err(e.into()),
        };
    }
    let json = serde_json::to_vec(tags).expect("a string map serialises");
    match fsetxattr(&file, XATTR_TAGS, &json, XattrFlags::empty()) {
        Err(Errno::NOTSUP) => Err(io::ErrorKind::Unsupported.into()),
        other => Ok(other?),
    }
}

/// The names of the gateway's attributes a file has (none where the file system keeps none).
fn present(file: &File) -> Vec<&'static str> {
    let mut small = [0u8; 512];
    let big;
    let list: &[u8] = match flistxattr(file, &mut small[..]) {
        Ok(n) => &small[..n],
        Err(Errno::RANGE) => {
            let mut buf = vec![0u8; 64 * 1024];
            match flistxattr(file, &mut buf[..]) {
                Ok(n) => {
                    buf.truncate(n);
                    big = buf;
                    &big
                }
                Err(_) => return ALL.to_vec(),
            }
        }
        Err(_) => return Vec::new(),
    };
    list.split(|&b| b == 0)
        .filter_map(|name| ALL.iter().copied().find(|a| a.as_bytes() == name))
        .collect()
}

/// An object's metadata, from the open file; the ETag is computed from the bytes for files the
/// gateway did not write.
pub fn load_meta(file: &File) -> io::Result<Meta> {
    let names = present(file);
    let text = |name: &str| {
        names
            .contains(&name)
            .then(|| xattr(file, name).and_then(|v| String::from_utf8(v).ok()))
            .flatten()
    };
    fn json<T: serde::de::DeserializeOwned + Default>(text: Option<String>) -> T {
        text.and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default()
    }
    Ok(Meta {
        etag: match text(XATTR_ETAG) {
            Some(etag) => etag,
            None => md5_file(file)?,
        },
        content_type: text(XATTR_CONTENT_TYPE),
        metadata: json(text(XATTR_METADATA)),
        headers: json::<StoredHeaders>(text(XATTR_HEADERS)).with_tags(json(text(XATTR_TAGS))),
        parts: json(text(XATTR_PARTS)),
        // Not read back: see the field.
        grants: Grants::default(),
        version: text(XATTR_VERSION).and_then(|v| Name::parse(&v)),
    })
}

/// An object's ETag alone (what a listing shows), computed from the bytes for files the
/// gateway did not write.
pub fn load_etag(file: &File) -> io::Result<String> {
    match xattr(file, XATTR_ETAG).and_then(|v| String::from_utf8(v).ok()) {
        Some(etag) => Ok(etag),
        None => md5_file(file),
    }
}

/// Names the version an object's (temporary) file is.
pub fn save_version(file: &File, name: Name) -> io::Result<()> {
    let text = name.file_name();
    Ok(fsetxattr(
        file,
        XATTR_VERSION,
        text.as_bytes(),
        XattrFlags::empty(),
    )?)
}

/// The version an object's file is, if it was named one.
pub fn load_version(file: &File) -> Option<Name> {
    let text = String::from_utf8(xattr(file, XATTR_VERSION)?).ok()?;
    Name::parse(&text)
}

/// Hex MD5 of a file's bytes (read by offset: the file position is left alone).
pub fn md5_file(file: &File) -> io::Result<String> {
    let mut hasher = Md5State::new();
    let len = file.metadata()?.len().clamp(1, 1 << 20);
    let mut buf = vec![0u8; len as usize];
    let mut offset = 0;
    loop {
        let n = file.read_at(&mut buf, offset)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        offset += n as u64;
    }
    Ok(hex(&hasher.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
