#!/usr/bin/env python3
"""A FUSE file system in memory whose writes fail with EIO once the data files hold a given
number of bytes: a storage fault that iobm's fault tests meet in the middle of a run.

Usage: faulty_fs.py MOUNTPOINT FAIL_AFTER_BYTES
Runs in the foreground until unmounted. Files named data.* count toward FAIL_AFTER_BYTES;
every write to them past it fails with EIO (the metadata, the manifest and the result are
written as usual). Needs fusepy and libfuse2 (scripts/test installs them).
"""

import errno
import stat
import sys
import time

from fuse import FUSE, FuseOSError, Operations


class FaultyFs(Operations):
    def __init__(self, fail_after):
        self.fail_after = fail_after
        self.written = 0  # bytes written to data.* files
        now = time.time()
        self.nodes = {"/": {"mode": stat.S_IFDIR | 0o755, "time": now}}
        self.data = {}

    def _node(self, path):
        if path not in self.nodes:
            raise FuseOSError(errno.ENOENT)
        return self.nodes[path]

    def getattr(self, path, fh=None):
        node = self._node(path)
        size = len(self.data.get(path, b""))
        t = node["time"]
        nlink = 2 if stat.S_ISDIR(node["mode"]) else 1
        return {"st_mode": node["mode"], "st_nlink": nlink, "st_size": size,
                "st_ctime": t, "st_mtime": t, "st_atime": t, "st_uid": 0, "st_gid": 0}

    def readdir(self, path, fh):
        prefix = path.rstrip("/") + "/"
        names = [p[len(prefix):] for p in self.nodes
                 if p != path and p.startswith(prefix) and "/" not in p[len(prefix):]]
        return [".", ".."] + names

    def mkdir(self, path, mode):
        self.nodes[path] = {"mode": stat.S_IFDIR | mode, "time": time.time()}

    def rmdir(self, path):
        if any(p.startswith(path + "/") for p in self.nodes):
            raise FuseOSError(errno.ENOTEMPTY)
        del self.nodes[path]

    def create(self, path, mode, fi=None):
        self.nodes[path] = {"mode": stat.S_IFREG | mode, "time": time.time()}
        self.data[path] = bytearray()
        return 0

    def open(self, path, flags):
        self._node(path)
        return 0

    def read(self, path, size, offset, fh):
        return bytes(self.data[path][offset:offset + size])

    def write(self, path, buf, offset, fh):
        counted = path.rsplit("/", 1)[-1].startswith("data.")
        if counted:
            if self.written + len(buf) > self.fail_after:
                raise FuseOSError(errno.EIO)
            self.written += len(buf)
        data = self.data[path]
        if len(data) < offset:
            data.extend(b"\0" * (offset - len(data)))
        data[offset:offset + len(buf)] = buf
        return len(buf)

    def truncate(self, path, length, fh=None):
        data = self.data[path]
        del data[length:]
        data.extend(b"\0" * (length - len(data)))

    def unlink(self, path):
        self._node(path)
        del self.nodes[path]
        self.data.pop(path, None)

    def rename(self, old, new):
        self.nodes[new] = self.nodes.pop(old)
        if old in self.data:
            self.data[new] = self.data.pop(old)

    def chmod(self, path, mode):
        node = self._node(path)
        node["mode"] = (node["mode"] & ~0o7777) | mode

    def utimens(self, path, times=None):
        self._node(path)["time"] = time.time()

    def fsync(self, path, datasync, fh):
        return 0

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        return 0

    def statfs(self, path):
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": 0, "f_bfree": 0,
                "f_bavail": 0, "f_files": 0, "f_ffree": 0, "f_namemax": 255}


if __name__ == "__main__":
    FUSE(FaultyFs(int(sys.argv[2])), sys.argv[1], foreground=True, nothreads=True,
         big_writes=True, max_write=131072)
