"""Multipart uploads as accounts see them, and the gateway's connections: an upload id reaches
only its own bucket, key and initiator (boto3 as two accounts and unsigned), ListParts pages,
a completion interrupted by `kill -9` is finished or rolled back at the next start, and idle
sockets beyond `--max-connections` do not hold out a client that sends a request (raw
sockets)."""

import glob
import hashlib
import http.client
import os
import signal
import socket
import threading
import time

import boto3
import pytest
from botocore.config import Config

from gateway_helpers import AK, SK, Server, client
from test_accounts import ALICE, BOB, as_account, code, unsigned, write_users

MIB = 1024 * 1024


@pytest.fixture
def accounts(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, ("alice", ALICE), ("bob", BOB))
    server = Server(root, "--users", str(users))
    yield server
    server.stop()


def part_etag(data):
    return '"%s"' % hashlib.md5(data).hexdigest()


def multipart_etag(parts):
    joined = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"%s-%d"' % (hashlib.md5(joined).hexdigest(), len(parts))


def test_an_upload_id_reaches_only_its_bucket_key_and_initiator(accounts):
    alice, bob, anon = as_account(accounts, ALICE), as_account(accounts, BOB), unsigned(accounts)
    alice.create_bucket(Bucket="a-priv")
    alice.create_bucket(Bucket="a-pub", ACL="public-read-write")
    bob.create_bucket(Bucket="b-own")
    bob.put_object(Bucket="b-own", Key="src", Body=b"bob's bytes")
    mine = alice.create_multipart_upload(Bucket="a-priv", Key="x")["UploadId"]
    public = alice.create_multipart_upload(Bucket="a-pub", Key="y")["UploadId"]
    first = os.urandom(5 * MIB)
    alice.upload_part(Bucket="a-priv", Key="x", UploadId=mine, PartNumber=1, Body=first)
    alice.upload_part(Bucket="a-pub", Key="y", UploadId=public, PartNumber=1, Body=b"alice")
    forged = {"Parts": [{"PartNumber": 1, "ETag": part_etag(first)}]}

    # Bob names Alice's id in his own bucket (the id alone must not lead to her upload).
    where = {"Bucket": "b-own", "Key": "x", "UploadId": mine}
    assert code(bob.upload_part, PartNumber=2, Body=b"bob", **where) == "NoSuchUpload"
    assert code(bob.upload_part_copy, PartNumber=2, CopySource={"Bucket": "b-own", "Key": "src"},
                **where) == "NoSuchUpload"
    assert code(bob.list_parts, **where) == "NoSuchUpload"
    assert code(bob.complete_multipart_upload, MultipartUpload=forged, **where) == "NoSuchUpload"
    assert code(bob.abort_multipart_upload, **where) == "NoSuchUpload"
    # Alice herself cannot move her upload to another key or bucket.
    assert code(alice.upload_part, Bucket="a-priv", Key="other", UploadId=mine, PartNumber=2,
                Body=b"a") == "NoSuchUpload"
    assert code(alice.list_parts, Bucket="a-pub", Key="x", UploadId=mine) == "NoSuchUpload"
    # In a bucket anyone may write, the right bucket and key are not enough either: the
    # upload is its initiator's, for Bob and for unsigned requests alike.
    there = {"Bucket": "a-pub", "Key": "y", "UploadId": public}
    for who in (bob, anon):
        assert code(who.upload_part, PartNumber=2, Body=b"intruder", **there) == "NoSuchUpload"
        assert code(who.list_parts, **there) == "NoSuchUpload"
        assert code(who.complete_multipart_upload, MultipartUpload=forged, **there) == "NoSuchUpload"
        assert code(who.abort_multipart_upload, **there) == "NoSuchUpload"

    # Alice's uploads are as she left them.
    assert [(p["PartNumber"], p["ETag"]) for p in alice.list_parts(Bucket="a-priv", Key="x",
                                                                    UploadId=mine)["Parts"]] \
        == [(1, part_etag(first))]
    assert [p["ETag"] for p in alice.list_parts(**there)["Parts"]] == [part_etag(b"alice")]
    alice.upload_part(Bucket="a-priv", Key="x", UploadId=mine, PartNumber=2, Body=b"tail")
    done = alice.complete_multipart_upload(
        Bucket="a-priv", Key="x", UploadId=mine, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": part_etag(first)}, {"PartNumber": 2, "ETag": part_etag(b"tail")}]})
    assert done["ETag"] == multipart_etag([first, b"tail"])
    assert alice.get_object(Bucket="a-priv", Key="x")["Body"].read() == first + b"tail"
    # A retried completion is answered again, to Alice only.
    assert code(bob.complete_multipart_upload, Bucket="a-priv", Key="x", UploadId=mine,
                MultipartUpload=forged) in ("AccessDenied", "NoSuchUpload")
    assert code(alice.complete_multipart_upload, Bucket="a-priv", Key="x", UploadId=mine,
                MultipartUpload=forged) == "ok"

    # Bob's and an unsigned client's uploads in Alice's public bucket: each sends its own
    # parts; the bucket's owner may list their parts and abort them, not add to them.
    bobs = bob.create_multipart_upload(Bucket="a-pub", Key="z")["UploadId"]
    bob.upload_part(Bucket="a-pub", Key="z", UploadId=bobs, PartNumber=1, Body=b"bob")
    anons = anon.create_multipart_upload(Bucket="a-pub", Key="w")["UploadId"]
    anon.upload_part(Bucket="a-pub", Key="w", UploadId=anons, PartNumber=1, Body=b"anon")
    assert code(bob.upload_part, Bucket="a-pub", Key="w", UploadId=anons, PartNumber=2,
                Body=b"b") == "NoSuchUpload"
    assert code(alice.upload_part, Bucket="a-pub", Key="z", UploadId=bobs, PartNumber=2,
                Body=b"a") == "NoSuchUpload"
    assert [p["ETag"] for p in alice.list_parts(Bucket="a-pub", Key="z", UploadId=bobs)["Parts"]] \
        == [part_etag(b"bob")]
    listed = alice.list_multipart_uploads(Bucket="a-pub")["Uploads"]
    assert sorted((u["Key"], u["Initiator"]["ID"], u["Initiator"]["DisplayName"], u["Owner"]["ID"])
                  for u in listed) == [("w", "anonymous", "anonymous", "anonymous"),
                                       ("y", "alice", "alice", "alice"), ("z", "bob", "bob", "bob")]
    got = bob.list_parts(Bucket="a-pub", Key="z", UploadId=bobs)
    assert (got["Initiator"]["ID"], got["Owner"]["ID"]) == ("bob", "bob")
    done = anon.complete_multipart_upload(Bucket="a-pub", Key="w", UploadId=anons, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part_etag(b"anon")}]})
    assert done["ETag"] == multipart_etag([b"anon"])
    alice.abort_multipart_upload(Bucket="a-pub", Key="z", UploadId=bobs)
    assert sorted(u["Key"] for u in alice.list_multipart_uploads(Bucket="a-pub")["Uploads"]) == ["y"]


def test_list_parts_pages_by_max_parts(server):
    s3 = client(server)
    s3.create_bucket(Bucket="pages")
    uid = s3.create_multipart_upload(Bucket="pages", Key="k")["UploadId"]
    for n in range(1, 8):
        s3.upload_part(Bucket="pages", Key="k", UploadId=uid, PartNumber=n, Body=b"p%d" % n)
    where = {"Bucket": "pages", "Key": "k", "UploadId": uid}
    first = s3.list_parts(MaxParts=3, **where)
    assert [p["PartNumber"] for p in first["Parts"]] == [1, 2, 3]
    assert first["IsTruncated"] and first["NextPartNumberMarker"] == 3 and first["MaxParts"] == 3
    second = s3.list_parts(MaxParts=3, PartNumberMarker=3, **where)
    assert [p["PartNumber"] for p in second["Parts"]] == [4, 5, 6]
    assert second["IsTruncated"] and second["NextPartNumberMarker"] == 6
    assert second["PartNumberMarker"] == 3
    last = s3.list_parts(MaxParts=3, PartNumberMarker=6, **where)
    assert [p["PartNumber"] for p in last["Parts"]] == [7] and not last["IsTruncated"]
    # boto3's paginator follows the markers to every part, once each.
    pages = s3.get_paginator("list_parts").paginate(PaginationConfig={"PageSize": 2}, **where)
    assert [p["PartNumber"] for page in pages for p in page["Parts"]] == list(range(1, 8))
    assert s3.list_parts(PartNumberMarker=7, **where).get("Parts", []) == []
    whole = s3.list_parts(**where)
    assert len(whole["Parts"]) == 7 and not whole["IsTruncated"] and whole["MaxParts"] == 1000


def uploads_dir(root):
    return os.path.join(root, ".iobm-gateway", "uploads")


def wait_until(check, what, seconds=30):
    deadline = time.time() + seconds
    while not check():
        assert time.time() < deadline, what
        time.sleep(0.02)


@pytest.mark.parametrize("step", ["claimed", "published"])
def test_a_completion_killed_midway_is_finished_or_rolled_back_at_the_next_start(
        tmp_path, monkeypatch, step):
    root = tmp_path / "root"
    root.mkdir()
    # The gateway's test-only hook holds every completion at `step` until it is killed.
    monkeypatch.setenv("IOBM_TEST_PAUSE_COMPLETION", step)
    server = Server(root, "--access-key", AK, "--secret-key", SK)
    monkeypatch.delenv("IOBM_TEST_PAUSE_COMPLETION")
    s3 = client(server)
    s3.create_bucket(Bucket="crash")
    uid = s3.create_multipart_upload(Bucket="crash", Key="big")["UploadId"]
    parts = [os.urandom(5 * MIB), os.urandom(1234)]
    listed = [{"PartNumber": n, "ETag": s3.upload_part(Bucket="crash", Key="big", UploadId=uid,
                                                       PartNumber=n, Body=body)["ETag"]}
              for n, body in enumerate(parts, 1)]
    request = {"Bucket": "crash", "Key": "big", "UploadId": uid, "MultipartUpload": {"Parts": listed}}
    answers = []

    def complete():
        slow = boto3.client(
            "s3", endpoint_url=server.endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
            region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, read_timeout=120,
                                                   retries={"max_attempts": 1}))
        try:
            answers.append(code(slow.complete_multipart_upload, **request))
        except Exception as e:  # the connection is cut by the kill
            answers.append(type(e).__name__)

    first = threading.Thread(target=complete)
    first.start()
    if step == "claimed":
        wait_until(lambda: glob.glob(os.path.join(uploads_dir(root), "*", "*.completing-*")),
                   "the completion never claimed the upload")
    else:
        wait_until(lambda: os.path.exists(root / "crash" / "big"), "the object was never published")
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    first.join(timeout=30)

    server = Server(root, "--access-key", AK, "--secret-key", SK)
    try:
        s3 = client(server)
        left = s3.list_multipart_uploads(Bucket="crash").get("Uploads", [])
        if step == "claimed":
            # Nothing was published: the upload is back, whole, to be completed again.
            assert [u["UploadId"] for u in left] == [uid]
            assert len(s3.list_parts(Bucket="crash", Key="big", UploadId=uid)["Parts"]) == 2
        else:
            # The object was published: the completion is finished, its parts gone.
            assert left == [] and os.listdir(uploads_dir(root)) == []
        done = s3.complete_multipart_upload(**request)
        assert done["ETag"] == multipart_etag(parts)
        assert s3.get_object(Bucket="crash", Key="big")["Body"].read() == b"".join(parts)
        assert os.listdir(uploads_dir(root)) == []
        assert s3.list_multipart_uploads(Bucket="crash").get("Uploads", []) == []
    finally:
        server.stop()
    # The kill landed in the completion, and the start said what it did with it.
    said = {"claimed": "0 finished, 1 given back as uploads", "published": "1 finished, 0 given back"}
    assert len(answers) == 1 and answers != ["ok"] and said[step] in server.proc.stdout.read()
    # Tried again after a clean restart, the completion still gets the same answer.
    server = Server(root, "--access-key", AK, "--secret-key", SK)
    try:
        assert client(server).complete_multipart_upload(**request)["ETag"] == multipart_etag(parts)
    finally:
        server.stop()


def test_idle_sockets_beyond_the_cap_do_not_hold_out_requests(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    server = Server(root, "--anonymous", "--max-connections", "16", "--header-timeout", "30s")
    idle = []
    try:
        put = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        for path, body in (("/bkt", None), ("/bkt/k", b"hello")):
            put.request("PUT", path, body=body)
            response = put.getresponse()
            response.read()
            assert response.status == 200
        # An upload under way holds its connection: it is busy, never the one closed.
        busy = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        busy.putrequest("PUT", "/bkt/slow")
        busy.putheader("Content-Length", str(2 * MIB))
        busy.endheaders()
        busy.send(b"x" * MIB)
        time.sleep(0.3)
        # 40 sockets that send nothing, and a few that send half a request.
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if i % 8 == 0:
                s.sendall(b"GET /bkt/k HTTP/1.1\r\nHost: x\r\n")
            idle.append(s)
        time.sleep(0.5)
        # A client that sends a request is answered (with a cap of 16 and a 30 s header
        # timeout, waiting for idle sockets to time out would take a minute).
        get = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        get.request("GET", "/bkt/k")
        response = get.getresponse()
        assert (response.status, response.read()) == (200, b"hello")
        busy.send(b"y" * MIB)
        assert busy.getresponse().status == 200
        again = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        again.request("GET", "/bkt/slow")
        assert again.getresponse().read() == b"x" * MIB + b"y" * MIB
        # The room was made by closing idle sockets.
        closed = 0
        for s in idle:
            s.settimeout(0.01)
            try:
                closed += s.recv(1) == b""
            except ConnectionError:
                closed += 1
            except socket.timeout:
                pass
        assert closed > 0
    finally:
        for s in idle:
            s.close()
        server.stop()
