//! Whole-object operations (S3's verbs: put, get, head, delete, list, multipart) and the bodies
//! they send: made on the fly by the run's content ([`Content`]) into a reused buffer of the
//! sending thread, 1 MiB at a time.

use crate::{Access, Capability, OpenOptions, Target, Unsupported};
use std::io::{self, IoSlice};

/// The granule of stamping: every 4 KiB chunk of what iobm writes, to a file or as an object,
/// starts with its stamp (also a safe `O_DIRECT` alignment).
pub const CHUNK: usize = 4096;
/// Bytes of a stamp: run id, file or object id, offset, each a little-endian u64.
pub const STAMP_LEN: usize = 24;

/// The stamp at the start of every 4 KiB chunk: who wrote it and where it belongs.
pub fn stamp(run_id: u64, id: u64, offset: u64) -> [u8; STAMP_LEN] {
    let mut s = [0u8; STAMP_LEN];
    s[..8].copy_from_slice(&run_id.to_le_bytes());
    s[8..16].copy_from_slice(&id.to_le_bytes());
    s[16..].copy_from_slice(&offset.to_le_bytes());
    s
}
/// Chunks handed out per batch (1 MiB).
pub const BATCH_CHUNKS: usize = 256;
const BATCH: usize = BATCH_CHUNKS * CHUNK;

/// What a run writes: a pure function of (object or file id, offset), so bodies can be made
/// whenever and wherever they are sent, and checked when they come back.
pub trait Content: Sync {
    /// Writes the bytes of `id` at `offset .. offset + out.len()` into `out`.
    fn fill(&self, out: &mut [u8], id: u64, offset: u64);
}

thread_local! {
    /// Each sending thread's batch buffer, made once.
    static BATCH_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The bytes of one object: `len` bytes of `id` from the run's content.
#[derive(Clone, Copy)]
pub struct Body<'a> {
    content: &'a dyn Content,
    id: u64,
    len: u64,
}

impl std::fmt::Debug for Body<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Body {{ id: {}, len: {} }}", self.id, self.len)
    }
}

impl<'a> Body<'a> {
    pub fn new(content: &'a dyn Content, id: u64, len: u64) -> Self {
        Body { content, id, len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hands the bytes [from, to) to `f` in order, in batches of up to 1 MiB made into the
    /// calling thread's reused buffer.
    pub fn for_each_batch(
        &self,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(&mut [IoSlice<'_>]) -> io::Result<()>,
    ) -> io::Result<()> {
        let to = to.min(self.len);
        BATCH_BUF.with(|cell| {
            let mut buf = cell.borrow_mut();
            if buf.len() < BATCH {
                buf.resize(BATCH, 0);
            }
            let mut pos = from;
            while pos < to {
                let n = (to - pos).min(BATCH as u64) as usize;
                self.content.fill(&mut buf[..n], self.id, pos);
                f(&mut [IoSlice::new(&buf[..n])])?;
                pos += n as u64;
            }
            Ok(())
        })
    }
}

/// One page of a listing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// Keys returned in this page.
    pub keys: u64,
    /// Where the next page starts; None on the last page.
    pub next: Option<String>,
}

/// A worker's session for whole-object operations, holding its connections. Objects are named
/// like the target's other objects (`obj.17`); an S3 target puts them under its run prefix.
pub trait Objects: Send {
    /// Stores `body` as object `name`.
    fn put(&mut self, name: &str, body: &Body<'_>) -> io::Result<()>;
    /// The ETag the store answered the last request with, without quotes, if it gave one.
    fn last_etag(&self) -> Option<&str> {
        None
    }
    /// Reads the object, or `range` (first, last byte inclusive) of it, handing the bytes to
    /// `sink` as they arrive without keeping them; `sink` is first called with an empty slice
    /// when the response begins (time to first byte). Returns the bytes read.
    fn get(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64>;
    /// The object's size.
    fn head(&mut self, name: &str) -> io::Result<u64>;
    fn delete(&mut self, name: &str) -> io::Result<()>;
    /// Deletes these objects, in one request where the store can (S3 DeleteObjects);
    /// returns how many were deleted. Other stores delete them one by one.
    fn delete_batch(&mut self, names: &[String]) -> io::Result<u64> {
        for name in names {
            self.delete(name)?;
        }
        Ok(names.len() as u64)
    }
    /// Lists up to `max` names after `after` (or from the start) of the run's objects. Needs
    /// [`Capability::Listing`].
    fn list(&mut self, after: Option<&str>, max: u32) -> io::Result<ListPage>;
    /// Stores `body` in parts of `part_size` bytes, `concurrency` parts in flight (S3
    /// multipart upload). Needs [`Capability::Multipart`].
    fn multipart(
        &mut self,
        _name: &str,
        _body: &Body<'_>,
        _part_size: u64,
        _concurrency: usize,
    ) -> io::Result<()> {
        Err(Unsupported(Capability::Multipart).into())
    }
    /// The version the last PUT stored, as the store named it (S3's `x-amz-version-id`); None
    /// where the store keeps no versions.
    fn last_version(&self) -> Option<&str> {
        None
    }
    /// [`Objects::get`] of one version of the object. Needs [`Capability::Versions`].
    fn get_version(
        &mut self,
        _name: &str,
        _version: &str,
        _sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        Err(Unsupported(Capability::Versions).into())
    }
    /// The size of one version of the object. Needs [`Capability::Versions`].
    fn head_version(&mut self, _name: &str, _version: &str) -> io::Result<u64> {
        Err(Unsupported(Capability::Versions).into())
    }
    /// Deletes one version of the object for good (no delete marker). Needs
    /// [`Capability::Versions`].
    fn delete_version(&mut self, _name: &str, _version: &str) -> io::Result<()> {
        Err(Unsupported(Capability::Versions).into())
    }
    /// Lists up to `max` versions and delete markers of the run's objects after `after` (a
    /// [`ListPage::next`] of this listing), or from the start. Needs [`Capability::Versions`].
    fn list_versions(&mut self, _after: Option<&str>, _max: u32) -> io::Result<ListPage> {
        Err(Unsupported(Capability::Versions).into())
    }
}

/// Object operations on any target through its handles: a put creates a file and writes it, a
/// get reads it back. For file systems, the in-memory and the null target.
pub struct ViaHandles<'a, T: Target + ?Sized> {
    target: &'a T,
    buf: Vec<u8>,
}

impl<'a, T: Target + ?Sized> ViaHandles<'a, T> {
    pub fn new(target: &'a T) -> Self {
        ViaHandles {
            target,
            buf: vec![0; BATCH_CHUNKS * CHUNK],
        }
    }
}

const NO_DIRECT: fn(Access) -> OpenOptions = |access| OpenOptions {
    access,
    direct: false,
};

impl<T: Target + ?Sized> Objects for ViaHandles<'_, T> {
    fn put(&mut self, name: &str, body: &Body<'_>) -> io::Result<()> {
        let mut handle = self.target.open(name, NO_DIRECT(Access::Create))?;
        let mut offset = 0u64;
        let buf = &mut self.buf;
        body.for_each_batch(0, body.len(), &mut |slices| {
            let mut n = 0;
            for s in slices.iter() {
                buf[n..n + s.len()].copy_from_slice(s);
                n += s.len();
            }
            handle.write_at(&buf[..n], offset)?;
            offset += n as u64;
            Ok(())
        })?;
        handle.close()
    }

    fn get(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        let mut handle = self.target.open(name, NO_DIRECT(Access::Read))?;
        sink(&[]);
        let (from, to) = match range {
            Some((first, last)) => (first, last + 1),
            None => (0, self.target.len(name)?),
        };
        let mut offset = from;
        while offset < to {
            let n = (self.buf.len() as u64).min(to - offset) as usize;
            handle.read_at(&mut self.buf[..n], offset)?;
            sink(&self.buf[..n]);
            offset += n as u64;
        }
        handle.close()?;
        Ok(to - from)
    }

    fn head(&mut self, name: &str) -> io::Result<u64> {
        self.target.len(name)
    }

    fn delete(&mut self, name: &str) -> io::Result<()> {
        self.target.remove(name)
    }

    fn list(&mut self, _after: Option<&str>, _max: u32) -> io::Result<ListPage> {
        Err(Unsupported(Capability::Listing).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemTarget;

    /// Content whose byte at `offset` of `id` is a simple function of both.
    struct Counting;

    impl Content for Counting {
        fn fill(&self, out: &mut [u8], id: u64, offset: u64) {
            for (i, b) in out.iter_mut().enumerate() {
                *b = ((offset + i as u64) * 7 + id * 13) as u8;
            }
        }
    }

    fn gather(body: &Body<'_>, from: u64, to: u64) -> Vec<u8> {
        let mut out = Vec::new();
        body.for_each_batch(from, to, &mut |slices| {
            slices.iter().for_each(|s| out.extend_from_slice(s));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn bodies_are_their_content_whatever_the_range() {
        let len = 10 * CHUNK as u64 + 100;
        let body = Body::new(&Counting, 9, len);
        let all = gather(&body, 0, len);
        let mut want = vec![0u8; len as usize];
        Counting.fill(&mut want, 9, 0);
        assert_eq!(all, want);
        // Any sub-range is the same bytes as the whole, so parts and retries agree.
        assert_eq!(gather(&body, 10, 5000), &all[10..5000]);
        assert_eq!(gather(&body, 4096 * 3 + 30, len), &all[4096 * 3 + 30..]);
    }

    #[test]
    fn large_bodies_come_in_batches_of_one_mib() {
        let len = 3 << 20;
        let body = Body::new(&Counting, 0, len);
        let mut batches = Vec::new();
        body.for_each_batch(0, len, &mut |s| {
            batches.push(s.iter().map(|s| s.len()).sum::<usize>());
            Ok(())
        })
        .unwrap();
        assert_eq!(batches, vec![1 << 20; 3]);
    }

    #[test]
    fn objects_through_handles_round_trip() {
        let target = MemTarget::new();
        let mut objects = ViaHandles::new(&target);
        let body = Body::new(&Counting, 2, 9000);
        objects.put("a", &body).unwrap();
        assert_eq!(objects.head("a").unwrap(), 9000);
        let mut got = Vec::new();
        let mut calls = 0;
        let n = objects
            .get("a", None, &mut |b| {
                calls += 1;
                got.extend_from_slice(b)
            })
            .unwrap();
        assert_eq!((n, got.clone()), (9000, gather(&body, 0, 9000)));
        assert!(calls >= 2, "an empty first call marks the first byte");
        let mut part = Vec::new();
        objects
            .get("a", Some((100, 199)), &mut |b| part.extend_from_slice(b))
            .unwrap();
        assert_eq!(part, &got[100..200]);
        assert!(objects.put("a", &body).is_err(), "never overwrites");
        objects.delete("a").unwrap();
        assert!(objects.head("a").is_err());
    }
}
