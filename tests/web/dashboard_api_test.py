"""The dashboard's JSON API and sign-in against a real `arbiter local --http`: each use next to
its abuse (no token, wrong role, no CSRF value, oversized or malformed bodies, bad paths).
Usage: dashboard_api_test.py ARBITER_BINARY"""
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from local_cluster import STARTPOS, LocalCluster, match_request

ARBITER = None


class DashboardApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = LocalCluster(ARBITER)

    @classmethod
    def tearDownClass(cls):
        cls.c.close()

    def perft(self, token, depth=3):
        return self.c.request("POST", "/api/v1/runs/perft",
                              {"perft": {"fen": STARTPOS, "depth": depth}}, token=token)

    def sign_in(self, name):
        """The cookie a browser gets from the sign-in form, and the page's CSRF value."""
        r = self.c.request("POST", "/signin", raw=f"token={self.c.tokens[name]}".encode(),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 303, r.body)
        cookie = r.headers["Set-Cookie"]
        self.assertIn("HttpOnly", cookie)
        self.assertIn("SameSite=Strict", cookie)
        jar = cookie.split(";")[0]
        s = self.c.request("GET", "/api/v1/session", headers={"Cookie": jar})
        self.assertEqual(s.status, 200, s.body)
        self.assertEqual(s.json()["name"], name)
        return jar, s.json()["csrf"]

    def test_without_a_token_only_the_sign_in_page_is_served(self):
        for path in ("/", "/app.js", "/app.html", "/#/runs"):
            r = self.c.request("GET", path)
            self.assertEqual(r.status, 200)
            self.assertIn('id="signin"', r.body, path)
            self.assertNotIn("EventSource", r.body, path)
        self.assertIn("default-src 'self'", r.headers["Content-Security-Policy"])
        for path in ("/api/v1/runs", "/api/v1/workers", "/api/v1/engines", "/api/v1/runs/1/events"):
            r = self.c.request("GET", path)
            self.assertEqual(r.status, 401, path)
            self.assertEqual(r.json()["code"], "UNAUTHENTICATED")
        self.assertEqual(self.perft(None).status, 401)

    def test_a_wrong_or_worker_token_is_refused(self):
        r = self.c.request("GET", "/api/v1/runs", token="arb_" + "0" * 64)
        self.assertEqual(r.status, 401)
        r = self.c.request("GET", "/api/v1/runs", token=self.c.tokens["worker"])
        self.assertEqual(r.status, 403)
        self.assertIn("worker", r.json()["message"])
        r = self.c.request("POST", "/signin", raw=b"token=arb_nonsense",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 401)
        self.assertNotIn("Set-Cookie", r.headers)
        r = self.c.request("POST", "/signin", raw=f"token={self.c.tokens['worker']}".encode(),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 403)

    def test_roles_decide_who_submits_and_cancels(self):
        self.assertEqual(self.perft(self.c.tokens["viewer"]).status, 403)
        r = self.c.request("POST", "/api/v1/runs/match", {"settings": {"engines": [], "tc": "1+0"}},
                           token=self.c.tokens["viewer"])
        self.assertEqual(r.status, 403)
        r = self.perft(self.c.tokens["submitter"], depth=9)
        self.assertEqual(r.status, 200, r.body)
        run = r.json()
        self.assertEqual(run["owner"], "submitter")
        for who in ("viewer", "other"):
            r = self.c.request("POST", f"/api/v1/runs/{run['id']}/cancel", {},
                               token=self.c.tokens[who])
            self.assertEqual(r.status, 403, who)
        # Still going: queued while the coordinator merges its split's first shard, or running.
        self.assertIn(self.c.run(run["id"])["state"], ("RUN_STATE_QUEUED", "RUN_STATE_RUNNING"))
        r = self.c.request("POST", f"/api/v1/runs/{run['id']}/cancel", {"reason": "test"},
                           token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["state"], "RUN_STATE_CANCELLED")
        self.assertEqual(r.json()["message"], "test")

    def test_a_change_under_the_cookie_needs_the_csrf_value(self):
        jar, csrf = self.sign_in("submitter")
        body = {"perft": {"fen": STARTPOS, "depth": 2}}
        r = self.c.request("POST", "/api/v1/runs/perft", body, headers={"Cookie": jar})
        self.assertEqual(r.status, 403)
        self.assertIn("CSRF", r.json()["message"])
        r = self.c.request("POST", "/api/v1/runs/perft", body,
                           headers={"Cookie": jar, "X-CSRF-Token": "0" * 32})
        self.assertEqual(r.status, 403)
        viewer_jar, viewer_csrf = self.sign_in("viewer")
        self.assertNotEqual(viewer_csrf, csrf)
        r = self.c.request("POST", "/api/v1/runs/perft", body,
                           headers={"Cookie": jar, "X-CSRF-Token": viewer_csrf})
        self.assertEqual(r.status, 403)
        r = self.c.request("POST", "/api/v1/runs/perft", body,
                           headers={"Cookie": jar, "X-CSRF-Token": csrf})
        self.assertEqual(r.status, 200, r.body)
        # Reading needs none.
        self.assertEqual(self.c.request("GET", "/api/v1/runs", headers={"Cookie": jar}).status, 200)
        # Signing out clears the cookie, and the session is gone even for a copy of it.
        r = self.c.request("GET", "/signout", headers={"Cookie": jar})
        self.assertEqual(r.status, 303)
        self.assertIn("Max-Age=0", r.headers["Set-Cookie"])
        self.assertEqual(self.c.request("GET", "/api/v1/runs", headers={"Cookie": jar}).status, 401)

    def test_the_cookie_holds_a_session_not_the_token(self):
        jar, _ = self.sign_in("viewer")
        self.assertNotIn(self.c.tokens["viewer"], jar)
        self.assertNotIn(self.c.tokens["viewer"][4:20], jar)
        # A token pasted as the cookie is no session.
        forged = f"arbiter_token={self.c.tokens['viewer']}"
        self.assertEqual(self.c.request("GET", "/api/v1/runs", headers={"Cookie": forged}).status,
                         401)
        # Behind a proxy that terminates TLS the cookie is Secure; over plain HTTP it cannot be.
        r = self.c.request("POST", "/signin", raw=f"token={self.c.tokens['viewer']}".encode(),
                           headers={"Content-Type": "application/x-www-form-urlencoded",
                                    "X-Forwarded-Proto": "https"})
        self.assertEqual(r.status, 303, r.body)
        self.assertIn("; Secure", r.headers["Set-Cookie"])

    def test_a_sign_in_posted_from_another_site_is_refused(self):
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        for cross in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                      {"Origin": "null", "Sec-Fetch-Site": "same-site"}):
            r = self.c.request("POST", "/signin", raw=f"token={self.c.tokens['admin']}".encode(),
                               headers={**form, **cross})
            self.assertEqual(r.status, 403, cross)
            self.assertNotIn("Set-Cookie", r.headers, cross)
        host = self.c.base.split("//")[1]
        for same in ({"Origin": f"http://{host}"},
                     {"Origin": "null", "Sec-Fetch-Site": "same-origin"}):
            r = self.c.request("POST", "/signin",
                               raw=f"token={self.c.tokens['viewer']}".encode(),
                               headers={**form, **same})
            self.assertEqual(r.status, 303, same)

    def test_no_other_origin_may_call_the_api(self):
        r = self.c.request("OPTIONS", "/api/v1/runs/perft",
                           headers={"Origin": "https://evil.example",
                                    "Access-Control-Request-Method": "POST"})
        self.assertNotIn("Access-Control-Allow-Origin", r.headers)
        r = self.c.request("GET", "/api/v1/runs", token=self.c.admin,
                           headers={"Origin": "https://evil.example"})
        self.assertNotIn("Access-Control-Allow-Origin", r.headers)

    def test_the_one_time_link_signs_in_once(self):
        # The link printed at start may have been used by no one yet: it works once.
        r = self.c.request("GET", self.c.one_time_path)
        self.assertEqual(r.status, 303)
        jar = r.headers["Set-Cookie"].split(";")[0]
        self.assertNotIn(self.c.admin, jar)
        s = self.c.request("GET", "/api/v1/session", headers={"Cookie": jar})
        self.assertEqual(s.json()["role"], "admin", s.body)
        r = self.c.request("GET", self.c.one_time_path)
        self.assertEqual(r.status, 401)
        self.assertNotIn("Set-Cookie", r.headers)
        self.assertEqual(self.c.request("GET", "/signin/once?code=" + "a" * 48).status, 401)

    def test_bad_requests_get_clear_errors(self):
        admin = self.c.admin
        cases = [
            ("POST", "/api/v1/runs/perft", b"{not json", 400, "request body"),
            ("POST", "/api/v1/runs/perft", b'{"perft":{"fen":"x","depth":3}}', 400, "FEN"),
            ("POST", "/api/v1/runs/perft", b'{"bogus_field":1}', 400, "bogus_field"),
            ("POST", "/api/v1/runs/perft",
             json.dumps({"perft": {"fen": STARTPOS, "depth": 99}}).encode(), 400, "depth"),
            # A split position's parts are the coordinator's to make, never a submitter's.
            ("POST", "/api/v1/runs/movegen-check",
             json.dumps({"engine": {"name": "e", "builtin": True},
                         "positions": [{"fen": STARTPOS, "depth": 3, "moves": ["e2e4"]}]}).encode(),
             400, "set by the coordinator"),
            ("POST", "/api/v1/runs/movegen-check",
             json.dumps({"engine": {"name": "e", "builtin": True},
                         "positions": [{"fen": STARTPOS, "depth": 3, "parts": 20}]}).encode(),
             400, "set by the coordinator"),
            ("GET", "/api/v1/runs?page_size=0", None, 400, "page_size"),
            ("GET", "/api/v1/runs?page_size=100000", None, 400, "page_size"),
            ("GET", "/api/v1/runs?state=BOGUS", None, 400, "state"),
            ("GET", "/api/v1/runs?kind=BOGUS", None, 400, "kind"),
            ("GET", "/api/v1/runs?page_token=xyz", None, 400, "page_token"),
            ("GET", "/api/v1/runs/abc", None, 400, "run id"),
            ("GET", "/api/v1/runs/99999999", None, 404, "99999999"),
            ("GET", "/api/v1/runs/99999999/events", None, 404, "99999999"),
            ("GET", "/api/v1/runs/99999999/pgn", None, 404, "99999999"),
            ("DELETE", "/api/v1/runs", None, 405, "not allowed"),
            ("GET", "/api/v1/runs/1/cancel", None, 405, "not allowed"),
            ("GET", "/api/v1/nothing", None, 404, "no API call"),
            ("DELETE", "/api/v1/engines/" + "0" * 64, None, 404, ""),
        ]
        for method, path, raw, status, text in cases:
            r = self.c.request(method, path, raw=raw, token=admin)
            self.assertEqual(r.status, status, f"{method} {path}: {r.body}")
            self.assertIn(text, r.json()["message"], f"{method} {path}")

    def test_a_dashboard_that_cannot_listen_stops_the_start_with_its_cause(self):
        taken = self.c.base.split("//")[1]  # this cluster's dashboard address
        # (arbiter local refuses a dashboard beyond loopback before it tries to listen.)
        for address, cause in [(taken, "in use"), ("127.0.0.1:99999", "cannot serve HTTP"),
                               ("no-port-here", "cannot serve HTTP")]:
            with tempfile.TemporaryDirectory() as data:
                out = subprocess.run([ARBITER, "local", "--workers", "1", "--listen",
                                      "127.0.0.1:0", "--data", data, "--http", address],
                                     capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 2, f"--http {address}: {out.stderr}")
            self.assertIn(f"cannot serve HTTP on '{address}'", out.stderr)
            self.assertIn(cause, out.stderr)
            self.assertNotIn("one-time sign-in link", out.stdout)
        # The first cluster's dashboard still answers.
        self.assertEqual(self.c.request("GET", "/api/v1/session", token=self.c.admin).status, 200)

    def raw_headers(self, lines):
        """A connection that has sent `lines` as a request's head and no body."""
        host, port = self.c.base.split("//")[1].split(":")
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return s

    def test_a_strangers_body_is_refused_before_a_byte_of_it_is_read(self):
        # Headers announce 16 MiB and none follows: the answer must come from the headers alone
        # (were the body read first, the server would wait for it until the request timeout).
        for auth in ([], ["Authorization: Bearer arb_" + "0" * 64]):
            s = self.raw_headers(["POST /api/v1/runs/match HTTP/1.1", "Host: x",
                                  "Content-Type: application/json",
                                  "Content-Length: 16777216"] + auth)
            s.settimeout(5)
            head = s.recv(4096).decode(errors="replace")
            s.close()
            self.assertTrue(head.startswith("HTTP/1.1 401"), head)
        # A signed-in submitter announcing the same gets to send it (the server waits for it).
        s = self.raw_headers(["POST /api/v1/runs/match HTTP/1.1", "Host: x",
                              "Authorization: Bearer " + self.c.admin,
                              "Content-Type: application/json", "Content-Length: 16777216"])
        s.settimeout(2)
        with self.assertRaises(socket.timeout):
            s.recv(4096)
        s.close()

    def test_bodies_are_bounded_per_endpoint(self):
        r = self.c.request("POST", "/api/v1/runs/1/cancel", raw=b"x" * (100 << 10), token=self.c.admin)
        self.assertEqual(r.status, 413, r.body)
        r = self.c.request("POST", "/signin", raw=b"token=" + b"a" * 8192,
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 413, r.body)

    def test_half_sent_requests_do_not_lock_out_a_signed_in_user(self):
        host, port = self.c.base.split("//")[1].split(":")
        idle = []
        try:
            for _ in range(300):  # each sends half a request's head, and never the rest
                s = socket.create_connection((host, int(port)), timeout=10)
                s.sendall(b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n")
                idle.append(s)
            start = time.monotonic()
            r = self.c.request("GET", "/api/v1/session", token=self.c.admin)
            self.assertEqual(r.status, 200, r.body)
            self.assertLess(time.monotonic() - start, 3.0)
        finally:
            for s in idle:
                s.close()

    def test_an_oversized_body_is_refused_before_it_is_read(self):
        r = self.c.request("POST", "/api/v1/runs/match", raw=b"x" * (17 << 20), token=self.c.admin)
        self.assertEqual(r.status, 413)

    def test_paths_outside_the_app_are_not_served(self):
        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd"):
            r = self.c.request("GET", path, token=self.c.admin)
            self.assertNotIn("root:", r.body, path)

    def test_assets_are_compressed_cached_and_the_icon_is_served(self):
        for path in ("/favicon.ico", "/favicon.svg"):
            r = self.c.request("GET", path)
            self.assertEqual(r.status, 200, path)
            self.assertEqual(r.headers["Content-Type"], "image/svg+xml")
        r = self.c.request("GET", "/style.css", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Encoding"], "gzip")
        self.assertEqual(r.headers["Cache-Control"], "no-cache")
        etag = r.headers["ETag"]
        again = self.c.request("GET", "/style.css", headers={"If-None-Match": etag})
        self.assertEqual(again.status, 304)
        plain = self.c.request("GET", "/style.css")
        self.assertIsNone(plain.headers["Content-Encoding"])
        self.assertIn(":root", plain.body)
        # The pages themselves are never kept.
        jar, _ = self.sign_in("viewer")
        page = self.c.request("GET", "/", headers={"Cookie": jar})
        self.assertEqual(page.headers["Cache-Control"], "no-store")
        for script in re.findall(r'<script src="(/[a-z]+\.js)"', page.body):
            self.assertEqual(self.c.request("GET", script, headers={"Cookie": jar}).status, 200, script)

    def test_a_verified_perft_reads_exact_and_an_unverified_one_measured(self):
        sub = self.c.tokens["submitter"]
        runs = {}
        for verify in (True, False):
            r = self.c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 4},
                               "verify": verify}, token=sub)
            self.assertEqual(r.status, 200, r.body)
            runs[verify] = self.c.wait_run(r.json()["id"],
                                           lambda run: run["state"] == "RUN_STATE_SUCCEEDED")
        self.assertEqual(runs[True]["outcome"]["verdict"], "RUN_VERDICT_PASSED")
        self.assertEqual(runs[True]["outcome"]["summary"],
                         "exact: verified by two workers, 197281 nodes")
        self.assertEqual(runs[False]["outcome"]["verdict"], "RUN_VERDICT_MEASURED")
        # A queued or running run has no verdict yet; a cancelled match is inconclusive.
        r = self.c.request("POST", "/api/v1/runs/match", match_request(games=1000), token=sub)
        self.assertEqual(r.json()["outcome"]["verdict"], "RUN_VERDICT_PENDING")
        c = self.c.request("POST", f"/api/v1/runs/{r.json()['id']}/cancel", {}, token=sub)
        self.assertEqual(c.json()["outcome"]["verdict"], "RUN_VERDICT_INCONCLUSIVE")

    def test_games_runs_carry_their_shared_fields_in_settings(self):
        sub = self.c.tokens["submitter"]
        req = match_request(games=1000, sprt=False)
        req["settings"]["scale_nps"] = "500000"
        r = self.c.request("POST", "/api/v1/runs/match", req, token=sub)
        self.assertEqual(r.status, 200, r.body)
        got = r.json()["match"]["request"]
        self.assertEqual([e["name"] for e in got["settings"]["engines"]], ["base", "weak-knight"])
        self.assertEqual(got["settings"]["tc"], "1+0.02")
        self.assertEqual(got["settings"]["scale_nps"], "500000")
        self.assertEqual(got["games"], "1000")
        self.c.request("POST", f"/api/v1/runs/{r.json()['id']}/cancel", {}, token=sub)
        t = {"settings": {"engines": [{"name": n, "builtin": True} for n in ("x", "y", "z")],
                          "tc": "nodes=2000", "concurrency": 1},
             "games_per_pairing": 2, "gauntlet": True}
        r = self.c.request("POST", "/api/v1/runs/tournament", t, token=sub)
        self.assertEqual(r.status, 200, r.body)
        got = r.json()["tournament"]["request"]
        self.assertEqual(len(got["settings"]["engines"]), 3)
        self.assertEqual(got["settings"]["concurrency"], 1)
        self.assertTrue(got["gauntlet"])
        self.c.request("POST", f"/api/v1/runs/{r.json()['id']}/cancel", {}, token=sub)
        # The shared fields at the top level are not part of a request: refused.
        flat = {"engines": req["settings"]["engines"], "tc": "1+0.02", "games": "2"}
        r = self.c.request("POST", "/api/v1/runs/match", flat, token=sub)
        self.assertEqual(r.status, 400, r.body)
        self.assertIn("Cannot find field", r.body)

    def test_runs_are_paged_and_filtered(self):
        ids = []
        for _ in range(5):
            r = self.perft(self.c.tokens["other"], depth=1)
            self.assertEqual(r.status, 200, r.body)
            ids.append(int(r.json()["id"]))
        seen, token, pages = [], "", 0
        while True:
            q = "/api/v1/runs?owner=other&kind=PERFT&page_size=2" + (f"&page_token={token}" if token else "")
            r = self.c.request("GET", q, token=self.c.tokens["viewer"]).json()
            seen += [int(run["id"]) for run in r["runs"]]
            pages += 1
            token = r["next_page_token"]
            if not token:
                break
        self.assertEqual(seen, sorted(ids, reverse=True))
        self.assertEqual(pages, 3)
        r = self.c.request("GET", "/api/v1/runs?kind=MATCH&owner=other", token=self.c.admin).json()
        self.assertEqual(r["runs"], [])

    def test_events_stream_a_run_until_it_ends(self):
        r = self.perft(self.c.tokens["submitter"], depth=5)
        run_id = r.json()["id"]
        import urllib.request
        req = urllib.request.Request(f"{self.c.base}/api/v1/runs/{run_id}/events",
                                     headers={"Authorization": "Bearer " + self.c.tokens["viewer"]})
        states = []
        with urllib.request.urlopen(req, timeout=120) as stream:
            self.assertEqual(stream.headers["Content-Type"], "text/event-stream")
            for line in stream:  # ends when the server closes the stream at the run's end
                line = line.decode()
                if line.startswith("data: "):
                    states.append(json.loads(line[6:])["state"])
        self.assertEqual(states[-1], "RUN_STATE_SUCCEEDED")
        self.assertEqual(self.c.run(run_id)["perft"]["result"]["nodes"], "4865609")

    def test_live_pages_end_when_the_coordinator_stops(self):
        """Open event streams do not hold the process up: SIGTERM ends them and it exits 0."""
        import signal
        import urllib.request
        c2 = LocalCluster(ARBITER, workers=1)
        try:
            r = c2.request("POST", "/api/v1/runs/match", match_request(games=2000, sprt=False),
                           token=c2.admin)
            self.assertEqual(r.status, 200, r.body)
            run_id = r.json()["id"]
            streams = []
            for _ in range(3):
                req = urllib.request.Request(f"{c2.base}/api/v1/runs/{run_id}/events",
                                             headers={"Authorization": "Bearer " + c2.admin})
                stream = urllib.request.urlopen(req, timeout=60)
                while not stream.readline().startswith(b"data: "):  # the first event: live
                    pass
                streams.append(stream)
            c2.proc.send_signal(signal.SIGTERM)
            self.assertEqual(c2.proc.wait(timeout=60), 0, c2.stderr())
            for stream in streams:
                stream.read()  # to the end: the server closed it (a hang would time out)
                stream.close()
        finally:
            c2.close()

    def test_workers_and_engines_are_listed(self):
        run_id = self.perft(self.c.tokens["submitter"], depth=5).json()["id"]
        self.c.wait_run(run_id, lambda r: r["state"] == "RUN_STATE_SUCCEEDED")
        w = self.c.request("GET", "/api/v1/workers", token=self.c.tokens["viewer"]).json()
        self.assertEqual(len(w["workers"]), 2)
        self.assertTrue(all(x["connected"] for x in w["workers"]))
        # Their speed comes from the perft results they delivered.
        self.assertTrue(any(x["nodes_per_second"] > 0 for x in w["workers"]), w)
        # The enums by name in `worker`; the deprecated strings spell them as people do.
        for x in w["workers"]:
            self.assertRegex(x["worker"]["engine_isolation"],
                             r"^ISOLATION_(NONE|LIMITS|LANDLOCK|NAMESPACES)$", x)
            self.assertRegex(x["worker"]["perft_core_path"], r"^PERFT_PATH_V[234]$", x)
            self.assertEqual(x["isolation"],
                             x["worker"]["engine_isolation"][len("ISOLATION_"):].lower(), x)
            self.assertEqual(x["perft_path"],
                             x["worker"]["perft_core_path"][len("PERFT_PATH_"):].lower(), x)
        e = self.c.request("GET", "/api/v1/engines", token=self.c.tokens["viewer"])
        self.assertEqual(e.status, 200)
        self.assertIn("engines", e.json())


class LivePageLimitTest(unittest.TestCase):
    def test_live_pages_past_the_limit_are_refused(self):
        c = LocalCluster(ARBITER, extra=("--max-live-pages", "2"))
        try:
            run_id = c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 9}},
                               token=c.admin).json()["id"]
            import http.client
            held = []
            for _ in range(2):
                conn = http.client.HTTPConnection(c.base.split("//")[1])
                conn.request("GET", f"/api/v1/runs/{run_id}/events",
                             headers={"Authorization": "Bearer " + c.admin})
                r = conn.getresponse()
                self.assertEqual(r.status, 200)
                self.assertTrue(r.fp.readline().startswith(b"event: run"))
                held.append(conn)
            r = c.request("GET", f"/api/v1/runs/{run_id}/events", token=c.admin)
            self.assertEqual(r.status, 429)
            self.assertIn("too many live pages", r.json()["message"])
            held[0].close()
            # A closed page frees its place (the server notices at its next write).
            c.request("POST", f"/api/v1/runs/{run_id}/cancel", {}, token=c.admin)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                conn = http.client.HTTPConnection(c.base.split("//")[1])
                conn.request("GET", f"/api/v1/runs/{run_id}/events",
                             headers={"Authorization": "Bearer " + c.admin})
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    break
                time.sleep(0.2)
            self.assertEqual(status, 200)
        finally:
            c.close()

    def test_one_token_cannot_take_every_live_page_and_revocation_ends_its_pages(self):
        c = LocalCluster(ARBITER, extra=("--max-live-pages", "4", "--max-live-pages-per-token", "2"))
        try:
            run_id = c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 9}},
                               token=c.admin).json()["id"]
            import http.client
            held = []
            for _ in range(2):
                conn = http.client.HTTPConnection(c.base.split("//")[1], timeout=30)
                conn.request("GET", f"/api/v1/runs/{run_id}/events",
                             headers={"Authorization": "Bearer " + c.tokens["viewer"]})
                r = conn.getresponse()
                self.assertEqual(r.status, 200)
                self.assertTrue(r.fp.readline().startswith(b"event: run"))
                held.append(r)
            r = c.request("GET", f"/api/v1/runs/{run_id}/events", token=c.tokens["viewer"])
            self.assertEqual(r.status, 429)
            self.assertIn("per token", r.json()["message"])
            # Another token still gets a live page.
            conn = http.client.HTTPConnection(c.base.split("//")[1], timeout=30)
            conn.request("GET", f"/api/v1/runs/{run_id}/events",
                         headers={"Authorization": "Bearer " + c.tokens["other"]})
            other = conn.getresponse()
            self.assertEqual(other.status, 200)
            # Revoked, the viewer's open pages end with an error event (within the 30 s read
            # timeout: the stream's liveness is checked every second, keepalives come every 15 s).
            r = c.cli("tokens", "revoke", "--coordinator", c.grpc, "viewer")
            self.assertEqual(r.returncode, 0, r.stderr)
            for page in held:
                rest = b""
                while True:
                    line = page.fp.readline()
                    if not line:
                        break
                    rest += line
                self.assertIn(b"event: error", rest)
                self.assertIn(b"revoked", rest)
            r = c.request("GET", f"/api/v1/runs/{run_id}/events", token=c.tokens["viewer"])
            self.assertEqual(r.status, 401)
        finally:
            c.close()


if __name__ == "__main__":
    ARBITER = sys.argv.pop(1)
    unittest.main(verbosity=2)
