//! What one worker of a find phase does per operation: one directory entry examined, its name
//! matched and, when the name matches, its size asked (a stat); a directory's entries are
//! listed when the walk reaches it, inside the operation that needs them.

use crate::task::Task;
use crate::workload::find::FindWork;
use iobm_target::Target;
use std::io;

/// One worker's walk: the directories still to list, the entries listed and not yet examined.
pub(crate) struct FindTask<'a> {
    target: &'a dyn Target,
    work: &'a FindWork,
    /// Directories to list, the next last.
    dirs: Vec<String>,
    /// Entries listed, not yet examined: path inside the target, whether a directory.
    entries: Vec<(String, bool)>,
    /// The entry the last operation examined, for error messages.
    current: String,
    /// Whether the last operation's entry matched.
    matched: bool,
}

impl<'a> FindTask<'a> {
    pub(crate) fn new(target: &'a dyn Target, work: &'a FindWork, local: usize) -> FindTask<'a> {
        let mut dirs = work.roots_of(local);
        dirs.reverse();
        FindTask {
            target,
            work,
            dirs,
            entries: Vec::new(),
            current: String::new(),
            matched: false,
        }
    }

    /// Lists directories until an entry is there to examine or none is left to list.
    fn fill(&mut self) -> io::Result<()> {
        while self.entries.is_empty() {
            let Some(dir) = self.dirs.pop() else {
                return Ok(());
            };
            self.current.clone_from(&dir);
            for e in self.target.list_dir(&dir)? {
                let path = match dir.as_str() {
                    "" => e.name,
                    _ => format!("{dir}/{}", e.name),
                };
                self.entries.push((path, e.dir));
            }
            // Examined in the order listed.
            self.entries.reverse();
        }
        Ok(())
    }
}

impl Task for FindTask<'_> {
    /// The first operation lists the first directory; every later one has an entry listed
    /// ahead by the one before (so a walk of empty directories alone is one operation).
    fn prepare(&mut self, i: u64) -> bool {
        match i {
            0 => !self.dirs.is_empty(),
            _ => !self.entries.is_empty(),
        }
    }

    fn execute(&mut self) -> io::Result<u64> {
        self.matched = false;
        self.fill()?;
        if let Some((path, dir)) = self.entries.pop() {
            let name = path.rsplit('/').next().unwrap_or(&path);
            if dir {
                self.dirs.push(path.clone());
            } else if self.work.name_matches(name) {
                self.matched = match self.work.size {
                    Some(size) => self.target.stat(&path)?.len == size,
                    None => true,
                };
            }
            self.current = path;
        }
        // The next operation's entry, listed now: the walk's time is its operations'.
        self.fill()?;
        Ok(0)
    }

    fn describe(&self) -> String {
        format!("find {}", self.current)
    }

    /// The files the operation found that match (0 or 1), as the phase's keys.
    fn keys(&self) -> u64 {
        u64::from(self.matched)
    }

    fn finish(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}
