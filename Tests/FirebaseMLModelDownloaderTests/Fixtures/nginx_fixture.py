#!/usr/bin/env python3
"""Runs Debian's nginx on a free loopback port over a folder, for the downloader tests.

usage: nginx_fixture.py ROOT [SLOW_RATE]
Prints "PORT <n>" and "ACCESS_LOG <path>" once nginx answers, then keeps nginx running until
standard input closes (the test process ended or closed it), and stops it. Exits with an error
message when nginx is missing or does not start: the tests must fail, not skip.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def find_nginx():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("nginx_fixture: nginx is not installed (apt-get install -y nginx)")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def start(nginx, root, slow_rate):
    prefix = tempfile.mkdtemp(prefix="nginx-fixture-")
    os.makedirs(os.path.join(prefix, "temp"))
    with open(os.path.join(HERE, "nginx.conf.template")) as template:
        text = template.read()
    for attempt in range(5):
        port = free_port()
        config = (text.replace("@PREFIX@", prefix).replace("@ROOT@", root)
                  .replace("@PORT@", str(port)).replace("@SLOW_RATE@", slow_rate))
        config_path = os.path.join(prefix, "nginx.conf")
        with open(config_path, "w") as config_file:
            config_file.write(config)
        process = subprocess.Popen([nginx, "-p", prefix, "-e", os.path.join(prefix, "error.log"), "-c", config_path],
                                   stdin=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline and process.poll() is None and not answers(port):
            time.sleep(0.02)
        if process.poll() is None and answers(port):
            return process, port, prefix
        if process.poll() is None:
            process.kill()
        process.wait()
    with open(os.path.join(prefix, "error.log")) as log:
        sys.exit("nginx_fixture: nginx did not start:\n" + log.read())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    slow_rate = sys.argv[2] if len(sys.argv) > 2 else "256k"
    process, port, prefix = start(find_nginx(), root, slow_rate)
    print("PORT %d" % port, flush=True)
    print("ACCESS_LOG %s" % os.path.join(prefix, "access.log"), flush=True)
    try:
        sys.stdin.read()
    finally:
        # A single-process nginx waits for idle keep-alive connections on SIGTERM; it keeps no
        # state worth a graceful stop (each access-log line is written when its request ends).
        process.kill()
        process.wait()
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    main()
