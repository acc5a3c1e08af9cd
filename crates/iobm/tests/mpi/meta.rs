//! `iobm meta` under MPI: a shared tree with `--stride 1` (every lookup, rename and removal is
//! of another rank's items, as the result records), the stonewall's wear-out agreed over the
//! ranks, and nothing left behind.

use super::common::{entries, load, phase_ops as ops};
use super::{mpirun, mpirun_ok};
use serde_json::Value;

fn phases(run: &Value) -> &Vec<Value> {
    run["phases"].as_array().unwrap()
}

#[test]
fn with_a_stride_of_one_every_rank_looks_up_another_ranks_items() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    let json_arg = json.to_str().unwrap();
    let args = [
        "meta",
        "-j",
        "2",
        "--stride",
        "1",
        "--items",
        "30",
        "--write-bytes",
        "64",
        "--phases",
        "dir-create,dir-stat,dir-remove,file-create,file-stat,file-read,file-rename,file-remove",
        "--json",
        json_arg,
    ];
    let out = mpirun(4, &args, target.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The per-rank rows of phases that move no bytes count operations, as the workers' do.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stat = &stdout[stdout.find("\ndir-stat:").unwrap()..];
    let ranks = &stat[stat.find("  rank").unwrap()..];
    let header = ranks.lines().next().unwrap();
    assert!(
        header.contains("ops/s") && !header.contains("MiB/s"),
        "{header}"
    );
    let run = load(&json);
    assert_eq!(run["ranks"].as_array().unwrap().len(), 4);
    assert_eq!(run["config"]["meta"]["stride"], 1);
    let mut looked_up = 0;
    for p in phases(&run) {
        let name = p["name"].as_str().unwrap();
        assert_eq!(p["status"], "complete", "{name}");
        assert!(
            p["errors"].as_array().unwrap().is_empty(),
            "{name}: {}",
            p["errors"]
        );
        let workers = p["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 8, "{name}: 4 ranks x 2 workers");
        if name.starts_with("tree-") {
            continue;
        }
        assert_eq!(ops(p), 8 * 30, "{name}");
        let creates = name.ends_with("-create");
        for w in workers {
            let rank = w["rank"].as_u64().unwrap();
            let worker = w["worker"].as_u64().unwrap();
            if creates {
                assert!(
                    w["items_of"].is_null(),
                    "{name}: a worker makes its own: {w}"
                );
                continue;
            }
            // The worker one rank on: (rank + 1) mod 4, the same local worker.
            let owner = w["items_of"]
                .as_u64()
                .unwrap_or_else(|| panic!("{name}: {w}"));
            assert_eq!(owner, ((rank + 1) % 4) * 2 + worker, "{name}: {w}");
            assert_ne!(owner / 2, rank, "{name}: never its own rank's");
            looked_up += 1;
        }
        if ["dir-stat", "file-stat", "file-read"].contains(&name) {
            // All four ranks on this one host: its caches hold every rank's entries.
            let verdict = &p["cache"]["verdict"];
            assert_eq!(verdict["verdict"], "cached", "{name}: {verdict}");
            assert!(verdict["evidence"]
                .as_str()
                .unwrap()
                .contains("another rank on this host"));
        }
    }
    assert_eq!(
        looked_up,
        8 * 6,
        "six phases of eight workers looked up others' items"
    );
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
}

#[test]
fn the_stonewalls_wear_out_is_the_most_any_rank_made() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    let args = [
        "meta",
        "-j",
        "2",
        "--items",
        "500000",
        "--stonewall",
        "300ms",
        "--unique-dir",
        "--phases",
        "file-create,file-remove",
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(2, &args, target.path());
    let run = load(&json);
    let create = &phases(&run)[1];
    assert_eq!(create["name"], "file-create");
    let wall = &create["stonewall"];
    assert_eq!(
        wall["stopped_workers"], 4,
        "every worker of both ranks: {wall}"
    );
    let made = wall["wear_out_items"].as_u64().unwrap();
    assert!(made > 0 && made < 500_000, "{wall}");
    for w in create["workers"].as_array().unwrap() {
        assert_eq!(
            w["span"]["ops"], made,
            "each worker of each rank went on to it: {w}"
        );
    }
    let remove = &phases(&run)[2];
    assert_eq!(remove["name"], "file-remove");
    assert_eq!(ops(remove), 4 * made);
    assert!(
        remove["errors"].as_array().unwrap().is_empty(),
        "{}",
        remove["errors"]
    );
    assert_eq!(phases(&run)[3]["name"], "tree-remove");
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
}
