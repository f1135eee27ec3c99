#!/usr/bin/env python3
"""Loopback test double for Firebase ML model hosting and Firebase Installations.

Standard library only. Prints "PORT <n>" on its first line, then serves until its standard
input closes (so it never outlives the test process that started it).

Endpoints (as the real services spell them):
  POST   /v1/projects/{project}/installations/                       register an installation
  POST   /v1/projects/{project}/installations/{fid}/authTokens:generate  new auth token
  DELETE /v1/projects/{project}/installations/{fid}/                 delete an installation
  GET    /v1beta2/projects/{project}/models/{name}:download?key=K    model info
  GET    /files/{name}?v=...                                         model bytes (Range, If-Range)

Control endpoints for the tests:
  POST /_control/model   {"name", "path", "etag"?}   publish (or replace) a model file
  POST /_control/fault   {"endpoint", "kind", ...}   queue a fault for the next matching request
  POST /_control/config  {"tokenExpiresIn"?, "forgetInstallations"?}
  GET  /_control/requests                            every request seen so far (method, path, query, headers)

Fault kinds: "status" (with "status"), "noEtag", "wrongEtag", "expired" (model info gives a URL
that expired; the file server answers 400), "cut" (file body stops after "bytes" bytes),
"drip" ("chunk" bytes every "delay" seconds), "stall" (sends "bytes" bytes then waits "delay"
seconds), "html" (an HTML page with status 200 instead of the model), "oversize" (the model
followed by "bytes" extra bytes, without Content-Length). A status fault with "plainBody" sends
text instead of Google's JSON error. A fault applies to
"times" requests (default 1).
"""

import datetime
import hashlib
import json
import os
import secrets
import socket
import socketserver
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROJECT_ID = "fixture-project"
API_KEY = "AIzaFixtureApiKey-0123456789"
APP_ID = "1:123456789:ios:fixture"

lock = threading.Lock()
models = {}  # name -> {"path", "etag", "fileEtag"}
faults = []  # queued faults
requests_seen = []
installations = {}  # fid -> refresh token
auth_tokens = set()
config = {"tokenExpiresIn": "604800s"}


def take_fault(endpoint):
    """Removes and returns the first queued fault for `endpoint`, or None."""
    with lock:
        for fault in faults:
            if fault["endpoint"] == endpoint:
                fault["times"] = fault.get("times", 1) - 1
                if fault["times"] <= 0:
                    faults.remove(fault)
                return fault
    return None


def google_error(code, message, status):
    return {"error": {"code": code, "message": message, "status": status}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    # ---- plumbing -------------------------------------------------------------------------

    def record(self):
        parsed = urllib.parse.urlsplit(self.path)
        entry = {
            "method": self.command,
            "path": parsed.path,
            "query": dict(urllib.parse.parse_qsl(parsed.query)),
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        with lock:
            requests_seen.append(entry)
        return parsed

    def body_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        if status != 304:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if status != 304 and self.command != "HEAD":
            self.wfile.write(body)

    def status_fault(self, fault):
        status = fault["status"]
        names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        if fault.get("plainBody"):
            return self.send(status, b"injected failure", content_type="text/plain")
        message = fault.get("message", "Injected failure %d." % status)
        self.send(status, google_error(status, message, names.get(status, "UNKNOWN")))

    # ---- dispatch -------------------------------------------------------------------------

    def do_GET(self):
        parsed = self.record()
        path = parsed.path
        if path == "/_control/requests":
            with lock:
                self.send(200, list(requests_seen))
        elif path.startswith("/v1beta2/projects/"):
            self.model_info(parsed)
        elif path.startswith("/files/"):
            self.model_file(parsed)
        else:
            self.send(404, google_error(404, "No such path.", "NOT_FOUND"))

    def do_POST(self):
        parsed = self.record()
        path = parsed.path
        body = self.body_json()
        if path.startswith("/_control/"):
            self.control(path, body or {})
        elif path.endswith("/authTokens:generate"):
            self.refresh_token(path, body)
        elif path.endswith("/installations/"):
            self.register(path, body)
        else:
            self.send(404, google_error(404, "No such path.", "NOT_FOUND"))

    def do_DELETE(self):
        parsed = self.record()
        parts = parsed.path.strip("/").split("/")
        if len(parts) == 5 and parts[3] == "installations":
            with lock:
                installations.pop(parts[4], None)
            self.send(200, {})
        else:
            self.send(404, google_error(404, "No such path.", "NOT_FOUND"))

    # ---- control --------------------------------------------------------------------------

    def control(self, path, body):
        if path == "/_control/model":
            with open(body["path"], "rb") as model_file:
                digest = hashlib.sha256(model_file.read()).hexdigest()
            with lock:
                models[body["name"]] = {
                    "path": body["path"],
                    "etag": body.get("etag", digest),
                    "fileEtag": '"file-%s"' % digest[:20],
                }
            self.send(200, {"etag": models[body["name"]]["etag"]})
        elif path == "/_control/fault":
            with lock:
                faults.append(body)
            self.send(200, {})
        elif path == "/_control/config":
            with lock:
                if "tokenExpiresIn" in body:
                    config["tokenExpiresIn"] = body["tokenExpiresIn"]
                if body.get("forgetInstallations"):
                    installations.clear()
                    auth_tokens.clear()
            self.send(200, {})
        else:
            self.send(404, {})

    # ---- Firebase Installations -----------------------------------------------------------

    def check_installations_headers(self, project):
        if project != PROJECT_ID or self.headers.get("X-Goog-Api-Key") != API_KEY:
            self.send(403, google_error(403, "Invalid API key or project.", "PERMISSION_DENIED"))
            return False
        if self.headers.get("Content-Type") != "application/json":
            self.send(400, google_error(400, "Expected JSON.", "INVALID_ARGUMENT"))
            return False
        return True

    def new_auth_token(self):
        token = "fis-auth-" + secrets.token_hex(12)
        with lock:
            auth_tokens.add(token)
        return {"token": token, "expiresIn": config["tokenExpiresIn"]}

    def register(self, path, body):
        parts = path.strip("/").split("/")  # v1 projects P installations
        fault = take_fault("register")
        if fault:
            return self.status_fault(fault)
        if len(parts) != 4 or not self.check_installations_headers(parts[2]):
            return
        if not body or body.get("authVersion") != "FIS_v2" or body.get("appId") != APP_ID \
                or len(body.get("fid", "")) != 22 or not body.get("sdkVersion", "").startswith("i:"):
            return self.send(400, google_error(400, "Bad registration body.", "INVALID_ARGUMENT"))
        fid = body["fid"]
        refresh = "fis-refresh-" + secrets.token_hex(12)
        with lock:
            installations[fid] = refresh
        self.send(201, {
            "name": "projects/%s/installations/%s" % (PROJECT_ID, fid),
            "fid": fid,
            "refreshToken": refresh,
            "authToken": self.new_auth_token(),
        })

    def refresh_token(self, path, body):
        parts = path.strip("/").split("/")  # v1 projects P installations FID authTokens:generate
        fault = take_fault("refresh")
        if fault:
            return self.status_fault(fault)
        if len(parts) != 6 or not self.check_installations_headers(parts[2]):
            return
        with lock:
            refresh = installations.get(parts[4])
        if refresh is None:
            return self.send(404, google_error(404, "Installation not found.", "NOT_FOUND"))
        if self.headers.get("Authorization") != "FIS_v2 " + refresh:
            return self.send(401, google_error(401, "Bad refresh token.", "UNAUTHENTICATED"))
        if not body or not body.get("installation", {}).get("sdkVersion", "").startswith("i:"):
            return self.send(400, google_error(400, "Bad refresh body.", "INVALID_ARGUMENT"))
        self.send(200, self.new_auth_token())

    # ---- Firebase ML ----------------------------------------------------------------------

    def model_info(self, parsed):
        parts = parsed.path.strip("/").split("/")  # v1beta2 projects P models NAME:download
        query = dict(urllib.parse.parse_qsl(parsed.query))
        fault = take_fault("modelInfo")
        if fault and fault["kind"] == "status":
            return self.status_fault(fault)
        if len(parts) != 5 or parts[1] != "projects" or parts[3] != "models" or not parts[4].endswith(":download"):
            return self.send(404, google_error(404, "No such path.", "NOT_FOUND"))
        if parts[2] != PROJECT_ID or query.get("key") != API_KEY:
            return self.send(400, google_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"))
        with lock:
            token_ok = self.headers.get("x-goog-firebase-installations-auth") in auth_tokens
        if not token_ok:
            return self.send(401, google_error(401, "Missing or invalid installation token.", "UNAUTHENTICATED"))
        name = parts[4][: -len(":download")]
        with lock:
            model = models.get(name)
        if model is None:
            return self.send(404, google_error(404, "Model %s not found." % name, "NOT_FOUND"))
        etag = model["etag"]
        kind = fault["kind"] if fault else None
        if self.headers.get("if-none-match") == etag:
            headers = {} if kind == "noEtag" else {"ETag": "0" * 64 if kind == "wrongEtag" else etag}
            return self.send(304, headers=headers)
        size = os.path.getsize(model["path"])
        expired = kind == "expired"
        expire_time = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=-1 if expired else 1)
        url = "http://127.0.0.1:%d/files/%s?v=%s%s" % (
            self.server.server_port, name, etag[:16], "&expired=1" if expired else "")
        headers = {}
        if kind != "noEtag":
            headers["ETag"] = "f" * 64 if kind == "wrongEtag" else etag
        self.send(200, {
            "downloadUri": url,
            "expireTime": expire_time.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "sizeBytes": str(size),
            "modelFormat": "TFLITE",
        }, headers)

    def model_file(self, parsed):
        name = parsed.path[len("/files/"):]
        query = dict(urllib.parse.parse_qsl(parsed.query))
        if query.get("expired") == "1":
            return self.send(400, b"<Error><Code>ExpiredToken</Code></Error>", content_type="application/xml")
        fault = take_fault("download")
        if fault and fault["kind"] == "status":
            return self.status_fault(fault)
        if fault and fault["kind"] == "html":
            page = b"<!DOCTYPE html><html><body><h1>Sign in to continue</h1></body></html>"
            return self.send(200, page, content_type="text/html; charset=utf-8")
        with lock:
            model = models.get(name)
        if model is None:
            return self.send(404, b"not found", content_type="text/plain")
        with open(model["path"], "rb") as model_file:
            data = model_file.read()
        start = 0
        status = 200
        headers = {"ETag": model["fileEtag"], "Accept-Ranges": "bytes"}
        range_header = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if range_header and range_header.startswith("bytes=") and (if_range is None or if_range == model["fileEtag"]):
            first = range_header[len("bytes="):].split("-")[0]
            start = int(first)
            if start >= len(data):
                return self.send(416, b"", {"Content-Range": "bytes */%d" % len(data)}, "text/plain")
            status = 206
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, len(data) - 1, len(data))
        body = data[start:]
        kind = fault["kind"] if fault else None
        if kind == "oversize":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(data + b"\0" * fault["bytes"])
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        for header, value in headers.items():
            self.send_header(header, value)
        self.end_headers()
        try:
            if kind == "cut":
                self.wfile.write(body[: fault["bytes"]])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif kind == "drip":
                chunk = fault.get("chunk", 4096)
                for offset in range(0, len(body), chunk):
                    self.wfile.write(body[offset:offset + chunk])
                    self.wfile.flush()
                    time.sleep(fault.get("delay", 0.01))
            elif kind == "stall":
                self.wfile.write(body[: fault["bytes"]])
                self.wfile.flush()
                time.sleep(fault.get("delay", 5))
                self.close_connection = True
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(ThreadingHTTPServer):
    def server_bind(self):
        # HTTPServer.server_bind looks up the host's FQDN, which can take seconds without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_port, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test process closes our standard input or dies
    os._exit(0)


if __name__ == "__main__":
    main()
