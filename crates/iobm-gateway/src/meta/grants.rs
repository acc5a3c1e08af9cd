//! The owner and ACL kept with a bucket's directory or an object's file, in two extended
//! attributes: written with the object, read by the gate through the descriptor it checks. What
//! they allow is [`crate::acl`]'s to say.

use rustix::fs::{fgetxattr, fsetxattr, XattrFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd};

pub const XATTR_OWNER: &str = "user.iobm.owner";
pub const XATTR_ACL: &str = "user.iobm.acl";

/// The owner and canned ACL of a bucket or object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// `None`: made by other means than this gateway (a shared bucket, or an object whose
    /// uploader is unknown).
    pub owner: Option<String>,
    /// `None` is `private`.
    pub acl: Option<String>,
}

/// An owner or ACL attribute that is there but cannot be read (an I/O error, not UTF-8): what
/// it belongs to is refused to everyone but a gateway's single account, never taken as shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// Largest value an extended attribute can have on Linux (`XATTR_SIZE_MAX`).
const XATTR_MAX: usize = 64 << 10;

/// An attribute's whole value: `None` when it is not set (or the file system keeps none).
fn text(fd: BorrowedFd<'_>, name: &str) -> Result<Option<String>, Unreadable> {
    let mut small = [0u8; 256];
    let value = match fgetxattr(fd, name, &mut small[..]) {
        Ok(n) => small[..n].to_vec(),
        Err(Errno::NODATA) | Err(Errno::NOTSUP) => return Ok(None),
        Err(Errno::RANGE) => {
            // Longer than the first guess: ask its size, then read it whole.
            let mut value = vec![0u8; XATTR_MAX];
            let n = fgetxattr(fd, name, &mut value[..]).map_err(|_| Unreadable)?;
            value.truncate(n);
            value
        }
        Err(_) => return Err(Unreadable),
    };
    String::from_utf8(value).map(Some).map_err(|_| Unreadable)
}

impl Grants {
    pub fn read(fd: impl AsFd) -> Result<Grants, Unreadable> {
        Ok(Grants {
            owner: text(fd.as_fd(), XATTR_OWNER)?,
            acl: text(fd.as_fd(), XATTR_ACL)?,
        })
    }

    /// The recorded owner alone (what a listing shows of each object; one that cannot be read
    /// shows as none).
    pub fn owner_of(fd: impl AsFd) -> Option<String> {
        text(fd.as_fd(), XATTR_OWNER).ok().flatten()
    }

    /// Saves the grants on a bucket's directory or an object's file; `Unsupported` where the
    /// file system keeps no extended attributes.
    pub fn save(&self, fd: impl AsFd) -> std::io::Result<()> {
        let set = |name: &str, value: &str| match fsetxattr(
            &fd,
            name,
            value.as_bytes(),
            XattrFlags::empty(),
        ) {
            Err(Errno::NOTSUP) => Err(std::io::ErrorKind::Unsupported.into()),
            other => Ok(other?),
        };
        if let Some(owner) = &self.owner {
            set(XATTR_OWNER, owner)?;
        }
        set(XATTR_ACL, self.acl.as_deref().unwrap_or("private"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_the_file_system_cannot_keep_fails_the_save() {
        // Longer than any extended attribute may be (64 KiB): the object must not be kept without
        // its owner, which would leave it to the bucket's rules.
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("object")).unwrap();
        let meta = crate::meta::Meta {
            etag: "e".into(),
            grants: Grants {
                owner: Some("o".repeat(70_000)),
                acl: None,
            },
            ..Default::default()
        };
        assert!(crate::meta::store_meta(&file, &meta).is_err());
    }

    #[test]
    fn grants_are_kept_in_extended_attributes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("object");
        std::fs::write(&path, b"x").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(Grants::read(&file).unwrap(), Grants::default());
        assert_eq!(Grants::owner_of(&file), None);
        // An owner longer than the first read's buffer is read whole.
        let long = "a".repeat(300);
        let g = Grants {
            owner: Some(long.clone()),
            acl: Some("public-read".into()),
        };
        g.save(&file).unwrap();
        assert_eq!(Grants::read(&file).unwrap(), g);
        assert_eq!(Grants::owner_of(&file), Some(long));
        // No ACL saved is private, and says so.
        let other = dir.path().join("other");
        std::fs::write(&other, b"x").unwrap();
        let other = std::fs::File::open(&other).unwrap();
        Grants::default().save(&other).unwrap();
        assert_eq!(
            Grants::read(&other).unwrap(),
            Grants {
                owner: None,
                acl: Some("private".into())
            }
        );
        // An owner that is not UTF-8 cannot be read: never taken as none.
        fsetxattr(&file, XATTR_OWNER, b"\xff\xfe", XattrFlags::empty()).unwrap();
        assert_eq!(Grants::read(&file), Err(Unreadable));
        assert_eq!(Grants::owner_of(&file), None);
    }
}
