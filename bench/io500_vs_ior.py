#!/usr/bin/env python3
"""iobm io500 against the IO500 reference (io500 with hpc/ior's ior and mdtest, and pfind), phase
by phase on the same parameters.

The reference is built from its public sources, given as directories (IO500/io500, hpc/ior at
the commit io500's prepare.sh names, VI4IO/pfind): ior and mdtest by autotools, pfind by its
compile.sh, io500 by its Makefile, all with Open MPI's mpicc, into --build-dir (reused when
already built). Nothing is downloaded.

Each round runs, one after the other in a fresh directory under --dir, with --ranks MPI ranks of
one worker each:

- io500: `mpirun -np R io500 CONFIG`, its config setting the sizes below, the stonewall
  (`[debug] stonewall-time`), no cache drop, its data directory under --dir. Its figures are
  the `[RESULT]` lines it prints (GiB/s for the ior phases, kIOPS for the others).
- iobm: `mpirun -np R iobm io500 -j 1` with the same sizes (`--easy-size` = blockSize,
  `--easy-transfer` = transferSize, `--segments` = segmentCount, `--easy-items` and
  `--hard-items` = the two mdtest n) and `--stonewall`. Its figures are the result's
  `io500.phases[].value`, in the same units.

The sizes are small enough that every write phase ends by its size, before the stonewall, so
both tools do the same work and their rates compare (neither run is a valid IO500 result: the
rules want 300 s phases). The tools' order alternates by round; the ratio of a phase is the
median over rounds of iobm's figure over the reference's in the same round. The command lines
of the first round are printed.

Usage: bench/io500_vs_ior.py --io500-src DIR --ior-src DIR --pfind-src DIR [--dir DIR]
         [--build-dir DIR] [--ranks 1,2] [--rounds 3] [--iobm PATH]
The fetch tool's snapshots are bare git directories: `git --git-dir=SNAPSHOT archive HEAD | tar
-x -C DIR` makes a source directory of each.
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

from common import build_iobm

# The IO500 phases in the rules' order, as both tools name them.
PHASES = ["ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find",
          "ior-easy-read", "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat",
          "mdtest-easy-delete", "mdtest-hard-read", "mdtest-hard-delete"]
RESULT = re.compile(r"^\[RESULT\]\s+(\S+)\s+([0-9.]+) (GiB/s|kIOPS)")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,tcp"]
COMMANDS = {}


def sh(cmd, cwd, log):
    """Runs a build step, its output appended to `log`; stops on failure."""
    with open(log, "a") as out:
        if subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode:
            sys.exit(f"build failed: {' '.join(cmd)} in {cwd} (see {log})")


def build_reference(args):
    """Builds ior, mdtest, pfind and io500 from the given sources; returns io500's path."""
    build = os.path.abspath(args.build_dir)
    io500 = os.path.join(build, "io500", "io500")
    if os.path.exists(io500):
        return io500
    os.makedirs(build, exist_ok=True)
    log = os.path.join(build, "build.log")
    for name, src in [("ior", args.ior_src), ("pfind", args.pfind_src), ("io500", args.io500_src)]:
        shutil.rmtree(os.path.join(build, name), ignore_errors=True)
        shutil.copytree(src, os.path.join(build, name), symlinks=True)
    ior = os.path.join(build, "ior")
    sh(["./bootstrap"], ior, log)
    sh(["./configure", f"--prefix={build}/inst"], ior, log)
    sh(["make", f"-j{os.cpu_count()}", "install"], ior, log)
    sh(["./compile.sh"], os.path.join(build, "pfind"), log)
    top = os.path.join(build, "io500")
    os.makedirs(os.path.join(top, "build"), exist_ok=True)
    for name in ("ior", "pfind"):
        link = os.path.join(top, "build", name)
        if not os.path.islink(link):
            os.symlink(os.path.join(build, name), link)
    sh(["make", f"-j{os.cpu_count()}"], top, log)
    return io500


def run(cmd, key):
    """Runs cmd; returns its stdout (stops on failure)."""
    if key:
        COMMANDS.setdefault(key, " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout


def reference_round(io500, work, ranks, args, key):
    config = os.path.join(work, "io500.ini")
    with open(config, "w") as f:
        f.write(f"""[global]
datadir = {work}/data
timestamp-datadir = FALSE
resultdir = {work}/results
timestamp-resultdir = FALSE
drop-caches = FALSE
[debug]
stonewall-time = {args.stonewall}
[ior-easy]
transferSize = {args.easy_transfer_mib}m
blockSize = {args.easy_size_mib}m
[mdtest-easy]
n = {args.easy_items}
[ior-hard]
segmentCount = {args.segments}
[mdtest-hard]
n = {args.hard_items}
[ior-rnd4K-easy-read]
run = FALSE
""")
    out = run(MPIRUN + ["-np", str(ranks), io500, config], key)
    figures = {m[1]: float(m[2]) for m in map(RESULT.match, out.splitlines()) if m}
    missing = [p for p in PHASES if p not in figures]
    if missing:
        sys.exit(f"io500 printed no figure for {missing}:\n{out}")
    return figures


def iobm_round(iobm, work, ranks, args, key):
    result = os.path.join(work, "iobm.json")
    run(MPIRUN + ["-np", str(ranks), iobm, "io500", "-j", "1",
                  "--easy-size", f"{args.easy_size_mib}MiB",
                  "--easy-transfer", f"{args.easy_transfer_mib}MiB",
                  "--segments", str(args.segments), "--easy-items", str(args.easy_items),
                  "--hard-items", str(args.hard_items), "--stonewall", f"{args.stonewall}s",
                  "--json", result, work], key)
    with open(result) as f:
        scored = json.load(f)["io500"]["phases"]
    return {p["name"]: p["value"] for p in scored}


def one_round(iobm, io500, ranks, r, args):
    """Both tools once, each in a fresh directory; returns {(tool, phase): figure}."""
    tools = [("io500", lambda w, k: reference_round(io500, w, ranks, args, k)),
             ("iobm", lambda w, k: iobm_round(iobm, w, ranks, args, k))]
    out = {}
    for name, go in tools[r % 2:] + tools[:r % 2]:
        work = tempfile.mkdtemp(prefix=f"{name}-", dir=args.dir)
        subprocess.run(["sync"], check=True)
        started = time.time()
        figures = go(work, (ranks, name) if r == 0 else None)
        print(f"{ranks} rank(s), round {r + 1}: {name} {time.time() - started:.1f} s",
              file=sys.stderr)
        out.update({(name, p): figures.get(p) for p in PHASES})
        shutil.rmtree(work)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for src in ("io500", "ior", "pfind"):
        ap.add_argument(f"--{src}-src", required=True, help=f"the {src} sources (a directory)")
    ap.add_argument("--build-dir", default=os.path.expanduser("~/.cache/iobm-io500-reference"))
    ap.add_argument("--dir", default=os.path.expanduser("~/.cache"),
                    help="where the runs' data go (a fresh directory per run)")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stonewall", type=int, default=300,
                    help="seconds; the sizes below end every write phase well before it")
    ap.add_argument("--easy-size-mib", type=int, default=1024)
    ap.add_argument("--easy-transfer-mib", type=int, default=2)
    ap.add_argument("--segments", type=int, default=10000)
    ap.add_argument("--easy-items", type=int, default=10000)
    ap.add_argument("--hard-items", type=int, default=5000)
    ap.add_argument("--iobm", help="an iobm binary built with --features mpi")
    args = ap.parse_args()
    io500 = build_reference(args)
    iobm = args.iobm or build_iobm(features=["mpi"])
    print("| ranks | phase | io500 (median) | iobm (median) | iobm / io500 (median of rounds) "
          "| range of the ratio |\n|---:|---|---:|---:|---:|---|")
    for ranks in map(int, args.ranks.split(",")):
        rounds = [one_round(iobm, io500, ranks, r, args) for r in range(args.rounds)]
        for phase in PHASES:
            ref = [x[("io500", phase)] for x in rounds]
            own = [x[("iobm", phase)] for x in rounds]
            ratios = [o / f for o, f in zip(own, ref) if o is not None and f]
            unit = "GiB/s" if phase.startswith("ior-") else "kIOPS"
            ratio = f"{statistics.median(ratios):.2f}" if ratios else "n/a"
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "n/a"
            print(f"| {ranks} | {phase} | {statistics.median(ref):.3f} {unit} "
                  f"| {statistics.median([o or 0 for o in own]):.3f} {unit} | {ratio} "
                  f"| {spread} |")
    print("\nThe first round's command lines:")
    for (ranks, tool), cmd in COMMANDS.items():
        print(f"- {ranks} rank(s), {tool}: `{cmd}`")


if __name__ == "__main__":
    main()
