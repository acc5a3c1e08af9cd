//! The run's own directory `iobm-<run id>/` (created fresh, so nothing in it predates the run),
//! the manifest that lets `iobm read` find and check kept data, and the cleanup that removes only
//! what the run created.

use iobm_engine::Layout;
use iobm_results::LeftBehind;
use iobm_run::exit::Failure;
use iobm_run::session::describe_io;
use iobm_stats::names::LayoutName;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "iobm-manifest.json";
const MANIFEST_FORMAT: &str = "iobm-data";

/// Describes a data set written by iobm, saved beside its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub run_id: String,
    pub jobs: u32,
    pub size_per_job_bytes: u64,
    pub block_bytes: u64,
    /// "file_per_job", "shared_file" or "strided".
    pub layout: LayoutName,
    pub data: String,
    pub files: Vec<ManifestFile>,
    /// False until the write phase completed; incomplete data sets are not read.
    pub complete: bool,
    /// MPI ranks that wrote it (jobs is per rank).
    #[serde(default = "one")]
    pub ranks: u32,
    /// The run id its 4 KiB stamps carry (None for unstamped data), for `read --verify`.
    #[serde(default)]
    pub stamp_seed: Option<u64>,
    /// The version of the data generator that wrote it: `read --verify` regenerates every byte
    /// and needs the same one (0: before data was a function of run, file and offset).
    #[serde(default)]
    pub generator: u32,
    /// Segments of a segmented shared file (`--segments`, layout "strided"): its transfers
    /// are `block_bytes` each, interleaved. Absent: another layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<u64>,
}

/// The data generator of this iobm ([`iobm_engine::data::Generator`]).
pub const GENERATOR: u32 = 3;

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub name: String,
    pub size: u64,
}

impl Manifest {
    pub fn new(
        run_id: &str,
        layout_name: LayoutName,
        layout: &Layout,
        block: u64,
        data: String,
    ) -> Self {
        Manifest {
            format: MANIFEST_FORMAT.to_string(),
            version: 1,
            run_id: run_id.to_string(),
            jobs: layout.workers() as u32,
            size_per_job_bytes: layout.regions.first().map_or(0, |r| r.len),
            block_bytes: block,
            layout: layout_name,
            data,
            files: layout
                .files
                .iter()
                .map(|f| ManifestFile {
                    name: f.name.clone(),
                    size: f.size,
                })
                .collect(),
            complete: false,
            ranks: 1,
            stamp_seed: None,
            generator: GENERATOR,
            segments: None,
        }
    }
}

/// The directory of a run.
#[derive(Debug)]
pub struct RunDir {
    pub path: PathBuf,
    /// Whether this process created it (and so removes it); MPI ranks sharing rank 0's
    /// directory only remove their own files.
    pub owned: bool,
}

impl RunDir {
    /// Creates `parent/iobm-<run_id>`; fails if it exists, so the run never adopts old files.
    pub fn create(parent: &Path, run_id: &str) -> Result<RunDir, Failure> {
        let path = parent.join(format!("iobm-{run_id}"));
        fs::create_dir(&path)
            .map_err(|e| Failure::input(format!("cannot create {}: {e}", path.display())))?;
        Ok(RunDir { path, owned: true })
    }

    /// Joins the directory rank 0 created for the run, or creates it where `parent` is not
    /// shared with rank 0.
    pub fn join_or_create(parent: &Path, run_id: &str) -> Result<RunDir, Failure> {
        let path = parent.join(format!("iobm-{run_id}"));
        if path.is_dir() {
            return Ok(RunDir { path, owned: false });
        }
        RunDir::create(parent, run_id)
    }

    /// Removes these files of ours; those already gone are fine. Every one is tried; what
    /// could not be removed is said with how many and the first error.
    pub fn remove_files(&self, files: &[&str]) -> Result<(), LeftBehind> {
        self.remove_each(files, "files", fs::remove_file)
    }

    /// Removes each of `names` (inside the run directory) by `remove`; those already gone are
    /// fine. Every one is tried; what could not be removed is said as `what`, with how many
    /// and the first error.
    fn remove_each<N: AsRef<str>>(
        &self,
        names: &[N],
        what: &str,
        remove: fn(PathBuf) -> io::Result<()>,
    ) -> Result<(), LeftBehind> {
        let mut failed = 0;
        let mut first = None;
        for name in names.iter().map(AsRef::as_ref) {
            match remove(self.path.join(name)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    failed += 1;
                    first.get_or_insert_with(|| {
                        format!("cannot remove {name}: {}", describe_io(&e))
                    });
                }
                _ => {}
            }
        }
        match first {
            None => Ok(()),
            Some(error) => Err(self.left(what, failed, error)),
        }
    }

    /// What is left in the run directory.
    fn left(&self, what: &str, count: u64, error: String) -> LeftBehind {
        LeftBehind {
            location: self.path.display().to_string(),
            what: what.to_string(),
            count: Some(count),
            at_most: None,
            error,
        }
    }

    pub fn save_manifest(&self, manifest: &Manifest) -> io::Result<()> {
        let text = serde_json::to_vec_pretty(manifest).expect("manifest serialises");
        iobm_run::atomic::write_atomic(&self.path.join(MANIFEST), &text)
    }

    /// Removes the layout's files, the manifest and the directory; anything else found inside
    /// (not ours) is left, and reported.
    pub fn remove(&self, layout: &Layout) -> Result<(), LeftBehind> {
        let files: Vec<&str> = layout.files.iter().map(|f| f.name.as_str()).collect();
        self.remove_named(&files, &[])
    }

    /// Removes directories of ours, which must be empty by now.
    pub fn remove_subdirs(&self, dirs: &[String]) -> Result<(), LeftBehind> {
        self.remove_each(dirs, "directories", fs::remove_dir)
    }

    /// Removes trees of ours (a meta run's) with everything in them: the run made them inside
    /// its own directory, and only it worked in them.
    pub fn remove_trees(&self, roots: &[String]) -> Result<(), LeftBehind> {
        self.remove_each(roots, "directories", fs::remove_dir_all)
    }

    /// When this process owns the run directory: removes the manifest and the directory, which
    /// holds nothing else of ours by now; anything found inside (not ours) is left, and reported.
    pub fn remove_if_owned(&self) -> Result<(), LeftBehind> {
        if !self.owned {
            return Ok(());
        }
        self.remove_files(&[MANIFEST])?;
        fs::remove_dir(&self.path).map_err(|e| {
            let why = if e.raw_os_error() == Some(libc::ENOTEMPTY) {
                "it holds files iobm did not create".to_string()
            } else {
                describe_io(&e)
            };
            LeftBehind {
                count: None,
                ..self.left("directory", 1, why)
            }
        })
    }

    /// Removes these files and directories of ours, then the run directory if ours.
    pub fn remove_named(&self, files: &[&str], dirs: &[String]) -> Result<(), LeftBehind> {
        self.remove_files(files)?;
        self.remove_subdirs(dirs)?;
        self.remove_if_owned()
    }
}

/// Finds the data set at `path`: the directory itself when it holds a manifest, or its only
/// `iobm-*` subdirectory that does.
pub fn locate(path: &Path) -> Result<(PathBuf, Manifest), Failure> {
    let hint =
        "write one first with `iobm write --keep DIR`, or measure both with `iobm stream DIR`";
    if !path.is_dir() {
        return Err(Failure::input(format!(
            "{}: no such directory; {hint}",
            path.display()
        )));
    }
    let dir = if path.join(MANIFEST).is_file() {
        path.to_path_buf()
    } else {
        let mut found: Vec<PathBuf> = fs::read_dir(path)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("iobm-"))
                    && p.join(MANIFEST).is_file()
            })
            .collect();
        found.sort();
        match found.len() {
            0 => {
                return Err(Failure::input(format!(
                    "{}: no iobm data here; {hint}",
                    path.display()
                )))
            }
            1 => found.remove(0),
            _ => {
                return Err(Failure::input(format!(
                    "{}: holds {} iobm data sets; name one: {}",
                    path.display(),
                    found.len(),
                    found
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
    };
    let text = fs::read_to_string(dir.join(MANIFEST))
        .map_err(|e| Failure::input(format!("{}: {e}", dir.join(MANIFEST).display())))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .ok()
        .filter(|m: &Manifest| m.format == MANIFEST_FORMAT && m.version == 1)
        .ok_or_else(|| {
            Failure::input(format!(
                "{}: not an iobm data manifest this version can read",
                dir.join(MANIFEST).display()
            ))
        })?;
    if !manifest.complete {
        return Err(Failure::input(format!(
            "{}: the write that made this data set did not finish; {hint}",
            dir.display()
        )));
    }
    for f in &manifest.files {
        let len = fs::metadata(dir.join(&f.name)).map(|m| m.len());
        if len.as_ref().map_or(true, |&l| l < f.size) {
            return Err(Failure::input(format!(
                "{}: data file {} is missing or shorter than written ({} bytes expected)",
                dir.display(),
                f.name,
                f.size
            )));
        }
    }
    Ok((dir, manifest))
}
