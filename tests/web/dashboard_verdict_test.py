"""The dashboard tells an engine developer the truth at a glance, in a real browser (headless
Chromium by WebDriver) against a real `arbiter local --http` with the builtin engine: an SPRT
that accepts H0 reads as rejected and one that accepts H1 as accepted, on the runs list, the run
page and `arbiter runs list`; what was tested (engines, options, TC, book, SPRT model); the draw
ratio; a failing movegen-check; the list updated in place; ratings; Cancel's question; a 401 that
leads to sign-in and back; the hints' commands; and a killed coordinator said within 15 s.
Screenshots of each page go to SCREENSHOT_DIR.
Usage: dashboard_verdict_test.py ARBITER_BINARY TEST_ENGINE SCREENSHOT_DIR"""
import json
import os
import re
import shlex
import shutil
import signal
import sys
import time
import unittest

from local_cluster import STARTPOS, LocalCluster

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    webdriver = None

ARBITER = TEST_ENGINE = SHOTS = None
SKIP = 77
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "perft")


def browser():
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1100"):
        o.add_argument(a)
    o.binary_location = shutil.which("chromium")
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)


def book(name, lines=None):
    """An EPD book from tests/data/perft (its FENs, without the perft counts)."""
    with open(os.path.join(DATA, name)) as f:
        fens = [l.split(";")[0].strip() for l in f if l.strip()]
    return "\n".join(fens[:lines]) + "\n"


def sprt_match(first, second, tc="nodes=3000"):
    """`--engine name=base,cmd=builtin --engine name=weak,cmd=builtin,option.KnightValueMg=150`
    in the given order: base first ends in H1, weak first in H0."""
    engines = {"base": {"name": "base", "builtin": True},
               "weak": {"name": "weak", "builtin": True, "options": {"KnightValueMg": "150"}}}
    return {"settings": {"engines": [engines[first], engines[second]], "tc": tc,
                         "openings": book("standard.epd"), "openings_name": "standard.epd"},
            "games": "0", "sprt": {"elo0": 0, "elo1": 40, "alpha": 0.05, "beta": 0.05}}


class Page:
    """What the browser tests share: sign-in, waiting, reading the page in one script call."""

    def shot(self, name):
        self.assertTrue(self.d.save_screenshot(os.path.join(SHOTS, name + ".png")), name)

    def wait(self, cond, timeout=60, what=""):
        """Waits for cond(driver); `what` (or what() for the page's state then) says what failed."""
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.2).until(lambda d: cond(d))
        except Exception:
            self.fail(what() if callable(what) else what)

    def text(self, css):
        return self.d.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", css)

    def count(self, css):
        return self.d.execute_script("return document.querySelectorAll(arguments[0]).length;", css)

    def sign_in(self, token, who):
        self.d.get(self.c.base + "/")
        self.wait(lambda d: d.find_elements(By.ID, "signin"), 30, "sign-in page")
        self.d.find_element(By.ID, "token").send_keys(token)
        self.d.find_element(By.ID, "signin-button").click()
        self.wait(lambda d: who in (self.text("#whoami") or ""), 30, "signed in as " + who)


class VerdictBrowserTest(unittest.TestCase, Page):
    @classmethod
    def setUpClass(cls):
        cls.c = LocalCluster(ARBITER, extra=("--metrics", "127.0.0.1:0"))
        cls.d = browser()
        sub = cls.c.tokens["submitter"]
        cls.h1 = int(cls.c.request("POST", "/api/v1/runs/match", sprt_match("base", "weak"),
                                   token=sub).json()["id"])
        cls.h0 = int(cls.c.request("POST", "/api/v1/runs/match", sprt_match("weak", "base"),
                                   token=sub).json()["id"])
        ended = lambda run: run["state"] not in ("RUN_STATE_QUEUED", "RUN_STATE_RUNNING")
        cls.runs = {rid: cls.c.wait_run(rid, ended, 600) for rid in (cls.h1, cls.h0)}

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.c.close()

    def setUp(self):
        self.d.delete_all_cookies()

    def test_h0_and_h1_read_as_rejected_and_accepted_everywhere(self):
        h1, h0 = self.runs[self.h1], self.runs[self.h0]
        self.assertEqual(h1["outcome"]["verdict"], "RUN_VERDICT_PASSED", h1["outcome"])
        self.assertEqual(h1["outcome"]["hypothesis"], "H1")
        self.assertEqual(h0["outcome"]["verdict"], "RUN_VERDICT_FAILED", h0["outcome"])
        self.assertEqual(h0["outcome"]["hypothesis"], "H0")
        self.sign_in(self.c.tokens["viewer"], "viewer")
        self.d.get(self.c.base + "/#/runs")
        row = lambda rid: f"tr[data-run='{rid}']"
        self.wait(lambda d: self.count(row(self.h0)) and self.count(row(self.h1)), 30, "both listed")
        for rid, word, cls in ((self.h1, "accepted (H1)", "passed"), (self.h0, "rejected (H0)", "failed")):
            text = self.text(row(rid))
            self.assertIn(word, text)
            self.assertNotIn("SUCCEEDED", text)
            self.assertIn("finished", text)
            self.assertEqual(self.d.execute_script(
                "return document.querySelector(arguments[0] + ' .verdict').className", row(rid)),
                "verdict " + cls)
            # What was tested: both engines and the TC.
            self.assertIn("vs", text)
            self.assertIn("weak", text)
            self.assertIn("nodes=3000", text)
            # Green only for the accepted patch.
            color = self.d.execute_script(
                "return getComputedStyle(document.querySelector(arguments[0] + ' .verdict'))"
                ".backgroundColor", row(rid))
            self.assertEqual(color, "rgb(26, 127, 55)" if cls == "passed" else "rgb(198, 40, 40)")
        finished = self.d.execute_script(
            "return [...document.querySelectorAll('#runs-finished tbody tr')].map(r => r.dataset.run)")
        self.assertIn(str(self.h0), finished)
        self.assertIn(str(self.h1), finished)
        self.shot("list-verdicts")
        for rid, word, name in ((self.h0, "rejected", "run-h0"), (self.h1, "accepted", "run-h1")):
            self.d.get(f"{self.c.base}/#/runs/{rid}")
            # The same document draws the new run's page: wait for its heading, then read.
            self.wait(lambda d: (self.text("h1") or "").startswith(f"Run {rid} "), 30, "run page")
            self.wait(lambda d: self.text("#run-verdict"), 30, "verdict")
            self.assertTrue(self.text("#run-verdict").startswith(word), self.text("#run-verdict"))
            body = self.text("#view")
            self.assertNotRegex(body, r"ACCEPT_H|SUCCEEDED|RUN_STATE_|Infinity")
            self.assertIn("KnightValueMg=150", self.text("#engines-tested"))
            self.assertIn("builtin", self.text("#engines-tested"))
            self.assertIn("nElo", self.text("#sprt"))
            self.assertIn("normalized", self.text("#sprt"))
            self.assertIn("standard.epd", self.text("#book"))
            positions = len([l for l in book("standard.epd").splitlines() if l.strip()])
            self.assertIn(f"{positions} positions", self.text("#book"))
            # Draw ratio = draws / games, from the new engine's side.
            st = self.runs[rid]["match"]["result"]
            games, draws = int(st["games"]), int(st["stats"]["wdl"].get("draws", 0))
            self.assertEqual(self.text("#draw-ratio"), f"{100 * draws / games:.1f} %")
            self.assertIn(f"{self.runs[rid]['match']['request']['settings']['engines'][0]['name']}'s side", body)
            for cell in ("#run-started", "#run-ended", "#run-duration"):
                self.assertNotEqual(self.text(cell), "—", cell)
            self.assertEqual(self.text("#run-eta"), "—")
            self.shot(name)
        # `arbiter runs list` and `show` say the same words.
        r = self.c.cli("runs", "--coordinator", self.c.grpc, "list")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {int(l.split()[0]): l for l in r.stdout.splitlines() if l.strip()[:1].isdigit()}
        self.assertIn("accepted", lines[self.h1])
        self.assertIn("rejected", lines[self.h0])
        self.assertIn("nodes=3000", lines[self.h0])
        r = self.c.cli("runs", "--coordinator", self.c.grpc, "show", str(self.h0))
        self.assertIn("Verdict: rejected: H0", r.stdout)
        # Prometheus: the ended runs' verdicts as labels.
        port = re.search(r"metrics on port (\d+)", self.c.startup).group(1)
        import urllib.request
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
        self.assertRegex(metrics, r'arbiter_run_verdict\{[^}]*run="%d"[^}]*verdict="failed"' % self.h0)
        self.assertRegex(metrics, r'arbiter_runs_ended_total\{[^}]*verdict="passed"')

    def test_a_failing_movegen_check_reads_as_failed(self):
        promo = "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"
        r = self.c.request("POST", "/api/v1/runs/movegen-check", {
            "engine": {"name": "no-underpromotion", "path": TEST_ENGINE,
                       "args": ["--movegen-bug", "no-underpromotion"]},
            "positions": [{"fen": STARTPOS, "depth": 3}, {"fen": promo, "depth": 2}]},
            token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        rid = int(r.json()["id"])
        run = self.c.wait_run(rid, lambda run: run["state"] == "RUN_STATE_SUCCEEDED", 300)
        self.assertEqual(run["outcome"]["verdict"], "RUN_VERDICT_FAILED", run["outcome"])
        self.assertEqual(int(run["outcome"]["failing"]), 1)
        self.sign_in(self.c.tokens["viewer"], "viewer")
        self.d.get(f"{self.c.base}/#/runs/{rid}")
        self.wait(lambda d: self.text("#movegen-failing"), 30, "movegen page")
        self.assertEqual(self.text("#movegen-failing"), "1")
        self.assertEqual(self.text("#run-verdict"), "failed (1 failing)")
        self.assertEqual(self.text("#run-verdict-line"), "failed (1 failing) — 1 of 2 positions failing")
        self.shot("movegen-check-failing")
        self.d.get(self.c.base + "/#/runs?kind=MOVEGEN_CHECK")
        self.wait(lambda d: self.count(f"tr[data-run='{rid}'][data-verdict='failed']"), 30, "listed as failed")

    def test_the_list_stays_small_and_updates_in_place(self):
        sub = self.c.tokens["submitter"]
        r = self.c.request("POST", "/api/v1/runs/match", {
            "settings": {"engines": [{"name": "a", "builtin": True}, {"name": "b", "builtin": True}],
                         "tc": "nodes=2000", "openings": book("fischer960.epd"),
                         "openings_name": "fischer960.epd"},
            "games": "1000"}, token=sub)
        self.assertEqual(r.status, 200, r.body)
        big = int(r.json()["id"])
        self.assertGreater(len(book("fischer960.epd")), 40000)
        listed = self.c.request("GET", "/api/v1/runs", token=self.c.admin)
        self.assertLess(len(listed.body), 40 * 1024)
        run = next(x for x in listed.json()["runs"] if int(x["id"]) == big)
        self.assertEqual(run["match"]["request"]["settings"].get("openings", ""), "")
        self.assertEqual(run["match"].get("history", []), [])
        self.assertEqual(int(run["match"]["book"]["positions"]), 960)
        self.assertEqual(self.c.request("GET", "/api/v1/runs?owner_prefix=subm", token=self.c.admin)
                         .json()["runs"][0]["owner"], "submitter")
        self.assertEqual(self.c.request("GET", "/api/v1/runs?owner_prefix=zz", token=self.c.admin)
                         .json()["runs"], [])
        self.sign_in(self.c.tokens["other"], "other")
        self.d.get(self.c.base + "/#/runs")
        self.wait(lambda d: self.count(f"#runs-active tr[data-run='{big}']"), 30, "the running run, active")
        # Count the list's refreshes; type half an owner name and keep the focus there.
        self.d.execute_script("""
            window.__lists = 0; const f = window.fetch;
            window.fetch = (...a) => { if (String(a[0]).includes('runs?')) window.__lists++; return f(...a); };
            document.getElementById('filter-owner').__mark = 7;""")
        box = self.d.find_element(By.ID, "filter-owner")
        box.click()
        box.send_keys("sub")
        self.wait(lambda d: d.execute_script("return window.__lists") >= 3, 30, "two refreshes")
        self.assertEqual(self.d.execute_script("return document.activeElement.id"), "filter-owner")
        self.assertEqual(self.d.execute_script("return document.getElementById('filter-owner').__mark"), 7)
        self.assertEqual(self.d.execute_script("return document.getElementById('filter-owner').value"), "sub")
        owners = self.d.execute_script(
            "return [...document.querySelectorAll('tbody tr[data-run] td:nth-child(5)')].map(t => t.innerText)")
        self.assertTrue(owners and all(o == "submitter" for o in owners), owners)
        # The run page tells the book by name and size, not its text.
        self.d.get(f"{self.c.base}/#/runs/{big}")
        self.wait(lambda d: self.text("#book"), 30, "book")
        self.assertIn("fischer960.epd · 960 positions", self.text("#book"))
        # "My runs": none of other's.
        self.d.get(self.c.base + "/#/runs?mine=1")
        self.wait(lambda d: self.text("#runs-status") == "No runs match these filters.", 30, "my runs: none")
        # Cancel asks first: dismissed, the run goes on; accepted, it ends.
        self.d.delete_all_cookies()
        self.sign_in(sub, "submitter")
        self.d.get(f"{self.c.base}/#/runs/{big}")
        self.wait(lambda d: self.count("#cancel"), 30, "cancel button")
        self.d.execute_script("setTimeout(() => document.getElementById('cancel').click(), 0)")
        self.wait(lambda d: self.alert(), 10, "the question")
        self.d.switch_to.alert.dismiss()
        self.assertNotEqual(self.c.run(big)["state"], "RUN_STATE_CANCELLED")
        self.d.execute_script("setTimeout(() => document.getElementById('cancel').click(), 0)")
        self.wait(lambda d: self.alert(), 10, "the question")
        self.d.switch_to.alert.accept()
        self.wait(lambda d: self.text("#run-state") == "cancelled", 60, "cancelled")

    def alert(self):
        try:
            return self.d.switch_to.alert.text
        except Exception:
            return None

    def test_ratings_page_is_in_the_navigation(self):
        self.sign_in(self.c.tokens["viewer"], "viewer")
        self.d.find_element(By.ID, "nav-ratings").click()
        self.wait(lambda d: self.count("table.ratings tbody tr") >= 2, 30,
                  lambda: "ratings: " + (self.text("#view") or ""))
        names = self.d.execute_script(
            "return [...document.querySelectorAll('table.ratings tbody tr')].map(r => r.dataset.engine)")
        self.assertIn("base", names)
        self.assertIn("weak", names)
        # Each finite rating has its error bar; base and weak played each other, the tournament's
        # engines are a group of their own.
        self.assertGreaterEqual(self.count("table.ratings svg.errbar line.range"), 2)
        self.assertGreaterEqual(self.count("section.rating-group"), 1)
        self.d.find_element(By.ID, "ratings-filter").send_keys("we")
        self.wait(lambda d: self.count("table.ratings tbody tr") == 1, 10, "filtered")
        self.assertEqual(self.text("table.ratings tbody tr td:nth-child(2)"), "weak")
        self.d.find_element(By.ID, "ratings-filter").clear()
        self.d.execute_script("document.getElementById('ratings-filter').dispatchEvent(new Event('input'))")
        self.shot("ratings")

    def test_a_tournament_shows_its_engines_and_standings(self):
        r = self.c.request("POST", "/api/v1/runs/tournament", {
            "settings": {"engines": [
                {"name": "t-base", "builtin": True},
                {"name": "t-weak", "builtin": True, "options": {"KnightValueMg": "150"}},
                {"name": "t-rook", "builtin": True, "options": {"RookValueMg": "400"}}],
                "tc": "nodes=2000"},
            "games_per_pairing": 2}, token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        rid = r.json()["id"]
        run = self.c.wait_run(rid, lambda run: run["state"] == "RUN_STATE_SUCCEEDED", 300)
        self.assertEqual(run["outcome"]["verdict"], "RUN_VERDICT_MEASURED")
        self.sign_in(self.c.tokens["viewer"], "viewer")
        self.d.get(f"{self.c.base}/#/runs/{rid}")
        self.wait(lambda d: self.count("#standings tbody tr") == 3, 30, "standings")
        engines = self.text("#engines-tested")
        self.assertIn("KnightValueMg=150", engines)
        self.assertIn("RookValueMg=400", engines)
        self.assertEqual(self.text("#run-verdict"), "measured")
        self.assertEqual(self.count("#crosstable tbody tr"), 3)
        self.assertIn("0 (anchor)", self.text("#standings"))
        self.assertEqual(self.text("#run-verdict-line"), "measured")
        self.shot("tournament")

    def test_clone_fills_the_form_from_the_run(self):
        self.sign_in(self.c.tokens["submitter"], "submitter")
        self.d.get(f"{self.c.base}/#/runs/{self.h0}")
        self.wait(lambda d: self.count("#clone"), 30, "clone link")
        # The page redraws when its event stream delivers the run: click through one script call.
        self.d.execute_script("document.getElementById('clone').click()")
        self.wait(lambda d: d.find_elements(By.ID, "match-form"), 30, "the match form")
        value = lambda i: self.d.execute_script("return document.getElementById(arguments[0]).value", i)
        self.assertEqual(value("match-name1"), "weak")
        self.assertEqual(value("match-options1"), "KnightValueMg=150")
        self.assertEqual(value("match-name2"), "base")
        self.assertEqual(value("match-tc"), "nodes=3000")
        self.assertEqual(value("match-elo1"), "40")
        self.assertEqual(value("match-priority"), "0")
        self.assertEqual(value("match-throughput"), "100")
        self.assertIn("standard.epd", self.text("#view"))
        # Sent with a change: the clone keeps the book and the options.
        self.d.execute_script("document.getElementById('match-games').value = '2';"
                              "document.getElementById('match-use-sprt').checked = false;")
        self.d.find_element(By.ID, "match-submit").click()
        self.wait(lambda d: re.match(r"#/runs/\d+$", d.execute_script("return location.hash"))
                  and d.execute_script("return location.hash") != f"#/runs/{self.h0}", 30, "new run")
        rid = self.d.execute_script("return location.hash").split("/")[-1]
        req = self.c.run(rid)["match"]["request"]
        self.assertEqual(req["settings"]["engines"][0]["options"], {"KnightValueMg": "150"})
        self.assertEqual(req["settings"]["openings_name"], "standard.epd")
        self.assertEqual(req["games"], "2")
        self.c.request("POST", f"/api/v1/runs/{rid}/cancel", {}, token=self.c.tokens["submitter"])

    def test_other_pages_and_phone_width(self):
        self.sign_in(self.c.tokens["viewer"], "viewer")
        self.d.get(self.c.base + "/#/workers")
        self.wait(lambda d: self.count("#workers tbody tr") == 2, 30, "two workers")
        self.shot("workers-speed")
        self.assertEqual(self.text("#conn"), "● live")
        self.d.set_window_size(390, 844)
        try:
            self.d.get(self.c.base + "/#/runs")
            self.wait(lambda d: self.count(f"tr[data-run='{self.h0}']"), 30, "list")
            # Headers and cells hide the same columns: the verdict stays under its header.
            for section in ("#runs-finished",):
                heads = self.d.execute_script(
                    "return [...document.querySelectorAll(arguments[0] + ' th')].filter(h => h.offsetParent)"
                    ".map(h => h.innerText)", section)
                cells = self.d.execute_script(
                    "return [...document.querySelectorAll(arguments[0] + ' tbody tr:first-child td')]"
                    ".filter(c => c.offsetParent).length", section)
                self.assertEqual(len(heads), cells)
                self.assertIn("Verdict", heads)
            self.assertLessEqual(self.d.execute_script("return document.documentElement.scrollWidth"), 390)
            self.shot("list-phone")
            self.d.get(f"{self.c.base}/#/runs/{self.h1}")
            self.wait(lambda d: self.count("#llr-chart polyline"), 30, "chart")
            size = self.d.execute_script(
                "return parseFloat(getComputedStyle(document.querySelector('#llr-chart text')).fontSize)"
                " * document.querySelector('#llr-chart').getBoundingClientRect().width / 600")
            self.assertGreaterEqual(size, 9.5)
            self.assertLessEqual(self.d.execute_script("return document.documentElement.scrollWidth"), 390)
            self.shot("run-h1-phone")
        finally:
            self.d.set_window_size(1280, 1100)

    def test_suggested_commands_parse(self):
        self.d.get(self.c.base + "/signin")
        hint = self.text("code.command")
        self.assertEqual(hint, "arbiter tokens create --name NAME --role viewer")
        self.sign_in(self.c.tokens["submitter"], "submitter")
        self.d.get(self.c.base + "/#/engines")
        self.wait(lambda d: self.text("#upload-hint"), 30, "engines page")
        commands = [hint] + self.d.execute_script(
            "return [...document.querySelectorAll('#upload-hint code.command')].map(c => c.innerText)")
        self.assertGreaterEqual(len(commands), 3)
        for command in commands:
            args = shlex.split(command.replace("NAME", "hinted").replace("HOST:PORT", self.c.grpc))[1:]
            if "--coordinator" not in args and args[0] in ("tokens", "engines"):
                args += ["--coordinator", self.c.grpc]
            r = self.c.cli(*args)
            # A parse error is CLI11's; a missing upload file is the command's own, after parsing.
            self.assertNotRegex(r.stderr, r"not expected|is required|Run with --help|unknown",
                                command)
            if "upload:" not in command:
                self.assertEqual(r.returncode, 0, command + ": " + r.stderr)


class ConnectionBrowserTest(unittest.TestCase, Page):
    """A token revoked under an open page, and a coordinator killed under one."""

    def setUp(self):
        self.c = LocalCluster(ARBITER)
        self.d = browser()

    def tearDown(self):
        self.d.quit()
        self.c.close()

    def test_a_401_leads_to_sign_in_and_back(self):
        temp = self.c.create_token("temp", "viewer")
        r = self.c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 3}},
                           token=self.c.tokens["submitter"])
        rid = r.json()["id"]
        self.sign_in(temp, "temp")
        self.d.get(f"{self.c.base}/#/runs/{rid}")
        self.wait(lambda d: self.text("#run-state"), 30, "run page")
        r = self.c.cli("tokens", "revoke", "--coordinator", self.c.grpc, "temp")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.wait(lambda d: d.find_elements(By.ID, "signin"), 15, "sent to sign-in")
        self.d.find_element(By.ID, "token").send_keys(self.c.tokens["viewer"])
        self.d.find_element(By.ID, "signin-button").click()
        self.wait(lambda d: d.execute_script("return location.hash") == f"#/runs/{rid}", 30,
                  "back at the run")
        self.wait(lambda d: self.text("#run-state"), 30, "run page again")

    def test_a_killed_coordinator_is_said_within_15_seconds(self):
        r = self.c.request("POST", "/api/v1/runs/match", sprt_match("base", "weak", tc="10+0.1"),
                           token=self.c.tokens["admin"])
        rid = r.json()["id"]
        self.sign_in(self.c.admin, "(admin)")
        self.d.get(f"{self.c.base}/#/runs/{rid}")
        self.wait(lambda d: self.text("#run-state") == "running", 60, "running")
        self.assertEqual(self.text("#conn"), "● live")
        self.assertTrue(self.d.execute_script("return document.getElementById('conn-banner').hidden"))
        os.kill(self.c.proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        self.wait(lambda d: self.text("#conn") == "● offline", 15, "offline within 15 s")
        self.assertLess(time.monotonic() - killed, 15)
        self.assertIn("Coordinator unreachable", self.text("#conn-banner"))
        self.assertEqual(self.d.execute_script(
            "return getComputedStyle(document.getElementById('cancel')).pointerEvents"), "none")
        self.shot("coordinator-killed")
        # Navigating says the same, not a bare "Failed to fetch".
        self.d.execute_script("location.hash = '#/workers'")
        self.wait(lambda d: self.text("#view-error"), 15, "the view's error")
        self.assertIn("does not answer", self.text("#view-error"))
        self.assertEqual(self.text("#conn"), "● offline")


if __name__ == "__main__":
    ARBITER, TEST_ENGINE, SHOTS = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)
    if webdriver is None or not shutil.which("chromium") or not shutil.which("chromedriver"):
        print("SKIP: chromium, chromium-driver or python3-selenium is not installed")
        sys.exit(SKIP)
    os.makedirs(SHOTS, exist_ok=True)
    unittest.main(verbosity=2)
