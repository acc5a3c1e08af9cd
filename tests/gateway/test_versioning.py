"""Versioning as S3 keeps it, against `iobm serve` with boto3, rclone and the aws CLI: the
bucket's state, versions made by PUT, CopyObject and CompleteMultipartUpload, delete markers,
reads, copies and deletes of one version, ListObjectVersions paged over thousands of versions,
the gate deciding from the version read, and writes to a versioned key while the gateway is
killed with SIGKILL and started again."""

import hashlib
import json
import os
import random
import signal
import subprocess
import threading
import time

import pytest

from gateway_helpers import AK, SK, Server, aws, client, code
from test_accounts import ALICE, BOB, as_account, unsigned, write_users

MIB = 1024 * 1024


def enable(s3, bucket, status="Enabled"):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})


def body(s3, bucket, key, **kw):
    return s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


def error(call, **kw):
    """The code, status and headers a call fails with."""
    try:
        call(**kw)
    except Exception as e:  # botocore's ClientError
        meta = e.response["ResponseMetadata"]
        return e.response["Error"]["Code"], meta["HTTPStatusCode"], meta["HTTPHeaders"]
    raise AssertionError("the call succeeded")


def versions(s3, bucket, **kw):
    """Every version and delete marker of a bucket as (key, id, latest, marker), paged."""
    out = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, **kw):
        entries = [(v, False) for v in page.get("Versions", [])]
        entries += [(m, True) for m in page.get("DeleteMarkers", [])]
        # S3 interleaves both kinds newest first; s3s writes them apart: put back in order
        # of time (an id is the time it was made, in its first 16 hex digits).
        entries.sort(key=lambda e: (e[0]["Key"], -made(e[0])))
        out += [(e["Key"], e["VersionId"], e["IsLatest"], marker) for e, marker in entries]
    return out


def made(entry):
    vid = entry["VersionId"]
    if vid == "null":
        return int(entry["LastModified"].timestamp() * 1e9)
    return int(vid[:16], 16)


def kept_files(root):
    found = []
    for d, _, files in os.walk(os.path.join(root, ".iobm-gateway", "versions")):
        found += [os.path.join(d, f) for f in files]
    return found


def test_the_state_is_absent_until_set_and_only_the_owner_sets_it(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, ("alice", ALICE), ("bob", BOB))
    server = Server(root, "--users", str(users))
    try:
        alice, bob = as_account(server, ALICE), as_account(server, BOB)
        alice.create_bucket(Bucket="state", ACL="public-read-write")
        assert "Status" not in alice.get_bucket_versioning(Bucket="state")
        # Bob may write in the bucket, not set how it keeps versions.
        config = {"Status": "Enabled"}
        assert code(bob.put_bucket_versioning, Bucket="state",
                    VersioningConfiguration=config) == "AccessDenied"
        assert code(alice.put_bucket_versioning, Bucket="state",
                    VersioningConfiguration={"Status": "Off"}) == "IllegalVersioningConfigurationException"
        assert code(alice.put_bucket_versioning, Bucket="state", VersioningConfiguration={
            "Status": "Enabled", "MFADelete": "Enabled"}) == "NotImplemented"
        for status in ("Enabled", "Suspended", "Enabled"):
            enable(alice, "state", status)
            assert alice.get_bucket_versioning(Bucket="state")["Status"] == status
            assert bob.get_bucket_versioning(Bucket="state")["Status"] == status
    finally:
        server.stop()


def test_a_second_gateway_over_the_directory_sees_the_state_within_a_second(server):
    other = Server(server.root, "--access-key", AK, "--secret-key", SK)
    try:
        s3, s3_other = client(server), client(other)
        s3.create_bucket(Bucket="two")
        s3_other.put_object(Bucket="two", Key="k", Body=b"before")  # the other reads the state
        enable(s3, "two")
        time.sleep(1.1)
        assert s3_other.put_object(Bucket="two", Key="k", Body=b"after")["VersionId"] != "null"
        assert [v[1] for v in versions(s3, "two")][1:] == ["null"]
    finally:
        other.stop()


def test_an_unversioned_bucket_keeps_nothing_aside(server):
    s3 = client(server)
    s3.create_bucket(Bucket="plain")
    put = s3.put_object(Bucket="plain", Key="k", Body=b"one")
    s3.put_object(Bucket="plain", Key="k", Body=b"two")
    got = s3.get_object(Bucket="plain", Key="k")
    assert "VersionId" not in put and "VersionId" not in got and got["Body"].read() == b"two"
    assert "DeleteMarker" not in s3.delete_object(Bucket="plain", Key="k")
    assert code(s3.get_object, Bucket="plain", Key="k") == "NoSuchKey"
    assert kept_files(server.root) == []
    s3.delete_bucket(Bucket="plain")


def test_every_write_makes_a_version_and_a_delete_a_marker(server):
    s3 = client(server)
    s3.create_bucket(Bucket="vers")
    s3.put_object(Bucket="vers", Key="k", Body=b"before")  # the null version
    enable(s3, "vers")
    ids = [s3.put_object(Bucket="vers", Key="k", Body=b"v%d" % i)["VersionId"] for i in range(3)]
    ids.append(s3.copy_object(Bucket="vers", Key="k", CopySource={"Bucket": "vers", "Key": "k"},
                              MetadataDirective="REPLACE")["VersionId"])
    parts = [os.urandom(5 * MIB), b"tail"]
    up = s3.create_multipart_upload(Bucket="vers", Key="k")["UploadId"]
    etags = [s3.upload_part(Bucket="vers", Key="k", UploadId=up, PartNumber=i + 1, Body=p)["ETag"]
             for i, p in enumerate(parts)]
    done = s3.complete_multipart_upload(
        Bucket="vers", Key="k", UploadId=up,
        MultipartUpload={"Parts": [{"PartNumber": i + 1, "ETag": e} for i, e in enumerate(etags)]})
    ids.append(done["VersionId"])
    assert len(set(ids)) == 5 and ids == sorted(ids), "new ids, ordered by time"
    assert body(s3, "vers", "k") == b"".join(parts)
    head = s3.head_object(Bucket="vers", Key="k")
    assert head["VersionId"] == ids[-1]
    for i in range(3):
        assert body(s3, "vers", "k", VersionId=ids[i]) == b"v%d" % i
        assert s3.head_object(Bucket="vers", Key="k", VersionId=ids[i])["ContentLength"] == 2
    assert body(s3, "vers", "k", VersionId=ids[3]) == b"v2"
    assert body(s3, "vers", "k", VersionId="null") == b"before"
    assert error(s3.get_object, Bucket="vers", Key="k", VersionId="0" * 24)[:2] == ("NoSuchVersion", 404)
    assert error(s3.get_object, Bucket="vers", Key="k", VersionId="nonsense")[:2] == ("InvalidArgument", 400)

    # A delete without a version adds a delete marker: the key is gone, its versions kept.
    gone = s3.delete_object(Bucket="vers", Key="k")
    assert gone["DeleteMarker"] is True and gone["VersionId"] > ids[-1]
    for call in (s3.get_object, s3.head_object):
        _, status, headers = error(call, Bucket="vers", Key="k")
        assert status == 404 and headers["x-amz-delete-marker"] == "true"
        assert headers["x-amz-version-id"] == gone["VersionId"]
    c, status, headers = error(s3.get_object, Bucket="vers", Key="k", VersionId=gone["VersionId"])
    assert (c, status, headers["x-amz-delete-marker"]) == ("MethodNotAllowed", 405, "true")
    assert s3.list_objects_v2(Bucket="vers")["KeyCount"] == 0
    listed = versions(s3, "vers")
    assert [v[1] for v in listed] == [gone["VersionId"]] + ids[::-1] + ["null"]
    assert [v[2] for v in listed] == [True] + [False] * 6
    assert listed[0][3] and not any(v[3] for v in listed[1:])
    assert code(s3.delete_bucket, Bucket="vers") == "BucketNotEmpty"

    # Deleting the marker makes the version before it current again; deleting the current
    # version, the one before that.
    removed = s3.delete_object(Bucket="vers", Key="k", VersionId=gone["VersionId"])
    assert removed["DeleteMarker"] is True and removed["VersionId"] == gone["VersionId"]
    assert body(s3, "vers", "k") == b"".join(parts)
    s3.delete_object(Bucket="vers", Key="k", VersionId=ids[-1])
    assert body(s3, "vers", "k") == b"v2"
    assert s3.head_object(Bucket="vers", Key="k")["VersionId"] == ids[3]
    s3.delete_object(Bucket="vers", Key="k", VersionId=ids[1])  # one in the middle
    assert [v[1] for v in versions(s3, "vers")] == [ids[3], ids[2], ids[0], "null"]
    # DeleteObjects by version, then the bucket is empty and goes.
    answer = s3.delete_objects(Bucket="vers", Delete={"Objects": [
        {"Key": "k", "VersionId": v} for v in (ids[3], ids[2], ids[0], "null")]})
    assert sorted(d["VersionId"] for d in answer["Deleted"]) == sorted([ids[3], ids[2], ids[0], "null"])
    assert versions(s3, "vers") == [] and kept_files(server.root) == []
    assert code(s3.get_object, Bucket="vers", Key="k") == "NoSuchKey"
    s3.delete_bucket(Bucket="vers")


def test_concurrent_writers_of_one_key_each_make_a_version(server):
    s3 = client(server)
    s3.create_bucket(Bucket="race")
    enable(s3, "race")
    made = {}

    def write(n):
        c = client(server)
        for i in range(15):
            data = b"writer %d write %d" % (n, i)
            made[c.put_object(Bucket="race", Key="a/k", Body=data)["VersionId"]] = data
            if i % 5 == 4:
                made[c.delete_object(Bucket="race", Key="a/k")["VersionId"]] = None

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    listed = versions(s3, "race")
    assert sorted(v[1] for v in listed) == sorted(made) and len(made) == 8 * 18
    for _, vid, _, marker in listed:
        assert marker == (made[vid] is None)
        if not marker:
            assert body(s3, "race", "a/k", VersionId=vid) == made[vid]
    newest = max(made)
    assert listed[0][1] == newest and listed[0][2]


def test_a_suspended_bucket_replaces_the_null_version(server):
    s3 = client(server)
    s3.create_bucket(Bucket="susp")
    enable(s3, "susp")
    kept = s3.put_object(Bucket="susp", Key="k", Body=b"kept")["VersionId"]
    enable(s3, "susp", "Suspended")
    assert s3.put_object(Bucket="susp", Key="k", Body=b"null one")["VersionId"] == "null"
    assert s3.put_object(Bucket="susp", Key="k", Body=b"null two")["VersionId"] == "null"
    assert [v[1] for v in versions(s3, "susp")] == ["null", kept]
    assert body(s3, "susp", "k") == b"null two"
    assert s3.head_object(Bucket="susp", Key="k")["VersionId"] == "null"
    # A delete makes a null delete marker, which replaces the null version.
    gone = s3.delete_object(Bucket="susp", Key="k")
    assert (gone["DeleteMarker"], gone["VersionId"]) == (True, "null")
    assert [(v[1], v[3]) for v in versions(s3, "susp")] == [("null", True), (kept, False)]
    # Enabled again, writes are kept beside the null marker; versionId=null names it.
    enable(s3, "susp")
    new = s3.put_object(Bucket="susp", Key="k", Body=b"new")["VersionId"]
    assert [v[1] for v in versions(s3, "susp")] == [new, "null", kept]
    assert error(s3.get_object, Bucket="susp", Key="k", VersionId="null")[0] == "MethodNotAllowed"
    s3.delete_object(Bucket="susp", Key="k", VersionId="null")
    assert [v[1] for v in versions(s3, "susp")] == [new, kept]


def test_copies_read_the_version_named(server):
    s3 = client(server)
    s3.create_bucket(Bucket="copies")
    enable(s3, "copies")
    old = s3.put_object(Bucket="copies", Key="k", Body=b"old bytes")["VersionId"]
    s3.put_object(Bucket="copies", Key="k", Body=b"new bytes")
    source = {"Bucket": "copies", "Key": "k", "VersionId": old}
    made = s3.copy_object(Bucket="copies", Key="other", CopySource=source)
    assert made["CopySourceVersionId"] == old and body(s3, "copies", "other") == b"old bytes"
    # Copied onto its own key, an old version becomes current again (S3's way to restore).
    back = s3.copy_object(Bucket="copies", Key="k", CopySource=source)
    assert body(s3, "copies", "k") == b"old bytes"
    assert [v[1] for v in versions(s3, "copies", Prefix="k")][0] == back["VersionId"]
    assert len(versions(s3, "copies", Prefix="k")) == 3


def test_tags_and_acls_of_one_version_and_folder_markers(server):
    s3 = client(server)
    s3.create_bucket(Bucket="tags")
    enable(s3, "tags")
    old = s3.put_object(Bucket="tags", Key="k", Body=b"old", Tagging="age=old")["VersionId"]
    s3.put_object(Bucket="tags", Key="k", Body=b"new", Tagging="age=new")
    got = s3.get_object_tagging(Bucket="tags", Key="k", VersionId=old)
    assert got["VersionId"] == old and got["TagSet"] == [{"Key": "age", "Value": "old"}]
    s3.put_object_tagging(Bucket="tags", Key="k", VersionId=old,
                          Tagging={"TagSet": [{"Key": "age", "Value": "older"}]})
    assert s3.get_object_tagging(Bucket="tags", Key="k")["TagSet"][0]["Value"] == "new"
    assert s3.get_object_tagging(Bucket="tags", Key="k", VersionId=old)["TagSet"][0]["Value"] == "older"
    s3.put_object_acl(Bucket="tags", Key="k", VersionId=old, ACL="public-read")
    grants = s3.get_object_acl(Bucket="tags", Key="k", VersionId=old)["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("AllUsers") for g in grants)
    assert len(s3.get_object_acl(Bucket="tags", Key="k")["Grants"]) == 1
    attributes = s3.get_object_attributes(Bucket="tags", Key="k", VersionId=old,
                                          ObjectAttributes=["ObjectSize"])
    assert attributes["ObjectSize"] == 3
    # Folder markers (keys ending in /) are not versioned: replaced and deleted in place.
    assert "VersionId" not in s3.put_object(Bucket="tags", Key="folder/", Body=b"")
    assert "DeleteMarker" not in s3.delete_object(Bucket="tags", Key="folder/")
    assert [v[0] for v in versions(s3, "tags")] == ["k", "k"]


def test_listing_versions_pages_over_thousands_of_versions(server):
    s3 = client(server)
    s3.create_bucket(Bucket="many")
    enable(s3, "many")
    keys = [f"k{i:02d}" for i in range(36)] + ["d/x", "d/y/z", "k0-", "k0/a"]
    model = {k: [] for k in keys}  # per key: (id, marker) oldest first
    lock = threading.Lock()

    def write(key_list):
        c = client(server)
        for key in key_list:
            for n in range(52):
                if n % 17 == 16:
                    vid, marker = c.delete_object(Bucket="many", Key=key)["VersionId"], True
                else:
                    vid, marker = c.put_object(Bucket="many", Key=key, Body=b"%d" % n)["VersionId"], False
                with lock:
                    model[key].append((vid, marker))

    threads = [threading.Thread(target=write, args=(keys[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = [(k, vid, i == 0, marker)
            for k in sorted(keys) for i, (vid, marker) in enumerate(reversed(model[k]))]
    assert len(want) == len(keys) * 52 > 2000
    for page_size in (7, 1000):
        assert versions(s3, "many", MaxKeys=page_size) == want
    # Pages end inside a key, resume at its next version, and say where.
    page = s3.list_object_versions(Bucket="many", MaxKeys=5, KeyMarker="k03",
                                   VersionIdMarker=model["k03"][-3][0])
    got = [v["VersionId"] for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
    assert sorted(got) == sorted(vid for vid, _ in model["k03"][-8:-3])
    assert page["IsTruncated"] and page["NextKeyMarker"] == "k03"
    # Prefix and delimiter, common prefixes counted in max-keys.
    listed = s3.list_object_versions(Bucket="many", Prefix="k0", Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["k0/"]
    assert {v["Key"] for v in listed["Versions"]} == {f"k0{i}" for i in range(10)} | {"k0-"}
    seen = []
    for page in s3.get_paginator("list_object_versions").paginate(
            Bucket="many", Delimiter="/", PaginationConfig={"PageSize": 50}):
        seen += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    assert seen == ["d/", "k0/"]
    # The current versions alone in ListObjectsV2: a key under a delete marker is not there.
    current = {o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket="many")
               for o in page.get("Contents", [])}
    assert current == {k for k in keys if not model[k][-1][1]}


def test_the_gate_decides_from_the_version_read(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, ("alice", ALICE), ("bob", BOB))
    server = Server(root, "--users", str(users))
    try:
        alice, bob, anon = as_account(server, ALICE), as_account(server, BOB), unsigned(server)
        alice.create_bucket(Bucket="gated")
        enable(alice, "gated")
        public = alice.put_object(Bucket="gated", Key="k", Body=b"public", ACL="public-read")
        private = alice.put_object(Bucket="gated", Key="k", Body=b"private")
        for who in (anon, bob):
            assert code(who.get_object, Bucket="gated", Key="k") == "AccessDenied"
            assert body(who, "gated", "k", VersionId=public["VersionId"]) == b"public"
            assert who.head_object(Bucket="gated", Key="k",
                                   VersionId=public["VersionId"])["ContentLength"] == 6
            assert code(who.get_object, Bucket="gated", Key="k",
                        VersionId=private["VersionId"]) == "AccessDenied"
            # A copy's source is decided from the version it names too.
            assert code(who.copy_object, Bucket="gated", Key="c", CopySource={
                "Bucket": "gated", "Key": "k", "VersionId": private["VersionId"]}) == "AccessDenied"
            assert code(who.delete_object, Bucket="gated", Key="k",
                        VersionId=public["VersionId"]) == "AccessDenied"
        assert len(versions(alice, "gated")) == 2
    finally:
        server.stop()


def rclone_at(server, *args):
    env = dict(os.environ, RCLONE_CONFIG="/dev/null")
    env.pop("AWS_CA_BUNDLE", None)
    remote = ["--s3-provider=Other", f"--s3-endpoint={server.endpoint}",
              f"--s3-access-key-id={AK}", f"--s3-secret-access-key={SK}", "--s3-region=us-east-1"]
    out = subprocess.run(["rclone", *args, *remote], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_rclone_lists_and_copies_old_versions(server, tmp_path):
    client(server).create_bucket(Bucket="rcl")
    assert rclone_at(server, "backend", "versioning", ":s3:rcl").strip() == "Unversioned"
    assert rclone_at(server, "backend", "versioning", ":s3:rcl", "Enabled").strip() == "Enabled"
    src = tmp_path / "f.txt"
    for text in ("first", "second!"):
        src.write_text(text)
        rclone_at(server, "copyto", str(src), ":s3:rcl/dir/f.txt")
        time.sleep(1.1)  # rclone names old versions by the second (and millisecond)
    listed = rclone_at(server, "lsf", "--s3-versions", "-R", "--files-only", ":s3:rcl").split()
    assert len(listed) == 2 and "dir/f.txt" in listed
    old = next(name for name in listed if name != "dir/f.txt")
    assert old.startswith("dir/f-v") and old.endswith(".txt")
    assert rclone_at(server, "lsf", "-R", "--files-only", ":s3:rcl").split() == ["dir/f.txt"]
    out = tmp_path / "out"
    rclone_at(server, "copy", "--s3-versions", ":s3:rcl/dir", str(out))
    assert (out / "f.txt").read_text() == "second!"
    assert (out / old.split("/")[1]).read_text() == "first"


def test_aws_cli_sets_versioning_and_lists_versions(server):
    s3 = client(server)
    s3.create_bucket(Bucket="cli")
    aws(server, "s3api", "put-bucket-versioning", "--bucket", "cli",
        "--versioning-configuration", "Status=Enabled")
    assert json.loads(aws(server, "s3api", "get-bucket-versioning", "--bucket", "cli"))["Status"] == "Enabled"
    ids = [s3.put_object(Bucket="cli", Key="a b", Body=b"%d" % i)["VersionId"] for i in range(3)]
    marker = s3.delete_object(Bucket="cli", Key="a b")["VersionId"]
    listed = json.loads(aws(server, "s3api", "list-object-versions", "--bucket", "cli"))
    assert [v["VersionId"] for v in listed["Versions"]] == ids[::-1]
    assert [(m["Key"], m["VersionId"], m["IsLatest"]) for m in listed["DeleteMarkers"]] == \
        [("a b", marker, True)]


def test_versions_survive_kill_9_while_a_key_is_written(tmp_path):
    """Writes and deletes of one versioned key while the gateway is killed with SIGKILL and
    started again: every version listed can be read, every acknowledged version is listed,
    and the current one is the last acknowledged write (or the one cut off by the kill)."""
    root = tmp_path / "root"
    root.mkdir()
    server = Server(root, "--access-key", AK, "--secret-key", SK)
    s3 = client(server)
    s3.create_bucket(Bucket="crash")
    enable(s3, "crash")
    written = {}  # body's MD5 -> body, of every write tried
    acked = []  # (version id, body or None for a delete marker), in order
    rng = random.Random(36)
    try:
        for rnd in range(6):
            cut = []
            stop = threading.Event()

            def writer(c=client(server), rnd=rnd):
                n = 0
                while not stop.is_set():
                    n += 1
                    op = None if n % 5 == 0 else b"round %d write %d " % (rnd, n) * rng.randint(1, 3000)
                    if op is not None:
                        written[hashlib.md5(op).hexdigest()] = op
                    try:
                        if op is None:
                            vid = c.delete_object(Bucket="crash", Key="k")["VersionId"]
                        else:
                            vid = c.put_object(Bucket="crash", Key="k", Body=op)["VersionId"]
                    except Exception:
                        cut.append(op)
                        return
                    acked.append((vid, op))

            t = threading.Thread(target=writer)
            t.start()
            time.sleep(rng.uniform(0.3, 0.8))
            server.stop(signal.SIGKILL)
            t.join(timeout=30)
            server = Server(root, "--access-key", AK, "--secret-key", SK)
        s3 = client(server)
        listed = versions(s3, "crash")
        ids = [v[1] for v in listed]
        assert len(set(ids)) == len(ids)
        for vid, op in acked:
            assert vid in ids, "an acknowledged version was lost"
        for _, vid, _, marker in listed:
            if marker:
                assert error(s3.get_object, Bucket="crash", Key="k", VersionId=vid)[0] == "MethodNotAllowed"
            else:
                data = body(s3, "crash", "k", VersionId=vid)
                assert written.get(hashlib.md5(data).hexdigest()) == data
        last = acked[-1][1]
        try:
            now = body(s3, "crash", "k")
        except Exception:
            now = None
        assert now == last or (cut and now == cut[-1]), "the current version is the last write"
        assert listed[0][2] and listed[0][3] == (now is None)
    finally:
        server.stop()

