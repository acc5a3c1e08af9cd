//! What the io500 tests share: the rules' phases, the scores recomputed from a result's
//! phases, find's counts against what the writes made.

use super::{phase_bytes, phase_ops};
use serde_json::Value;

/// The phases of the IO500 rules, in their order.
pub const RULES: [&str; 12] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

pub fn phase<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// Recomputes every score of an io500 result from its phases' per-worker records and checks
/// the stored ones against them: each phase's figure (bytes or operations over the first
/// start to the last end, in GiB/s or kIOPS), the geometric means, the total.
pub fn assert_scores_recomputed(run: &Value) {
    let figure = |p: &Value| {
        let workers = p["workers"].as_array().unwrap();
        let start = workers
            .iter()
            .map(|w| w["span"]["start_ns"].as_u64().unwrap())
            .min()
            .unwrap();
        let end = workers
            .iter()
            .map(|w| w["span"]["end_ns"].as_u64().unwrap())
            .max()
            .unwrap();
        let seconds = (end - start) as f64 / 1e9;
        if p["name"].as_str().unwrap().starts_with("ior-") {
            phase_bytes(p) as f64 / seconds / (1u64 << 30) as f64
        } else {
            phase_ops(p) as f64 / seconds / 1000.0
        }
    };
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    let bw: Vec<f64> = RULES
        .iter()
        .filter(|n| n.starts_with("ior-"))
        .map(|n| figure(phase(run, n)))
        .collect();
    let md: Vec<f64> = RULES
        .iter()
        .filter(|n| !n.starts_with("ior-"))
        .map(|n| figure(phase(run, n)))
        .collect();
    assert_eq!((bw.len(), md.len()), (4, 8));
    let s = &run["io500"];
    for (p, name) in s["phases"].as_array().unwrap().iter().zip(RULES) {
        assert_eq!(p["name"], name);
        let stored = p["value"].as_f64().unwrap();
        assert!(near(stored, figure(phase(run, name))), "{name}: {stored}");
    }
    let (bw, md) = (geo(&bw), geo(&md));
    assert!(
        near(s["bw_gib_s"].as_f64().unwrap(), bw),
        "{} vs {bw}",
        s["bw_gib_s"]
    );
    assert!(
        near(s["md_kiops"].as_f64().unwrap(), md),
        "{} vs {md}",
        s["md_kiops"]
    );
    let score = (bw * md).sqrt();
    assert!(
        near(s["score"].as_f64().unwrap(), score),
        "{} vs {score}",
        s["score"]
    );
    assert!(s["formulas"]["score"]
        .as_str()
        .unwrap()
        .starts_with("sqrt(bandwidth score × metadata score)"));
}

/// How many of the names `f.G.I` of mdtest-hard's files contain "01", for `made` files per
/// worker of `workers`: the files find must match.
pub fn named_01(workers: u64, made: u64) -> u64 {
    (0..workers)
        .flat_map(|g| (0..made).map(move |i| format!("f.{g}.{i}")))
        .filter(|n| n.contains("01"))
        .count() as u64
}

/// What find examined and matched, against what the write phases made: every mdtest file,
/// ior-easy's file per worker and ior-hard's shared file; the mdtest-hard files named *01*.
/// Its rate is pfind's: those files over the phase's first start to last end, in kIOPS.
pub fn assert_find_counts_what_was_made(run: &Value, workers: u64) {
    let find = phase(run, "find");
    let easy = phase_ops(phase(run, "mdtest-easy-write"));
    let hard = phase_ops(phase(run, "mdtest-hard-write"));
    let files = easy + hard + workers + 1;
    assert_eq!(phase_ops(find), files);
    let spans = find["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["span"]);
    let start = spans.clone().map(|s| s["start_ns"].as_u64().unwrap()).min();
    let end = spans.map(|s| s["end_ns"].as_u64().unwrap()).max();
    let seconds = (end.unwrap() - start.unwrap()) as f64 / 1e9;
    let scored = &run["io500"]["phases"][4];
    assert_eq!(scored["name"], "find");
    let rate = scored["value"].as_f64().unwrap();
    assert!(near(rate, files as f64 / seconds / 1000.0), "{rate} kIOPS");
    let formula = scored["formula"].as_str().unwrap();
    assert!(formula.starts_with("files examined by every worker / (last end - first start)"));
    assert!(formula.contains(&format!("= {files} / ")), "{formula}");
    let matched = find["operations"][0]["keys"].as_u64().unwrap();
    assert_eq!(matched, named_01(workers, hard / workers));
    assert_eq!(run["io500"]["find_matched"], matched);
}
