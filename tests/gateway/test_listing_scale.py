"""Listings at scale: a bucket of 1,000,000 empty objects made directly on disk, one flat
directory (the worst case: every page used to read and sort it whole). The first page reads
the directory once and every later page none of it, by the gateway's count of directory
entries read (/metrics); the pages' times are printed, not asserted."""

import os
import pathlib
import shutil
import tempfile
import re
import time
import urllib.request

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from gateway_helpers import AK, SK, Server, client

OBJECTS = 1_000_000
PAGE = 1000


def key(i):
    return f"obj-{i:07d}"


def entries_read(server):
    """The gateway's count of directory entries its listings read, from a signed scrape."""
    url = server.endpoint + "/metrics"
    headers = {"Accept": "text/plain", "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}
    request = AWSRequest(method="GET", url=url, headers=headers)
    SigV4Auth(Credentials(AK, SK), "s3", "us-east-1").add_auth(request)
    with urllib.request.urlopen(urllib.request.Request(url, headers=dict(request.headers))) as r:
        text = r.read().decode()
    return int(re.search(r"^iobm_gateway_directory_entries_read_total (\d+)$", text, re.M).group(1))


def timed_page(server, s3, **kwargs):
    """A page of the listing: its time, the entries read from disk for it, and the page."""
    before = entries_read(server)
    start = time.perf_counter()
    page = s3.list_objects_v2(Bucket="big", MaxKeys=PAGE, **kwargs)
    took = time.perf_counter() - start
    return took, entries_read(server) - before, page


@pytest.fixture
def memory_dir(tmp_path):
    """A directory in /dev/shm where there is one (a million files are made there in seconds,
    not minutes), else under pytest's temporary directory."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    path = tempfile.mkdtemp(dir="/dev/shm", prefix="iobm-listing-")
    yield pathlib.Path(path)
    shutil.rmtree(path, ignore_errors=True)


def test_the_last_page_costs_about_what_the_first_costs(memory_dir):
    tmp_path = memory_dir
    bucket = tmp_path / "big"
    bucket.mkdir()
    made = time.perf_counter()
    for i in range(OBJECTS):
        os.close(os.open(bucket / key(i), os.O_CREAT | os.O_WRONLY, 0o644))
    made = time.perf_counter() - made
    # A directory that changed within the last 2 s is not cached (its times may not show a change
    # made in the same clock tick); objects listed are normally older than that.
    time.sleep(2.5)
    server = Server(tmp_path, "--access-key", AK, "--secret-key", SK)
    try:
        s3 = client(server)
        first_s, first_read, first = timed_page(server, s3)
        assert [o["Key"] for o in first["Contents"]] == [key(i) for i in range(PAGE)]
        assert first["IsTruncated"]
        second_s, second_read, second = timed_page(server, s3, ContinuationToken=first["NextContinuationToken"])
        assert [o["Key"] for o in second["Contents"]] == [key(i) for i in range(PAGE, 2 * PAGE)]
        middle_s, middle_read, middle = timed_page(server, s3, StartAfter=key(OBJECTS // 2 - 1))
        assert middle["Contents"][0]["Key"] == key(OBJECTS // 2)
        last_s, last_read, last = timed_page(server, s3, StartAfter=key(OBJECTS - PAGE - 1))
        assert [o["Key"] for o in last["Contents"]] == [key(i) for i in range(OBJECTS - PAGE, OBJECTS)]
        assert not last["IsTruncated"]
        assert last["Contents"][0]["Size"] == 0
        assert last["Contents"][0]["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'
        with open(f"/proc/{server.proc.pid}/status") as f:
            peak_mib = int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) / 1024
    finally:
        server.stop()
    print(f"\n{OBJECTS} objects made in {made:.1f} s; page of {PAGE}: first {first_s * 1000:.0f} ms, "
          f"second {second_s * 1000:.0f} ms, middle {middle_s * 1000:.0f} ms, last {last_s * 1000:.0f} ms; "
          f"last/first {last_s / first_s:.2f}; gateway peak RSS {peak_mib:.0f} MiB")
    # The directory read once, for the first page (at most "." and ".." more), then kept sorted:
    # the later pages read none of it (the build before the cache read all of it for each).
    assert OBJECTS <= first_read <= OBJECTS + 2, first_read
    assert (second_read, middle_read, last_read) == (0, 0, 0)
