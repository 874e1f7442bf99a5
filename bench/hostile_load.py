#!/usr/bin/python3
"""Strangers against a fresh coordinator (auth on, dashboard on): what each flood costs it.
  grpc   N anonymous messages of M MB at once to RunService/SubmitMatch (gRPC reads a message
         whole before the token is looked at: the server's memory quota must bound them)
  http   N anonymous bodies of 16 MiB at once to /api/v1/runs/match (refused from the headers)
  idle   N connections holding half-sent HTTP requests, then a signed-in request: its latency
  submit N matches of G games with a 4 KB event, each cancelled at once, by one submitter
         (over the HTTP API); then the same number of matches left queued, and a restart
Prints the coordinator's peak resident memory (VmHWM) after each probe, and the baseline.
Needs Debian's python3-grpcio (/usr/bin/python3). Usage:
  bench/hostile_load.py [ARBITER] [--grpc N MB] [--http N] [--idle N] [--submit N G]"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import grpc

ARBITER = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "build/cli/arbiter"


def arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        return [int(x) for x in sys.argv[i + 1:i + 1 + len(default)]]
    return default


def peak_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) / 1024


def start(d=None):
    d = d or tempfile.mkdtemp(prefix="arbiter-hostile-")
    p = subprocess.Popen([ARBITER, "coordinator", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                          "--data", d], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    grpc_port = int(re.search(r"listening on port (\d+)", line).group(1))
    http_port = int(re.search(r"dashboard on port (\d+)", line).group(1))
    admin = open(os.path.join(d, "admin.token")).read().strip()
    return p, grpc_port, http_port, admin, d


def grpc_flood(port, n, mb):
    body = b"\x0a" + b"\xff" * 5 + b"x" * (mb << 20)  # any bytes: refused after they arrive
    results = []

    def one():
        ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
            ("grpc.max_send_message_length", 1 << 30)])
        call = ch.unary_unary("/arbiter.v1.RunService/SubmitMatch")
        try:
            call(body, timeout=60)
            results.append("ok")
        except grpc.RpcError as e:
            results.append(e.code().name)
        ch.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def http_flood(port, n):
    codes = []

    def one():
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"POST /api/v1/runs/match HTTP/1.1\r\nHost: x\r\nContent-Length: 16777216\r\n\r\n")
        try:
            chunk = b"x" * (1 << 20)
            for _ in range(16):
                s.sendall(chunk)
        except OSError:
            pass  # refused and closed before the body was sent: the point
        try:
            codes.append(s.recv(64).split(b" ")[1].decode())
        except (OSError, IndexError):
            codes.append("closed")
        s.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


def idle_then_signed_in(port, n, admin):
    idle = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n")
        idle.append(s)
    start_t = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(f"GET /api/v1/session HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin}\r\n"
              "Connection: close\r\n\r\n".encode())
    status = s.recv(64).split(b" ")[1].decode()
    took = time.monotonic() - start_t
    s.close()
    for c in idle:
        c.close()
    return status, took


def http_json(port, token, method, path, body=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    data = json.dumps(body).encode() if body is not None else b""
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
              f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
    reply = b""
    while chunk := s.recv(65536):
        reply += chunk
    s.close()
    head, _, text = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(text) if text.strip() else {}


def submitter(gport, d):
    out = subprocess.run([ARBITER, "--token-file", os.path.join(d, "admin.token"), "tokens", "create", "--coordinator", f"127.0.0.1:{gport}",
                          "--name", "flooder", "--role", "submitter"],
                         capture_output=True, text=True, check=True).stdout
    return re.search(r"(arb_[A-Za-z0-9_-]+)", out).group(1)


def submit_flood(hport, token, n, games, cancel):
    match = {"engines": [{"name": "a", "builtin": True}, {"name": "b", "builtin": True}],
             "tc": "10+0.1", "games": str(games), "rules": {"event": "e" * 4096}}
    codes = []
    for _ in range(n):
        code, run = http_json(hport, token, "POST", "/api/v1/runs/match", match)
        codes.append(code)
        if code == 200 and cancel:
            codes.append(http_json(hport, token, "POST", f"/api/v1/runs/{run['id']}/cancel")[0])
    return codes


def main():
    if "--submit" in sys.argv:
        return submit_main(*arg("--submit", [40, 1000000]))
    p, gport, hport, admin, _ = start()
    try:
        print(f"coordinator baseline peak RSS {peak_mb(p.pid):.0f} MB")
        n, mb = arg("--grpc", [48, 60])
        codes = grpc_flood(gport, n, mb)
        print(f"grpc: {n} anonymous {mb} MB messages: {sorted(set(codes))}; peak RSS {peak_mb(p.pid):.0f} MB")
        (n,) = arg("--http", [100])
        codes = http_flood(hport, n)
        print(f"http: {n} anonymous 16 MiB bodies: {sorted(set(codes))}; peak RSS {peak_mb(p.pid):.0f} MB")
        (n,) = arg("--idle", [300])
        status, took = idle_then_signed_in(hport, n, admin)
        print(f"idle: {n} half-sent requests, then a signed-in request: {status} in {took:.2f} s")
    finally:
        p.terminate()
        p.wait()


def submit_main(n, games):
    p, gport, hport, admin, d = start()
    try:
        token = submitter(gport, d)
        print(f"coordinator baseline peak RSS {peak_mb(p.pid):.0f} MB")
        t = time.monotonic()
        codes = submit_flood(hport, token, n, games, cancel=True)
        print(f"submit: {n} x (match of {games} games, 4 KB event, cancelled): "
              f"{sorted(set(codes))} in {time.monotonic() - t:.1f} s; peak RSS {peak_mb(p.pid):.0f} MB")
        codes = submit_flood(hport, token, n, games, cancel=False)
        print(f"queued: {n} more left queued: {dict((c, codes.count(c)) for c in set(codes))}; "
              f"peak RSS {peak_mb(p.pid):.0f} MB")
    finally:
        p.terminate()
        p.wait()
    t = time.monotonic()
    p, gport, hport, admin, _ = start(d)
    try:
        print(f"restart: serving again after {time.monotonic() - t:.1f} s; peak RSS {peak_mb(p.pid):.0f} MB")
    finally:
        p.terminate()
        p.wait()


if __name__ == "__main__":
    main()
