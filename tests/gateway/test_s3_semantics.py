"""S3 behaviours real clients rely on, as S3 answers them: conditional reads, copies and writes
(one winner among racing `If-None-Match: *` PUTs), object tagging, part numbers, the ETag in
GetObjectAttributes, the bucket names S3 refuses, the 2 KB limit of user metadata, and keys whose
parts are longer than a file name (S3 takes any key up to 1024 bytes)."""

import datetime
import hashlib
import http.client
import json
import os
import threading

import botocore
import pytest

from gateway_helpers import aws, client

PAST = datetime.datetime(1994, 10, 29, 19, 43, 31, tzinfo=datetime.timezone.utc)
FUTURE = datetime.datetime(2100, 10, 29, 19, 43, 31, tzinfo=datetime.timezone.utc)


def status_and_code(call, *args, **kwargs):
    """The HTTP status and S3 error code of a call, or (200, "ok")."""
    try:
        call(*args, **kwargs)
        return 200, "ok"
    except botocore.exceptions.ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]


def etag_of(body):
    return '"%s"' % hashlib.md5(body).hexdigest()


@pytest.fixture
def s3(server):
    c = client(server)
    c.create_bucket(Bucket="bkt")
    return c


@pytest.mark.parametrize("method", ["get_object", "head_object"])
def test_conditional_reads_answer_412_and_304_in_s3s_order(s3, method):
    s3.put_object(Bucket="bkt", Key="k", Body=b"bar")
    etag = etag_of(b"bar")
    read = getattr(s3, method)

    def answer(**conditions):
        return status_and_code(read, Bucket="bkt", Key="k", **conditions)[0]

    assert answer(IfMatch=etag) == 200
    assert answer(IfMatch='"ABCORZ"') == 412
    assert answer(IfMatch="*") == 200
    assert answer(IfNoneMatch=etag) == 304
    assert answer(IfNoneMatch="*") == 304
    assert answer(IfNoneMatch='"ABCORZ"') == 200
    assert answer(IfModifiedSince=PAST) == 200
    assert answer(IfModifiedSince=FUTURE) == 304
    assert answer(IfUnmodifiedSince=FUTURE) == 200
    assert answer(IfUnmodifiedSince=PAST) == 412
    # A matching If-Match overrides If-Unmodified-Since; an If-None-Match that does not match
    # overrides If-Modified-Since; a failed precondition comes before Not Modified.
    assert answer(IfMatch=etag, IfUnmodifiedSince=PAST) == 200
    assert answer(IfNoneMatch='"ABCORZ"', IfModifiedSince=FUTURE) == 200
    assert answer(IfNoneMatch=etag, IfModifiedSince=PAST) == 304
    assert answer(IfMatch='"ABCORZ"', IfNoneMatch=etag) == 412
    # The object's own Last-Modified is not modified since itself.
    modified = s3.head_object(Bucket="bkt", Key="k")["LastModified"]
    assert answer(IfModifiedSince=modified) == 304
    assert answer(IfUnmodifiedSince=modified) == 200
    # 304 carries the validators, as S3 sends them.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        read(Bucket="bkt", Key="k", IfNoneMatch=etag)
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["etag"] == etag
    assert e.value.response["Error"]["Message"] == "Not Modified"


def test_conditions_hold_on_reads_with_an_ignored_range(server, s3):
    """The whole-object answer to an unusable Range checks the conditions too."""
    s3.put_object(Bucket="bkt", Key="k", Body=b"0123456789")
    etag = etag_of(b"0123456789")
    assert status_and_code(s3.get_object, Bucket="bkt", Key="k", Range="bytes=5-2", IfNoneMatch=etag)[0] == 304
    assert status_and_code(s3.get_object, Bucket="bkt", Key="k", Range="bytes=5-2",
                           IfMatch='"ABCORZ"')[0] == 412
    got = s3.get_object(Bucket="bkt", Key="k", Range="bytes=5-2", IfMatch=etag)
    assert got["Body"].read() == b"0123456789"


def test_copies_check_the_source_conditions(s3):
    s3.put_object(Bucket="bkt", Key="src", Body=b"source")
    etag = etag_of(b"source")
    src = {"Bucket": "bkt", "Key": "src"}

    def copy(**conditions):
        return status_and_code(s3.copy_object, Bucket="bkt", Key="dst", CopySource=src, **conditions)

    for refused in [dict(CopySourceIfMatch='"ABCORZ"'), dict(CopySourceIfNoneMatch=etag),
                    dict(CopySourceIfModifiedSince=FUTURE), dict(CopySourceIfUnmodifiedSince=PAST),
                    dict(CopySourceIfNoneMatch=etag, CopySourceIfModifiedSince=PAST)]:
        assert copy(**refused) == (412, "PreconditionFailed"), refused
        assert status_and_code(s3.head_object, Bucket="bkt", Key="dst")[0] == 404
    for allowed in [dict(CopySourceIfMatch=etag), dict(CopySourceIfNoneMatch='"ABCORZ"'),
                    dict(CopySourceIfModifiedSince=PAST), dict(CopySourceIfUnmodifiedSince=FUTURE),
                    dict(CopySourceIfMatch=etag, CopySourceIfUnmodifiedSince=PAST),
                    dict(CopySourceIfNoneMatch='"ABCORZ"', CopySourceIfModifiedSince=FUTURE)]:
        assert copy(**allowed) == (200, "ok"), allowed
    assert s3.get_object(Bucket="bkt", Key="dst")["Body"].read() == b"source"


def test_conditional_puts(s3):
    def put(body, **conditions):
        return status_and_code(s3.put_object, Bucket="bkt", Key="d/k", Body=body, **conditions)

    assert put(b"x", IfMatch="*") == (404, "NoSuchKey")
    assert put(b"x", IfMatch=etag_of(b"x")) == (404, "NoSuchKey")
    assert put(b"one", IfNoneMatch="*") == (200, "ok")
    assert put(b"two", IfNoneMatch="*") == (412, "PreconditionFailed")
    assert put(b"two", IfNoneMatch=etag_of(b"one")) == (412, "PreconditionFailed")
    assert put(b"two", IfMatch=etag_of(b"other")) == (412, "PreconditionFailed")
    assert s3.get_object(Bucket="bkt", Key="d/k")["Body"].read() == b"one"
    assert put(b"two", IfMatch=etag_of(b"one")) == (200, "ok")
    assert put(b"three", IfNoneMatch=etag_of(b"one")) == (200, "ok")
    assert put(b"four", IfMatch="*") == (200, "ok")
    assert s3.get_object(Bucket="bkt", Key="d/k")["Body"].read() == b"four"
    # A folder marker is a key too.
    assert status_and_code(s3.put_object, Bucket="bkt", Key="dir/", Body=b"", IfMatch="*") == (404, "NoSuchKey")
    assert status_and_code(s3.put_object, Bucket="bkt", Key="dir/", Body=b"", IfNoneMatch="*") == (200, "ok")
    assert status_and_code(s3.put_object, Bucket="bkt", Key="dir/", Body=b"",
                           IfNoneMatch="*") == (412, "PreconditionFailed")


def test_racing_if_none_match_puts_have_one_winner(server, s3):
    n = 32
    barrier = threading.Barrier(n)
    results = [None] * n

    def writer(i):
        c = client(server)
        body = b"writer %d " % i * 5000
        barrier.wait()
        results[i] = (body, status_and_code(c.put_object, Bucket="bkt", Key="race/k", Body=body,
                                            IfNoneMatch="*"))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [body for body, answer in results if answer == (200, "ok")]
    assert len(winners) == 1, [answer for _, answer in results]
    assert all(answer == (412, "PreconditionFailed") for body, answer in results if body not in winners)
    got = s3.get_object(Bucket="bkt", Key="race/k")
    assert got["Body"].read() == winners[0]
    assert got["ETag"] == etag_of(winners[0])


def upload(s3, key, body=b"abc", **create):
    uid = s3.create_multipart_upload(Bucket="bkt", Key=key, **create)["UploadId"]
    etag = s3.upload_part(Bucket="bkt", Key=key, UploadId=uid, PartNumber=1, Body=body)["ETag"]
    return uid, {"Parts": [{"PartNumber": 1, "ETag": etag}]}


def test_conditional_completions(s3):
    def complete(body, **conditions):
        uid, parts = upload(s3, "m", body)
        return status_and_code(s3.complete_multipart_upload, Bucket="bkt", Key="m", UploadId=uid,
                               MultipartUpload=parts, **conditions)

    assert complete(b"x", IfMatch="*") == (404, "NoSuchKey")
    assert complete(b"one", IfNoneMatch="*") == (200, "ok")
    first = s3.head_object(Bucket="bkt", Key="m")["ETag"]
    assert complete(b"two", IfNoneMatch="*") == (412, "PreconditionFailed")
    assert complete(b"two", IfNoneMatch=first) == (412, "PreconditionFailed")
    assert complete(b"two", IfMatch='"0123456789abcdef0123456789abcdef-1"') == (412, "PreconditionFailed")
    assert s3.get_object(Bucket="bkt", Key="m")["Body"].read() == b"one"
    assert complete(b"two", IfMatch=first) == (200, "ok")
    assert s3.get_object(Bucket="bkt", Key="m")["Body"].read() == b"two"


def tags_of(s3, key):
    return [(t["Key"], t["Value"]) for t in s3.get_object_tagging(Bucket="bkt", Key=key)["TagSet"]]


def test_tags_are_kept_counted_replaced_and_removed(server, s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"x", Tagging="foo=bar&bar&a%20b=c%2Bd")
    assert tags_of(s3, "k") == [("a b", "c+d"), ("bar", ""), ("foo", "bar")]
    head = s3.head_object(Bucket="bkt", Key="k")
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "3"
    assert s3.get_object(Bucket="bkt", Key="k")["TagCount"] == 3
    tagset = [{"Key": str(i), "Value": "v%d" % i} for i in range(10)]
    s3.put_object_tagging(Bucket="bkt", Key="k", Tagging={"TagSet": tagset})
    assert tags_of(s3, "k") == [(t["Key"], t["Value"]) for t in tagset]
    # Tagging leaves the bytes, the ETag and the other metadata alone.
    got = s3.get_object(Bucket="bkt", Key="k")
    assert got["Body"].read() == b"x" and got["ETag"] == etag_of(b"x") and got["TagCount"] == 10
    assert '"Key": "9"' in aws(server, "s3api", "get-object-tagging", "--bucket", "bkt", "--key", "k")
    deleted = s3.delete_object_tagging(Bucket="bkt", Key="k")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert tags_of(s3, "k") == []
    head = s3.head_object(Bucket="bkt", Key="k")
    assert "x-amz-tagging-count" not in head["ResponseMetadata"]["HTTPHeaders"]
    assert "TagCount" not in s3.get_object(Bucket="bkt", Key="k")
    assert status_and_code(s3.get_object_tagging, Bucket="bkt", Key="missing") == (404, "NoSuchKey")
    assert status_and_code(s3.put_object_tagging, Bucket="bkt", Key="missing",
                           Tagging={"TagSet": tagset}) == (404, "NoSuchKey")


def test_tag_limits_are_s3s(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"x")
    # 128 and 256 characters, not bytes: é is two bytes in UTF-8.
    longest = [{"Key": "é" * 128, "Value": "ü" * 256}]
    s3.put_object_tagging(Bucket="bkt", Key="k", Tagging={"TagSet": longest})
    assert tags_of(s3, "k") == [("é" * 128, "ü" * 256)]
    for refused in [[{"Key": str(i), "Value": "v"} for i in range(11)],
                    [{"Key": "k" * 129, "Value": "v"}],
                    [{"Key": "k", "Value": "v" * 257}],
                    [{"Key": "k", "Value": "1"}, {"Key": "k", "Value": "2"}],
                    [{"Key": "aws:k", "Value": "v"}]]:
        assert status_and_code(s3.put_object_tagging, Bucket="bkt", Key="k",
                               Tagging={"TagSet": refused}) == (400, "InvalidTag"), refused
        assert tags_of(s3, "k") == [("é" * 128, "ü" * 256)]
    header = "&".join("%d=v" % i for i in range(11))
    assert status_and_code(s3.put_object, Bucket="bkt", Key="new", Body=b"x", Tagging=header) == (400, "InvalidTag")
    assert status_and_code(s3.head_object, Bucket="bkt", Key="new")[0] == 404


def test_tags_of_uploads_and_copies(s3):
    uid, parts = upload(s3, "m", Tagging="Hello=World&foo=bar")
    s3.complete_multipart_upload(Bucket="bkt", Key="m", UploadId=uid, MultipartUpload=parts)
    assert tags_of(s3, "m") == [("Hello", "World"), ("foo", "bar")]
    assert status_and_code(s3.create_multipart_upload, Bucket="bkt", Key="bad", Tagging="a=1&a=2") == (400, "InvalidTag")
    src = {"Bucket": "bkt", "Key": "m"}
    s3.copy_object(Bucket="bkt", Key="copied", CopySource=src)
    assert tags_of(s3, "copied") == [("Hello", "World"), ("foo", "bar")]
    s3.copy_object(Bucket="bkt", Key="kept", CopySource=src, Tagging="x=y", TaggingDirective="COPY")
    assert tags_of(s3, "kept") == [("Hello", "World"), ("foo", "bar")]
    s3.copy_object(Bucket="bkt", Key="replaced", CopySource=src, Tagging="x=y", TaggingDirective="REPLACE")
    assert tags_of(s3, "replaced") == [("x", "y")]
    s3.copy_object(Bucket="bkt", Key="none", CopySource=src, TaggingDirective="REPLACE")
    assert tags_of(s3, "none") == []


def test_part_numbers_beyond_the_parts(s3):
    s3.put_object(Bucket="bkt", Key="single", Body=b"body")
    whole = s3.get_object(Bucket="bkt", Key="single", PartNumber=1)
    assert whole["Body"].read() == b"body"
    for method in [s3.get_object, s3.head_object]:
        assert status_and_code(method, Bucket="bkt", Key="single", PartNumber=2)[0] == 416
        # No part can have these numbers.
        for n in [0, 10001]:
            assert status_and_code(method, Bucket="bkt", Key="single", PartNumber=n)[0] == 400
    assert status_and_code(s3.get_object, Bucket="bkt", Key="single", PartNumber=2) == (416, "InvalidPartNumber")
    assert status_and_code(s3.get_object, Bucket="bkt", Key="single", PartNumber=0) == (400, "InvalidArgument")


def test_object_attributes_show_the_etag_unquoted(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"foo")
    got = s3.get_object_attributes(Bucket="bkt", Key="k", ObjectAttributes=["ETag", "ObjectSize"])
    assert got["ETag"] == hashlib.md5(b"foo").hexdigest()
    assert got["ObjectSize"] == 3


def test_bucket_names_s3_refuses(s3):
    for name in ["foo.-bar", "foo-.bar", "192.168.5.4", "xn--bucket", "sthree-bucket", "bucket-s3alias",
                 "bucket--ol-s3", "bucket.mrap"]:
        assert status_and_code(s3.create_bucket, Bucket=name) == (400, "InvalidBucketName"), name
    assert status_and_code(s3.create_bucket, Bucket="a-b.c-d.192") == (200, "ok")


def test_user_metadata_is_at_most_2_kb(s3):
    # Keys and values count in UTF-8 bytes, summed; the x-amz-meta- prefix does not count.
    exact = {"k" * 24: "v" * 1000, "w" * 24: "u" * 1000}
    s3.put_object(Bucket="bkt", Key="exact", Body=b"x", Metadata=exact)
    assert s3.head_object(Bucket="bkt", Key="exact")["Metadata"] == exact
    over = dict(exact, x="")
    assert status_and_code(s3.put_object, Bucket="bkt", Key="over", Body=b"x", Metadata=over) == (400, "MetadataTooLarge")
    big = {"m%d" % i: "v" * 1000 for i in range(8)}
    assert status_and_code(s3.put_object, Bucket="bkt", Key="big", Body=b"x", Metadata=big) == (400, "MetadataTooLarge")
    assert status_and_code(s3.head_object, Bucket="bkt", Key="big")[0] == 404
    assert status_and_code(s3.create_multipart_upload, Bucket="bkt", Key="big", Metadata=big) == (400, "MetadataTooLarge")
    assert status_and_code(s3.copy_object, Bucket="bkt", Key="big", CopySource={"Bucket": "bkt", "Key": "exact"},
                           Metadata=big, MetadataDirective="REPLACE") == (400, "MetadataTooLarge")
    # Metadata and tags together may be more than the file system keeps per file: refused, not
    # dropped.
    tagset = [{"Key": "%03d" % i + "k" * 125, "Value": "v" * 256} for i in range(10)]
    answer = status_and_code(s3.put_object_tagging, Bucket="bkt", Key="exact", Tagging={"TagSet": tagset})
    if answer == (200, "ok"):
        assert len(tags_of(s3, "exact")) == 10
    else:
        assert answer == (400, "MetadataTooLarge")
    assert s3.head_object(Bucket="bkt", Key="exact")["Metadata"] == exact


# Parts longer than ext4's 255-byte names, one of exactly 1024 bytes, UTF-8 of two bytes a
# character, a part that starts as a derived name does, and short neighbours: S3's key order
# puts "a…a/x" before "a…ab", and every long part between its neighbours.
LONG = "a" * 300
LONG_KEYS = [LONG + "b", LONG + "/x", "a", "b", "d/" + "é" * 200, "d/e", "k" * 1024,
             "p/" + "q" * 300 + "/leaf", "p/" + "q" * 300 + "/", "~iobm~short"]


def test_keys_with_parts_longer_than_a_file_name(server, s3, tmp_path):
    for key in LONG_KEYS:
        s3.put_object(Bucket="bkt", Key=key, Body=b"" if key.endswith("/") else key.encode())
    for key in LONG_KEYS:
        body = b"" if key.endswith("/") else key.encode()
        assert s3.get_object(Bucket="bkt", Key=key)["Body"].read() == body, key[:10]
        assert s3.head_object(Bucket="bkt", Key=key)["ContentLength"] == len(body)
    # Listed by their keys, in S3's order, page by page through continuation tokens.
    listed, kw = [], {}
    while True:
        page = s3.list_objects_v2(Bucket="bkt", MaxKeys=2, **kw)
        listed += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            break
        kw = {"ContinuationToken": page["NextContinuationToken"]}
    assert listed == sorted(LONG_KEYS, key=lambda k: k.encode())
    grouped = s3.list_objects_v2(Bucket="bkt", Prefix=LONG, Delimiter="/")
    assert [o["Key"] for o in grouped["Contents"]] == [LONG + "b"]
    assert [p["Prefix"] for p in grouped["CommonPrefixes"]] == [LONG + "/"]
    inside = s3.list_objects_v2(Bucket="bkt", Prefix="p/" + "q" * 300 + "/", Delimiter="/")
    assert [o["Key"] for o in inside["Contents"]] == ["p/" + "q" * 300 + "/", "p/" + "q" * 300 + "/leaf"]
    v1 = s3.list_objects(Bucket="bkt", Prefix="d/", Marker="d/e")
    assert [o["Key"] for o in v1["Contents"]] == ["d/" + "é" * 200]
    assert [o["Key"] for o in s3.list_objects(Bucket="bkt", Prefix="d/")["Contents"]] == ["d/e", "d/" + "é" * 200]
    # Copies to and from them, and a multipart upload.
    s3.copy_object(Bucket="bkt", Key="c/" + "r" * 500, CopySource={"Bucket": "bkt", "Key": "k" * 1024})
    assert s3.get_object(Bucket="bkt", Key="c/" + "r" * 500)["Body"].read() == b"k" * 1024
    uid = s3.create_multipart_upload(Bucket="bkt", Key="m" * 700)["UploadId"]
    part = s3.upload_part(Bucket="bkt", Key="m" * 700, UploadId=uid, PartNumber=1, Body=b"part")
    s3.complete_multipart_upload(Bucket="bkt", Key="m" * 700, UploadId=uid,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert s3.get_object(Bucket="bkt", Key="m" * 700)["Body"].read() == b"part"
    # No name on disk is longer than the file system takes.
    for _, dirs, files in os.walk(server.root):
        assert all(len(n.encode()) <= 255 for n in dirs + files)
    # The aws CLI copies one up and down and lists it.
    (tmp_path / "up").write_bytes(b"cli")
    aws(server, "s3", "cp", str(tmp_path / "up"), "s3://bkt/cli/" + "z" * 400)
    assert ("z" * 400) in aws(server, "s3", "ls", "s3://bkt/cli/")
    aws(server, "s3", "cp", "s3://bkt/cli/" + "z" * 400, str(tmp_path / "down"))
    assert (tmp_path / "down").read_bytes() == b"cli"
    # Deleted one by one and many at once, they leave nothing behind.
    s3.delete_object(Bucket="bkt", Key=LONG + "b")
    assert status_and_code(s3.head_object, Bucket="bkt", Key=LONG + "b")[0] == 404
    rest = [o["Key"] for o in s3.list_objects_v2(Bucket="bkt")["Contents"]]
    answer = s3.delete_objects(Bucket="bkt", Delete={"Objects": [{"Key": k} for k in rest]})
    assert len(answer["Deleted"]) == len(rest) and "Errors" not in answer
    assert s3.list_objects_v2(Bucket="bkt")["KeyCount"] == 0
    assert os.listdir(os.path.join(server.root, "bkt")) == []
    # Past 1024 bytes a key is too long, as in S3.
    assert status_and_code(s3.put_object, Bucket="bkt", Key="k" * 1025, Body=b"x") == (400, "KeyTooLongError")
