//! The flags of `iobm run` (a plan file) and `iobm rerun` (a saved result's spec).

use super::FormatArg;
use clap::Args;
use std::path::PathBuf;

pub(super) const RUN_EXAMPLES: &str = "\
Examples:
  iobm run fs.toml --dry-run                  the runs the plan expands to, nothing run
  iobm run fs.toml --out fs-results           run them, a result per run, compared at the end
  iobm run fs.toml --out fs-results --resume  after a kill: only the runs not complete yet
  iobm stream --jobs 4 /mnt/x --print-spec >> fs.toml   a command line as a plan entry

A plan file (TOML):
  [defaults]                 # options of every run (a run's own win)
  size = \"1GiB\"
  [matrix]                   # every run once per combination of these values
  dir = [\"/mnt/nfs\", \"/mnt/lustre\", \"/mnt/gluster\"]
  [[run]]
  command = \"bonnie\"          # write, read, stream, bonnie, s3, quick or merge
  label = \"bonnie {dir}\"      # optional; {KEY} is that option's value; default: the
                              # command (an s3 run's with its operation, s3-put) and the
                              # matrix values
  chunk = \"64KiB\"             # any option of the command, by its long name
  [run.matrix]               # a matrix of this run only
  fsync = [\"never\", \"each\"]
  [[run]]
  command = \"stream\"
  launch = \"mpirun -np 4\"     # started under a launcher (MPI ranks)
  jobs = 8";

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file: [[run]] tables of a command and its options, [defaults] and [matrix]
    #[arg(value_name = "PLAN.toml")]
    pub plan: PathBuf,
    /// Directory for the results (one RESULT.json per run, named by its label) and plan.json
    /// [default: PLAN-results in the current directory]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the runs the plan expands to and their command lines; run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Skip the runs whose complete result of the same spec is in --out already
    #[arg(long)]
    pub resume: bool,
    /// Stop at the first run that fails (by default a failed run is recorded and the plan
    /// goes on)
    #[arg(long)]
    pub fail_fast: bool,
    /// Format of the comparisons printed at the end (csv: the CSV alone on stdout, all else the
    /// plan and its runs print on stderr)
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// Also save each comparison as an HTML page in --out (compare-KIND.html)
    #[arg(long)]
    pub html: bool,
}

#[derive(Debug, Args)]
pub struct RerunArgs {
    /// A result saved with --json, whose spec is run again
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,
    /// Change one option of the spec (its long name); a flag takes true or false, an empty
    /// value takes the option out; repeat for more
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Where the new run's result and views go, and its label (which a set may also give)
    #[command(flatten)]
    pub output: super::OutputArgs,
}
