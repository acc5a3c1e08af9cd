//! What a plan prints and writes at its end: `--format csv` alone on stdout, `bonnie.csv` of
//! its bonnie runs, and the default labels of S3 runs of several operations.

use super::{pairs, statuses, write};
use crate::common::{iobm, load};
use std::time::Duration;

#[test]
fn format_csv_puts_the_comparison_alone_on_stdout() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    write(
        &plan,
        &format!(
            "[defaults]\ndir = {:?}\nsize = \"4MiB\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"a\"\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"b\"\nblock = \"64KiB\"\n",
            target.path().display().to_string()
        ),
    );
    let ran = iobm()
        .args(["run", "--format", "csv", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr),
    );
    assert!(ran.status.success(), "{stdout}{stderr}");
    // What `iobm compare --format csv` makes of the two results, and nothing else.
    let compared = iobm()
        .args(["compare", "--format", "csv"])
        .arg(out.join("a.json"))
        .arg(out.join("b.json"))
        .output()
        .unwrap();
    assert!(compared.status.success());
    assert!(!compared.stdout.is_empty());
    assert_eq!(stdout, String::from_utf8_lossy(&compared.stdout));
    // The rest on stderr: the runs' lines, their reports and the plan's table.
    for said in [
        "== 1/2 a\n",
        "== 2/2 b\n",
        "\nplan:\n",
        "== stream: 2 runs compared",
    ] {
        assert!(stderr.contains(said), "{said:?}: {stderr}");
    }
    assert!(stderr.matches("MiB/s").count() >= 2, "{stderr}");
}

#[test]
fn a_plan_of_bonnie_runs_writes_their_bonnie_csv() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    write(
        &plan,
        &format!(
            "[defaults]\ndir = {:?}\nsize = \"4MiB\"\n\n\
             [[run]]\ncommand = \"bonnie\"\nlabel = \"bonnie {{chunk}}\"\nfiles = \"1:4096:0:2\"\n\
             [run.matrix]\nchunk = [\"16KiB\", \"8KiB\"]\n\n\
             [[run]]\ncommand = \"stream\"\nlabel = \"not bonnie\"\n",
            target.path().display().to_string()
        ),
    );
    let run = |resume: bool| {
        let ran = iobm()
            .args(["run", "--out"])
            .arg(&out)
            .arg(&plan)
            .args(resume.then_some("--resume"))
            .timeout(Duration::from_secs(600))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
        assert!(ran.status.success(), "{stderr}");
        stderr
    };
    let stderr = run(false);
    let csv = out.join("bonnie.csv");
    assert!(
        stderr.contains(&format!(
            "iobm: bonnie++ CSV of 2 runs saved to {}",
            csv.display()
        )),
        "{stderr}"
    );
    // A line per bonnie result, in plan order, as --bonnie-csv writes it.
    let expected: Vec<String> = ["bonnie_16KiB.json", "bonnie_8KiB.json"]
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            let run = iobm_results::RunResult::from_json(&text).unwrap();
            iobm_report::bonnie::csv_line(&run).expect(file)
        })
        .collect();
    let written = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(written.lines().collect::<Vec<_>>(), expected);
    assert!(written.lines().all(|l| l.starts_with("1.98,")), "{written}");
    assert!(
        expected[0].contains(",bonnie 16KiB,"),
        "named by label: {}",
        expected[0]
    );
    // Resumed, every run kept: the same file, not a line more.
    run(true);
    assert_eq!(
        statuses(&out),
        pairs(&[
            ("bonnie 16KiB", "resumed"),
            ("bonnie 8KiB", "resumed"),
            ("not bonnie", "resumed")
        ])
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), written);
}

#[test]
fn s3_runs_of_two_operations_have_labels_of_their_own() {
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let mut text = String::new();
    for op in ["put", "get"] {
        let printed = iobm()
            .args(["s3", op, "--ops", "6", "--obj-size", "4KiB", "--print-spec"])
            .output()
            .unwrap();
        assert!(printed.status.success());
        text.push_str(&String::from_utf8_lossy(&printed.stdout));
    }
    write(&plan, &text);
    let out = work.path().join("out");
    let ran = iobm()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        statuses(&out),
        pairs(&[("s3-put", "complete"), ("s3-get", "complete")])
    );
    for (file, kind) in [("s3-put.json", "s3 put"), ("s3-get.json", "s3 get")] {
        let result = load(&out.join(file));
        assert_eq!(result["kind"], kind, "{file}");
        assert_eq!(result["label"], file.trim_end_matches(".json"));
    }
    assert!(stdout.contains("== s3: 2 runs compared"), "{stdout}");
}
