"""A real `arbiter local --http` for the dashboard tests: the process, its addresses, tokens of
each role, and the JSON API called as a script would (bearer header) or as the page does
(cookie + CSRF header)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


class LocalCluster:
    def __init__(self, arbiter, workers=2, extra=()):
        self.arbiter = arbiter
        self.dir = tempfile.mkdtemp(prefix="arbiter-web-test-")
        with open(os.path.join(self.dir, "stderr"), "w") as err:
            self.proc = subprocess.Popen(
                [arbiter, "local", "--workers", str(workers), "--listen", "127.0.0.1:0",
                 "--http", "127.0.0.1:0", "--data", os.path.join(self.dir, "data"), *extra],
                stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            self._read_start()
        except BaseException:
            self.close()  # a start that cannot be read leaves no process behind
            raise

    def _read_start(self):
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("arbiter local exited: " + self.stderr())
            lines.append(line)
            if line.startswith("dashboard:"):
                break
        text = "".join(lines)
        self.startup = text  # what `arbiter local` printed up to the dashboard's line
        self.grpc = re.search(r"coordinator on (127\.0\.0\.1:\d+)", text).group(1)
        link = re.search(r"dashboard: (http://127\.0\.0\.1:\d+)(/\S*)", text)
        self.base, self.one_time_path = link.group(1), link.group(2)
        token_file = re.search(r"token for its clients in ([^\s,]+)", text).group(1)
        with open(token_file) as f:
            self.admin = f.read().strip()
        self.tokens = {"admin": self.admin}
        for name, role in (("viewer", "viewer"), ("submitter", "submitter"),
                           ("other", "submitter"), ("worker", "worker")):
            self.tokens[name] = self.create_token(name, role)

    def stderr(self):
        with open(os.path.join(self.dir, "stderr")) as f:
            return f.read()[-4000:]

    def cli(self, *args, token=None):
        env = dict(os.environ, ARBITER_TOKEN=token or self.admin)
        return subprocess.run([self.arbiter, *args], env=env, capture_output=True, text=True,
                              timeout=300)

    def create_token(self, name, role):
        r = self.cli("tokens", "create", "--coordinator", self.grpc, "--name", name, "--role", role)
        assert r.returncode == 0, r.stderr
        return re.search(r"arb_[0-9a-f]{64}", r.stdout).group(0)

    def request(self, method, path, body=None, token=None, headers=None, raw=None):
        """An HTTP request; `token` as a bearer header (a script's way in)."""
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        opener = urllib.request.build_opener(NoRedirect())
        try:
            with opener.open(req, timeout=60) as r:
                return Response(r.status, r.headers, r.read().decode(errors="replace"))
        except urllib.error.HTTPError as e:
            return Response(e.code, e.headers, e.read().decode(errors="replace"))

    def run(self, run_id, token=None):
        r = self.request("GET", f"/api/v1/runs/{run_id}", token=token or self.admin)
        assert r.status == 200, r.body
        return r.json()

    def wait_run(self, run_id, predicate, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = self.run(run_id)
            if predicate(run):
                return run
            time.sleep(0.2)
        raise AssertionError(f"run {run_id} did not get there in {timeout} s: {self.run(run_id)}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def match_request(games=0, sprt=True, tc="1+0.02"):
    """Builtin engine, default vs a weaker knight value (the quick start's SPRT)."""
    r = {"settings": {"engines": [{"name": "base", "builtin": True},
                                  {"name": "weak-knight", "builtin": True,
                                   "options": {"KnightValueMg": "200"}}],
                      "tc": tc},
         "games": str(games)}
    if sprt:
        r["sprt"] = {"elo0": 0, "elo1": 50, "alpha": 0.05, "beta": 0.05}
    return r


STARTPOS = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
