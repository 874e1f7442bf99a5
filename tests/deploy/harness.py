"""Helpers of the deployment tests: real child processes, free ports, polling with deadlines,
the arbiter CLI with --json, and HTTP GETs. No sleep hopes for anything: every wait polls a
condition until a deadline and fails the test with what it was waiting for."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SKIP = 77  # ctest SKIP_RETURN_CODE


class Failure(Exception):
    pass


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def check(cond, msg):
    if not cond:
        raise Failure(msg)
    log(f"ok: {msg}")


def skip(msg):
    print(f"SKIPPED: {msg}", flush=True)
    sys.exit(SKIP)


def wait_for(what, fn, timeout, interval=0.2):
    """Polls fn() until it returns a truthy value (returned) or the deadline passes (Failure)."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while time.monotonic() < deadline:
        try:
            v = fn()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 - shown if the deadline passes
            last_exc = e
        time.sleep(interval)
    raise Failure(f"timed out after {timeout} s waiting for {what}"
                  + (f" (last error: {last_exc})" if last_exc else ""))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Procs:
    """Child processes started by a test; all killed (process group) at exit."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.procs = []

    def start(self, name, argv, env=None, prefix=()):
        logf = open(os.path.join(self.workdir, f"{name}.log"), "ab")
        p = subprocess.Popen(list(prefix) + list(argv), stdout=logf, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        p.name = name
        p.logpath = logf.name
        self.procs.append(p)
        log(f"started {name} (pid {p.pid}): {' '.join(argv)}")
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=30):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        return p.returncode

    def stop_all(self):
        for p in reversed(self.procs):
            self.stop(p, signal.SIGTERM, 10)

    def tail(self, p, n=30):
        try:
            with open(p.logpath, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


def run_cli(argv, timeout=300, env=None, prefix=()):
    """Runs the arbiter CLI (argv[0] is the binary); returns stdout; Failure on a non-zero exit."""
    r = subprocess.run(list(prefix) + list(argv), capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        raise Failure(f"{' '.join(argv)} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def json_out(argv, **kw):
    return json.loads(run_cli(argv, **kw))


def main(body):
    """Runs body(workdir, procs) with a fresh temporary directory; exit 0 / 1 / 77."""
    workdir = tempfile.mkdtemp(prefix="arbiter-deploy-")
    procs = Procs(workdir)
    status = 1
    try:
        body(workdir, procs)
        status = 0
    except Failure as e:
        log(f"FAILED: {e}")
        for p in procs.procs:
            print(f"--- last lines of {p.name} ({p.logpath}):\n{procs.tail(p)}", flush=True)
    finally:
        procs.stop_all()
    if status == 0:
        shutil.rmtree(workdir, ignore_errors=True)
        log("PASSED")
    else:
        log(f"logs kept in {workdir}")
    sys.exit(status)
