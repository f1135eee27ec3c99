#!/usr/bin/env python3
"""Loopback HTTP server misbehaving on purpose, for the downloader's fault tests.

usage: hostile_server.py ROOT [ipv6]

Standard library only. Listens on 127.0.0.1 (or ::1 with "ipv6"), prints "PORT <n>", and serves
until its standard input closes. Paths:
  /files/NAME                  the file ROOT/NAME, plainly (Content-Length, no ranges)
  /loop/a/NAME, /loop/b/NAME   302 to each other: a redirect loop
  /chain/N/NAME                302 to /chain/N+1/NAME, forever: too many redirects
  /gzip/NAME.json              an index naming /gzip/NAME.tflite, which is the file ROOT/NAME.tflite
                               sent gzip-compressed with Content-Encoding: gzip and Content-Length
  /stall/NAME.json             an index naming /stall/NAME.tflite: its head and 8 bytes, then silence
  /drip/NAME.json              an index naming /drip/NAME.tflite: one byte every 0.2 s
  /chunked/NAME.json           an index naming /chunked/NAME.tflite, sent with chunked transfer
                               coding in chunks of 1000 bytes (with a chunk extension and a trailer)
  /always304/NAME.json         304 Not Modified to every request, conditional or not
  /hostile/NAME.json           500 with a Google error whose message holds terminal escape codes
The index of NAME is ROOT/NAME.json (written by the test); /gzip/, /stall/, /drip/ and /chunked/ serve it
with its url replaced.
"""

import gzip
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
IPV6 = len(sys.argv) > 2 and sys.argv[2] == "ipv6"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_bytes(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location):
        self.send_bytes(302, b"", [("Location", location)])

    def index_for(self, scenario, name):
        with open(os.path.join(ROOT, name + ".json")) as handle:
            index = json.load(handle)
        index["url"] = "/%s/%s.tflite" % (scenario, name)
        return json.dumps(index).encode()

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        scenario, rest = parts[0], parts[1:]
        if scenario == "files":
            with open(os.path.join(ROOT, rest[-1]), "rb") as handle:
                self.send_bytes(200, handle.read(), [("Content-Type", "application/octet-stream")])
        elif scenario == "loop":
            self.redirect("/loop/%s/%s" % ("b" if rest[0] == "a" else "a", rest[1]))
        elif scenario == "chain":
            self.redirect("/chain/%d/%s" % (int(rest[0]) + 1, rest[1]))
        elif scenario in ("gzip", "stall", "drip", "chunked") and rest[0].endswith(".json"):
            self.send_bytes(200, self.index_for(scenario, rest[0][:-5]), [("Content-Type", "application/json"), ("ETag", '"i1"')])
        elif scenario == "gzip":
            with open(os.path.join(ROOT, rest[0]), "rb") as handle:
                self.send_bytes(200, gzip.compress(handle.read()), [("Content-Encoding", "gzip")])
        elif scenario == "chunked":
            with open(os.path.join(ROOT, rest[0]), "rb") as handle:
                body = handle.read()
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            for offset in range(0, len(body), 1000):
                piece = body[offset:offset + 1000]
                self.wfile.write(b"%x;note=1\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")
        elif scenario in ("stall", "drip"):
            with open(os.path.join(ROOT, rest[0]), "rb") as handle:
                body = handle.read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if scenario == "stall":
                    self.wfile.write(body[:8])
                    self.wfile.flush()
                    time.sleep(600)
                else:
                    for offset in range(len(body)):
                        self.wfile.write(body[offset:offset + 1])
                        self.wfile.flush()
                        time.sleep(0.2)
            except OSError:
                pass
        elif scenario == "always304":
            self.send_response(304)
            self.send_header("ETag", '"same"')
            self.send_header("Connection", "close")
            self.end_headers()
        elif scenario == "hostile":
            message = "\x1b[2J\x1b[Hdone: model installed\nfake line"
            self.send_bytes(500, json.dumps({"error": {"code": 500, "message": message}}).encode(), [("Content-Type", "application/json")])
        else:
            self.send_bytes(404, b"not found")


class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6 if IPV6 else socket.AF_INET
    daemon_threads = True


def main():
    server = Server(("::1" if IPV6 else "127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_port, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test process closes our standard input or dies
    os._exit(0)


if __name__ == "__main__":
    main()
