#!/usr/bin/env python3
"""The dashboard under load (issue 13's speed targets), both parts against a real coordinator:
1. the runs page's API call with RUNS runs in the store (default 10,000): first page, a page deep
   in the list, and a filter that matches none (the whole list scanned), median and p95 of 20
   calls each, against the 100 ms target;
2. what PAGES open live pages (default 200, Server-Sent Events on the run being worked) cost the
   coordinator: bench/coordinator_load's completions/s without and with them, alternating rounds
   on one coordinator, and the ratio (target: at least 0.95).
Usage: bench/dashboard_load.py [BUILD_DIR]
  (env: RUNS=10000 PAGES=200 WORKERS=200 JOBS=20000 ROUNDS=3)"""
import http.client
import json
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ARBITER = os.path.join(BUILD, "cli", "arbiter")
LOAD = os.path.join(BUILD, "bench", "arbiter_coordinator_load")
RUNS = int(os.environ.get("RUNS", 10000))
PAGES = int(os.environ.get("PAGES", 200))
WORKERS = os.environ.get("WORKERS", "200")
JOBS = os.environ.get("JOBS", "20000")
STARTPOS = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def start_coordinator(data):
    log = open(os.path.join(data, "log"), "w+")
    p = subprocess.Popen([ARBITER, "coordinator", "--listen", "127.0.0.1:0", "--data", data,
                          "--http", "127.0.0.1:0", "--no-auth", "--lease-s", "30",
                          "--max-active-runs", "100000", "--max-submissions-per-minute",
                          "100000"], stdout=log, stderr=subprocess.DEVNULL, text=True)
    for _ in range(300):
        log.seek(0)
        m = re.search(r"listening on port (\d+).*dashboard on port (\d+)", log.read())
        if m:
            return p, int(m.group(1)), int(m.group(2))
        time.sleep(0.1)
    raise SystemExit("coordinator did not start")


def call(conn, method, path, body=None):
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit(f"{method} {path}: {r.status} {data[:200]}")
    return json.loads(data)


def timed(conn, path, n=20):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call(conn, "GET", path)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (n - 1))]


def runs_page(http_port):
    def submit(n):
        c = http.client.HTTPConnection("127.0.0.1", http_port)
        for _ in range(n):
            call(c, "POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 1}})

    t = time.time()
    submitters = [threading.Thread(target=submit, args=(RUNS // 8 + (i < RUNS % 8),))
                  for i in range(8)]
    for th in submitters:
        th.start()
    for th in submitters:
        th.join()
    conn = http.client.HTTPConnection("127.0.0.1", http_port)
    print(f"runs page: {RUNS} runs submitted in {time.time() - t:.1f} s")
    deep = str(RUNS // 2)
    for label, path in (("first page (50)", "/api/v1/runs?page_size=50"),
                        ("page from the middle (50)", f"/api/v1/runs?page_size=50&page_token={deep}"),
                        ("filter matching none (scans all)", "/api/v1/runs?state=FAILED"),
                        ("page of 200", "/api/v1/runs?page_size=200")):
        med, p95 = timed(conn, path)
        print(f"runs page, {label}: median {med:.1f} ms, p95 {p95:.1f} ms "
              f"(target < 100 ms: {'met' if p95 < 100 else 'MISSED'})")


class LivePages:
    """PAGES browsers' event streams on one run, read by one thread (selectors), so that the
    readers cost the shared CPUs as little as a client can."""

    def __init__(self, http_port, run_id):
        self.events = 0
        self.stop = False
        self.socks = []
        for _ in range(PAGES):
            s = socket.create_connection(("127.0.0.1", http_port))
            s.sendall(f"GET /api/v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            s.setblocking(False)
            self.socks.append(s)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        sel = selectors.DefaultSelector()
        for s in self.socks:
            sel.register(s, selectors.EVENT_READ)
        open_socks = len(self.socks)
        while not self.stop and open_socks:
            for key, _ in sel.select(timeout=0.5):
                data = key.fileobj.recv(1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                    open_socks -= 1
                    continue
                self.events += data.count(b"event: run")
        for s in self.socks:
            s.close()

    def close(self):
        self.stop = True
        self.thread.join()


def load_round(grpc_port, http_port, pages):
    p = subprocess.Popen([LOAD, f"127.0.0.1:{grpc_port}", WORKERS, JOBS, "8"],
                         stdout=subprocess.PIPE, text=True)
    live = None
    if pages:
        conn = http.client.HTTPConnection("127.0.0.1", http_port)
        for _ in range(600):
            running = call(conn, "GET", "/api/v1/runs?state=RUNNING,QUEUED&page_size=1")["runs"]
            if running:
                live = LivePages(http_port, running[0]["id"])
                break
            time.sleep(0.01)
    out = p.communicate()[0]
    if live:
        live.close()
    rate = float(re.search(r"completions/s (\d+)", out).group(1))
    exact = "exact" in out.split("run total")[-1]
    return rate, (live.events if live else 0), exact


def main():
    for f in (ARBITER, LOAD):
        if not os.access(f, os.X_OK):
            raise SystemExit(f"{f}: build first (cmake --build {BUILD})")
    with tempfile.TemporaryDirectory() as data:
        p, grpc_port, http_port = start_coordinator(data)
        try:
            runs_page(http_port)
        finally:
            p.terminate()
            p.wait()
    with tempfile.TemporaryDirectory() as data:
        p, grpc_port, http_port = start_coordinator(data)
        try:
            rates = {0: [], PAGES: []}
            for rnd in range(int(os.environ.get("ROUNDS", 3))):
                for pages in (0, PAGES):
                    rate, events, exact = load_round(grpc_port, http_port, pages)
                    rates[pages].append(rate)
                    print(f"round {rnd + 1}, {pages} live pages: {rate:.0f} completions/s"
                          f"{f', {events} events delivered' if pages else ''}"
                          f"{'' if exact else ' (RUN TOTAL WRONG)'}")
            base, loaded = statistics.median(rates[0]), statistics.median(rates[PAGES])
            print(f"live pages: {PAGES} pages {loaded:.0f} vs none {base:.0f} completions/s, "
                  f"ratio {loaded / base:.3f} (target >= 0.95: "
                  f"{'met' if loaded / base >= 0.95 else 'MISSED'})")
        finally:
            p.terminate()
            p.wait()


main()
