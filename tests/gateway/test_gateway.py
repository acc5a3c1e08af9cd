"""`iobm serve` against real S3 clients: the aws CLI and boto3, over loopback.

Run by scripts/test (which installs boto3, the aws CLI and pytest); IOBM_BIN names the binary.
"""

import base64
import datetime
import hashlib
import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time

import botocore
import pytest
from botocore.handlers import set_list_objects_encoding_type_url

from gateway_helpers import AK, SK, Server, aws, client


def test_aws_cli_multipart_copy_list_and_recursive_remove(server, tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(20 * 1024 * 1024 + 123))
    aws(server, "s3", "mb", "s3://bkt")
    aws(server, "s3", "cp", "--only-show-errors", str(big), "s3://bkt/dir/sub/big.bin")
    aws(server, "s3", "cp", "--only-show-errors", str(big), "s3://bkt/other.bin")
    listing = aws(server, "s3", "ls", "--recursive", "s3://bkt")
    assert "dir/sub/big.bin" in listing and "other.bin" in listing
    back = tmp_path / "back.bin"
    aws(server, "s3", "cp", "--only-show-errors", "s3://bkt/dir/sub/big.bin", str(back))
    assert back.read_bytes() == big.read_bytes()
    head = aws(server, "s3api", "head-object", "--bucket", "bkt", "--key", "dir/sub/big.bin")
    assert '-3\\""' in head, head  # 8 MiB parts: the MD5-of-MD5s ETag of 3 parts
    top = aws(server, "s3api", "list-objects-v2", "--bucket", "bkt", "--delimiter", "/")
    assert '"Prefix": "dir/"' in top and '"Key": "other.bin"' in top
    aws(server, "s3", "rm", "--recursive", "--only-show-errors", "s3://bkt")
    assert os.listdir(os.path.join(server.root, "bkt")) == []
    aws(server, "s3", "rb", "s3://bkt")
    assert sorted(os.listdir(server.root)) == [".iobm-gateway"]


def test_boto3_objects_metadata_ranges_and_digests(server):
    s3 = client(server)
    s3.create_bucket(Bucket="data")
    body = os.urandom(100_000)
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    put = s3.put_object(Bucket="data", Key="a/b.bin", Body=body, ContentType="application/x-test",
                        Metadata={"owner": "iobm"}, ContentMD5=md5)
    assert put["ETag"] == '"%s"' % hashlib.md5(body).hexdigest()
    head = s3.head_object(Bucket="data", Key="a/b.bin")
    assert head["ContentLength"] == len(body)
    assert head["ContentType"] == "application/x-test"
    assert head["Metadata"] == {"owner": "iobm"}
    part = s3.get_object(Bucket="data", Key="a/b.bin", Range="bytes=1000-1999")
    assert part["Body"].read() == body[1000:2000]
    assert part["ContentRange"] == "bytes 1000-1999/100000"
    tail = s3.get_object(Bucket="data", Key="a/b.bin", Range="bytes=-10")["Body"].read()
    assert tail == body[-10:]
    with pytest.raises(botocore.exceptions.ClientError) as bad:
        s3.put_object(Bucket="data", Key="bad", Body=b"x", ContentMD5=md5)
    assert bad.value.response["Error"]["Code"] == "BadDigest"
    # HEAD on a missing key or on a "directory" is 404.
    for key in ["missing", "a"]:
        with pytest.raises(botocore.exceptions.ClientError) as missing:
            s3.head_object(Bucket="data", Key=key)
        assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    copy = s3.copy_object(Bucket="data", Key="copy.bin", CopySource={"Bucket": "data", "Key": "a/b.bin"})
    assert copy["CopyObjectResult"]["ETag"] == put["ETag"]
    assert s3.get_object(Bucket="data", Key="copy.bin")["Body"].read() == body
    # Empty objects.
    s3.put_object(Bucket="data", Key="empty", Body=b"")
    assert s3.get_object(Bucket="data", Key="empty")["Body"].read() == b""


def test_boto3_listings_paginate_and_versions_are_null(server):
    s3 = client(server)
    s3.create_bucket(Bucket="list")
    keys = ["a/1", "a/2", "a/3", "b/1", "c", "d"]
    for k in keys:
        s3.put_object(Bucket="list", Key=k, Body=k.encode())
    got, token = [], None
    while True:
        kw = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket="list", MaxKeys=2, **kw)
        got += [o["Key"] for o in page.get("Contents", [])]
        assert all("ETag" in o and o["Size"] > 0 for o in page.get("Contents", []))
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert got == keys
    v1 = s3.list_objects(Bucket="list", Delimiter="/", MaxKeys=1000)
    assert [p["Prefix"] for p in v1["CommonPrefixes"]] == ["a/", "b/"]
    assert [o["Key"] for o in v1["Contents"]] == ["c", "d"]
    pre = s3.list_objects_v2(Bucket="list", Prefix="a/")
    assert [o["Key"] for o in pre["Contents"]] == ["a/1", "a/2", "a/3"]
    versions = s3.list_object_versions(Bucket="list")
    assert {v["VersionId"] for v in versions["Versions"]} == {"null"}
    assert s3.get_bucket_versioning(Bucket="list").get("Status") is None
    s3.get_bucket_location(Bucket="list")
    deleted = s3.delete_objects(Bucket="list", Delete={"Objects": [{"Key": k} for k in keys]})
    assert len(deleted["Deleted"]) == len(keys)
    s3.delete_bucket(Bucket="list")
    assert "list" not in os.listdir(server.root)


def test_boto3_multipart_lifecycle(server):
    s3 = client(server)
    s3.create_bucket(Bucket="mpu")
    up = s3.create_multipart_upload(Bucket="mpu", Key="big", ContentType="video/x-test")
    uid = up["UploadId"]
    parts = [os.urandom(5 * 1024 * 1024), os.urandom(1234)]
    etags = [s3.upload_part(Bucket="mpu", Key="big", UploadId=uid, PartNumber=i + 1, Body=p)["ETag"]
             for i, p in enumerate(parts)]
    listed = s3.list_parts(Bucket="mpu", Key="big", UploadId=uid)
    assert [p["PartNumber"] for p in listed["Parts"]] == [1, 2]
    assert [u["UploadId"] for u in s3.list_multipart_uploads(Bucket="mpu")["Uploads"]] == [uid]
    done = s3.complete_multipart_upload(
        Bucket="mpu", Key="big", UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": i + 1, "ETag": e} for i, e in enumerate(etags)]})
    expected = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-2"
    assert done["ETag"] == '"%s"' % expected
    obj = s3.get_object(Bucket="mpu", Key="big")
    assert obj["Body"].read() == b"".join(parts)
    assert obj["ContentType"] == "video/x-test"
    aborted = s3.create_multipart_upload(Bucket="mpu", Key="gone")["UploadId"]
    s3.upload_part(Bucket="mpu", Key="gone", UploadId=aborted, PartNumber=1, Body=b"x")
    s3.abort_multipart_upload(Bucket="mpu", Key="gone", UploadId=aborted)
    assert s3.list_multipart_uploads(Bucket="mpu").get("Uploads", []) == []
    assert os.listdir(os.path.join(server.root, ".iobm-gateway", "uploads")) == []


def test_wrong_or_missing_signatures_are_refused(server):
    good = client(server)
    good.create_bucket(Bucket="auth")
    good.put_object(Bucket="auth", Key="k", Body=b"secret")
    with pytest.raises(botocore.exceptions.ClientError) as wrong:
        client(server, secret="not-the-secret").get_object(Bucket="auth", Key="k")
    assert wrong.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/auth/k")
    assert conn.getresponse().status == 403
    # A presigned URL works without headers, and not once tampered with.
    url = good.generate_presigned_url("get_object", Params={"Bucket": "auth", "Key": "k"}, ExpiresIn=60)
    path = url.split(str(server.port), 1)[1]
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    assert response.status == 200 and response.read() == b"secret"
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", path.replace("Signature=", "Signature=0"))
    assert conn.getresponse().status == 403


def test_keys_never_escape_the_directory(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--anonymous")
    try:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        conn.request("PUT", "/pub")
        assert conn.getresponse().status == 200
        for path in ["/pub/..%2F..%2Fescaped", "/pub/a/..%2F..%2F..%2Fescaped", "/pub/%2Fescaped",
                     "/pub/a%00b", "/pub/" + "k" * 1100]:
            conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
            conn.request("PUT", path, body=b"x")
            status = conn.getresponse().status
            assert status >= 400, path
        assert not (tmp_path / "escaped").exists()
        assert os.listdir(root / "pub") == []
    finally:
        s.stop()


def test_readers_never_see_a_torn_object(server):
    s3 = client(server)
    s3.create_bucket(Bucket="race")
    versions = [bytes([c]) * (2 * 1024 * 1024) for c in b"ab"]
    s3.put_object(Bucket="race", Key="k", Body=versions[0])
    stop = threading.Event()
    problems = []

    def writer():
        w = client(server)
        i = 0
        while not stop.is_set():
            w.put_object(Bucket="race", Key="k", Body=versions[i % 2])
            i += 1

    def reader():
        r = client(server)
        for _ in range(25):
            data = r.get_object(Bucket="race", Key="k")["Body"].read()
            if data not in versions:
                problems.append(len(data))

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    stop.set()
    threads[0].join()
    assert problems == []


def test_a_put_cut_short_by_sigkill_leaves_no_object(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--anonymous")
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    conn.request("PUT", "/kill")
    assert conn.getresponse().status == 200
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    conn.putrequest("PUT", "/kill/half")
    conn.putheader("Content-Length", str(64 * 1024 * 1024))
    conn.endheaders()
    conn.send(b"z" * (4 * 1024 * 1024))
    time.sleep(0.5)
    s.stop(signal.SIGKILL)
    assert os.listdir(root / "kill") == []
    tmp = root / ".iobm-gateway" / "tmp"
    assert len(os.listdir(tmp)) == 1  # the dead gateway's temporary directory
    s2 = Server(root, "--anonymous")
    try:
        conn = http.client.HTTPConnection("127.0.0.1", s2.port, timeout=10)
        conn.request("HEAD", "/kill/half")
        assert conn.getresponse().status == 404
        # The new gateway cleaned the dead one's temporary files and made its own directory.
        assert len(os.listdir(tmp)) == 1
    finally:
        s2.stop()


def test_two_gateways_on_one_directory_agree(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    a = Server(root, "--access-key", AK, "--secret-key", SK)
    b = Server(root, "--access-key", AK, "--secret-key", SK)
    try:
        client(a).create_bucket(Bucket="shared")
        client(a).put_object(Bucket="shared", Key="x", Body=b"from a")
        assert client(b).get_object(Bucket="shared", Key="x")["Body"].read() == b"from a"
        client(b).put_object(Bucket="shared", Key="x", Body=b"from b")
        assert client(a).get_object(Bucket="shared", Key="x")["Body"].read() == b"from b"
    finally:
        a.stop()
        b.stop()


def test_memory_does_not_grow_with_object_size(server, tmp_path):
    size = 200 * 1024 * 1024
    big = tmp_path / "zeros.bin"
    with open(big, "wb") as f:
        f.truncate(size)
    s3 = client(server)
    s3.create_bucket(Bucket="mem")
    with open(big, "rb") as f:
        s3.put_object(Bucket="mem", Key="z", Body=f)
    body = s3.get_object(Bucket="mem", Key="z")["Body"]
    n = 0
    while chunk := body.read(1 << 20):
        n += len(chunk)
    assert n == size
    with open(f"/proc/{server.proc.pid}/status") as status:
        peak_kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    assert peak_kib < 64 * 1024, f"gateway peak RSS {peak_kib} KiB for a {size}-byte object"


def test_counters_for_a_signed_scrape_say_what_was_served_and_from_where(server):
    """A signed `GET /metrics` asking for text (botocore signs it as any request) answers the
    gateway's counters in the Prometheus text format; unsigned, it is refused."""
    import urllib.request
    from urllib.error import HTTPError

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    s3 = client(server)
    s3.create_bucket(Bucket="counted")
    s3.put_object(Bucket="counted", Key="k", Body=b"x" * 100_000)
    s3.get_object(Bucket="counted", Key="k")["Body"].read()

    url = server.endpoint + "/metrics"
    headers = {"Accept": "text/plain", "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}
    request = AWSRequest(method="GET", url=url, headers=headers)
    SigV4Auth(Credentials(AK, SK), "s3", "us-east-1").add_auth(request)
    with urllib.request.urlopen(urllib.request.Request(url, headers=dict(request.headers))) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert r.headers["x-iobm-gateway"]
        text = r.read().decode()
    assert 'iobm_gateway_received_bytes_total{bucket="counted"} 100000' in text
    assert 'iobm_gateway_served_bytes_total{bucket="counted"} 100000' in text
    # Just written: the GET found all of it in the page cache.
    assert 'iobm_gateway_served_resident_bytes_total{bucket="counted"} 100000' in text
    try:
        urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "text/plain"}))
        raise AssertionError("an unsigned scrape was answered")
    except HTTPError as e:
        assert e.code == 403
    # A listing of a bucket named `metrics` is still a listing (no Accept: text/plain).
    s3.create_bucket(Bucket="metrics")
    assert s3.list_objects(Bucket="metrics").get("Contents", []) == []


def test_listings_url_encode_keys_and_answer_as_s3_does(server):
    # boto3 asks for encoding-type=url and decodes what comes back: keys that are not plain
    # must arrive encoded, or `%2e%2e/x` would reach a sync tool as `../x`.
    s3 = client(server)
    s3.create_bucket(Bucket="odd")
    keys = ["d/%2e%2e/x", "d/a b", "d/plus+sign", "d/\u00fcml", "d/q\"uote", "d/<tag>"]
    for k in keys:
        s3.put_object(Bucket="odd", Key=k, Body=b"x")
    v2 = s3.list_objects_v2(Bucket="odd", Prefix="d/")
    assert sorted(o["Key"] for o in v2["Contents"]) == sorted(keys)
    assert v2["EncodingType"] == "url"
    v1 = s3.list_objects(Bucket="odd", Prefix="d/", Delimiter="/")
    assert sorted(o["Key"] for o in v1["Contents"]) == sorted(keys[1:])
    assert [p["Prefix"] for p in v1["CommonPrefixes"]] == ["d/%2e%2e/"]
    prefixes = s3.list_objects_v2(Bucket="odd", Delimiter="/")
    assert [p["Prefix"] for p in prefixes["CommonPrefixes"]] == ["d/"]
    versions = s3.list_object_versions(Bucket="odd", Prefix="d/")
    assert sorted(v["Key"] for v in versions["Versions"]) == sorted(keys)
    # Paging by marker through encoded keys, one at a time, gives every key once.
    got, marker = [], None
    while True:
        kw = {"Marker": marker} if marker else {}
        page = s3.list_objects(Bucket="odd", MaxKeys=1, **kw)
        got += [o["Key"] for o in page.get("Contents", [])]
        assert page.get("Marker", "") == (marker or "")
        if not page["IsTruncated"]:
            break
        marker = page.get("NextMarker", got[-1])
    assert got == sorted(keys)
    # Not asked to encode: the keys as they are.
    plain = client(server)
    plain.meta.events.unregister(
        "before-parameter-build.s3.ListObjectsV2", set_list_objects_encoding_type_url
    )
    raw = plain.list_objects_v2(Bucket="odd", Prefix="d/")
    assert "EncodingType" not in raw
    assert sorted(o["Key"] for o in raw["Contents"]) == sorted(keys)
    # max-keys=0: an empty page that is not truncated.
    empty = s3.list_objects_v2(Bucket="odd", MaxKeys=0)
    assert empty["KeyCount"] == 0 and empty["IsTruncated"] is False
    # The owner: with fetch-owner in V2, always in V1.
    assert "Owner" not in v2["Contents"][0]
    owned = s3.list_objects_v2(Bucket="odd", FetchOwner=True)
    assert owned["Contents"][0]["Owner"]["DisplayName"] == "iobm"
    assert v1["Contents"][0]["Owner"]["ID"] == "iobm"
    # An empty delimiter groups nothing.
    flat = s3.list_objects_v2(Bucket="odd", Delimiter="")
    assert flat["KeyCount"] == len(keys) and "CommonPrefixes" not in flat
    # V1 with a delimiter pages by NextMarker through keys and common prefixes alike.
    s3.put_object(Bucket="odd", Key="top", Body=b"t")
    seen, marker = [], ""
    while True:
        page = s3.list_objects(Bucket="odd", Delimiter="/", MaxKeys=1, Marker=marker)
        seen += [o["Key"] for o in page.get("Contents", [])]
        seen += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        assert page["NextMarker"] == seen[-1]
        marker = page["NextMarker"]
    assert seen == ["d/", "top"]
    # The aws CLI sees the same (it asks for encoding-type=url too).
    listed = json.loads(aws(server, "s3api", "list-objects-v2", "--bucket", "odd", "--prefix", "d/",
                            "--delimiter", "/"))
    assert sorted(o["Key"] for o in listed["Contents"]) == sorted(keys[1:])
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["d/%2e%2e/"]


def test_a_refused_upload_leaves_the_next_request_whole(server):
    # A PUT refused before its body is read (a missing bucket, a key that cannot be a file)
    # closes its connection, so the client's next request is not read from what was left.
    s3 = client(server)
    s3.create_bucket(Bucket="after")
    for bucket, key, body in [("nosuch", "k", b"x" * 10), ("after", "k" * 1025, b"x" * 10),
                              ("nosuch", "k", b"")]:
        with pytest.raises(botocore.exceptions.ClientError) as refused:
            s3.put_object(Bucket=bucket, Key=key, Body=body)
        assert refused.value.response["Error"]["Code"] in ("NoSuchBucket", "KeyTooLongError")
        s3.put_object(Bucket="after", Key="next", Body=b"y")
        assert s3.get_object(Bucket="after", Key="next")["Body"].read() == b"y"


def test_multipart_completion_rules_of_s3(server):
    s3 = client(server)
    s3.create_bucket(Bucket="rules")

    def upload(key, sizes):
        uid = s3.create_multipart_upload(Bucket="rules", Key=key)["UploadId"]
        parts = [{"PartNumber": i + 1, "ETag": s3.upload_part(
            Bucket="rules", Key=key, UploadId=uid, PartNumber=i + 1, Body=b"p" * n)["ETag"]}
            for i, n in enumerate(sizes)]
        return uid, parts

    def refused(key, uid, parts):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3.complete_multipart_upload(Bucket="rules", Key=key, UploadId=uid,
                                         MultipartUpload={"Parts": parts})
        return e.value.response["Error"]["Code"]

    # A part under 5 MiB that is not the last.
    uid, parts = upload("small", [1024, 1024])
    assert refused("small", uid, parts) == "EntityTooSmall"
    # Out of order, and a part never uploaded.
    uid, parts = upload("order", [5 << 20, 10])
    assert refused("order", uid, parts[::-1]) == "InvalidPartOrder"
    assert refused("order", uid, [parts[0], {"PartNumber": 3, "ETag": parts[1]["ETag"]}]) \
        == "InvalidPart"
    # Done; done again (a client's retry) answers as the first time.
    first = s3.complete_multipart_upload(Bucket="rules", Key="order", UploadId=uid,
                                         MultipartUpload={"Parts": parts})
    again = s3.complete_multipart_upload(Bucket="rules", Key="order", UploadId=uid,
                                         MultipartUpload={"Parts": parts})
    assert again["ETag"] == first["ETag"] and first["ETag"].endswith('-2"')
    # Not for another key.
    assert refused("elsewhere", uid, parts) == "NoSuchUpload"
    assert s3.head_object(Bucket="rules", Key="order")["ContentLength"] == (5 << 20) + 10


def test_a_copy_onto_itself_must_replace_its_metadata(server):
    s3 = client(server)
    s3.create_bucket(Bucket="self")
    s3.put_object(Bucket="self", Key="k", Body=b"hello", Metadata={"old": "1"})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.copy_object(Bucket="self", Key="k", CopySource={"Bucket": "self", "Key": "k"})
    assert e.value.response["Error"]["Code"] == "InvalidRequest"
    s3.copy_object(Bucket="self", Key="k", CopySource={"Bucket": "self", "Key": "k"},
                   MetadataDirective="REPLACE", Metadata={"new": "2"})
    head = s3.head_object(Bucket="self", Key="k")
    assert head["Metadata"] == {"new": "2"} and head["ContentLength"] == 5


def test_objects_keep_their_standard_headers(server):
    s3 = client(server)
    s3.create_bucket(Bucket="hdr")
    sent = dict(CacheControl="max-age=60", ContentDisposition='attachment; filename="a b.txt"',
                ContentEncoding="gzip", ContentLanguage="de-CH")
    expires = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    s3.put_object(Bucket="hdr", Key="put", Body=b"x", Expires=expires, **sent)
    uid = s3.create_multipart_upload(Bucket="hdr", Key="mpu", Expires=expires, **sent)["UploadId"]
    etag = s3.upload_part(Bucket="hdr", Key="mpu", UploadId=uid, PartNumber=1, Body=b"y")["ETag"]
    s3.complete_multipart_upload(Bucket="hdr", Key="mpu", UploadId=uid,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    for key in ["put", "mpu"]:
        for answer in [s3.head_object(Bucket="hdr", Key=key), s3.get_object(Bucket="hdr", Key=key)]:
            assert {k: answer[k] for k in sent} == sent, key
            assert answer["Expires"] == expires, key
    # A copy keeps them; a copy that replaces the metadata replaces them.
    s3.copy_object(Bucket="hdr", Key="copy", CopySource={"Bucket": "hdr", "Key": "put"})
    assert s3.head_object(Bucket="hdr", Key="copy")["CacheControl"] == "max-age=60"
    s3.copy_object(Bucket="hdr", Key="copy", CopySource={"Bucket": "hdr", "Key": "put"},
                   MetadataDirective="REPLACE", CacheControl="no-store")
    replaced = s3.head_object(Bucket="hdr", Key="copy")
    assert replaced["CacheControl"] == "no-store" and "ContentLanguage" not in replaced


def test_parts_of_a_multipart_object_by_number(server):
    s3 = client(server)
    s3.create_bucket(Bucket="parts")
    parts = [os.urandom(5 << 20), os.urandom(777)]
    uid = s3.create_multipart_upload(Bucket="parts", Key="mpu")["UploadId"]
    listed = [{"PartNumber": i + 1, "ETag": s3.upload_part(
        Bucket="parts", Key="mpu", UploadId=uid, PartNumber=i + 1, Body=p)["ETag"]}
        for i, p in enumerate(parts)]
    s3.complete_multipart_upload(Bucket="parts", Key="mpu", UploadId=uid,
                                 MultipartUpload={"Parts": listed})
    for n, body in enumerate(parts, start=1):
        got = s3.get_object(Bucket="parts", Key="mpu", PartNumber=n)
        assert got["Body"].read() == body and got["PartsCount"] == 2
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
        head = s3.head_object(Bucket="parts", Key="mpu", PartNumber=n)
        assert head["ContentLength"] == len(body) and head["PartsCount"] == 2
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket="parts", Key="mpu", PartNumber=3)
    assert e.value.response["Error"]["Code"] == "InvalidPartNumber"
    # An object put whole is its own part 1.
    s3.put_object(Bucket="parts", Key="whole", Body=b"abc")
    assert s3.get_object(Bucket="parts", Key="whole", PartNumber=1)["Body"].read() == b"abc"


def test_object_attributes_with_parts_a_page_at_a_time(server):
    s3 = client(server)
    s3.create_bucket(Bucket="attrs")
    parts = [os.urandom(5 << 20), os.urandom(5 << 20), os.urandom(99)]
    uid = s3.create_multipart_upload(Bucket="attrs", Key="mpu")["UploadId"]
    listed = [{"PartNumber": i + 1, "ETag": s3.upload_part(
        Bucket="attrs", Key="mpu", UploadId=uid, PartNumber=i + 1, Body=p)["ETag"]}
        for i, p in enumerate(parts)]
    done = s3.complete_multipart_upload(Bucket="attrs", Key="mpu", UploadId=uid,
                                        MultipartUpload={"Parts": listed})
    every = ["ETag", "ObjectSize", "ObjectParts", "StorageClass"]
    first = s3.get_object_attributes(Bucket="attrs", Key="mpu", ObjectAttributes=every,
                                     MaxParts=2)
    assert first["ETag"].strip('"') == done["ETag"].strip('"')
    assert first["ObjectSize"] == sum(len(p) for p in parts)
    assert first["StorageClass"] == "STANDARD"
    page = first["ObjectParts"]
    assert page["TotalPartsCount"] == 3 and page["IsTruncated"] is True
    assert [(p["PartNumber"], p["Size"]) for p in page["Parts"]] == [(1, 5 << 20), (2, 5 << 20)]
    rest = s3.get_object_attributes(Bucket="attrs", Key="mpu", ObjectAttributes=["ObjectParts"],
                                    PartNumberMarker=page["NextPartNumberMarker"])
    assert [(p["PartNumber"], p["Size"]) for p in rest["ObjectParts"]["Parts"]] == [(3, 99)]
    assert rest["ObjectParts"]["IsTruncated"] is False and "ETag" not in rest
    s3.put_object(Bucket="attrs", Key="whole", Body=b"abc")
    whole = s3.get_object_attributes(Bucket="attrs", Key="whole", ObjectAttributes=every)
    assert whole["ObjectSize"] == 3 and "ObjectParts" not in whole


def test_keys_of_any_printable_characters(server):
    s3 = client(server)
    s3.create_bucket(Bucket="keys")
    keys = [" lead", "trail ", 'q"uote', "pct%25", "plus+", "<lt>", "_u", "a  b", "x/ y /z",
            "tab\tkey", "semi;colon", "hash#", "q?m", "amp&", "\u00e9t\u00e9"]
    for k in keys:
        s3.put_object(Bucket="keys", Key=k, Body=k.encode())
        assert s3.get_object(Bucket="keys", Key=k)["Body"].read() == k.encode()
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket="keys")["Contents"]]
    assert listed == sorted(keys, key=lambda k: k.encode())
    deleted = s3.delete_objects(Bucket="keys", Delete={"Objects": [{"Key": k} for k in keys]})
    assert len(deleted["Deleted"]) == len(keys)
    assert s3.list_objects_v2(Bucket="keys").get("KeyCount") == 0


def test_upload_part_copy_whole_and_ranges(server):
    s3 = client(server)
    s3.create_bucket(Bucket="pcopy")
    source = os.urandom((9 << 20) + 1000)
    s3.put_object(Bucket="pcopy", Key="src", Body=source)
    uid = s3.create_multipart_upload(Bucket="pcopy", Key="joined")["UploadId"]

    def copy(n, **extra):
        return s3.upload_part_copy(Bucket="pcopy", Key="joined", UploadId=uid, PartNumber=n,
                                   CopySource={"Bucket": "pcopy", "Key": "src"}, **extra)

    whole = copy(1)["CopyPartResult"]["ETag"]
    assert whole == '"%s"' % hashlib.md5(source).hexdigest()
    ranged = copy(2, CopySourceRange="bytes=100-1099")["CopyPartResult"]["ETag"]
    assert ranged == '"%s"' % hashlib.md5(source[100:1100]).hexdigest()
    for bad in ["bytes=0-%d" % len(source), "bytes=10-5", "bytes=-5", "100-200", "bytes=a-b"]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            copy(3, CopySourceRange=bad)
        assert e.value.response["Error"]["Code"] == "InvalidArgument", bad
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.upload_part_copy(Bucket="pcopy", Key="joined", UploadId=uid, PartNumber=3,
                            CopySource={"Bucket": "pcopy", "Key": "missing"})
    assert e.value.response["Error"]["Code"] == "NoSuchKey"
    parts = [{"PartNumber": 1, "ETag": whole}, {"PartNumber": 2, "ETag": ranged}]
    listed = s3.list_parts(Bucket="pcopy", Key="joined", UploadId=uid)["Parts"]
    assert [(p["PartNumber"], p["Size"]) for p in listed] == [(1, len(source)), (2, 1000)]
    s3.complete_multipart_upload(Bucket="pcopy", Key="joined", UploadId=uid,
                                 MultipartUpload={"Parts": parts})
    got = s3.get_object(Bucket="pcopy", Key="joined")["Body"].read()
    assert got == source + source[100:1100]
    # The aws CLI copies an object over its 8 MiB threshold part by part (UploadPartCopy with
    # ranges).
    aws(server, "s3", "cp", "s3://pcopy/joined", "s3://pcopy/by-cli")
    assert s3.get_object(Bucket="pcopy", Key="by-cli")["Body"].read() == got



def test_folder_markers_list_and_outlive_their_contents(server, tmp_path):
    s3 = client(server)
    s3.create_bucket(Bucket="folders")
    empty_md5 = '"d41d8cd98f00b204e9800998ecf8427e"'
    s3.put_object(Bucket="folders", Key="photos/", Body=b"", ContentType="application/x-directory")
    head = s3.head_object(Bucket="folders", Key="photos/")
    assert head["ContentLength"] == 0 and head["ETag"] == empty_md5
    assert head["ContentType"] == "application/x-directory"
    assert s3.get_object(Bucket="folders", Key="photos/")["Body"].read() == b""
    s3.put_object(Bucket="folders", Key="photos/a.jpg", Body=b"jpeg")
    s3.put_object(Bucket="folders", Key="top", Body=b"t")
    listed = s3.list_objects_v2(Bucket="folders")
    assert [o["Key"] for o in listed["Contents"]] == ["photos/", "photos/a.jpg", "top"]
    top = s3.list_objects_v2(Bucket="folders", Delimiter="/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["photos/"]
    inside = s3.list_objects_v2(Bucket="folders", Prefix="photos/", Delimiter="/")
    assert [o["Key"] for o in inside["Contents"]] == ["photos/", "photos/a.jpg"]
    # The marker outlives what was in it, and goes with its own delete.
    s3.delete_object(Bucket="folders", Key="photos/a.jpg")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="folders")["Contents"]] == ["photos/", "top"]
    s3.delete_object(Bucket="folders", Key="photos/")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="folders")["Contents"]] == ["top"]
    assert not os.path.exists(os.path.join(server.root, "folders", "photos"))
    # A marker holds no bytes here.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket="folders", Key="full/", Body=b"bytes")
    assert e.value.response["Error"]["Code"] == "InvalidArgument"
    assert "folder marker" in e.value.response["Error"]["Message"]
    # What the aws CLI makes and shows.
    aws(server, "s3api", "put-object", "--bucket", "folders", "--key", "made-by-cli/")
    assert "PRE made-by-cli/" in aws(server, "s3", "ls", "s3://folders/")


def test_a_key_where_a_directory_is_or_the_reverse_names_the_conflict(server):
    s3 = client(server)
    s3.create_bucket(Bucket="clash")
    s3.put_object(Bucket="clash", Key="a", Body=b"file")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket="clash", Key="a/b", Body=b"below a file")
    assert e.value.response["Error"]["Code"] == "InvalidArgument"
    assert "a is an object" in e.value.response["Error"]["Message"]
    s3.put_object(Bucket="clash", Key="c/d", Body=b"in a directory")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket="clash", Key="c", Body=b"over a directory")
    assert e.value.response["Error"]["Code"] == "InvalidArgument"
    assert "keys below c/ exist" in e.value.response["Error"]["Message"]
    assert s3.get_object(Bucket="clash", Key="c/d")["Body"].read() == b"in a directory"
    assert s3.get_object(Bucket="clash", Key="a")["Body"].read() == b"file"
    # An object request in a bucket that does not exist.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket="no-such-bucket", Key="x")
    assert e.value.response["Error"]["Code"] == "NoSuchBucket"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket="no-such-bucket", Key="x", Body=b"x")
    assert e.value.response["Error"]["Code"] == "NoSuchBucket"


def signed_headers(server, method, path, extra, body=b""):
    """Headers of a SigV4-signed request whose payload hash is that of `body`, as boto3 signs
    over plain HTTP."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    request = AWSRequest(method=method, url=server.endpoint + path, data=body, headers=extra)
    S3SigV4Auth(Credentials(AK, SK), "s3", "us-east-1").add_auth(request)
    return dict(request.headers.items())


def test_keys_that_are_not_utf8_are_refused(server):
    client(server).create_bucket(Bucket="bytes")
    for path in ["/bytes/%FF%FE", "/bytes/ok/%C3%28"]:
        for method in ["PUT", "GET"]:
            headers = signed_headers(server, method, path, {})
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request(method, path, body=b"" if method == "PUT" else None, headers=headers)
            answer = conn.getresponse()
            body = answer.read()
            assert answer.status == 400, (method, path, answer.status, body)
            conn.close()
    assert os.listdir(os.path.join(server.root, "bytes")) == []


def test_rclone_syncs_a_tree_with_folder_markers_and_odd_names(server, tmp_path):
    s3 = client(server)
    s3.create_bucket(Bucket="sync")
    names = ["plain.txt", "with space.txt", "plus+sign", "pct%20", "hash#tag", "semi;colon",
             "caf\u00e9.txt", "deep/er/file", "deep/x y/z", "q'uote"]
    src = tmp_path / "src"
    for i, name in enumerate(names):
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(1000 + i))
    env = dict(os.environ, RCLONE_CONFIG="/dev/null")
    env.pop("AWS_CA_BUNDLE", None)
    remote = ["--s3-provider=Other", f"--s3-endpoint={server.endpoint}",
              f"--s3-access-key-id={AK}", f"--s3-secret-access-key={SK}", "--s3-region=us-east-1"]

    def rclone(*args):
        out = subprocess.run(["rclone", *args, *remote], env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    rclone("sync", str(src), ":s3:sync/tree")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="sync", Prefix="tree/")["Contents"])
    assert keys == sorted("tree/" + n for n in names)
    rclone("check", str(src), ":s3:sync/tree")
    # Folder markers, as consoles make them, and a changed tree synced back and forth.
    s3.put_object(Bucket="sync", Key="tree/empty-folder/", Body=b"")
    s3.put_object(Bucket="sync", Key="tree/deep/", Body=b"")
    (src / "plain.txt").unlink()
    (src / "new file").write_bytes(b"new")
    rclone("sync", str(src), ":s3:sync/tree")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="sync", Prefix="tree/")["Contents"]
                  if not o["Key"].endswith("/"))
    assert "tree/plain.txt" not in keys and "tree/new file" in keys
    back = tmp_path / "back"
    rclone("sync", ":s3:sync/tree", str(back))
    got = sorted(str(p.relative_to(back)) for p in back.rglob("*") if p.is_file())
    want = sorted(str(p.relative_to(src)) for p in src.rglob("*") if p.is_file())
    assert got == want
    for name in want:
        assert (back / name).read_bytes() == (src / name).read_bytes()


def test_chunked_put_without_length_and_expect_100_continue(server):
    s3 = client(server)
    s3.create_bucket(Bucket="chunks")
    body = os.urandom(300_000)
    # Transfer-Encoding: chunked, no Content-Length.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    headers = signed_headers(server, "PUT", "/chunks/streamed", {"Transfer-Encoding": "chunked"}, body)
    conn.request("PUT", "/chunks/streamed", body=iter([body[:1000], body[1000:150_000], body[150_000:]]),
                 headers=headers, encode_chunked=True)
    answer = conn.getresponse()
    assert answer.status == 200, answer.read()
    assert answer.getheader("ETag") == '"%s"' % hashlib.md5(body).hexdigest()
    conn.close()
    assert s3.get_object(Bucket="chunks", Key="streamed")["Body"].read() == body
    # The payload hash is still checked: a body other than the one signed stores nothing.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    headers = signed_headers(server, "PUT", "/chunks/tampered", {"Transfer-Encoding": "chunked"}, body)
    conn.request("PUT", "/chunks/tampered", body=iter([body[:-1], b"!"]), headers=headers,
                 encode_chunked=True)
    answer = conn.getresponse()
    assert answer.status == 400, answer.read()
    conn.close()
    assert "tampered" not in [o["Key"] for o in s3.list_objects_v2(Bucket="chunks")["Contents"]]
    # Expect: 100-continue: the gateway says go on before the body is sent.
    headers = signed_headers(server, "PUT", "/chunks/expected",
                             {"Content-Length": str(len(body)), "Expect": "100-continue"}, body)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        headers.setdefault("Host", f"127.0.0.1:{server.port}")
        head = "PUT /chunks/expected HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        sock.sendall(head.encode())
        interim = sock.recv(4096)
        assert interim.startswith(b"HTTP/1.1 100 Continue"), interim
        sock.sendall(body)
        final = sock.recv(4096)
        assert final.startswith(b"HTTP/1.1 200"), final
    assert s3.get_object(Bucket="chunks", Key="expected")["Body"].read() == body
