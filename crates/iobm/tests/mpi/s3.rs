//! S3 under several ranks: the load spread over endpoints and merged once, s3s-fs and an
//! endpoint that dies mid-phase, and the built-in gateway refused.

use super::common::{self, phase_bytes as bytes};
use super::{
    assert_makespan_recomputable, files_under, iobm_serve, load, mpirun_s3, ok, u64_of, KEY, SECRET,
};

#[test]
fn s3_load_from_ranks_is_spread_over_every_endpoint_and_merged_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (iobm_serve(dir.path()), iobm_serve(dir.path()));
    let endpoints = format!("{},{}", a.url, b.url);
    let out_dir = tempfile::tempdir().unwrap();
    for ranks in [2u32, 4] {
        let json = out_dir.path().join(format!("put{ranks}.json"));
        let out = mpirun_s3(
            ranks,
            &[
                "put",
                "--endpoint",
                &endpoints,
                "--concurrent",
                "3",
                "--obj-size",
                "16KiB",
                "--ops",
                "90",
                "--keep",
                "--bucket",
                &format!("mpi{ranks}"),
                "--json",
                json.to_str().unwrap(),
            ],
        );
        let stdout = ok(&out);
        assert_eq!(stdout.matches("put: complete").count(), 1, "{stdout}");
        assert!(
            stdout.contains(&format!("{ranks} ranks x 3 concurrent")),
            "{stdout}"
        );
        let result = load(&json);
        let phase = &result["phases"][0];
        let workers = phase["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 3 * ranks as usize);
        // Totals are the sum over ranks: 90 PUTs of 16 KiB in all.
        let put = &phase["operations"][0];
        assert_eq!(put["ops"], 90);
        assert_eq!(put["bytes"], 90 * 16384);
        assert_eq!(put["latency"]["histogram"]["count"], 90);
        assert_eq!(bytes(phase), 90 * 16384);
        assert_makespan_recomputable(phase);
        // Worker w of rank r is worker 3r + w of the job, on endpoint (3r + w) mod 2.
        for w in workers {
            let job_worker = 3 * w["rank"].as_u64().unwrap() + w["worker"].as_u64().unwrap();
            let expected = if job_worker % 2 == 0 { &a.url } else { &b.url };
            assert_eq!(w["endpoint"].as_str().unwrap(), expected.as_str());
        }
        // Both gateways' counters, read by rank 0 around the phase.
        let servers = phase["cache"]["servers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        let received: u64 = servers
            .iter()
            .map(|s| s["received_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(received, 90 * 16384);
        // Kept: 90 objects, none written twice, each rank under a prefix of its own.
        let kept = files_under(&dir.path().join(format!("mpi{ranks}")));
        assert_eq!(kept.len(), 90, "{kept:?}");
        for rank in 0..ranks {
            assert!(kept
                .iter()
                .any(|p| p.to_string_lossy().contains(&format!("/r{rank}/"))));
        }
    }

    // A GET of a data set divided among the ranks, then every object and the bucket removed
    // once.
    let json = out_dir.path().join("get.json");
    let out = mpirun_s3(
        2,
        &[
            "get",
            "--endpoint",
            &endpoints,
            "--concurrent",
            "2",
            "--obj-size",
            "16KiB",
            "--objects",
            "21",
            "--ops",
            "40",
            "--bucket",
            "mpiget",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    ok(&out);
    let result = load(&json);
    let phase = &result["phases"][0];
    assert_eq!(phase["settings"]["data_bytes"], 21 * 16384);
    assert_eq!(phase["operations"][0]["ops"], 40);
    assert_eq!(result["config"]["s3"]["objects"], 21);
    assert!(
        !dir.path().join("mpiget").exists(),
        "the bucket was removed"
    );
    assert!(
        result["warnings"].as_array().unwrap().is_empty(),
        "{}",
        result["warnings"]
    );
}

#[test]
fn s3_under_mpi_against_s3s_fs_and_with_an_endpoint_that_dies() {
    let dir = tempfile::tempdir().unwrap();
    let s3s = common::s3s_fs(dir.path(), KEY, SECRET);
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("s3s.json");
    let out = mpirun_s3(
        2,
        &[
            "put",
            "--endpoint",
            &s3s.url,
            "--concurrent",
            "2",
            "--obj-size",
            "16KiB",
            "--ops",
            "40",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    ok(&out);
    let result = load(&json);
    assert_eq!(result["phases"][0]["operations"][0]["ops"], 40);
    // Not an iobm gateway: no server counters.
    assert!(result["phases"][0]["cache"]["servers"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(files_under(&dir.path().join("iobm")).is_empty());

    // Rank 1's endpoint dies a second into a 3-second phase: its errors are counted, rank 0
    // finishes, and the result is saved with them.
    let gateway_dir = tempfile::tempdir().unwrap();
    let (alive, dying) = (
        iobm_serve(gateway_dir.path()),
        iobm_serve(gateway_dir.path()),
    );
    let json = out_dir.path().join("dies.json");
    let endpoints = format!("{},{}", alive.url, dying.url);
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        drop(dying);
    });
    let out = mpirun_s3(
        2,
        &[
            "put",
            "--endpoint",
            &endpoints,
            "--concurrent",
            "1",
            "--obj-size",
            "16KiB",
            "--duration",
            "3s",
            "--max-errors",
            "1000000000",
            "--timeout",
            "2s",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    killer.join().unwrap();
    let result = load(&json);
    let phase = &result["phases"][0];
    let errors = phase["errors"].as_array().unwrap();
    assert!(!errors.is_empty(), "{out:?}");
    assert!(u64_of(&phase["operations"][0]["errors"]) > 0);
    let rank0 = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["rank"] == 0)
        .unwrap();
    assert!(rank0["span"]["bytes"].as_u64().unwrap() > 0);
    // Rank 0 went on after rank 1's endpoint died: its series has no error and operations
    // completed in an interval after rank 1's first error, and the phase was not stopped.
    assert_eq!(phase["status"], "complete", "{out:?}");
    let series_of = |rank: u64| {
        let ranks = phase["rank_series"].as_array().unwrap();
        let r = ranks.iter().find(|r| r["rank"] == rank).unwrap();
        let counts = |what: &str| -> Vec<u64> {
            r["series"][what]
                .as_array()
                .map(|v| v.iter().map(u64_of).collect())
                .unwrap_or_default()
        };
        (counts("ops"), counts("errors"))
    };
    let (rank0_ops, rank0_errors) = series_of(0);
    let (_, rank1_errors) = series_of(1);
    assert!(rank0_errors.iter().all(|&e| e == 0), "{rank0_errors:?}");
    let first_error = rank1_errors.iter().position(|&e| e > 0).unwrap();
    assert!(
        rank0_ops.iter().skip(first_error + 1).any(|&n| n > 0),
        "rank 0 stopped with rank 1's first error (interval {first_error}): {rank0_ops:?}"
    );
}

#[test]
fn the_built_in_gateway_is_refused_under_several_ranks() {
    let out = mpirun_s3(2, &["put", "--ops", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("iobm serve") && err.contains("--endpoint"),
        "{err}"
    );
}
