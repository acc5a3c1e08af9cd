#!/usr/bin/env python3
"""iobm bonnie against bonnie++ 2.x: the same directory, file size, chunk and file count, in one run.

Runs bonnie++ (Debian package bonnie++) and `iobm bonnie --per-char syscall` (bonnie++ 2.x's
per-char: one system call per byte on 1/64 of the file; both fsync each file at close and seek
with 5 workers, 8192 seeks) on each directory, alternating, --rounds times, and prints both
tables, bonnie++'s CSV fields side by side (medians of the rounds) and iobm/bonnie++, the median
of the rounds' ratios (each round's iobm run over the bonnie++ run before it; rounds where either
printed +++++ are left out).
On tmpfs (/dev/shm) there is no device: the per-char rates there measure each tool's own cost
per byte, and iobm's must not be below bonnie++'s.

Usage: bench/bonnie_vs_bonniepp.py [--dir /dev/shm --dir /work ...] [--size 1G] [--files 16]
                                   [--rounds 5] [--iobm PATH]
Installs bonnie++ from Debian when it is missing (as root); builds iobm in release mode unless
--iobm names a binary.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile

from common import ROOT, build_iobm, ensure_debian

# (CSV field index, test) for the rates of bonnie++'s CSV format 1.98.
FIELDS = [(9, "per-char write K/s"), (11, "block write K/s"), (13, "rewrite K/s"),
          (15, "per-char read K/s"), (17, "block read K/s"), (19, "seeks /s"),
          (26, "seq create /s"), (28, "seq stat /s"), (30, "seq delete /s"),
          (32, "random create /s"), (34, "random stat /s"), (36, "random delete /s")]


def number(field):
    try:
        return float(field)
    except ValueError:
        return None  # bonnie++ prints +++++ for tests too short to time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", action="append", help="directories to test (default: /dev/shm and the checkout's file system)")
    ap.add_argument("--size", default="1G", help="file size, as bonnie++ -s takes it (M or G)")
    ap.add_argument("--files", default="16", help="files in units of 1024 (bonnie++ -n)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iobm", help="an iobm binary to measure instead of building this checkout")
    args = ap.parse_args()
    dirs = args.dir or ["/dev/shm", ROOT]
    ensure_debian("bonnie++", "bonnie++")
    iobm = args.iobm or build_iobm()
    size_mib = int(args.size[:-1]) * (1024 if args.size[-1].upper() == "G" else 1)
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "bonnie++"],
                             capture_output=True, text=True).stdout
    for where in dirs:
        base = tempfile.mkdtemp(prefix="iobm-vs-bonnie-", dir=where)
        lines = {"bonnie++": [], "iobm": []}
        try:
            for round_ in range(args.rounds):
                # -r tells bonnie++ the RAM size, so it accepts a file smaller than 2x RAM.
                out = subprocess.run(
                    ["bonnie++", "-d", base, "-s", f"{size_mib}M:8k", "-r", str(size_mib // 2),
                     "-n", args.files, "-u", "root", "-q", "-m", "bonnie++"],
                    capture_output=True, text=True, check=True).stdout
                lines["bonnie++"].append(out.strip().splitlines()[-1])
                # --bonnie-csv appends: a fresh file each round, so each round's line is its own.
                csv = os.path.join(base, f"iobm-{round_}.csv")
                subprocess.run(
                    [iobm, "bonnie", "--size", f"{size_mib}MiB", "--chunk", "8KiB",
                     "--per-char", "syscall", "--keep-cache", "--files", args.files,
                     "--label", "iobm", "--bonnie-csv", csv, base],
                    check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                with open(csv) as f:
                    rows = f.read().strip().splitlines()
                assert len(rows) == 1, f"{csv}: {len(rows)} lines"
                lines["iobm"].append(rows[0])
                os.remove(csv)
        finally:
            shutil.rmtree(base, ignore_errors=True)

        fs = subprocess.run(["stat", "-f", "-c", "%T", where], capture_output=True, text=True).stdout.strip()
        print(f"\n## {where} ({fs}): {args.size} file, 8 KiB chunks, {args.files}x1024 files, "
              f"median of {args.rounds} rounds; bonnie++ {version} vs iobm --per-char syscall\n")
        table = subprocess.run(["bon_csv2txt"], input="\n".join(lines["bonnie++"][:1] + lines["iobm"][:1]) + "\n",
                               capture_output=True, text=True).stdout
        print("bonnie++'s own table of the first round:\n")
        print("```\n" + table.rstrip() + "\n```\n")
        print(f"the median of each tool's {args.rounds} rounds:\n")
        print("| test | bonnie++ | bonnie++ %CPU | iobm | iobm %CPU | iobm/bonnie++ (rounds) |")
        print("|---|---:|---:|---:|---:|---:|")
        for index, test in FIELDS:
            med = {}
            for tool, rows in lines.items():
                values = [number(r.split(",")[index]) for r in rows]
                cpus = [number(r.split(",")[index + 1]) for r in rows]
                values = [v for v in values if v is not None]
                cpus = [c for c in cpus if c is not None]
                med[tool] = (statistics.median(values) if values else None,
                             statistics.median(cpus) if cpus else None)
            (b, bc), (i, ic) = med["bonnie++"], med["iobm"]
            show = lambda v: "+++++" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}"
            pairs = [(number(x.split(",")[index]), number(y.split(",")[index]))
                     for x, y in zip(lines["bonnie++"], lines["iobm"])]
            ratios = [y / x for x, y in pairs if x and y]
            ratio = f"{statistics.median(ratios):.2f} ({len(ratios)})" if ratios else "n/a"
            print(f"| {test} | {show(b)} | {show(bc)} | {show(i)} | {show(ic)} | {ratio} |")


if __name__ == "__main__":
    main()
