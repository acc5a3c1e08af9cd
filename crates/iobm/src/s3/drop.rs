//! `iobm s3 --drop-caches`: before each phase, the page cache under the objects dropped (the
//! whole system's where allowed, else the built-in gateway's files of the run's prefix), and
//! what was dropped in the phase's settings. Servers elsewhere are refused before the run
//! (`flags::drop_caches_reach`) or dropped by `--server-drop-cmd`.

use iobm_results::PhaseResult;
use iobm_run::probe::drop::CacheDrop;
use iobm_run::probe::{Probe, Refusal, Scene};
use std::path::PathBuf;
use std::sync::Mutex;

/// Drops the page cache under a run's objects.
pub(super) struct ObjectsCacheDrop {
    /// The built-in gateway's directory of the run's objects; None: servers on this host,
    /// whose page cache is this machine's.
    objects: Option<PathBuf>,
    /// What was dropped before the phase.
    dropped: Mutex<CacheDrop>,
    /// What could not be dropped, for the run's warnings.
    pub(super) warnings: Mutex<Vec<String>>,
}

impl ObjectsCacheDrop {
    pub(super) fn new(objects: Option<PathBuf>) -> ObjectsCacheDrop {
        ObjectsCacheDrop {
            objects,
            dropped: Mutex::new(CacheDrop::Nothing),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// Drops the system's page cache (root), else the pages of every file under the objects;
    /// says which.
    fn drop_now(&self) -> Result<CacheDrop, String> {
        if iobm_target::posix::drop_system_cache() {
            return Ok(CacheDrop::System);
        }
        let Some(top) = &self.objects else {
            return Err(
                "the page cache could not be dropped (/proc/sys/vm/drop_caches is not writable)"
                    .into(),
            );
        };
        let mut dirs = vec![top.clone()];
        let mut failed = None;
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() => dirs.push(path),
                    Ok(_) => {
                        if let Err(e) = iobm_target::posix::drop_cache(&path) {
                            failed.get_or_insert(format!("{}: {e}", path.display()));
                        }
                    }
                    Err(_) => {}
                }
            }
        }
        match failed {
            None => Ok(CacheDrop::Files),
            Some(why) => Err(format!("some objects' pages were not dropped ({why})")),
        }
    }
}

impl Probe for ObjectsCacheDrop {
    fn before(&self, _scene: &Scene) -> Result<(), Refusal> {
        let dropped = self.drop_now().unwrap_or_else(|why| {
            let warning = format!("--drop-caches: {why}");
            self.warnings.lock().unwrap().push(warning);
            CacheDrop::Nothing
        });
        *self.dropped.lock().unwrap() = dropped;
        Ok(())
    }

    fn after(
        &self,
        _scene: &Scene,
        _outcome: &iobm_engine::PhaseOutcome,
        result: &mut PhaseResult,
    ) {
        let dropped = *self.dropped.lock().unwrap();
        if dropped == CacheDrop::Nothing {
            return;
        }
        // After `--server-drop-cmd`'s probe, which says the servers' were dropped.
        let settings = &mut result.settings;
        settings.cache_dropped.client = Some(dropped);
        settings.drop_cache = true;
    }
}
