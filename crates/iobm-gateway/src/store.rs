//! The gateway's file system side: buckets are top-level directories of the root, object keys
//! map to files below them (`/` makes directories). Names are checked so nothing resolves
//! outside the root. Objects are written to a temporary file and renamed into place only when
//! complete; their ETag, content type and user metadata live in extended attributes of the
//! file, so deleting an object leaves nothing behind.

use md5::{Digest, Md5};
use std::collections::HashMap;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The gateway's own directory under the root (never a bucket: bucket names cannot start with
/// a dot).
pub const INTERNAL: &str = ".iobm-gateway";
const XATTR_ETAG: &str = "user.iobm.etag";
const XATTR_CONTENT_TYPE: &str = "user.iobm.content-type";
const XATTR_METADATA: &str = "user.iobm.metadata";
/// Longest key S3 accepts, in bytes.
pub const MAX_KEY: usize = 1024;

/// Why a name cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum NameError {
    InvalidBucket,
    InvalidKey,
    KeyTooLong,
}

/// What is kept about an object besides its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// Hex MD5 (or MD5-of-MD5s with `-N` for multipart uploads), without quotes.
    pub etag: String,
    pub content_type: Option<String>,
    pub metadata: HashMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    /// Where this instance's temporary files go: `.iobm-gateway/tmp/<host>-<pid>`.
    tmp: PathBuf,
    /// Numbers this instance's temporary files, which only need to be unique in `tmp`.
    next_temp: Arc<AtomicU64>,
    uploads: PathBuf,
    pub fsync: bool,
}

fn host_pid() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    format!(
        "{}-{}",
        String::from_utf8_lossy(&buf[..end]),
        std::process::id()
    )
}

impl Store {
    /// Opens the root, cleaning temporary files left by dead gateways of this host (a PUT cut
    /// short by SIGKILL never became an object).
    pub fn open(root: &Path, fsync: bool) -> io::Result<Store> {
        let root = root.canonicalize()?;
        let tmp_all = root.join(INTERNAL).join("tmp");
        let uploads = root.join(INTERNAL).join("uploads");
        fs::create_dir_all(&tmp_all)?;
        fs::create_dir_all(&uploads)?;
        let me = host_pid();
        let (host, _) = me.rsplit_once('-').unwrap_or((&me, ""));
        for entry in fs::read_dir(&tmp_all)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((h, pid)) = name.rsplit_once('-') else {
                continue;
            };
            let pid: i32 = pid.parse().unwrap_or(0);
            // SAFETY: kill with signal 0 only checks whether the process exists.
            let alive = pid > 0 && unsafe { libc::kill(pid, 0) } == 0;
            if h == host && !alive {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        let tmp = tmp_all.join(me);
        fs::create_dir_all(&tmp)?;
        Ok(Store {
            root,
            tmp,
            next_temp: Arc::new(AtomicU64::new(0)),
            uploads,
            fsync,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bookkeeping directories, innermost first: removed when a gateway stops, each only
    /// if empty (other gateways may still use them).
    pub fn bookkeeping_dirs(&self) -> Vec<PathBuf> {
        let internal = self.root.join(INTERNAL);
        vec![
            self.tmp.clone(),
            internal.join("tmp"),
            self.uploads.clone(),
            internal,
        ]
    }

    pub fn bucket_path(&self, bucket: &str) -> Result<PathBuf, NameError> {
        let ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && !bucket.starts_with(['.', '-'])
            && !bucket.ends_with(['.', '-'])
            && !bucket.contains("..");
        if ok {
            Ok(self.root.join(bucket))
        } else {
            Err(NameError::InvalidBucket)
        }
    }

    /// The file of `key` in `bucket`: plain components only, no `..`, no NUL, no empty parts.
    pub fn object_path(&self, bucket: &str, key: &str) -> Result<PathBuf, NameError> {
        if key.len() > MAX_KEY {
            return Err(NameError::KeyTooLong);
        }
        let plain =
            |c: &str| !c.is_empty() && c != "." && c != ".." && !c.contains('\0') && c.len() <= 255;
        if key.is_empty() || !key.split('/').all(plain) {
            return Err(NameError::InvalidKey);
        }
        Ok(self.bucket_path(bucket)?.join(key))
    }

    /// A new temporary file path of this instance.
    pub fn temp_path(&self) -> PathBuf {
        let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
        self.tmp.join(format!("{n:016x}"))
    }

    /// A new multipart upload id: random, since gateways sharing the root share its uploads.
    pub fn new_upload_id() -> String {
        let mut bytes = [0u8; 8];
        let _ = fs::File::open("/dev/urandom")
            .and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes));
        format!("{:016x}", u64::from_le_bytes(bytes))
    }

    pub fn uploads(&self) -> &Path {
        &self.uploads
    }

    /// Moves a complete temporary file into place as `dest`, atomically (readers see the old
    /// object or the new one), making the key's directories.
    pub fn publish(&self, temp: &Path, dest: &Path) -> io::Result<()> {
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        if self.fsync {
            fs::File::open(temp)?.sync_all()?;
        }
        if dest.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a key with this prefix exists",
            ));
        }
        fs::rename(temp, dest)
    }

    /// Removes empty directories between `file` and its bucket, after a delete.
    pub fn prune(&self, bucket: &Path, file: &Path) {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == bucket || !d.starts_with(bucket) || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

fn xattr_set(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    let p = CString::new(path.as_os_str().as_bytes())?;
    let n = CString::new(name)?;
    // SAFETY: valid NUL-terminated strings and a buffer of value.len() bytes.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn xattr_get(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = CString::new(path.as_os_str().as_bytes()).ok()?;
    let n = CString::new(name).ok()?;
    let mut buf = vec![0u8; 64 * 1024];
    // SAFETY: valid NUL-terminated strings; buf is writable for its length.
    let len = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if len < 0 {
        return None;
    }
    buf.truncate(len as usize);
    Some(buf)
}

/// Saves an object's metadata on its (temporary) file. File systems without user extended
/// attributes keep only the bytes; the ETag is then recomputed when asked for.
pub fn save_meta(path: &Path, meta: &Meta) {
    let _ = xattr_set(path, XATTR_ETAG, meta.etag.as_bytes());
    if let Some(ct) = &meta.content_type {
        let _ = xattr_set(path, XATTR_CONTENT_TYPE, ct.as_bytes());
    }
    if !meta.metadata.is_empty() {
        let json = serde_json::to_vec(&meta.metadata).expect("a string map serialises");
        let _ = xattr_set(path, XATTR_METADATA, &json);
    }
}

/// An object's metadata; the ETag is computed from the bytes for files the gateway did not
/// write.
pub fn load_meta(path: &Path) -> io::Result<Meta> {
    let text = |name| xattr_get(path, name).and_then(|v| String::from_utf8(v).ok());
    let etag = match text(XATTR_ETAG) {
        Some(etag) => etag,
        None => md5_file(path)?,
    };
    Ok(Meta {
        etag,
        content_type: text(XATTR_CONTENT_TYPE),
        metadata: text(XATTR_METADATA)
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default(),
    })
}

/// Hex MD5 of a file's bytes.
pub fn md5_file(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Md5::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = io::Read::read(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_leave_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        assert!(store.object_path("bucket", "a/b/c.txt").is_ok());
        for key in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            "a/./b",
            "x\0y",
            "",
        ] {
            assert_eq!(
                store.object_path("bucket", key),
                Err(NameError::InvalidKey),
                "{key:?}"
            );
        }
        assert_eq!(
            store.object_path("bucket", &"k".repeat(2000)),
            Err(NameError::KeyTooLong)
        );
        for bucket in ["..", ".iobm-gateway", "a", "UPPER", "a/b", "x..y"] {
            assert!(store.bucket_path(bucket).is_err(), "{bucket}");
        }
    }

    #[test]
    fn publish_is_atomic_and_prune_removes_empty_directories() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), true).unwrap();
        fs::create_dir(store.root().join("bk1")).unwrap();
        let temp = store.temp_path();
        fs::write(&temp, b"hello").unwrap();
        let meta = Meta {
            etag: md5_file(&temp).unwrap(),
            content_type: Some("text/plain".into()),
            metadata: HashMap::from([("k".to_string(), "v".to_string())]),
        };
        save_meta(&temp, &meta);
        let dest = store.object_path("bk1", "x/y/z").unwrap();
        store.publish(&temp, &dest).unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"hello");
        assert_eq!(
            load_meta(&dest).unwrap().etag,
            "5d41402abc4b2a76b9719d911017c592"
        );
        fs::remove_file(&dest).unwrap();
        store.prune(&store.root().join("bk1"), &dest);
        assert!(store.root().join("bk1").is_dir());
        assert!(!store.root().join("b1/x").exists());
    }
}
