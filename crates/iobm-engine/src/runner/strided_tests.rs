//! Unit tests of IOR's segmented shared file through the runner: where each worker's transfers
//! go, and that they read back.

use super::*;
use crate::data::{file_key, Generator};
use crate::workload::DataKind;
use iobm_target::mem::MemTarget;

/// A memory target that keeps the offsets each opened handle wrote at, in order.
#[derive(Default)]
struct Offsets {
    inner: MemTarget,
    written: std::sync::Arc<std::sync::Mutex<Vec<Vec<u64>>>>,
}

struct OffsetsHandle {
    inner: Box<dyn iobm_target::Handle>,
    written: std::sync::Arc<std::sync::Mutex<Vec<Vec<u64>>>>,
    mine: usize,
}

impl Target for Offsets {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.inner.capabilities()
    }
    fn open(&self, name: &str, o: OpenOptions) -> io::Result<Box<dyn iobm_target::Handle>> {
        let mut written = self.written.lock().unwrap();
        written.push(Vec::new());
        Ok(Box::new(OffsetsHandle {
            inner: self.inner.open(name, o)?,
            written: self.written.clone(),
            mine: written.len() - 1,
        }))
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.inner.len(name)
    }
    fn objects(&self, w: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
        self.inner.objects(w)
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.inner.remove(name)
    }
}

impl iobm_target::Handle for OffsetsHandle {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.written.lock().unwrap()[self.mine].push(offset);
        self.inner.write_at(buf, offset)
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_at(buf, offset)
    }
    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.inner.seek(offset)
    }
    fn write_next(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_next(buf)
    }
    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_next(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        self.inner.close()
    }
}

#[test]
fn a_strided_write_puts_each_workers_transfers_between_the_others_and_reads_back() {
    let (t, segments) = (47008u64, 4u64);
    let target = Offsets::default();
    let write = Phase::strided("write", Op::Write, 0, 1, 3, t, segments);
    prepare_objects(&target, &write.layout).unwrap();
    target.written.lock().unwrap().clear();
    let control = Control::new(11, 3);
    let out = run_phase(&target, &write, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    assert_eq!(out.bytes(), 3 * segments * t);
    // Each worker wrote segment after segment, three transfers apart.
    let mut seen: Vec<Vec<u64>> = target.written.lock().unwrap().clone();
    seen.sort();
    let expected: Vec<Vec<u64>> = (0..3)
        .map(|g| (0..segments).map(|s| (s * 3 + g) * t).collect())
        .collect();
    assert_eq!(seen, expected);
    // Every byte is what the generator makes at its place, and a read checks it.
    let data = target.inner.contents("data.shared").unwrap();
    let mut whole = vec![0u8; data.len()];
    Generator::new(DataKind::Random, 11).fill(&mut whole, file_key("data.shared"), 0);
    assert!(data == whole);
    let read = Phase {
        verify: Some(11),
        ..Phase::strided("read", Op::Read, 0, 1, 3, t, segments)
    };
    let out = run_phase(&target, &read, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    assert_eq!(out.bytes(), 3 * segments * t);
    // An operation of another size than the transfer is refused before it starts.
    let odd = Phase {
        block: 4096,
        ..Phase::strided("write", Op::Write, 0, 1, 3, t, segments)
    };
    let out = run_phase(&target, &odd, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert!(
        out.errors[0].first.contains("one transfer"),
        "{:?}",
        out.errors
    );
}
