#!/usr/bin/python3
"""Strangers against a fresh coordinator (auth on, dashboard on): what each flood costs it.
  grpc   N anonymous messages of M MB at once to RunService/SubmitMatch (gRPC reads a message
         whole before the token is looked at: the server's memory quota must bound them)
  http   N anonymous bodies of 16 MiB at once to /api/v1/runs/match (refused from the headers)
  idle   N connections holding half-sent HTTP requests, then a signed-in request: its latency
Prints the coordinator's peak resident memory (VmHWM) after each probe, and the baseline.
Needs Debian's python3-grpcio (/usr/bin/python3). Usage:
  bench/hostile_load.py [ARBITER] [--grpc N MB] [--http N] [--idle N]"""
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


def start():
    d = tempfile.mkdtemp(prefix="arbiter-hostile-")
    p = subprocess.Popen([ARBITER, "coordinator", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                          "--data", d], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    grpc_port = int(re.search(r"listening on port (\d+)", line).group(1))
    http_port = int(re.search(r"dashboard on port (\d+)", line).group(1))
    admin = open(os.path.join(d, "admin.token")).read().strip()
    return p, grpc_port, http_port, admin


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


def main():
    p, gport, hport, admin = start()
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


if __name__ == "__main__":
    main()
