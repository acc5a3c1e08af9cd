#!/usr/bin/env python3
"""The rank merge at cluster scale: rank 0's cost of gathering a phase of 64 to 65,536 workers
(16 per rank) that ran for an hour at 1 s intervals, and of 1024 workers for 15 to 60 minutes.

Each rank's part is made, folded and framed as that rank sends it (its time apart, per rank:
every rank does this for itself at once); the merge time is rank 0's folding in of every part
and its finish (crates/iobm-run/examples/merge_scale.rs), the memory its process's peak
resident set, and the sizes those of the phase's document and side file.

Usage: bench/merge_scale.py [--workers N,N,...] [--no-report]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

from common import ROOT, build_iobm


def run(example, ranks, intervals, save=None):
    out = subprocess.run([example, str(ranks), str(intervals)] + ([save] if save else []),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default="64,256,1024,4096",
                        help="worker counts of the hour-long cases (16 per rank)")
    parser.add_argument("--no-report", action="store_true", help="skip timing iobm report")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "iobm-run",
                    "--example", "merge_scale"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    example = os.path.join(target, "release", "examples", "merge_scale")
    print("| workers | intervals | merge s | ms per worker | rank's fold ms | sent KB per rank "
          "| document write s | rank series interval s | peak MiB | document MB | side file MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    hours = [(int(w) // 16, 3600) for w in args.workers.split(",")]
    for ranks, intervals in hours + [(64, i) for i in (900, 1800)]:
        m = run(example, ranks, intervals)
        print(f"| {m['workers']} | {intervals} | {m['merge_s']:.2f} "
              f"| {m['merge_s'] / m['workers'] * 1e3:.3f} | {m['rank_fold_ms']:.1f} "
              f"| {m['sent_kb_per_rank']:.0f} | {m['document_s']:.2f} "
              f"| {m['rank_interval_s']:g} | {m['peak_rss_mib']:.0f} "
              f"| {m['document_mb']:.1f} | {m['side_file_mb']:.1f} |", flush=True)
    if args.no_report:
        return
    # What reading the largest one back costs: iobm report (the document alone) and with
    # --csv (the side file's per-worker series put back too).
    iobm = build_iobm()
    with tempfile.TemporaryDirectory() as out:
        doc = os.path.join(out, "r.json")
        run(example, 256, 3600, doc)
        size = os.path.getsize(doc) / 1e6
        for extra in ([], ["--csv", os.path.join(out, "r.csv")]):
            started = time.monotonic()
            subprocess.run([iobm, "report", doc] + extra, check=True, stdout=subprocess.DEVNULL)
            took = time.monotonic() - started
            print(f"\niobm report {'--csv ' if extra else ''}of the 4096-worker hour "
                  f"({size:.1f} MB document): {took:.2f} s")


if __name__ == "__main__":
    main()
