#!/usr/bin/env python3
"""Loopback test double of the Cloud Storage for Firebase REST API (the part a downloader reads).

usage: storage_fixture_server.py ROOT [AUTHORIZATION]

Standard library only. Prints "PORT <n>", serves until its standard input closes. The object
OBJECT of bucket BUCKET is the file ROOT/BUCKET/OBJECT (OBJECT may contain slashes).
  GET /v0/b/BUCKET/o/OBJECT            object metadata JSON, as the service spells it: name, bucket,
                                       generation (the file's mtime in ns, a decimal string),
                                       metageneration, contentType, size (string), md5Hash and
                                       crc32c (base64; crc32c is big-endian CRC-32C), etag,
                                       downloadTokens
  GET /v0/b/BUCKET/o/OBJECT?alt=media  the bytes; honours Range (206 + Content-Range) and
                                       If-Range against the generation ETag
With AUTHORIZATION, both answer 403 (Google's JSON error) unless the Authorization header equals
it; without, media needs ?token= equal to the object's download token. An object whose name
contains "badcrc" ("badmd5") is described with a wrong crc32c (md5Hash). GET /_requests lists every request seen
(method, path, query, range, authorized).
"""

import base64
import hashlib
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
AUTHORIZATION = sys.argv[2] if len(sys.argv) > 2 else None
TOKEN = "token-1"
REQUESTS = []
LOCK = threading.Lock()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_bytes(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message):
        body = json.dumps({"error": {"code": status, "message": message}}).encode()
        self.send_bytes(status, body, [("Content-Type", "application/json")])

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        authorized = AUTHORIZATION is not None and self.headers.get("Authorization") == AUTHORIZATION
        with LOCK:
            if url.path == "/_requests":
                return self.send_bytes(200, json.dumps(REQUESTS).encode())
            REQUESTS.append({"path": url.path, "query": query, "range": self.headers.get("Range"), "authorized": authorized})
        parts = url.path.split("/")
        if len(parts) != 6 or parts[1] != "v0" or parts[2] != "b" or parts[4] != "o":
            return self.error(404, "Not Found.")
        bucket, name = urllib.parse.unquote(parts[3]), urllib.parse.unquote(parts[5])
        path = os.path.join(ROOT, bucket, name)
        if AUTHORIZATION is not None and not authorized:
            return self.error(403, "Permission denied.")
        if not os.path.isfile(path):
            return self.error(404, "Not Found.  Could not get object")
        with open(path, "rb") as handle:
            data = handle.read()
        generation = str(os.stat(path).st_mtime_ns)
        if query.get("alt") != "media":
            checksum = crc32c(data) ^ (1 if "badcrc" in name else 0)
            metadata = {
                "name": name, "bucket": bucket, "generation": generation, "metageneration": "1",
                "contentType": "application/octet-stream", "size": str(len(data)),
                "md5Hash": base64.b64encode(hashlib.md5(data + (b"x" if "badmd5" in name else b"")).digest()).decode(),
                "crc32c": base64.b64encode(checksum.to_bytes(4, "big")).decode(),
                "etag": "CA" + generation, "downloadTokens": TOKEN,
            }
            return self.send_bytes(200, json.dumps(metadata).encode(), [("Content-Type", "application/json")])
        if AUTHORIZATION is None and query.get("token") != TOKEN:
            return self.error(403, "Permission denied. Could not access object.")
        etag = '"%s"' % generation
        start = 0
        requested = self.headers.get("Range")
        if requested and requested.startswith("bytes=") and self.headers.get("If-Range", etag) == etag:
            start = int(requested[6:].split("-")[0])
        headers = [("ETag", etag), ("Content-Type", "application/octet-stream")]
        if start > 0:
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))))
            return self.send_bytes(206, data[start:], headers)
        self.send_bytes(200, data, headers)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_port, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test process closes our standard input or dies
    os._exit(0)


if __name__ == "__main__":
    main()
