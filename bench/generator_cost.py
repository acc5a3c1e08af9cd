#!/usr/bin/env python3
"""The data generator's CPU per GiB: two builds of crates/iobm-engine/examples/generator_cost,
run in turn for --rounds rounds (the order reversed every other round), compared case by case.

Each run prints `CASE CPU-S/GIB` per case (this thread's user + system time from getrusage over
the GiB made). Reports, per case, each build's median CPU-s/GiB and the median of the rounds'
ratios: median_r(after_r / before_r), where after_r and before_r are the two runs of round r.

Build a binary with
  cargo build --release --locked -p iobm-engine --example generator_cost
and copy target/release/examples/generator_cost aside before and after a change.

Usage: bench/generator_cost.py BEFORE AFTER [--rounds 9] [--gib 2]
"""

import argparse
import statistics
import subprocess


def run(binary, gib):
    """One run of `binary`: {case: CPU-s/GiB}."""
    out = subprocess.run([binary, str(gib)], check=True, capture_output=True, text=True).stdout
    return {case: float(cost) for case, cost in (line.split() for line in out.splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--gib", type=float, default=2, help="GiB made per case and run")
    args = ap.parse_args()
    runs = {args.before: [], args.after: []}
    for r in range(args.rounds):
        for binary in ([args.before, args.after] if r % 2 == 0 else [args.after, args.before]):
            runs[binary].append(run(binary, args.gib))
    before, after = runs[args.before], runs[args.after]
    print(f"generator CPU-s/GiB, {args.gib} GiB per case, medians of {args.rounds} rounds")
    print("| case | before CPU-s/GiB | after CPU-s/GiB | after/before (median of ratios) |")
    print("|---|---:|---:|---:|")
    for case in before[0]:
        b = statistics.median(x[case] for x in before)
        a = statistics.median(x[case] for x in after)
        ratio = statistics.median(y[case] / x[case] for x, y in zip(before, after))
        print(f"| {case} | {b:.4f} | {a:.4f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
