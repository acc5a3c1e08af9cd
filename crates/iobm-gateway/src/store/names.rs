//! How a key's components are named on disk: as themselves, or, for a component longer than
//! the file system's names (its `f_namemax`, 255 bytes on most) or one that starts with
//! [`MARK`], by a derived name: the mark, the component's first bytes and the SHA-256 of the
//! whole component, which itself is kept in the extended attribute [`XATTR_NAME`] of the file or
//! directory. No component is stored under a name that starts with the mark, so a derived name
//! never collides with another component; a listing reads the component back
//! ([`Names::real_name`]) and sorts by it.

use rustix::fs::{fgetxattr, fsetxattr, openat, Mode, OFlags, XattrFlags};
use rustix::io::Errno;
use s3s::crypto::Checksum;
use std::borrow::Cow;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

/// The attribute that keeps the component a derived name stands for.
pub const XATTR_NAME: &str = "user.iobm.name";
/// What every derived name starts with.
pub const MARK: &str = "~iobm~";
/// Most bytes of the component kept at the front of its derived name (for whoever reads the
/// directory): a derived name is at most 6 + 48 + 1 + 64 = 119 bytes.
const HEAD: usize = 48;
/// The names most file systems take when the file system does not say.
const NAME_MAX: usize = 255;

/// The naming of one file system's keys: where components start being too long for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    name_max: usize,
}

impl Default for Names {
    fn default() -> Self {
        Names { name_max: NAME_MAX }
    }
}

impl Names {
    /// The naming of the file system `dir` is on, as its `f_namemax` says.
    pub fn of(dir: BorrowedFd<'_>) -> Names {
        rustix::fs::fstatvfs(dir).map_or_else(
            |_| Names::default(),
            |st| Names::with_name_max(usize::try_from(st.f_namemax).unwrap_or(NAME_MAX)),
        )
    }

    /// A naming whose names are at most `name_max` bytes.
    pub fn with_name_max(name_max: usize) -> Names {
        Names { name_max }
    }

    /// Whether `component` is stored under a derived name.
    pub fn derives(self, component: &str) -> bool {
        component.len() > self.name_max || component.starts_with(MARK)
    }

    /// The name a component has on disk.
    pub fn disk_name(self, component: &str) -> Cow<'_, str> {
        if self.derives(component) {
            Cow::Owned(derived(component))
        } else {
            Cow::Borrowed(component)
        }
    }

    /// A key path (components joined by `/`) as it is on disk, component by component.
    pub fn disk_path(self, path: &str) -> Cow<'_, str> {
        if !path.split('/').any(|c| self.derives(c)) {
            return Cow::Borrowed(path);
        }
        let names: Vec<Cow<'_, str>> = path.split('/').map(|c| self.disk_name(c)).collect();
        Cow::Owned(names.join("/"))
    }

    /// The component the derived name `disk` of `dir` stands for: read from its attribute, and
    /// taken only if it is named so (`None` for anything else: a file planted under such a
    /// name, or one whose attribute is not yet set).
    pub fn real_name(self, dir: BorrowedFd<'_>, disk: &str) -> Option<String> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = openat(dir, disk, flags | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let mut value = vec![0u8; crate::store::MAX_KEY];
        let n = fgetxattr(&fd, XATTR_NAME, &mut value[..]).ok()?;
        value.truncate(n);
        let real = String::from_utf8(value).ok()?;
        let plain = !real.is_empty() && !real.contains(['/', '\0']) && real != "." && real != "..";
        (plain && self.disk_name(&real) == disk).then_some(real)
    }
}

/// Whether a name on disk is a derived one.
pub fn is_derived(disk: &str) -> bool {
    disk.starts_with(MARK)
}

/// The derived name of a component: the mark, its first bytes (whole characters) and its
/// SHA-256.
fn derived(component: &str) -> String {
    let mut head = HEAD.min(component.len());
    while !component.is_char_boundary(head) {
        head -= 1;
    }
    let digest = s3s::crypto::Sha256::checksum(component.as_bytes());
    format!("{MARK}{}~{}", &component[..head], crate::meta::hex(&digest))
}

/// Records on a file or directory the component its derived name stands for; `Unsupported`
/// where the file system keeps no extended attributes.
pub fn label(fd: impl AsFd, component: &str) -> io::Result<()> {
    match fsetxattr(fd, XATTR_NAME, component.as_bytes(), XattrFlags::empty()) {
        Err(Errno::NOTSUP) => Err(io::ErrorKind::Unsupported.into()),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn only_long_or_marked_components_are_derived() {
        let names = Names::default();
        assert_eq!(names.disk_name("short"), "short");
        assert_eq!(names.disk_name(&"x".repeat(255)), "x".repeat(255));
        for component in ["x".repeat(256), "é".repeat(300), format!("{MARK}short")] {
            let disk = names.disk_name(&component);
            assert!(is_derived(&disk) && disk.len() <= 119, "{disk}");
            assert_ne!(disk, component);
            // The same component always gets the same name.
            assert_eq!(disk, names.disk_name(&component));
        }
        // The mark, the first bytes cut at a character boundary, and the SHA-256.
        let accented = "é".repeat(300);
        let digest = crate::meta::hex(&s3s::crypto::Sha256::checksum(accented.as_bytes()));
        assert_eq!(
            names.disk_name(&accented),
            format!("{MARK}{}~{digest}", "é".repeat(24))
        );
        // Components that share their first bytes still differ.
        let (a, b) = ("a".repeat(300), format!("{}b", "a".repeat(299)));
        assert_ne!(names.disk_name(&a), names.disk_name(&b));
        let long = "y".repeat(300);
        let path = format!("dir/{long}/leaf");
        assert_eq!(
            names.disk_path(&path),
            format!("dir/{}/leaf", names.disk_name(&long))
        );
        assert!(matches!(names.disk_path("a/b/c"), Cow::Borrowed("a/b/c")));
        // A file system of shorter names derives sooner.
        assert!(Names::with_name_max(8).derives("123456789"));
    }

    #[test]
    fn a_derived_name_is_read_back_only_from_its_own_label() {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::File::open(root.path()).unwrap();
        let names = Names::default();
        let long = "z".repeat(400);
        let disk = names.disk_name(&long).into_owned();
        let file = std::fs::File::create(root.path().join(&disk)).unwrap();
        assert_eq!(names.real_name(dir.as_fd(), &disk), None);
        label(&file, &long).unwrap();
        assert_eq!(names.real_name(dir.as_fd(), &disk), Some(long.clone()));
        // A label that does not name this file is not taken.
        let other = names.disk_name(&"w".repeat(400)).into_owned();
        let planted = std::fs::File::create(root.path().join(&other)).unwrap();
        label(&planted, &long).unwrap();
        assert_eq!(names.real_name(dir.as_fd(), &other), None);
        // Nor is a short component under a derived name.
        let short = std::fs::File::create(root.path().join(format!("{MARK}x~0"))).unwrap();
        label(&short, "x").unwrap();
        assert_eq!(names.real_name(dir.as_fd(), &format!("{MARK}x~0")), None);
    }
}
