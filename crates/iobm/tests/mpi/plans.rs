//! Plans under MPI: a run with `launch = [mpirun ...]` runs on every rank and is checked there
//! first, and `mpirun iobm rerun` reruns a multi-rank result on every rank.

use super::common::{iobm, load};
use super::launcher;
use std::time::Duration;

const MPIRUN: [&str; 7] = [
    "mpirun",
    "--allow-run-as-root",
    "--oversubscribe",
    "--mca",
    "btl",
    "self,tcp",
    "-np",
];

#[test]
fn a_plan_run_under_mpirun_and_its_rerun_run_on_every_rank() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let launch: Vec<String> = MPIRUN.iter().map(|w| format!("{w:?}")).collect();
    std::fs::write(
        &plan,
        format!(
            "[[run]]\ncommand = \"write\"\nlabel = \"two ranks\"\njobs = 2\nsize = \"8MiB\"\n\
             dir = {:?}\nlaunch = [{}, \"2\"]\n",
            target.path().display().to_string(),
            launch.join(", ")
        ),
    )
    .unwrap();
    let out = work.path().join("out");
    let ran = iobm()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let first = out.join("two_ranks.json");
    let result = load(&first);
    assert_eq!(
        result["ranks"].as_array().unwrap().len(),
        2,
        "{}",
        result["ranks"]
    );
    let workers = result["phases"][0]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 4, "2 jobs on each of 2 ranks");

    let again = work.path().join("again.json");
    let rerun = launcher(2)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("rerun")
        .arg(&first)
        .arg("--json")
        .arg(&again)
        .output()
        .unwrap();
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    let again = load(&again);
    assert_eq!(again["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(again["config_hash"], result["config_hash"]);
    assert_eq!(again["spec"], result["spec"]);
}
