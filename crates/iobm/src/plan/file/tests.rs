//! Plan files read and expanded, and each error's place in the file.

use super::*;

fn parse(text: &str) -> Result<Plan, String> {
    Plan::parse("p.toml", text.to_string())
}

#[test]
fn a_matrix_expands_into_every_combination_labelled_by_its_values() {
    let plan = parse(
        "[defaults]\nsize = \"8MiB\"\n\n[matrix]\ndir = [\"/a\", \"/b\"]\n\n\
         [[run]]\ncommand = \"bonnie\"\nmatrix = { chunk = [\"8KiB\", \"64KiB\"] }\n\n\
         [[run]]\ncommand = \"stream\"\nsize = \"16MiB\"\njobs = 2\n",
    )
    .unwrap();
    let labels: Vec<&str> = plan.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "bonnie dir=/a chunk=8KiB",
            "bonnie dir=/a chunk=64KiB",
            "bonnie dir=/b chunk=8KiB",
            "bonnie dir=/b chunk=64KiB",
            "stream dir=/a",
            "stream dir=/b"
        ]
    );
    let first = &plan.runs[0].spec;
    assert_eq!(first.options["size"], SpecValue::Text("8MiB".into()));
    assert_eq!(first.options["chunk"], SpecValue::Text("8KiB".into()));
    let stream = &plan.runs[5].spec;
    assert_eq!(stream.command, "stream");
    assert_eq!(
        stream.options["size"],
        SpecValue::Text("16MiB".into()),
        "the run's own wins"
    );
    assert_eq!(stream.options["jobs"], SpecValue::Text("2".into()));
    assert_eq!(stream.options["dir"], SpecValue::Text("/b".into()));
    assert_eq!(
        stream.options["label"],
        SpecValue::Text("stream dir=/b".into())
    );
}

#[test]
fn a_label_template_takes_the_options_values() {
    let plan = parse(
        "[[run]]\ncommand = \"stream\"\nlabel = \"{dir}-j{jobs}\"\ndir = \"/x\"\n\
         [run.matrix]\njobs = [1, 4]\n",
    )
    .unwrap();
    let labels: Vec<&str> = plan.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["/x-j1", "/x-j4"]);
    assert_eq!(result_name(labels[0]), "x-j1.json");
    assert_eq!(
        result_name("bonnie dir=/mnt/a b"),
        "bonnie_dir-_mnt_a_b.json"
    );
}

#[test]
fn errors_name_the_line_column_and_key() {
    let err = |text: &str| parse(text).unwrap_err();
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\ndir = [1, {a = 1}]\n"),
        "p.toml:3:7: dir: an array of strings or numbers"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"serve\"\n"),
        format!(
            "p.toml:2:11: command: \"serve\" is not a command a plan runs ({})",
            spec::COMMANDS.join(", ")
        )
    );
    assert!(spec::COMMANDS.starts_with(&["write", "read", "stream", "bonnie"]));
    assert_eq!(
        err("[[run]]\ndir = \"/x\"\n"),
        "p.toml:1:1: run 1: no command key"
    );
    assert!(
        err("[[run]\n").starts_with("p.toml:1:"),
        "{}",
        err("[[run]\n")
    );
    assert!(
        err("[setup]\nx = 1\n[[run]]\ncommand = \"stream\"\n")
            .starts_with("p.toml:1:2: unknown field `setup`"),
        "{}",
        err("[setup]\nx = 1\n[[run]]\ncommand = \"stream\"\n")
    );
    assert_eq!(
        err("[matrix]\njobs = []\n[[run]]\ncommand = \"stream\"\n"),
        "p.toml:2:8: matrix.jobs: a non-empty array of the values to run"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\nlabel = \"{nope}\"\n"),
        "p.toml:3:1: label: {nope}: this run gives no nope"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\nlabel = \"same\"\n[[run]]\ncommand = \"write\"\nlabel = \"same\"\n"),
        "p.toml:6:1: label: \"same\" and \"same\" would both be saved as same.json: \
         give the runs labels of their own"
    );
    assert_eq!(err(""), "p.toml: no [[run]] tables: nothing to run");
}

#[test]
fn what_a_plan_cannot_mean_is_refused() {
    let err = |text: &str| parse(text).unwrap_err();
    assert_eq!(
        err("[matrix]\nsize = [\"1M\", \"2M\"]\n[[run]]\ncommand = \"stream\"\nsize = \"4M\"\n"),
        "p.toml:5:1: size: given by the run and by its matrix: keep one (a run's own value would never be used)"
    );
    assert_eq!(
        err("[defaults]\nlaunch = \"mpirun\"\n[[run]]\ncommand = \"stream\"\n"),
        "p.toml:2:1: launch: a key of a [[run]] table, not of [defaults]"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\nlabel = \"a {dir\"\n"),
        "p.toml:3:1: label: \"a {dir\": a { without its }"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\nlabel = \" \"\n"),
        "p.toml:3:1: label: empty"
    );
    let huge = format!(
        "[matrix]\njobs = [{}]\nblock = [{}]\n[[run]]\ncommand = \"stream\"\n",
        (1..=200)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
        (1..=60)
            .map(|i| format!("\"{i}K\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(
        err(&huge),
        "p.toml:4:1: run 1: its matrix makes 12000 runs, more than 10000"
    );
    assert_eq!(
        err("[[run]]\ncommand = \"stream\"\nlaunch = 4\n"),
        "p.toml:3:10: launch: a command, as \"mpirun -np 4\" or [\"env\", \"A=b c\"]"
    );
}

#[test]
fn labels_take_the_command_and_keep_their_letters() {
    let plan = parse(
        "[[run]]\ncommand = \"stream\"\nlabel = \"{command} 日本語\"\nlaunch = [\"env\", \"A=b c\"]\n",
    )
    .unwrap();
    assert_eq!(plan.runs[0].label, "stream 日本語");
    assert_eq!(result_name(&plan.runs[0].label), "stream_日本語.json");
    assert_eq!(plan.runs[0].launch, ["env", "A=b c"]);
}

#[test]
fn an_s3_run_s_default_label_names_its_operation_once() {
    let plan = parse(
        "[[run]]\ncommand = \"s3\"\nop = \"put\"\n\
         [[run]]\ncommand = \"s3\"\nmatrix = { op = [\"get\", \"stat\"] }\n",
    )
    .unwrap();
    let labels: Vec<&str> = plan.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["s3-put", "s3 op=get", "s3 op=stat"]);
}

#[test]
fn an_error_about_a_key_points_at_it() {
    let plan = parse("[[run]]\ncommand = \"stream\"\n  jobs = 4\n").unwrap();
    let run = &plan.runs[0];
    assert_eq!(plan.error_at(run, Some("jobs"), "bad"), "p.toml:3:3: bad");
    assert_eq!(plan.error_at(run, Some("other"), "bad"), "p.toml:1:1: bad");
}
