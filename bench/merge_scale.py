#!/usr/bin/env python3
"""The rank merge at cluster scale: rank 0's cost of gathering a phase of 64 to 4096 workers
(16 per rank) that ran for an hour at 1 s intervals, and of 1024 workers for 15 to 60 minutes.

Each rank's part is made and serialised as that rank would send it; the time is rank 0's
parsing and folding of every part (crates/iobm-run/examples/merge_scale.rs), the memory its
process's peak resident set, and the sizes those of the phase's document and side file.

Usage: bench/merge_scale.py
"""

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
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "iobm-run",
                    "--example", "merge_scale"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    example = os.path.join(target, "release", "examples", "merge_scale")
    print("| workers | intervals | merge s | ms per worker | peak MiB | document MB | side file MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    cases = [(r, 3600) for r in (4, 16, 64, 256)] + [(64, i) for i in (900, 1800)]
    for ranks, intervals in cases:
        m = run(example, ranks, intervals)
        print(f"| {m['workers']} | {intervals} | {m['merge_s']:.2f} "
              f"| {m['merge_s'] / m['workers'] * 1e3:.2f} | {m['peak_rss_mib']:.0f} "
              f"| {m['document_mb']:.1f} | {m['side_file_mb']:.1f} |", flush=True)
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
