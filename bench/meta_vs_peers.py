#!/usr/bin/env python3
"""iobm meta against fio's file engines and bonnie++ -n: file create, stat and delete, side by side.

For each file system (tmpfs: a fresh one mounted when root, else /dev/shm; and the disk holding
--disk-dir) and each worker count (1 and 2), each round runs, one after the other on the same
directory and the same number of empty files per worker (--files x 1024 on tmpfs,
--disk-files x 1024 on the disk):

- `iobm meta -j W -n N --phases file-create,file-stat,file-remove` (one process, one shared
  directory; with 2 workers both work in it, mdtest's default). Rates: each phase's makespan
  aggregate (operations / (last end - first start)) from its --json result.
- fio (one process per phase, the three engines in turn on the same files):
  `--ioengine=filecreate` (open(O_CREAT) and close of each file, timed), then `filestat` (stat of
  each), then `filedelete` (unlink of each), with --numjobs=W --nrfiles=N --openfiles=1
  --file_service_type=sequential (fio's default round-robin service scans its file list on every
  pick: about a millisecond per file at 20,000 files, which measures only that), and
  --filesize=1 --bs=1, so each file is one fake I/O and fio's iops are files per second. Its
  rate here: files of all jobs / the longest job's runtime (fio's group definition). fio's
  filecreate makes empty files, as the others do; --create_on_open=1 on all three keeps fio
  from laying out (writing) the files before filestat and filedelete, so they stat and remove
  those empty files. All three share one directory.
- bonnie++ -s 0 -n K (1 worker only: bonnie++ is one process; its concurrent mode, -p/-y, runs
  separate processes in separate directories): its sequential create, stat and delete rates
  from its CSV (-q). bonnie++ also runs its random tests in the same process; they are not
  reported. It prints +++++ for a test under 500 ms: such rounds count as missing (n/a).

CPU per operation is each tool's own process CPU (user + system, getrusage RUSAGE_SELF of the
process doing the operations) over its timed phase only, as each tool reports it, divided by the
phase's operations: iobm's phase cpu.user_s + cpu.system_s; fio's usr_cpu + sys_cpu (percent of
each job's runtime, itself a getrusage delta over the job) x job_runtime, summed over jobs;
bonnie++'s %CPU of the test (a getrusage delta over the test) x the test's time (files / rate).
Set-up and each tool's start-up and exit are left out for all three alike.

Rates and CPU are medians of --rounds rounds; each ratio is the median of the ratios within a
round (iobm's run against the peer's run beside it). The tools' order rotates by round (with 3
rounds each tool takes each place once), and a sync precedes every tool's run, outside its time.
The exact command lines of the first round are printed.

Usage: bench/meta_vs_peers.py [--disk-dir DIR] [--files 64] [--disk-files 32] [--rounds 3]
                             [--iobm PATH]
Installs fio and bonnie++ from Debian when missing (as root); builds iobm in release mode
unless --iobm names a binary.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import build_iobm, ensure_debian

OPS = ("create", "stat", "delete")
IOBM_PHASE = {"create": "file-create", "stat": "file-stat", "delete": "file-remove"}
FIO_ENGINE = {"create": "filecreate", "stat": "filestat", "delete": "filedelete"}
# (rate, %CPU) fields of bonnie++'s CSV format 1.98 for the sequential create, stat and delete.
BONNIE_FIELD = {"create": 26, "stat": 28, "delete": 30}
COMMANDS = {}  # (file system, workers, tool) -> the command lines of the first round


def run(cmd, key, stdout=subprocess.DEVNULL):
    """Runs cmd to completion (stops on failure); returns its stdout when captured."""
    if key:
        COMMANDS.setdefault(key, []).append(" ".join(cmd))
    proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


def iobm_round(iobm, work, jobs, files, key):
    result = os.path.join(work, "iobm.json")
    run([iobm, "meta", "-j", str(jobs), "-n", str(files),
         "--phases", "file-create,file-stat,file-remove", "--json", result, work], key)
    with open(result) as f:
        phases = {p["name"]: p for p in json.load(f)["phases"]}
    os.remove(result)
    out = {}
    for op in OPS:
        phase = phases[IOBM_PHASE[op]]
        agg = next(a for a in phase["aggregates"] if a["kind"] == "makespan")
        cpu = phase["cpu"]["user_s"] + phase["cpu"]["system_s"]
        out[op] = (agg["ops_per_s"], cpu / agg["ops"] * 1e6)
    return out


def fio_round(work, jobs, files, key):
    fio_dir = os.path.join(work, "fio")
    os.mkdir(fio_dir)
    result = os.path.join(work, "fio.json")
    out = {}
    for op in OPS:
        cmd = ["fio", "--name=meta", f"--ioengine={FIO_ENGINE[op]}", f"--directory={fio_dir}",
               f"--numjobs={jobs}", f"--nrfiles={files}", "--filesize=1", "--bs=1",
               "--openfiles=1", "--file_service_type=sequential", "--fallocate=none",
               "--create_on_open=1", "--unlink=0", "--output-format=json", f"--output={result}"]
        run(cmd, key)
        with open(result) as f:
            fjobs = json.load(f)["jobs"]
        done = sum(j["read"]["total_ios"] for j in fjobs)
        if done != jobs * files:
            sys.exit(f"fio {op}: {done} files, not {jobs * files}")
        runtime = max(j["read"]["runtime"] for j in fjobs) / 1000
        cpu = sum((j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000 for j in fjobs)
        out[op] = (done / runtime, cpu / done * 1e6)
    if os.listdir(fio_dir):
        sys.exit(f"fio left files in {fio_dir}")
    os.rmdir(fio_dir)
    os.remove(result)
    return out


def bonnie_round(work, k, files, key):
    line = run(["bonnie++", "-d", work, "-s", "0", "-n", str(k), "-u", "root", "-q",
                "-m", "bonnie++"], key, stdout=subprocess.PIPE).strip().splitlines()[-1]
    fields = line.split(",")
    out = {}
    for op in OPS:
        i = BONNIE_FIELD[op]
        try:
            rate, pct = float(fields[i]), float(fields[i + 1])
        except ValueError:  # +++++: under 500 ms, bonnie++ does not time it
            out[op] = (None, None)
            continue
        out[op] = (rate, pct / 100 / rate * 1e6)  # CPU s of the test (pct x files/rate) / files
    return out


def one_round(iobm, base, jobs, k, r, label):
    """Each tool once on fresh directories; returns {(tool, op): (files/s, CPU µs/op)}."""
    files = k * 1024
    work = tempfile.mkdtemp(prefix="round-", dir=base)
    tools = [("iobm", lambda key: iobm_round(iobm, work, jobs, files, key)),
             ("fio", lambda key: fio_round(work, jobs, files, key))]
    if jobs == 1:
        tools.append(("bonnie++", lambda key: bonnie_round(work, k, files, key)))
    out = {}
    for name, go in tools[r % len(tools):] + tools[:r % len(tools)]:
        # The previous tool's removals flushed first: on ext4 a create right after another
        # run's mass unlink ran about half as fast here as one after a sync, a cost to
        # whoever comes next.
        subprocess.run(["sync"], check=True)
        started = time.time()
        res = go((label, jobs, name) if r == 0 else None)
        print(f"{label}, {jobs} worker(s), round {r + 1}: {name} {time.time() - started:.1f} s",
              file=sys.stderr)
        out.update({(name, op): v for op, v in res.items()})
    shutil.rmtree(work)
    return out


def tmpfs_dir():
    """A fresh tmpfs when root and mount works, else /dev/shm; returns (dir, unmount?)."""
    if os.geteuid() == 0:
        d = tempfile.mkdtemp(prefix="iobm-meta-tmpfs-")
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2g", "tmpfs", d],
                          stderr=subprocess.DEVNULL).returncode == 0:
            return d, True
        os.rmdir(d)
    return "/dev/shm", False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disk-dir", default=os.path.expanduser("~/.cache"),
                    help="a directory on the disk (a temporary directory is made inside it)")
    ap.add_argument("--files", type=int, default=64,
                    help="files per worker, in units of 1024 (as bonnie++ -n counts them)")
    ap.add_argument("--disk-files", type=int, default=32,
                    help="the same on the disk (fewer: on this VM's shared disk a create of"
                         " 128x1024 files took minutes)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm", help="an iobm binary to measure instead of building this checkout")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: bonnie++ runs with -u root")
    ensure_debian("fio", "fio")
    ensure_debian("bonnie++", "bonnie++")
    iobm = args.iobm or build_iobm()

    rows = []
    shm, mounted = tmpfs_dir()
    try:
        for label, where, k in [("tmpfs", shm, args.files),
                                ("disk", args.disk_dir, args.disk_files)]:
            fs = subprocess.run(["stat", "-f", "-c", "%T", where], capture_output=True,
                                text=True).stdout.strip()
            label = f"{label} ({fs})"
            base = tempfile.mkdtemp(prefix="iobm-meta-vs-peers-", dir=where)
            try:
                for jobs in (1, 2):
                    runs = [one_round(iobm, base, jobs, k, r, label)
                            for r in range(args.rounds)]
                    for op in OPS:
                        rows.append((label, k, jobs, op, summary(runs, op)))
            finally:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        if mounted:
            subprocess.run(["umount", shm])
            os.rmdir(shm)

    fio_v = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    bonnie_v = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "bonnie++"],
                              capture_output=True, text=True).stdout
    print(f"iobm meta vs {fio_v} and bonnie++ {bonnie_v}: empty files per worker (x1024), "
          f"median of {args.rounds} rounds (n/a: bonnie++ printed +++++ in every round,"
          " or has no 2-worker run)\n")
    print("| file system | files/worker | workers | op | iobm files/s | fio files/s | bonnie++ files/s "
          "| iobm/fio | iobm/bonnie++ | iobm CPU µs/op | fio CPU µs/op | bonnie++ CPU µs/op "
          "| iobm/fio CPU | iobm/bonnie++ CPU |")
    print("|---|---:|---:|---|" + "---:|" * 10)
    for label, k, jobs, op, s in rows:
        cells = [fmt(s["iobm"][0], 0), fmt(s["fio"][0], 0), fmt(s["bonnie++"][0], 0),
                 fmt(s["fio_ratio"][0], 2), fmt(s["bonnie_ratio"][0], 2),
                 fmt(s["iobm"][1], 2), fmt(s["fio"][1], 2), fmt(s["bonnie++"][1], 2),
                 fmt(s["fio_ratio"][1], 2), fmt(s["bonnie_ratio"][1], 2)]
        print(f"| {label} | {k}x1024 | {jobs} | {op} | " + " | ".join(cells) + " |")
    print("\nThe commands of the first round ($ROUND: a fresh temporary directory each):\n")
    for (label, jobs, tool), cmds in COMMANDS.items():
        for c in cmds:
            c = re.sub(r"/\S*?/round-[^/\s]+", "$ROUND", c)
            print(f"- {label}, {jobs} worker(s), {tool}: `{c}`")


def summary(runs, op):
    """Medians of each tool's (rate, CPU) and of the rounds' iobm/peer ratios."""
    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    out = {}
    for tool in ("iobm", "fio", "bonnie++"):
        vals = [x.get((tool, op), (None, None)) for x in runs]
        out[tool] = tuple(med(v[i] for v in vals) for i in (0, 1))
    for peer, key in (("fio", "fio_ratio"), ("bonnie++", "bonnie_ratio")):
        ratios = []
        for i in (0, 1):
            pairs = [(x[("iobm", op)][i], x.get((peer, op), (None, None))[i]) for x in runs]
            ratios.append(med(a / b if a is not None and b else None for a, b in pairs))
        out[key] = tuple(ratios)
    return out


def fmt(v, digits):
    return "n/a" if v is None else f"{v:.{digits}f}"


if __name__ == "__main__":
    main()
