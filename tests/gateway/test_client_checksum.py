"""`iobm s3 put --checksum`: every PUT carries S3's additional checksum of its body, which the
gateway checks (a wrong one is refused as BadDigest, so a run with no failed request sent right
ones) and keeps: HeadObject with checksum mode returns it, equal to the checksum Python computes
of the bytes a GET returns."""

import base64
import hashlib
import json
import os
import subprocess
import zlib

import pytest

from gateway_helpers import AK, IOBM, SK, client

PYTHON = {
    "crc32": lambda b: zlib.crc32(b).to_bytes(4, "big"),
    "sha1": lambda b: hashlib.sha1(b).digest(),
    "sha256": lambda b: hashlib.sha256(b).digest(),
}
FIELD = {"crc32": "ChecksumCRC32", "crc32c": "ChecksumCRC32C", "crc64nvme": "ChecksumCRC64NVME",
         "sha1": "ChecksumSHA1", "sha256": "ChecksumSHA256"}


def put(server, tmp_path, *extra):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    result = tmp_path / "r.json"
    run = subprocess.run([IOBM, "s3", "put", "--endpoint", server.endpoint, "--bucket", "sums", "--obj-size", "96KiB",
                          "--concurrent", "2", "--ops", "6", "--keep", "--json", str(result), *extra],
                         env=env, capture_output=True, text=True, timeout=120)
    return run, result


@pytest.mark.parametrize("algorithm", sorted(FIELD))
def test_every_put_carries_a_checksum_the_gateway_checks_and_keeps(server, tmp_path, algorithm):
    run, result = put(server, tmp_path, "--checksum", algorithm)
    assert run.returncode == 0, run.stderr
    doc = json.loads(result.read_text())
    assert doc["config"]["s3"]["checksum"] == algorithm
    assert f"payload signing unsigned, checksum {algorithm}" in run.stdout, run.stdout
    phase = doc["phases"][0]
    assert sum(w["span"]["ops"] for w in phase["workers"]) == 6 and not phase["errors"], phase["errors"]
    s3 = client(server)
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket="sums")["Contents"]]
    # The objects, not the kept data set's description beside them.
    keys = [k for k in listed if "/obj." in k]
    assert len(keys) == 6
    for key in keys:
        kept = s3.head_object(Bucket="sums", Key=key, ChecksumMode="ENABLED")
        assert FIELD[algorithm] in kept, kept
        if algorithm in PYTHON:
            body = s3.get_object(Bucket="sums", Key=key)["Body"].read()
            assert len(body) == 96 << 10
            assert kept[FIELD[algorithm]] == base64.b64encode(PYTHON[algorithm](body)).decode()


def test_without_the_flag_no_checksum_is_sent_or_recorded(server, tmp_path):
    run, result = put(server, tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(result.read_text())
    assert "checksum" not in doc["config"]["s3"]
    s3 = client(server)
    key = next(o["Key"] for o in s3.list_objects_v2(Bucket="sums")["Contents"] if "/obj." in o["Key"])
    assert not any(k.startswith("Checksum") for k in s3.head_object(Bucket="sums", Key=key, ChecksumMode="ENABLED"))


@pytest.mark.parametrize("op", ["get", "multipart"])
def test_a_checksum_on_other_operations_is_refused_in_one_line(server, tmp_path, op):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    run = subprocess.run([IOBM, "s3", op, "--endpoint", server.endpoint, "--bucket", "sums", "--checksum", "crc32c"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run
    assert len(run.stderr.strip().splitlines()) == 1 and "--checksum" in run.stderr, run.stderr
    # Refused before anything was made: no bucket.
    assert not any(b["Name"] == "sums" for b in client(server).list_buckets().get("Buckets", []))
