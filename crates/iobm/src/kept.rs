//! A data set of objects kept by `iobm s3 ... --keep` and read again by `--reuse PREFIX`: the
//! description saved beside its objects (`iobm-data-set.json` under the run's prefix), and the
//! checks, before a run that only reads it, that a prefix holds one and that it is still there.

use crate::cli::S3Args;
use iobm_engine::{ObjectOp, ObjectSpec};
use iobm_results::{PhaseResult, RunResult};
use iobm_run::exit::Failure;
use iobm_run::session::{describe_io, RunId};
use iobm_s3::S3Config;
use iobm_stats::sizes::SizeDist;
use iobm_target::objects::Content;
use iobm_target::{Body, Target};
use serde::{Deserialize, Serialize};
use std::io;

/// The object under the kept prefix that describes the data set.
pub const DESCRIPTION: &str = "iobm-data-set.json";
const FORMAT: &str = "iobm-objects";

/// What a kept data set is: enough to read it again as the run that stored it would have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptSet {
    pub format: String,
    pub version: u32,
    /// The run that stored it.
    pub run_id: String,
    /// Objects `obj.0` .. `obj.N-1`, every one stored.
    pub objects: u64,
    /// Smallest and largest object size: each object's size is drawn from its number.
    pub obj_size_min: u64,
    pub obj_size_max: u64,
    /// The distribution the sizes were drawn from, where it is not fixed or uniform from the
    /// smallest to the largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obj_sizes: Option<SizeDist>,
    /// Bytes of the N objects.
    pub bytes: u64,
    /// Their content, as `--data` names it.
    pub data: String,
    /// The run id their stamps carry: their bytes are a function of it, for `--verify`.
    pub seed: u64,
    /// The version of the data generator that made them ([`crate::rundir::GENERATOR`]).
    pub generator: u32,
}

impl KeptSet {
    pub fn new(
        run_id: &iobm_run::session::RunId,
        spec: &iobm_engine::ObjectSpec,
        objects: u64,
        data: String,
    ) -> KeptSet {
        let spec = iobm_engine::ObjectSpec {
            count: objects,
            ..spec.clone()
        };
        KeptSet {
            format: FORMAT.to_string(),
            version: 1,
            run_id: run_id.text.clone(),
            objects,
            obj_size_min: spec.size.bounds().0,
            obj_size_max: spec.size.bounds().1,
            obj_sizes: (!spec.size.is_range()).then(|| spec.size.clone()),
            bytes: spec.total_bytes(),
            data,
            seed: run_id.seed,
            generator: crate::rundir::GENERATOR,
        }
    }

    /// How the set's object sizes were drawn.
    pub fn sizes(&self) -> SizeDist {
        self.obj_sizes.clone().unwrap_or(SizeDist::Uniform {
            min: self.obj_size_min,
            max: self.obj_size_max,
        })
    }
}

/// Where `--reuse` points: a bucket and a prefix ending with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reuse {
    pub bucket: String,
    pub prefix: String,
}

impl Reuse {
    /// `s3://BUCKET/PREFIX/` (as a kept run prints it), or PREFIX in `bucket`.
    pub fn parse(arg: &str, bucket: &str) -> Result<Reuse, Failure> {
        let bad = |why: &str| Failure::input(format!("--reuse '{arg}': {why}"));
        let (bucket, prefix) = match arg.strip_prefix("s3://") {
            Some(rest) => match rest.split_once('/') {
                Some((b, p)) => (b.to_string(), p),
                None => (rest.to_string(), ""),
            },
            None => (bucket.to_string(), arg),
        };
        if bucket.is_empty() {
            return Err(bad("no bucket (s3://BUCKET/PREFIX/)"));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.is_empty() {
            return Err(bad(
                "no prefix: name the kept data set's, s3://BUCKET/PREFIX/ as its run printed",
            ));
        }
        if prefix.split('/').any(|p| p.is_empty() || p == "..") {
            return Err(bad("empty or '..' parts"));
        }
        Ok(Reuse {
            bucket,
            prefix: format!("{prefix}/"),
        })
    }

    pub fn url(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.prefix)
    }
}

/// Of a put or multipart phase, the objects stored from `obj.0` on without a gap: worker w of
/// W stores w, w + W, w + 2W, ..., so the first one missing is the least `ops_w W + w`. None
/// when operations failed (their objects are holes) or the phase did not complete.
pub fn stored(phase: &PhaseResult) -> Option<u64> {
    let failed: u64 = phase.errors.iter().map(|e| e.count).sum();
    if failed > 0 || phase.status != iobm_results::RunStatus::Complete {
        return None;
    }
    let workers = phase.workers.len() as u64;
    phase
        .workers
        .iter()
        .map(|w| w.span.ops * workers + u64::from(w.worker))
        .min()
}

/// The description's bytes as an object's content.
struct Text(Vec<u8>);

impl Content for Text {
    fn fill(&self, out: &mut [u8], _id: u64, offset: u64) {
        let from = offset as usize;
        out.copy_from_slice(&self.0[from..from + out.len()]);
    }
}

/// Stores the description of `set` under the target's prefix.
pub fn save(target: &dyn Target, set: &KeptSet) -> io::Result<()> {
    let text = Text(serde_json::to_vec_pretty(set).expect("description serialises"));
    let mut session = target.objects(0)?;
    session.put(DESCRIPTION, &Body::new(&text, 0, text.0.len() as u64))
}

/// The data set kept under the target's prefix (which is `reuse`'s), checked: described by
/// iobm, its first and last objects there with the sizes it says. Every failure is one line
/// naming `--reuse`.
pub fn load(target: &dyn Target, reuse: &Reuse) -> Result<KeptSet, Failure> {
    let at = reuse.url();
    let bad = |why: String| Failure::input(format!("--reuse {at}: {why}"));
    let mut session = target
        .objects(0)
        .map_err(|e| bad(format!("cannot connect: {}", describe_io(&e))))?;
    let mut text = Vec::new();
    let got = session.get(DESCRIPTION, None, &mut |piece| {
        text.extend_from_slice(piece)
    });
    if let Err(e) = got {
        let why = describe_io(&e);
        if why.contains("NoSuchBucket") {
            return Err(bad(format!(
                "there is no bucket '{}' ({why})",
                reuse.bucket
            )));
        }
        if e.kind() != io::ErrorKind::NotFound && !why.contains("404") {
            return Err(bad(format!("cannot read {DESCRIPTION}: {why}")));
        }
        let page = session
            .list(None, 1)
            .map_err(|e| bad(format!("cannot list it: {}", describe_io(&e))))?;
        return Err(bad(if page.keys == 0 {
            "no objects under it (keep a data set with iobm s3 put --keep, then reuse the prefix it prints)".to_string()
        } else {
            format!("not a data set kept by iobm (no {DESCRIPTION} under it; keep one with iobm s3 put --keep)")
        }));
    }
    let set: KeptSet = serde_json::from_slice(&text)
        .map_err(|e| bad(format!("{DESCRIPTION} is not one iobm wrote: {e}")))?;
    if set.format != FORMAT || set.objects == 0 {
        return Err(bad(format!(
            "{DESCRIPTION} is not one iobm wrote (format '{}', {} objects)",
            set.format, set.objects
        )));
    }
    let spec = iobm_engine::ObjectSpec {
        count: set.objects,
        size: set.sizes(),
        ..spec_template()
    };
    let mut name = String::new();
    for k in [0, set.objects - 1] {
        iobm_engine::object_name(&mut name, k);
        let size = session.head(&name).map_err(|e| {
            bad(format!(
                "{name} of the {} objects it describes is not there ({}): the data set is incomplete",
                set.objects,
                describe_io(&e)
            ))
        })?;
        if size != spec.size_of(k) {
            return Err(bad(format!(
                "{name} holds {size} bytes where the data set stored {}: it was changed since",
                spec.size_of(k)
            )));
        }
    }
    Ok(set)
}

/// An object spec with nothing in it, for object sizes.
fn spec_template() -> iobm_engine::ObjectSpec {
    iobm_engine::ObjectSpec {
        count: 0,
        size: SizeDist::Fixed { bytes: 1 },
        range: None,
        part_size: 1,
        part_concurrency: 1,
        mix: iobm_engine::Mix::default(),
        page_keys: 1000,
        delete_batch: 1,
        retries: 0,
        max_new: None,
        picks: iobm_stats::names::Picks::Random,
        access: iobm_stats::access::AccessDist::Uniform,
    }
}

/// Where a run's objects are: `s3://BUCKET/PREFIX/`.
pub fn run_dir_of(config: &S3Config) -> String {
    format!("s3://{}/{}", config.bucket, config.prefix)
}

/// With `--keep`, saves beside the objects what `--reuse` needs to read them again, when they
/// are a whole data set: all a put or multipart stored from `obj.0` on without a gap, or the
/// data set a get, head or list uploaded.
pub fn describe_kept(
    target: &dyn Target,
    args: &S3Args,
    (config, run_id): (&S3Config, &RunId),
    spec: &ObjectSpec,
    run: &mut RunResult,
) {
    let objects = match args.op {
        ObjectOp::Put | ObjectOp::Multipart => run.phases.first().and_then(stored),
        ObjectOp::Get | ObjectOp::Head | ObjectOp::List => Some(spec.count),
        ObjectOp::Mixed | ObjectOp::Versioned | ObjectOp::Delete => None,
    };
    let at = run_dir_of(config);
    match objects {
        Some(n) if n > 0 => {
            let set = KeptSet::new(run_id, spec, n, args.data.name());
            match save(target, &set) {
                Ok(()) => run.warnings.push(format!(
                    "{n} objects ({}) kept as a data set: drop the server's caches, then read it again with --reuse {at}",
                    iobm_stats::format_bytes(set.bytes)
                )),
                Err(e) => run.warnings.push(format!(
                    "could not save {} under {at}, so --reuse cannot read it: {}",
                    DESCRIPTION,
                    describe_io(&e)
                )),
            }
        }
        _ => run.warnings.push(format!(
            "the objects under {at} are not a whole data set ({} changed it, or operations failed): --reuse cannot read them",
            args.op.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_takes_a_url_or_a_prefix_in_the_bucket() {
        let r = Reuse::parse("s3://b/p/iobm-x/", "iobm").unwrap();
        assert_eq!((r.bucket.as_str(), r.prefix.as_str()), ("b", "p/iobm-x/"));
        let r = Reuse::parse("iobm-x", "bench").unwrap();
        assert_eq!((r.bucket.as_str(), r.prefix.as_str()), ("bench", "iobm-x/"));
        assert_eq!(r.url(), "s3://bench/iobm-x/");
        for bad in ["s3://b", "s3://b/", "", "/", "a/../b", "s3:///p"] {
            let e = Reuse::parse(bad, "iobm").unwrap_err().message;
            assert!(e.starts_with(&format!("--reuse '{bad}': ")), "{e}");
        }
    }
}
