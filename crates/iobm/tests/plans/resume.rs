//! Plans resumed: a killed plan, a results directory named otherwise or copied, a run taken
//! out and put back, and what `plan.json` says of runs that wrote no result.

use super::{pairs, statuses, write};
use crate::common::{entries, iobm, load};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_killed_plan_resumes_where_it_stopped() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    write(
        &plan,
        &format!(
            "[defaults]\ndir = {:?}\nsize = \"4MiB\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"first\"\n\n\
             [[run]]\ncommand = \"write\"\nlabel = \"second\"\nduration = \"6s\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"third\"\n",
            target.path().display().to_string()
        ),
    );
    let bin = assert_cmd::cargo::cargo_bin("iobm");
    let mut child = std::process::Command::new(&bin)
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .spawn()
        .unwrap();
    // The second run is writing when the first is complete and a data file holds bytes again
    // (the first removed its own).
    let deadline = Instant::now() + Duration::from_secs(120);
    let first_done = || out.join("plan.json").exists() && statuses(&out)[0].1 == "complete";
    let writing = || {
        entries(target.path()).iter().any(|run_dir| {
            let run_dir = target.path().join(run_dir);
            std::fs::read_dir(&run_dir).is_ok_and(|files| {
                files.flatten().any(|f| {
                    f.file_name().to_string_lossy().starts_with("data.")
                        && f.metadata().is_ok_and(|m| m.len() > 0)
                })
            })
        })
    };
    while !(first_done() && writing()) {
        assert!(Instant::now() < deadline, "the second run did not start");
        assert!(child.try_wait().unwrap().is_none(), "the plan ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "an interrupted plan exits 130");
    assert_eq!(
        statuses(&out),
        pairs(&[
            ("first", "complete"),
            ("second", "interrupted"),
            ("third", "not run")
        ])
    );
    assert_eq!(load(&out.join("second.json"))["status"], "interrupted");
    let first_id = load(&out.join("first.json"))["run_id"].clone();

    let resumed = iobm()
        .args(["run", "--resume", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(
        stdout.contains("== 1/3 first: complete before, kept"),
        "{stdout}"
    );
    assert_eq!(
        statuses(&out),
        pairs(&[
            ("first", "resumed"),
            ("second", "complete"),
            ("third", "complete")
        ])
    );
    assert_eq!(
        load(&out.join("first.json"))["run_id"],
        first_id,
        "the first was not run again"
    );
    assert_eq!(load(&out.join("second.json"))["status"], "complete");
    // The two streams are compared; the write, alone of its kind, is not.
    assert!(stdout.contains("== stream: 2 runs compared"), "{stdout}");
    assert!(!stdout.contains("== write:"), "{stdout}");

    // The third run taken out of the plan: its result stays, is said to be stale and is not
    // compared.
    let text = std::fs::read_to_string(&plan).unwrap();
    let cut = text
        .find("[[run]]\ncommand = \"stream\"\nlabel = \"third\"")
        .unwrap();
    write(&plan, &text[..cut]);
    let again = iobm()
        .args(["run", "--resume", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr),
    );
    assert!(again.status.success(), "{stdout}{stderr}");
    let third = out.join("third.json");
    assert!(
        stderr.contains(&format!(
            "iobm: note: {}: the result of run 'third' of an earlier plan, not in this one (left as it is, not compared)",
            third.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("'first'"), "{stderr}");
    assert_eq!(load(&third)["status"], "complete");
    assert!(!stdout.contains("== stream: 2 runs compared"), "{stdout}");
    let third_id = load(&third)["run_id"].clone();
    let stale = &load(&out.join("plan.json"))["stale"];
    assert_eq!(stale[0]["label"], "third", "{stale}");
    assert_eq!(stale[0]["result"], "third.json", "{stale}");

    // Named again on every later run while the file is there.
    let again = resume(&plan, &out);
    assert!(
        again.1.contains("run 'third' of an earlier plan"),
        "{}",
        again.1
    );
    // Put back as it was: complete, of the same spec and launcher, it is kept.
    write(&plan, &text);
    let (stdout, stderr) = resume(&plan, &out);
    assert!(
        stdout.contains("== 3/3 third: complete before, kept"),
        "{stdout}{stderr}"
    );
    assert!(!stderr.contains("'third'"), "{stderr}");
    assert_eq!(
        load(&third)["run_id"],
        third_id,
        "the third was not run again"
    );
    assert_eq!(
        statuses(&out),
        pairs(&[
            ("first", "resumed"),
            ("second", "resumed"),
            ("third", "resumed")
        ])
    );
    assert_eq!(load(&out.join("plan.json"))["stale"], serde_json::json!([]));
    assert!(stdout.contains("== stream: 2 runs compared"), "{stdout}");
}

/// `iobm run --resume PLAN --out OUT`, successful: its stdout and stderr.
fn resume(plan: &Path, out: &Path) -> (String, String) {
    resume_in(plan, out, Path::new("."))
}

fn resume_in(plan: &Path, out: &Path, cwd: &Path) -> (String, String) {
    let ran = iobm()
        .current_dir(cwd)
        .args(["run", "--resume", "--out"])
        .arg(out)
        .arg(plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ran.stdout).into_owned(),
        String::from_utf8_lossy(&ran.stderr).into_owned(),
    );
    assert!(ran.status.success(), "{stdout}{stderr}");
    (stdout, stderr)
}

#[test]
fn a_resume_keeps_results_wherever_out_is_and_however_it_is_written() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let entry = |launch: &str, size: &str| {
        format!(
            "[[run]]\ncommand = \"stream\"\nlabel = \"s\"\ndir = {:?}\nsize = {size:?}\n\
             launch = [\"env\", {launch:?}]\n",
            target.path().display().to_string()
        )
    };
    write(&plan, &entry("A=1", "4MiB"));
    let first = iobm()
        .current_dir(work.path())
        .args(["run", "--out", "res2", "p.toml"])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let result = work.path().join("res2/s.json");
    let id = load(&result)["run_id"].clone();
    let kept = "== 1/1 s: complete before, kept";
    // --out written otherwise: relative with ./, absolute.
    let absolute = work.path().join("res2");
    for out in [Path::new("./res2"), absolute.as_path()] {
        let (stdout, stderr) = resume_in(Path::new("p.toml"), out, work.path());
        assert!(
            stdout.contains(kept),
            "--out {}: {stdout}{stderr}",
            out.display()
        );
        assert_eq!(load(&result)["run_id"], id, "--out {}", out.display());
    }
    // The directory copied elsewhere resumes too.
    let copied = work.path().join("elsewhere/copied");
    std::fs::create_dir_all(&copied).unwrap();
    for file in entries(&absolute) {
        std::fs::copy(absolute.join(&file), copied.join(&file)).unwrap();
    }
    let (stdout, stderr) = resume(&plan, &copied);
    assert!(stdout.contains(kept), "{stdout}{stderr}");
    assert_eq!(load(&copied.join("s.json"))["run_id"], id);
    // Another launcher, then another spec: run again.
    for (launch, size) in [("A=2", "4MiB"), ("A=2", "8MiB")] {
        write(&plan, &entry(launch, size));
        let before = load(&copied.join("s.json"))["run_id"].clone();
        let (stdout, stderr) = resume(&plan, &copied);
        assert!(!stdout.contains(kept), "{launch} {size}: {stdout}{stderr}");
        assert!(stdout.contains("== 1/1 s\n"), "{stdout}");
        let after = load(&copied.join("s.json"));
        assert_ne!(after["run_id"], before, "{launch} {size}: not run again");
        assert_eq!(after["status"], "complete");
    }
    assert_eq!(statuses(&copied), pairs(&[("s", "complete")]));
}

#[test]
fn plan_json_names_no_result_for_a_run_that_wrote_none() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    // A launcher that lets the check through and fails the run before iobm starts.
    write(
        &plan,
        &format!(
            "[defaults]\ndir = {:?}\nsize = \"4MiB\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"ok\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"broken\"\n\
             launch = [\"sh\", \"-c\", 'case \"$*\" in *--check-only*) exec \"$@\";; esac; exit 5', \"sh\"]\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"after\"\n",
            target.path().display().to_string()
        ),
    );
    let ran = iobm()
        .args(["run", "--fail-fast", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(ran.status.code(), Some(1), "{stdout}");
    let runs = load(&out.join("plan.json"))["runs"].clone();
    let got: Vec<_> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].clone(),
                r["status"].clone(),
                r["result"].clone(),
                r["exit_code"].clone(),
            )
        })
        .collect();
    use serde_json::json as v;
    let null = serde_json::Value::Null;
    assert_eq!(
        got,
        [
            (v!("ok"), v!("complete"), v!("ok.json"), v!(0)),
            (v!("broken"), v!("failed"), null.clone(), v!(5)),
            (v!("after"), v!("not run"), null.clone(), null.clone()),
        ],
        "{runs}"
    );
    let mut files = entries(&out);
    files.sort();
    assert_eq!(files, ["ok.json", "plan.json"]);
    assert!(stdout.contains("broken  failed (exit 5)  -"), "{stdout}");
}
