"""What the gateway serves is what the gate authorized, and what it stores is what was sent:
the object a decision was made from is the one served or changed (with its owner flipping it
between public and private meanwhile), every body is stored whole or refused (a chunked
UploadPart of unknown length, aws-chunked bodies whose declared length differs from their
chunks), and S3's additional checksums (in a header, or in a trailer after the body) are
checked, kept and returned.
"""

import base64
import hashlib
import http.client
import threading
import time
import zlib

import pytest

from gateway_helpers import ALICE, BOB, as_account, code, sigv4, unsigned

def raw(server, method, target, headers, body_chunks, chunked):
    """Sends a request as raw HTTP/1.1 (chunked: Transfer-Encoding: chunked with no length);
    its status and body."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    try:
        for chunk in body_chunks:
            conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk)
        if chunked:
            conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # answered before the whole body was sent: read the answer
    answer = conn.getresponse()
    data = answer.read()
    conn.close()
    return answer.status, data


def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def test_a_chunked_upload_part_of_unknown_length_is_stored_whole(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="mpu")
    upload = alice.create_multipart_upload(Bucket="mpu", Key="big")["UploadId"]
    first, second = b"a" * (5 << 20), bytes(range(256)) * (3 << 12)  # 5 MiB, 3 MiB
    e1 = alice.upload_part(Bucket="mpu", Key="big", UploadId=upload, PartNumber=1, Body=first)["ETag"]
    query = f"partNumber=2&uploadId={upload}"
    headers = sigv4(ALICE, "PUT", "/mpu/big", query, two.port, "UNSIGNED-PAYLOAD")
    chunks = [second[i:i + (256 << 10)] for i in range(0, len(second), 256 << 10)]
    status, data = raw(two, "PUT", f"/mpu/big?{query}", headers, chunks, chunked=True)
    assert status == 200, data
    parts = alice.list_parts(Bucket="mpu", Key="big", UploadId=upload)["Parts"]
    assert [(p["PartNumber"], p["Size"]) for p in parts] == [(1, 5 << 20), (2, 3 << 20)]
    assert parts[1]["ETag"] == '"%s"' % hashlib.md5(second).hexdigest()
    alice.complete_multipart_upload(
        Bucket="mpu", Key="big", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": parts[1]["ETag"]}]})
    assert alice.get_object(Bucket="mpu", Key="big")["Body"].read() == first + second


def test_a_chunked_body_of_another_operation_is_never_run_empty(two):
    """The probe of a chunked body stops at the gate: an XML operation sent chunked gets its
    body (here the ACL it sets), not an empty one."""
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="xml")
    alice.put_object(Bucket="xml", Key="k", Body=b"v")
    body = (b'<?xml version="1.0" encoding="UTF-8"?><Tagging><TagSet><Tag><Key>color</Key>'
            b'<Value>blue</Value></Tag></TagSet></Tagging>')
    headers = sigv4(ALICE, "PUT", "/xml/k", "tagging=", two.port, "UNSIGNED-PAYLOAD")
    status, data = raw(two, "PUT", "/xml/k?tagging=", headers, [body[:40], body[40:]], chunked=True)
    assert status == 200, data
    assert alice.get_object_tagging(Bucket="xml", Key="k")["TagSet"] == [{"Key": "color", "Value": "blue"}]


def aws_chunked(data, trailer=None):
    """An unsigned aws-chunked body: one chunk of `data`, the final chunk, and a trailer."""
    body = f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n"
    if trailer:
        body += f"{trailer[0]}:{trailer[1]}\r\n".encode()
    return body + b"\r\n"


def put_aws_chunked(server, key, data, declared, trailer=None):
    extra = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(declared)}
    if trailer:
        extra["x-amz-trailer"] = trailer[0]
    payload = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    headers = sigv4(ALICE, "PUT", f"/sums/{key}", "", server.port, payload, extra)
    body = aws_chunked(data, trailer)
    headers["content-length"] = str(len(body))
    return raw(server, "PUT", f"/sums/{key}", headers, [body], chunked=False)


def test_a_trailing_checksum_is_checked_kept_and_returned(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="sums")
    data = b"checked bytes " * 1000
    good = ("x-amz-checksum-crc32", crc32_b64(data))
    status, body = put_aws_chunked(two, "good", data, len(data), good)
    assert status == 200, body
    head = alice.head_object(Bucket="sums", Key="good", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == good[1]
    got = alice.get_object(Bucket="sums", Key="good", ChecksumMode="ENABLED")
    assert got["Body"].read() == data and got["ChecksumCRC32"] == good[1]
    # A trailer that does not match the bytes: refused, nothing stored.
    bad = ("x-amz-checksum-crc32", crc32_b64(data + b"!"))
    status, body = put_aws_chunked(two, "bad", data, len(data), bad)
    assert status == 400 and b"<Code>BadDigest</Code>" in body, body
    assert code(alice.head_object, Bucket="sums", Key="bad") == "404"


@pytest.mark.parametrize("declared", [100, 20])
def test_a_declared_length_other_than_the_chunks_is_refused(two, declared):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="sums")
    data = b"x" * 50
    trailer = ("x-amz-checksum-crc32", crc32_b64(data))
    status, body = put_aws_chunked(two, "short", data, declared, trailer)
    assert status == 400 and b"<Code>IncompleteBody</Code>" in body, body
    assert code(alice.head_object, Bucket="sums", Key="short") == "404"


def test_a_checksum_header_is_checked_and_kept_with_boto3(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="hdr")
    data = b"z" * 70000
    sha = base64.b64encode(hashlib.sha256(data).digest()).decode()
    put = alice.put_object(Bucket="hdr", Key="k", Body=data, ChecksumSHA256=sha)
    assert put["ChecksumSHA256"] == sha
    assert alice.head_object(Bucket="hdr", Key="k", ChecksumMode="ENABLED")["ChecksumSHA256"] == sha
    # The copy keeps the checksum of the bytes it keeps.
    alice.copy_object(Bucket="hdr", Key="copy", CopySource={"Bucket": "hdr", "Key": "k"},
                      MetadataDirective="REPLACE", Metadata={"m": "1"})
    assert alice.head_object(Bucket="hdr", Key="copy", ChecksumMode="ENABLED")["ChecksumSHA256"] == sha
    wrong = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    assert code(alice.put_object, Bucket="hdr", Key="w", Body=data, ChecksumSHA256=wrong) == "BadDigest"
    assert code(alice.head_object, Bucket="hdr", Key="w") == "404"


def test_readers_never_get_the_private_object_the_owner_flips_to(two):
    """Alice replaces `flip/x` again and again, public-read and private in turn; unsigned GETs
    and bob's GETs and copies race her. Bounded: ends at the first private byte served."""
    alice = as_account(two, ALICE)
    bob = as_account(two, BOB)
    anon = unsigned(two)
    alice.create_bucket(Bucket="flip")
    alice.put_bucket_acl(Bucket="flip", ACL="public-read")
    bob.create_bucket(Bucket="bobs")
    secret = b"PRIVATE " * 64
    stop = time.monotonic() + 6
    leaks, unexpected = [], []

    def owner():
        n = 0
        while time.monotonic() < stop:
            if n % 2:
                alice.put_object(Bucket="flip", Key="x", Body=secret)
            else:
                alice.put_object(Bucket="flip", Key="x", Body=b"public " * 64, ACL="public-read")
            n += 1

    def reader(client, copy):
        while time.monotonic() < stop and not leaks:
            try:
                if copy:
                    client.copy_object(Bucket="bobs", Key="c", CopySource={"Bucket": "flip", "Key": "x"})
                    got = client.get_object(Bucket="bobs", Key="c")["Body"].read()
                else:
                    got = client.get_object(Bucket="flip", Key="x")["Body"].read()
            except Exception as e:  # denied, or not yet there: never the bytes
                if not any(c in str(e) for c in ("AccessDenied", "NoSuchKey", "403")):
                    unexpected.append(str(e))
                continue
            if got == secret:
                leaks.append("copy" if copy else "get")

    threads = [threading.Thread(target=owner)]
    threads += [threading.Thread(target=reader, args=(c, copy))
                for c, copy in [(anon, False), (anon, False), (bob, False), (bob, True)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not leaks, f"private bytes served: {leaks}"
    assert not unexpected, unexpected[:3]


@pytest.mark.parametrize("headers", [
    {"x-amz-decoded-content-length": "1"},
    {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": "5"},
    {"x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "x-amz-decoded-content-length": "5"},
])
def test_an_unsigned_aws_chunked_body_is_refused(two, headers):
    """Its chunks are decoded and its declared length checked only with a signature: unsigned,
    its framing would be stored as the object, and its declared length taken for its size."""
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="pubrw", ACL="public-read-write")
    body = b"5\r\nhello\r\n0\r\n\r\n"
    status, data = raw(two, "PUT", "/pubrw/k", {"host": f"127.0.0.1:{two.port}", **headers},
                       [body], chunked=True)
    assert status == 400 and b"InvalidRequest" in data, data
    assert code(alice.head_object, Bucket="pubrw", Key="k") == "404"


def test_a_checksum_is_returned_by_attributes_and_whole_reads(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="sums")
    data = b"attributes" * 100
    alice.put_object(Bucket="sums", Key="k", Body=data, ChecksumAlgorithm="CRC32")
    want = crc32_b64(data)
    attrs = alice.get_object_attributes(Bucket="sums", Key="k", ObjectAttributes=["Checksum", "ETag"])
    assert attrs["Checksum"]["ChecksumCRC32"] == want
    # A Range header to be ignored: the whole object, with its checksum when asked.
    got = alice.get_object(Bucket="sums", Key="k", Range="bytes=9-2", ChecksumMode="ENABLED")
    assert got["Body"].read() == data and got["ChecksumCRC32"] == want


def test_a_trailer_sent_twice_is_refused(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="sums")
    data = b"twice"
    extra = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
             "x-amz-trailer": "x-amz-checksum-crc32"}
    headers = sigv4(ALICE, "PUT", "/sums/t", "", two.port, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", extra)
    body = (f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n"
            + f"x-amz-checksum-crc32:{crc32_b64(data)}\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n".encode())
    headers["content-length"] = str(len(body))
    status, answer = raw(two, "PUT", "/sums/t", headers, [body], chunked=False)
    assert status == 400, answer
    assert code(alice.head_object, Bucket="sums", Key="t") == "404"
