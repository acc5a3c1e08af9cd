//! Versioning's vocabulary: a bucket's state ([`Versioning`], kept on its directory and cached
//! per gateway), version ids ordered by time, the names versions have on disk ([`Name`]), how
//! a key's path maps into the per-bucket tree of kept versions, and the rules that order one
//! key's versions (newest first) and leave out what an interrupted write left behind.
//!
//! A key's current version is its file in the bucket's tree, as in an unversioned bucket; the
//! versions it replaced and its delete markers are files in `.iobm-gateway/versions/<bucket>/`
//! below the key's path, one directory per key ([`crate::store`]'s `versions` module writes
//! them).

use rustix::fs::{fgetxattr, fsetxattr, XattrFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// On a bucket's directory: its versioning state (absent: never set).
const XATTR_VERSIONING: &str = "user.iobm.versioning";
/// How long a gateway trusts the state it read of a bucket: another gateway serving the same
/// directory may change it (S3 too says a change takes a while to be seen everywhere).
pub const STATE_TTL: Duration = Duration::from_secs(1);

/// A bucket's versioning state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versioning {
    /// Never set: objects are replaced and deleted in place, as S3's unversioned buckets.
    Unversioned,
    /// Every write makes a new version; a delete adds a delete marker.
    Enabled,
    /// Writes and deletes replace the `null` version; other versions are kept.
    Suspended,
}

impl Versioning {
    /// The state as S3 spells it (`None` when never set).
    pub fn as_str(self) -> Option<&'static str> {
        match self {
            Versioning::Unversioned => None,
            Versioning::Enabled => Some("Enabled"),
            Versioning::Suspended => Some("Suspended"),
        }
    }

    /// A state a PutBucketVersioning may set.
    pub fn parse(text: &str) -> Option<Versioning> {
        match text {
            "Enabled" => Some(Versioning::Enabled),
            "Suspended" => Some(Versioning::Suspended),
            _ => None,
        }
    }

    /// The state recorded on a bucket's directory.
    pub fn read(dir: BorrowedFd<'_>) -> io::Result<Versioning> {
        let mut buf = [0u8; 16];
        match fgetxattr(dir, XATTR_VERSIONING, &mut buf[..]) {
            Ok(n) => Ok(std::str::from_utf8(&buf[..n])
                .ok()
                .and_then(Versioning::parse)
                .unwrap_or(Versioning::Unversioned)),
            Err(Errno::NODATA | Errno::NOTSUP) => Ok(Versioning::Unversioned),
            Err(e) => Err(e.into()),
        }
    }

    /// Records the state on a bucket's directory.
    pub fn save(self, dir: BorrowedFd<'_>) -> io::Result<()> {
        let text = self.as_str().unwrap_or_default();
        match fsetxattr(dir, XATTR_VERSIONING, text.as_bytes(), XattrFlags::empty()) {
            Err(Errno::NOTSUP) => Err(io::ErrorKind::Unsupported.into()),
            other => Ok(other?),
        }
    }
}

/// The states of buckets as this gateway last read them, each trusted for [`STATE_TTL`], so
/// that a write to an unversioned bucket costs no system call to learn it.
#[derive(Debug, Default)]
pub struct States(RwLock<HashMap<String, (Versioning, Instant)>>);

impl States {
    /// The state of `bucket` (whose directory is `dir`), read again when older than the TTL.
    pub fn get(&self, bucket: &str, dir: BorrowedFd<'_>) -> io::Result<Versioning> {
        let now = Instant::now();
        if let Some(&(state, at)) = self.0.read().unwrap().get(bucket) {
            if now.duration_since(at) < STATE_TTL {
                return Ok(state);
            }
        }
        let state = Versioning::read(dir)?;
        self.set(bucket, state);
        Ok(state)
    }

    pub fn set(&self, bucket: &str, state: Versioning) {
        let mut states = self.0.write().unwrap();
        states.insert(bucket.to_string(), (state, Instant::now()));
    }

    /// Forgets a bucket (made or deleted).
    pub fn forget(&self, bucket: &str) {
        self.0.write().unwrap().remove(bucket);
    }
}

/// Whether a version holds bytes or marks its key deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Data,
    DeleteMarker,
}

/// One version as named on disk: `<stamp>-<tag>`, the stamp 24 hex digits (nanoseconds since
/// 1970 and 32 bits of the gateway that made it), the tag `v` (bytes), `m` (a delete marker),
/// `nv` or `nm` (the same as the `null` version). Names sort by stamp, that is by time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name {
    pub stamp: u128,
    pub null: bool,
    pub kind: Kind,
}

/// Hex digits of a stamp.
const STAMP_DIGITS: usize = 24;

/// In a key's directory while a write or delete of the key is under way, so that the next one
/// sees what a kill cut short and settles it: the name of no version (stamp 0).
pub const UNDER_WAY: &str = "000000000000000000000000-v";

impl Name {
    /// A new version made now.
    pub fn new(null: bool, kind: Kind) -> Name {
        Name {
            stamp: new_stamp(),
            null,
            kind,
        }
    }

    /// The name of an object written before its bucket kept versions: the `null` version,
    /// of the time it was last written.
    pub fn unversioned(modified: SystemTime) -> Name {
        let nanos = modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Name {
            stamp: (nanos as u128) << 32,
            null: true,
            kind: Kind::Data,
        }
    }

    pub fn parse(text: &str) -> Option<Name> {
        let (stamp, tag) = text.split_once('-')?;
        let (null, kind) = match tag {
            "v" => (false, Kind::Data),
            "m" => (false, Kind::DeleteMarker),
            "nv" => (true, Kind::Data),
            "nm" => (true, Kind::DeleteMarker),
            _ => return None,
        };
        Some(Name {
            stamp: parse_stamp(stamp)?,
            null,
            kind,
        })
    }

    pub fn file_name(&self) -> String {
        let tag = match (self.null, self.kind) {
            (false, Kind::Data) => "v",
            (false, Kind::DeleteMarker) => "m",
            (true, Kind::Data) => "nv",
            (true, Kind::DeleteMarker) => "nm",
        };
        format!("{:0width$x}-{tag}", self.stamp, width = STAMP_DIGITS)
    }

    /// The id S3 clients see: `null`, or the stamp.
    pub fn version_id(&self) -> String {
        if self.null {
            "null".into()
        } else {
            format!("{:0width$x}", self.stamp, width = STAMP_DIGITS)
        }
    }

    /// Whether a request's version id names this version.
    pub fn is(&self, id: &VersionId) -> bool {
        match id {
            VersionId::Null => self.null,
            VersionId::Stamp(stamp) => !self.null && self.stamp == *stamp,
        }
    }

    /// When the version was made.
    pub fn made(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_nanos((self.stamp >> 32) as u64)
    }

    pub fn is_marker(&self) -> bool {
        self.kind == Kind::DeleteMarker
    }
}

/// A version id as a request names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionId {
    Null,
    Stamp(u128),
}

impl VersionId {
    /// `None` for an id this gateway never gives.
    pub fn parse(text: &str) -> Option<VersionId> {
        if text == "null" {
            return Some(VersionId::Null);
        }
        parse_stamp(text).map(VersionId::Stamp)
    }
}

fn parse_stamp(text: &str) -> Option<u128> {
    let hex = text.len() == STAMP_DIGITS && text.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| u128::from_str_radix(text, 16).ok()).flatten()
}

/// A stamp later than every one this process made before, in this gateway's 32 bits.
fn new_stamp() -> u128 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    static MINE: OnceLock<u32> = OnceLock::new();
    let mine = *MINE.get_or_init(|| {
        let mut bytes = [0u8; 4];
        let random = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes));
        match random {
            Ok(()) => u32::from_le_bytes(bytes),
            Err(_) => std::process::id(),
        }
    });
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let prev = LAST
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
            Some(now.max(last + 1))
        })
        .expect("the update always succeeds");
    let nanos = now.max(prev + 1);
    ((nanos as u128) << 32) | mine as u128
}

/// Whether a name in the versions tree could be read as a version's (once its trailing `~`
/// are taken off): a key's component of that form is written with one `~` more.
fn versionish(name: &str) -> bool {
    Name::parse(name.trim_end_matches('~')).is_some()
}

/// A key's component as named in the versions tree, where it is a directory beside the
/// versions of the key above it.
pub fn encode_component(component: &str) -> String {
    if versionish(component) {
        format!("{component}~")
    } else {
        component.to_string()
    }
}

/// The key component a directory of the versions tree stands for.
pub fn decode_component(name: &str) -> &str {
    if name.ends_with('~') && versionish(name) {
        &name[..name.len() - 1]
    } else {
        name
    }
}

/// The path of a key's versions below the versions tree: the bucket, then each component.
pub fn key_path(bucket: &str, key: &str) -> String {
    let mut path = bucket.to_string();
    for component in key.split('/') {
        path.push('/');
        path.push_str(&encode_component(component));
    }
    path
}

/// One key's versions, newest first, from its current version (`current`, the file in the
/// bucket's tree) and those kept aside (`kept`), and what in `kept` is left over from an
/// interrupted write (to be removed): a copy of the current version, anything newer than the
/// current version (its write never finished), and `null` versions older than the newest.
pub fn order(current: Option<Name>, kept: &[Name]) -> (Vec<Name>, Vec<Name>) {
    let mut all: Vec<Name> = kept.to_vec();
    all.sort_by(|a, b| b.stamp.cmp(&a.stamp).then(a.kind.cmp(&b.kind)));
    all.dedup();
    let mut listed = Vec::with_capacity(all.len() + 1);
    let mut stale = Vec::new();
    listed.extend(current);
    let mut null_seen = current.is_some_and(|c| c.null);
    for name in all {
        let newer = current.is_some_and(|c| name.stamp >= c.stamp);
        if newer || (name.null && null_seen) {
            stale.push(name);
            continue;
        }
        null_seen |= name.null;
        listed.push(name);
    }
    (listed, stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ids_follow_time_and_never_repeat() {
        let ids: Vec<Name> = (0..10_000).map(|_| Name::new(false, Kind::Data)).collect();
        assert!(ids.windows(2).all(|w| w[0].stamp < w[1].stamp));
        let texts: Vec<String> = ids.iter().map(|n| n.version_id()).collect();
        assert!(
            texts.windows(2).all(|w| w[0] < w[1]),
            "ids sort as text too"
        );
        let before = SystemTime::now();
        let made = Name::new(true, Kind::DeleteMarker).made();
        assert!(made.duration_since(before).unwrap_or_default() < Duration::from_secs(1));
    }

    #[test]
    fn names_round_trip_and_ids_are_checked() {
        for (null, kind) in [
            (false, Kind::Data),
            (false, Kind::DeleteMarker),
            (true, Kind::Data),
            (true, Kind::DeleteMarker),
        ] {
            let n = Name::new(null, kind);
            assert_eq!(Name::parse(&n.file_name()), Some(n));
            let id = VersionId::parse(&n.version_id()).unwrap();
            assert!(n.is(&id));
        }
        for bad in ["", "nul", "0123", "g00000000000000000000000", "00-v"] {
            assert_eq!(VersionId::parse(bad), None, "{bad}");
        }
        assert_eq!(Name::parse("000000000000000000000001-x"), None);
    }

    #[test]
    fn components_that_look_like_versions_are_escaped() {
        let v = Name::new(false, Kind::Data).file_name();
        for c in [
            v.as_str(),
            &format!("{v}~"),
            &format!("{v}~~"),
            "plain",
            "a~",
            "~",
        ] {
            assert_eq!(decode_component(&encode_component(c)), c);
            assert!(Name::parse(&encode_component(c)).is_none());
        }
        assert_eq!(encode_component("plain"), "plain");
        assert_eq!(key_path("bkt", "a/b"), "bkt/a/b");
    }

    fn at(stamp: u128, null: bool, kind: Kind) -> Name {
        Name { stamp, null, kind }
    }

    #[test]
    fn a_keys_versions_are_newest_first_without_leftovers() {
        let d = |s| at(s, false, Kind::Data);
        let m = |s| at(s, false, Kind::DeleteMarker);
        let n = |s| at(s, true, Kind::Data);
        // The current version first, then the kept ones newest first.
        let (listed, stale) = order(Some(d(50)), &[d(10), m(30), d(20)]);
        assert_eq!(listed, vec![d(50), m(30), d(20), d(10)]);
        assert!(stale.is_empty());
        // A copy of the current version and a newer marker (a delete that never finished)
        // are left over; so is an older null version.
        let (listed, stale) = order(Some(n(50)), &[n(50), m(60), n(10), d(20)]);
        assert_eq!(listed, vec![n(50), d(20)]);
        assert_eq!(stale, vec![m(60), n(50), n(10)]);
        // No current version: the newest kept one is the latest (here a delete marker).
        let (listed, _) = order(None, &[d(10), m(30), n(20), n(5)]);
        assert_eq!(listed, vec![m(30), n(20), d(10)]);
    }
}
