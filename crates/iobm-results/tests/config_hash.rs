//! The configuration hash names the workload, not where it ran.

use iobm_results::{config_hash, RunResult};
use iobm_stats::names::RunKind;

fn fixture(name: &str) -> RunResult {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../iobm/tests/fixtures")
        .join(name);
    RunResult::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_same_workload_elsewhere_has_the_same_hash_and_another_workload_another() {
    let run = fixture("stream.json");
    let hash = config_hash(&run.kind, &run.config);
    assert_eq!(hash.len(), 16);
    let mut elsewhere = run.config.clone();
    elsewhere.dir = "/mnt/lustre".into();
    elsewhere.run_dir = "/mnt/lustre/iobm-other".into();
    elsewhere.keep = !elsewhere.keep;
    assert_eq!(config_hash(&run.kind, &elsewhere), hash);
    let mut bigger_blocks = run.config.clone();
    bigger_blocks.block_bytes *= 2;
    assert_ne!(config_hash(&run.kind, &bigger_blocks), hash);
    assert_ne!(config_hash(&RunKind::Read, &run.config), hash);

    let s3 = fixture("s3-mixed.json");
    let hash = config_hash(&s3.kind, &s3.config);
    let mut other_server = s3.config.clone();
    let settings = other_server.s3.as_mut().unwrap();
    settings.endpoints = vec!["http://10.0.0.2:9000".into()];
    settings.prefix = "iobm-other/".into();
    settings.upload_bytes_per_s = Some(1e9);
    assert_eq!(config_hash(&s3.kind, &other_server), hash);
    other_server.s3.as_mut().unwrap().concurrent += 1;
    assert_ne!(config_hash(&s3.kind, &other_server), hash);
}

#[test]
fn io500s_easy_and_hard_item_counts_are_each_in_the_hash() {
    // A document from before the two counts: its `items` is mdtest-easy's.
    let run = fixture("io500.json");
    let io500 = run.config.io500.as_ref().unwrap();
    assert_eq!((io500.easy_items, io500.hard_items), (120, None));
    let hash = config_hash(&run.kind, &run.config);
    let mut more_hard = run.config.clone();
    more_hard.io500.as_mut().unwrap().hard_items = Some(121);
    assert_ne!(config_hash(&run.kind, &more_hard), hash);
    let mut more_easy = run.config.clone();
    more_easy.io500.as_mut().unwrap().easy_items = 121;
    assert_ne!(config_hash(&run.kind, &more_easy), hash);
}

#[test]
fn a_run_without_the_engine_hints_or_pinning_hashes_as_before_and_each_is_in_the_hash() {
    use iobm_stats::names::{Engine, Fadvise, Madvise};
    let run = fixture("stream-steady.json");
    let hash = config_hash(&run.kind, &run.config);
    // The hash recorded when the document was written, before the engine was an enum.
    assert_eq!(hash, run.config_hash);
    assert_eq!(run.config.engine, Some(Engine::Sync));
    let with = |change: &dyn Fn(&mut iobm_results::Config)| {
        let mut config = run.config.clone();
        change(&mut config);
        config_hash(&run.kind, &config)
    };
    let hashes = [
        with(&|c| c.engine = Some(Engine::Mmap)),
        with(&|c| c.madvise = Some(Madvise::Random)),
        with(&|c| c.fadvise = Some(Fadvise::Sequential)),
        with(&|c| c.cpus = Some("0-1".into())),
        // Node 0 is 0, which the hash leaves out as it does every 0: its CPUs, in `cpus`
        // beside it, are what tells that run apart.
        with(&|c| c.numa = Some(1)),
    ];
    for (i, h) in hashes.iter().enumerate() {
        assert_ne!(h, &hash, "change {i}");
    }
}

#[test]
fn the_load_shape_is_in_the_hash_and_a_run_without_it_hashes_as_before() {
    // The hash this mixed run recorded when it ran, before --access, --think, --burst and
    // --list were flags.
    let s3 = fixture("s3-mixed.json");
    assert_eq!(config_hash(&s3.kind, &s3.config), "8d140333e400eba3");
    assert_eq!(s3.config.s3.as_ref().unwrap().mix.len(), 4);
    let hash = config_hash(&s3.kind, &s3.config);
    let mut skewed = s3.config.clone();
    skewed.access = Some(iobm_stats::access::AccessDist::Zipf { theta: 1.2 });
    assert_ne!(config_hash(&s3.kind, &skewed), hash);
    let mut thinking = s3.config.clone();
    thinking.think_s = Some(0.005);
    assert_ne!(config_hash(&s3.kind, &thinking), hash);
    let mut bursting = s3.config.clone();
    bursting.burst_s = Some([2.0, 8.0]);
    assert_ne!(config_hash(&s3.kind, &bursting), hash);
    let mut listing = s3.config.clone();
    listing.s3.as_mut().unwrap().mix.push(20);
    assert_ne!(config_hash(&s3.kind, &listing), hash);
}
