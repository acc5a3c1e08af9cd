#!/usr/bin/env python3
"""What other accounts' open multipart uploads cost a bucket's own calls on iobm serve: bob opens
UPLOADS uploads in his bucket (none completed), then alice's ListMultipartUploads of her bucket
without uploads (the median of 20) and her DeleteBucket of it (the median of 5, the bucket made
again between them) are timed, and last bob's DeleteBucket of his bucket of UPLOADS uploads. Each
iobm given (`--iobm PATH`, repeatable; default: a release build of this tree) serves a new
directory under `--dir` with a users file of the two accounts.

  python3 bench/gateway_uploads_index.py [--uploads 10000] [--iobm PATH]... [--dir /var/tmp]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

from common import build_iobm, free_port, wait_for_port

ALICE = ("AKALICE", "alice-secret-key-0123456789")
BOB = ("AKBOB", "bob-secret-key-0123456789")


def account(port, keys):
    return boto3.client(
        "s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id=keys[0],
        aws_secret_access_key=keys[1], region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1},
                      read_timeout=900, max_pool_connections=16))


def timed(call, **kwargs):
    started = time.perf_counter()
    call(**kwargs)
    return time.perf_counter() - started


def measure(iobm, uploads, parent):
    """The times (s) of alice's listings and deletions and of bob's deletion."""
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        users = os.path.join(tmp, "users")
        with open(users, "w") as f:
            f.write(f"{ALICE[0]} {ALICE[1]} alice\n{BOB[0]} {BOB[1]} bob\n")
        port = free_port()
        server = subprocess.Popen([iobm, "serve", root, "--listen", f"127.0.0.1:{port}", "--users", users],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port)
            alice, bob = account(port, ALICE), account(port, BOB)
            bob.create_bucket(Bucket="b-many")
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda i: bob.create_multipart_upload(Bucket="b-many", Key=f"k{i:05d}"),
                              range(uploads)))
            alice.create_bucket(Bucket="a-empty")
            listings = [timed(alice.list_multipart_uploads, Bucket="a-empty") for _ in range(20)]
            deletions = []
            for _ in range(5):
                deletions.append(timed(alice.delete_bucket, Bucket="a-empty"))
                alice.create_bucket(Bucket="a-empty")
            return listings, deletions, timed(bob.delete_bucket, Bucket="b-many")
        finally:
            server.terminate()
            server.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uploads", type=int, default=10000)
    parser.add_argument("--iobm", action="append")
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    for iobm in args.iobm or [build_iobm()]:
        listings, deletions, busy = measure(iobm, args.uploads, args.dir)
        ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
        print(f"{iobm}: with {args.uploads} uploads of bob's open, alice's ListMultipartUploads "
              f"{ms(statistics.median(listings))} (median of 20; {ms(min(listings))} to {ms(max(listings))}), "
              f"DeleteBucket {ms(statistics.median(deletions))} (median of 5); "
              f"bob's DeleteBucket of his bucket of {args.uploads} uploads {ms(busy)}")


if __name__ == "__main__":
    main()
