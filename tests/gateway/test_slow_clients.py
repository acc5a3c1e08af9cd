"""Fair under slow clients: a request body slower than `--min-body-rate` is cut with
RequestTimeout; at `--max-connections` with no connection idle, the slowest body makes room for
another account's request; a descriptor limit below the cap lowers the cap; a FIFO planted
where the gateway keeps its own files is an error for that request, not a hang; and one
bucket's multipart uploads are never read for another bucket. Raw sockets and boto3, as
accounts of a users file.
"""

import glob
import os
import resource
import select
import signal
import socket
import subprocess
import threading
import time

import boto3
import pytest
from botocore.config import Config

from gateway_helpers import ALICE, BOB, Server, code, sigv4, tmpfs, unsigned
from test_gate import write_users
from test_accounts import said_within

KIB = 1024


def bounded(server, keys, seconds=20):
    """A boto3 client of one account that waits at most `seconds` for an answer."""
    return boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                      connect_timeout=5, read_timeout=seconds))


def trickle(server, target, headers, piece, pause, stop, chunked=False, method="PUT"):
    """A request (a PUT of 64 MiB, by default) whose body comes `piece` bytes every `pause`
    seconds until the gateway answers, the connection breaks or `stop()` holds: what the
    gateway answered (b"" if nothing)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
    if chunked:
        head += "Transfer-Encoding: chunked\r\n"
    elif "Content-Length" not in headers:
        head += f"Content-Length: {64 << 20}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    data = (f"{piece:x}\r\n".encode() + b"x" * piece + b"\r\n") if chunked else b"x" * piece
    try:
        sock.sendall(head.encode())
        while not stop():
            sock.sendall(data)
            waited = time.monotonic()
            while time.monotonic() - waited < pause and not stop():
                if select.select([sock], [], [], 0.1)[0]:
                    return sock.recv(65536)
        return b""
    except OSError:
        try:
            return sock.recv(65536)
        except OSError:
            return b""
    finally:
        sock.close()


@pytest.fixture
def two(tmp_path):
    """A gateway of alice and bob with its default limits; alice's bucket `a-open` is
    public-read-write and holds `k`, bob owns `b-own`."""
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, "alice", "bob")
    server = Server(root, "--users", str(users), "--max-connections", "8")
    alice = bounded(server, ALICE)
    alice.create_bucket(Bucket="a-open")
    alice.put_bucket_acl(Bucket="a-open", ACL="public-read-write")
    alice.put_object(Bucket="a-open", Key="k", Body=b"alice's object")
    bounded(server, BOB).create_bucket(Bucket="b-own")
    yield server, root
    server.stop()


SLOW_BODIES = {
    # A PUT's body read by the gateway, one of unknown length kept until whole, and an XML
    # body read by s3s (DeleteObjects).
    "content-length": ("PUT", "/a-open/slow", {}, False),
    "chunked": ("PUT", "/a-open/slow", {}, True),
    "xml": ("POST", "/a-open?delete", {"Content-Length": str(1 << 20), "Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="},
            False),
}


@pytest.mark.parametrize("kind", SLOW_BODIES)
def test_a_body_slower_than_the_minimum_rate_is_cut(two, kind):
    server, root = two
    method, target, headers, chunked = SLOW_BODIES[kind]
    # 2 KiB a second, unsigned into a public-read-write bucket: under the default 16 KiB/s, so
    # cut once the gateway has waited a 10 s window for it (64 KiB within each 60 s body
    # timeout used to be enough to go on for ever).
    started = time.monotonic()
    reply = trickle(server, target, headers, 2 * KIB, 1.0,
                    lambda: time.monotonic() - started > 40, chunked, method)
    took = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 400") and b"<Code>RequestTimeout</Code>" in reply, reply
    assert 9 < took < 30, took
    assert code(bounded(server, ALICE).head_object, Bucket="a-open", Key="slow") == "404"
    assert glob.glob(str(root / ".iobm-gateway" / "tmp" / "*" / "*")) == []


def test_slow_bodies_at_the_cap_make_room_for_another_accounts_request(two):
    server, _ = two
    # Twelve PUTs of bob's, signed, each sending 80 KiB every 4.5 s (about 18 KiB/s, above the
    # minimum rate), against a cap of 8 connections; each sender starts again when cut.
    done = threading.Event()
    answers = []

    def sender(n):
        while not done.is_set():
            path = f"/b-own/slow-{n}"
            headers = sigv4(BOB, "PUT", path, "", server.port, "UNSIGNED-PAYLOAD", send_host=False)
            answers.append(trickle(server, path, headers, 80 * KIB, 4.5, done.is_set))

    senders = [threading.Thread(target=sender, args=(n,)) for n in range(12)]
    for t in senders:
        t.start()
    try:
        time.sleep(8)
        alice = bounded(server, ALICE, seconds=60)
        for _ in range(3):
            started = time.monotonic()
            body = alice.get_object(Bucket="a-open", Key="k")["Body"].read()
            took = time.monotonic() - started
            assert body == b"alice's object" and took < 30, took
    finally:
        done.set()
        for t in senders:
            t.join()
    assert any(b"<Code>RequestTimeout</Code>" in a for a in answers), answers


def test_a_descriptor_limit_below_the_cap_lowers_the_cap(tmp_path):
    root = tmp_path / "root"
    root.mkdir()

    def few_descriptors():
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    server = Server(root, "--anonymous", preexec_fn=few_descriptors)
    idle = []
    try:
        s3 = unsigned(server)
        s3.create_bucket(Bucket="bkt")
        s3.put_object(Bucket="bkt", Key="k", Body=b"hello")
        # More idle sockets than there are descriptors: the cap closes idle ones, and every
        # request still has descriptors for its files (it used to be answered 503 SlowDown).
        for _ in range(200):
            idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        for _ in range(3):
            assert s3.get_object(Bucket="bkt", Key="k")["Body"].read() == b"hello"
    finally:
        for s in idle:
            s.close()
        server.stop()
    said_within(server.proc, "--max-connections 1024 lowered to 64: the descriptor limit is 128", 5)
    # Below a hard limit that allows it, the soft limit is raised instead.
    server = Server(root, "--anonymous", preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 4096)))
    try:
        unsigned(server).head_bucket(Bucket="bkt")
        assert resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE) == (4096, 4096)
    finally:
        server.stop()
    assert "lowered" not in server.proc.stdout.read()


def test_special_files_where_the_gateway_keeps_its_own_are_errors_not_hangs(two):
    server, root = two
    bob = bounded(server, BOB)
    uid = bob.create_multipart_upload(Bucket="b-own", Key="k")["UploadId"]
    [info] = glob.glob(str(root / ".iobm-gateway" / "uploads" / "**" / "upload.json"), recursive=True)
    os.unlink(info)
    os.mkfifo(info)
    os.mkfifo(root / ".iobm-gateway" / "completed" / "0123456789abcdef")
    where = {"Bucket": "b-own", "Key": "k", "UploadId": uid}
    parts = {"Parts": [{"PartNumber": 1, "ETag": '"00"'}]}
    # Each answered at once (a blocking open of the FIFO used to hang the gateway).
    assert bob.list_multipart_uploads(Bucket="b-own").get("Uploads", []) == []
    assert code(bob.upload_part, PartNumber=1, Body=b"x", **where) == "NoSuchUpload"
    assert code(bob.list_parts, **where) == "NoSuchUpload"
    assert code(bob.abort_multipart_upload, **where) == "NoSuchUpload"
    assert code(bob.complete_multipart_upload, MultipartUpload=parts, **where) == "NoSuchUpload"
    assert code(bob.complete_multipart_upload, Bucket="b-own", Key="k", UploadId="0123456789abcdef",
                MultipartUpload=parts) == "NoSuchUpload"
    bob.put_object(Bucket="b-own", Key="after", Body=b"still served")
    assert bob.get_object(Bucket="b-own", Key="after")["Body"].read() == b"still served"


@pytest.fixture
def strictatime(tmp_path):
    """Starts gateways of alice and bob over a tmpfs that records every read in its files'
    access times (root only); the fixture stops the last one."""
    if os.geteuid() != 0:
        pytest.fail("needs root to mount a tmpfs (scripts/test runs the gateway tests as root)")
    root = tmpfs(tmp_path / "atime", "size=64m,strictatime")
    users = tmp_path / "users"
    write_users(users, "alice", "bob")
    started = []

    def start():
        started.append(Server(root, "--users", str(users)))
        return started[-1], root

    yield start
    if started[-1].proc.poll() is None:
        started[-1].stop()
    subprocess.run(["umount", str(root)], check=True)


def upload_infos(root):
    return glob.glob(str(root / ".iobm-gateway" / "uploads" / "**" / "upload.json"), recursive=True)


def test_one_buckets_uploads_are_never_read_for_another_bucket(strictatime):
    server, root = strictatime()
    alice, bob = bounded(server, ALICE), bounded(server, BOB)
    bob.create_bucket(Bucket="b-busy")
    for i in range(300):
        bob.create_multipart_upload(Bucket="b-busy", Key=f"k{i:03d}")
    alice.create_bucket(Bucket="a-empty")
    infos = upload_infos(root)
    assert len(infos) == 300
    read = {p: os.stat(p).st_atime_ns for p in infos}
    time.sleep(0.05)
    # Alice's listing, her bucket's deletion and her own uploads read none of bob's.
    assert alice.list_multipart_uploads(Bucket="a-empty").get("Uploads", []) == []
    alice.delete_bucket(Bucket="a-empty")
    alice.create_bucket(Bucket="a-empty")
    uid = alice.create_multipart_upload(Bucket="a-empty", Key="k")["UploadId"]
    assert [u["UploadId"] for u in alice.list_multipart_uploads(Bucket="a-empty")["Uploads"]] == [uid]
    alice.abort_multipart_upload(Bucket="a-empty", Key="k", UploadId=uid)
    alice.delete_bucket(Bucket="a-empty")
    assert {p: os.stat(p).st_atime_ns for p in infos} == read
    # Bob's own listing pages through all of his.
    pages = bob.get_paginator("list_multipart_uploads").paginate(Bucket="b-busy", MaxUploads=100)
    assert sum(len(p.get("Uploads", [])) for p in pages) == 300


def test_a_deleted_buckets_uploads_stay_gone_after_a_kill(strictatime):
    server, root = strictatime()
    bob = bounded(server, BOB)
    bob.create_bucket(Bucket="b-gone")
    for i in range(300):
        bob.create_multipart_upload(Bucket="b-gone", Key=f"k{i:03d}")
    bob.delete_bucket(Bucket="b-gone")
    # Killed at once: its uploads may still be being removed.
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    server, _ = strictatime()
    bob = bounded(server, BOB)
    bob.create_bucket(Bucket="b-gone")
    assert bob.list_multipart_uploads(Bucket="b-gone").get("Uploads", []) == []
    # What the kill left of them is removed after the start, without holding it up.
    deadline = time.monotonic() + 30
    while upload_infos(root):
        assert time.monotonic() < deadline, "a deleted bucket's uploads are left"
        time.sleep(0.05)


def test_uploads_kept_by_an_earlier_gateway_are_found(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, "alice", "bob")
    server = Server(root, "--users", str(users))
    bob = bounded(server, BOB)
    bob.create_bucket(Bucket="b-old")
    uid = bob.create_multipart_upload(Bucket="b-old", Key="k")["UploadId"]
    etag = bob.upload_part(Bucket="b-old", Key="k", UploadId=uid, PartNumber=1, Body=b"part")["ETag"]
    server.stop()
    # Earlier gateways kept every upload directly in .iobm-gateway/uploads/<id>.
    uploads = root / ".iobm-gateway" / "uploads"
    os.rename(uploads / "b-old" / uid, uploads / uid)
    server = Server(root, "--users", str(users))
    try:
        bob = bounded(server, BOB)
        assert [u["UploadId"] for u in bob.list_multipart_uploads(Bucket="b-old")["Uploads"]] == [uid]
        bob.complete_multipart_upload(Bucket="b-old", Key="k", UploadId=uid,
                                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
        assert bob.get_object(Bucket="b-old", Key="k")["Body"].read() == b"part"
        assert os.listdir(uploads) == []
    finally:
        server.stop()
