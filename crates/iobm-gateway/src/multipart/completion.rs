//! Completions that survive a kill: an upload claimed by renaming its directory (of concurrent
//! completes one wins), the plan naming the file about to be published, the record of each
//! completion ([`Completed`]) so that a retry answers as the first did, and [`recover`], which
//! finishes or gives back what dead gateways of this host left claimed.

use super::*;

/// This gateway's mark in the names of the uploads it claims: `<host>-<pid>`.
pub(super) fn claimer() -> &'static str {
    static ME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ME.get_or_init(crate::store::host_pid)
}

/// Takes an upload of the bucket whose uploads are in `uploads` for completion: only one caller
/// gets it; the others, and any later call for this id, find no upload. Returns the claimed
/// directory's name.
pub fn claim(uploads: BorrowedFd<'_>, id: &str) -> Result<String, StoreError> {
    let claimed = format!(
        "{id}{CLAIMED}{}-{}",
        claimer(),
        CLAIMS.fetch_add(1, Ordering::Relaxed)
    );
    match renameat(uploads, id, uploads, claimed.as_str()) {
        Ok(()) => Ok(claimed),
        Err(Errno::NOENT) => Err(StoreError::NoSuchUpload),
        Err(e) => Err(e.into()),
    }
}

/// Gives a claimed upload back (its completion failed and may be tried again).
pub fn unclaim(uploads: BorrowedFd<'_>, claimed: &str, id: &str) {
    if let Ok(dir) = open_dir(uploads, claimed) {
        let _ = unlinkat(dir.as_fd(), PLAN, AtFlags::empty());
    }
    let _ = renameat(uploads, claimed, uploads, id);
}

/// The id, host and pid in claim `name` (`<id>.completing-<host>-<pid>-<n>`).
pub(super) fn claim_parts(name: &str) -> Option<(&str, &str, i32)> {
    let (id, mark) = name.split_once(CLAIMED)?;
    let mut fields = mark.rsplitn(3, '-');
    let (_, pid, host) = (fields.next()?, fields.next()?, fields.next()?);
    Some((id, host, pid.parse().ok()?))
}

pub(super) fn is_running(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks whether the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

pub(super) fn my_host() -> &'static str {
    claimer().rsplit_once('-').map_or("", |(host, _)| host)
}

/// Whether claim `name` was made by a gateway of this host that is no longer running (its
/// upload's id, if so). This process has only just started when it asks, so a claim bearing
/// its own pid is a dead one's too.
fn dead_claim(name: &str) -> Option<&str> {
    let (id, host, pid) = claim_parts(name)?;
    let alive = pid as u32 != std::process::id() && is_running(pid);
    (valid_id(id) && host == my_host() && !alive).then_some(id)
}

/// What a completion is about to publish: written to the claimed directory before the object
/// is made visible, so that a gateway starting after a kill can tell whether it was.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub etag: String,
    /// The file published: its device and inode.
    pub dev: u64,
    pub ino: u64,
}

impl Plan {
    /// The plan of publishing `file` with `etag`.
    pub fn of(file: &File, etag: &str) -> io::Result<Plan> {
        let st = rustix::fs::fstat(file)?;
        Ok(Plan {
            etag: etag.to_string(),
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        })
    }

    /// Whether `file` is the one this plan published.
    pub fn is(&self, file: &File) -> bool {
        Plan::of(file, &self.etag).is_ok_and(|plan| plan == *self)
    }
}

/// Records in claimed upload `dir` what its completion is about to publish.
pub fn save_plan(dir: BorrowedFd<'_>, plan: &Plan, fsync: bool) -> io::Result<()> {
    let json = serde_json::to_vec(plan).expect("serialisable");
    write_file(dir, PLAN, &json, fsync)
}

/// A completed upload, as its completion answered: kept for [`Completed::KEPT_FOR`] so that a
/// completion tried again, also after a restart, gets the same answer.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub bucket: String,
    pub key: String,
    pub initiator: Initiator,
    pub etag: String,
}

/// The records of completed uploads: `.iobm-gateway/completed/<id>`, one small file each.
#[derive(Debug)]
pub struct Completed {
    pub(super) dir: OwnedFd,
    fsync: bool,
}

impl Completed {
    /// How long a completed upload is remembered.
    pub const KEPT_FOR: Duration = Duration::from_secs(15 * 60);
    const DIR: &'static str = "completed";

    /// The records kept beneath the gateway's own directory `internal`.
    pub fn open(internal: BorrowedFd<'_>, fsync: bool) -> io::Result<Completed> {
        match rustix::fs::mkdirat(internal, Self::DIR, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Completed {
            dir: open_dir(internal, Self::DIR)?,
            fsync,
        })
    }

    /// Records upload `id` as completed.
    pub fn add(&self, id: &str, done: &Done) -> io::Result<()> {
        let json = serde_json::to_vec(done).expect("serialisable");
        // Whole or not at all: written aside, then renamed.
        let aside = format!("{id}.new");
        write_file(self.dir.as_fd(), &aside, &json, self.fsync)?;
        Ok(renameat(
            self.dir.as_fd(),
            aside.as_str(),
            self.dir.as_fd(),
            id,
        )?)
    }

    /// The record of upload `id`, if it was completed lately.
    pub fn find(&self, id: &str) -> Option<Done> {
        if !valid_id(id) {
            return None;
        }
        read_json(self.dir.as_fd(), id).ok()
    }

    /// Forgets completions older than `age`. Returns how many.
    pub fn sweep(&self, age: Duration) -> usize {
        let Ok(list) = entries(self.dir.as_fd()) else {
            return 0;
        };
        let cutoff = SystemTime::now() - age;
        let mut removed = 0;
        for (name, _) in list {
            let old =
                rustix::fs::statat(self.dir.as_fd(), name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| {
                        SystemTime::UNIX_EPOCH + Duration::from_secs(st.st_mtime.max(0) as u64)
                            < cutoff
                    });
            if old && unlinkat(self.dir.as_fd(), name.as_str(), AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Removes the records' directory if none is left (when the gateway stops).
    pub fn remove_if_empty(&self, internal: BorrowedFd<'_>) {
        let _ = unlinkat(internal, Self::DIR, AtFlags::REMOVEDIR);
    }
}

/// What [`recover`] did with the completions that dead gateways left claimed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Their object was published: recorded as completed, their parts removed.
    pub finished: usize,
    /// Not published: given back as uploads, to be completed again (or aborted).
    pub rolled_back: usize,
}

/// Finishes or rolls back the completions that gateways of this host, now dead, left claimed
/// ([`tidy`] first). `published` says whether a plan's file is the object now at its upload's
/// bucket and key.
pub fn recover(
    uploads: BorrowedFd<'_>,
    completed: &Completed,
    published: impl Fn(&UploadInfo, &Plan) -> bool,
) -> Recovered {
    tidy(uploads);
    let mut recovered = Recovered::default();
    for (bucket, dir) in bucket_dirs(uploads) {
        recover_in(dir.as_fd(), completed, &published, &mut recovered);
        forget_if_empty(uploads, &bucket);
    }
    recovered
}

/// [`recover`] in the directory of one bucket's uploads.
fn recover_in(
    uploads: BorrowedFd<'_>,
    completed: &Completed,
    published: &impl Fn(&UploadInfo, &Plan) -> bool,
    recovered: &mut Recovered,
) {
    for (name, ty) in entries(uploads).unwrap_or_default() {
        let Some(id) = dead_claim(&name).filter(|_| ty == FileType::Directory) else {
            continue;
        };
        let Ok(dir) = open_dir(uploads, &name) else {
            continue;
        };
        let info = read_info(dir.as_fd());
        let plan: Option<Plan> = read_json(dir.as_fd(), PLAN).ok();
        match (info, plan) {
            (Ok(info), Some(plan)) if published(&info, &plan) => {
                let done = Done {
                    bucket: info.bucket,
                    key: info.key,
                    initiator: info.initiator,
                    etag: plan.etag,
                };
                if completed.add(id, &done).is_ok() && remove(uploads, &name).is_ok() {
                    recovered.finished += 1;
                }
            }
            _ => {
                unclaim(uploads, &name, id);
                if open_dir(uploads, id).is_ok() {
                    recovered.rolled_back += 1;
                }
            }
        }
    }
}
