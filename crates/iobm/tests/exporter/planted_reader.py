"""node_exporter behind a planted reader, for crates/iobm/tests/servers.rs: every reading of
the metrics page first has another process (dd) read a whole file with O_DIRECT from the disk
node_exporter counts, then answers with node_exporter's page. So every reading after the one
before a phase (the last being the one after it) counts that file's bytes as the disk's: other
I/O of a known size, whatever the machine's speed.

Usage: planted_reader.py PORT UPSTREAM_URL FILE
"""

import http.server
import subprocess
import sys
import urllib.request

port, upstream, planted = int(sys.argv[1]), sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        subprocess.run(
            ["dd", f"if={planted}", "of=/dev/null", "iflag=direct", "bs=1M", "status=none"],
            check=True,
        )
        body = urllib.request.urlopen(upstream, timeout=10).read()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
