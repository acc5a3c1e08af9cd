//! A worker of a replayed trace ([`crate::workload::Replay`]): its stream's reads and writes
//! at their recorded offsets and lengths, in order, each file of the data set opened once
//! before the phase; the syncs between them done in their places, outside the operations'
//! latency.

use crate::data::{file_key, DataSource};
use crate::task::Task;
use crate::workload::{Phase, ReplayIo, ReplayStream};
use iobm_target::memory::HostBuf;
use iobm_target::{Access, Handle, OpenOptions, Target};
use std::io;
use std::time::Instant;

pub(crate) struct ReplayTask<'a> {
    phase: &'a Phase,
    stream: &'a ReplayStream,
    /// The data set's files this worker touches, opened; None for the others.
    handles: Vec<Option<Box<dyn Handle>>>,
    /// Each file's data id.
    keys: Vec<u64>,
    data: Option<DataSource>,
    buf: HostBuf,
    /// The next of the stream's syncs.
    next_sync: usize,
    /// A sync before the prepared operation that failed: the operation's error.
    synced: io::Result<()>,
    io: ReplayIo,
}

impl<'a> ReplayTask<'a> {
    /// Worker `index`'s task: its files opened (untimed), its buffers placed.
    pub(crate) fn new(
        target: &'a dyn Target,
        phase: &'a Phase,
        run_id: u64,
        index: usize,
    ) -> Result<ReplayTask<'a>, (io::Error, String)> {
        let replay = phase.replay.as_deref().expect("a replay phase");
        let stream = &replay.streams[index];
        let files = &phase.layout.files;
        let mut used = vec![false; files.len()];
        stream.ios.iter().for_each(|io| used[io.file] = true);
        stream.syncs.iter().for_each(|&(_, f)| used[f] = true);
        let options = OpenOptions {
            access: Access::Write,
            direct: phase.direct,
        };
        let mut handles = Vec::with_capacity(files.len());
        for (file, used) in files.iter().zip(used) {
            let opened = used.then(|| target.open(&file.name, options)).transpose();
            handles.push(opened.map_err(|e| (e, format!("open {}", file.name)))?);
        }
        let largest = replay.largest().max(1) as usize;
        let writes = stream.ios.iter().any(|io| io.write);
        let buf = super::buffer(phase, index, largest).map_err(|e| (e, "place buffers".into()))?;
        Ok(ReplayTask {
            phase,
            stream,
            handles,
            keys: files.iter().map(|f| file_key(&f.name)).collect(),
            data: writes.then(|| DataSource::new(phase.data, largest, run_id)),
            buf,
            next_sync: 0,
            synced: Ok(()),
            io: stream.ios.first().copied().unwrap_or(ReplayIo {
                at_ns: 0,
                file: 0,
                write: false,
                offset: 0,
                len: 0,
            }),
        })
    }

    /// The stream's syncs in their places before operation `before` (all that are left at
    /// `usize::MAX`).
    fn sync_up_to(&mut self, before: usize) -> io::Result<()> {
        while let Some(&(at, file)) = self.stream.syncs.get(self.next_sync) {
            if at > before {
                break;
            }
            self.next_sync += 1;
            let handle = self.handles[file].as_deref_mut().expect("opened");
            handle.sync()?;
        }
        Ok(())
    }
}

impl Task for ReplayTask<'_> {
    fn prepare(&mut self, i: u64) -> bool {
        let Some(&io) = self.stream.ios.get(i as usize) else {
            return false;
        };
        self.synced = self.sync_up_to(i as usize);
        self.io = io;
        if let (Some(data), true) = (&mut self.data, io.write) {
            data.prepare(self.keys[io.file], io.offset);
        }
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        std::mem::replace(&mut self.synced, Ok(()))?;
        let ReplayIo {
            file, offset, len, ..
        } = self.io;
        let len = len as usize;
        let handle = self.handles[file].as_deref_mut().expect("opened");
        if self.io.write {
            let data = self.data.as_ref().expect("writers have data");
            handle.write_at(&data.get()[..len], offset)?;
        } else {
            handle.read_at(&mut self.buf[..len], offset)?;
        }
        Ok(len as u64)
    }

    fn describe(&self) -> String {
        let what = if self.io.write { "write" } else { "read" };
        let name = &self.phase.layout.files[self.io.file].name;
        format!("replayed {what} {name} at offset {}", self.io.offset)
    }

    fn at(&self) -> (u64, u64) {
        (self.keys[self.io.file], self.io.offset)
    }

    /// A read-write phase's books: 0 for a read, 1 for a write.
    fn class(&self) -> usize {
        usize::from(self.io.write)
    }

    fn finish(&mut self) -> io::Result<u64> {
        let t0 = Instant::now();
        let synced = self.sync_up_to(usize::MAX);
        let sync_ns = t0.elapsed().as_nanos() as u64;
        let closed = self.handles.iter_mut().filter_map(Option::take);
        let closed: io::Result<Vec<()>> = closed.map(|h| h.close()).collect();
        synced.and(closed).map(|_| sync_ns)
    }
}
