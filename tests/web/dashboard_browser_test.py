"""The dashboard in a real browser (Debian's headless Chromium driven by WebDriver) against a real
`arbiter local --http`: sign-in, live match and perft pages, the submit forms, roles, and the
page's numbers against `arbiter runs show --json` and `arbiter perft`. Screenshots of the main
pages go to SCREENSHOT_DIR for a person to look at.
Usage: dashboard_browser_test.py ARBITER_BINARY SCREENSHOT_DIR"""
import json
import math
import os
import re
import shutil
import sys
import unittest

from local_cluster import STARTPOS, LocalCluster, match_request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    webdriver = None

ARBITER = SHOTS = None
SKIP = 77  # ctest's SKIP_RETURN_CODE for this test


def browser():
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1100"):
        o.add_argument(a)
    o.binary_location = shutil.which("chromium")
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)


class DashboardBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = LocalCluster(ARBITER)
        cls.d = browser()
        os.makedirs(SHOTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.c.close()

    def setUp(self):
        self.d.delete_all_cookies()

    def shot(self, name):
        self.d.save_screenshot(os.path.join(SHOTS, name + ".png"))

    def wait(self, cond, timeout=240, what=""):
        return WebDriverWait(self.d, timeout, poll_frequency=0.2).until(
            lambda d: cond(d), message=what)

    # The pages redraw as the run changes: read in one script call, never through a held element.
    def text(self, css):
        return self.d.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", css)

    def count(self, css):
        return self.d.execute_script("return document.querySelectorAll(arguments[0]).length;", css)

    def sign_in(self, name):
        self.d.get(self.c.base + "/")
        self.wait(lambda d: d.find_elements(By.ID, "signin"), 30, "sign-in page")
        self.d.find_element(By.ID, "token").send_keys(self.c.tokens[name])
        self.d.find_element(By.ID, "signin-button").click()
        self.wait(lambda d: name in (self.text("#whoami") or ""), 30, "signed in as " + name)

    def open_run(self, run_id):
        self.d.get(f"{self.c.base}/#/runs/{run_id}")
        self.wait(lambda d: self.text("#run-state"), 30, "run page")

    def cli_run(self, run_id):
        r = self.c.cli("runs", "--coordinator", self.c.grpc, "--json", "show", str(run_id))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_no_token_shows_the_sign_in_page(self):
        for path in ("/", "/#/runs", "/#/submit/perft"):
            self.d.get(self.c.base + path)
            self.wait(lambda d: d.find_elements(By.ID, "signin"), 30, "sign-in page")
            self.assertFalse(self.d.find_elements(By.ID, "view"))
        self.d.find_element(By.ID, "token").send_keys("arb_" + "1" * 64)
        self.d.find_element(By.ID, "signin-button").click()
        self.wait(lambda d: "not valid" in (self.text(".error") or ""), 30, "refusal shown")
        self.shot("signin")

    def test_viewer_sees_a_running_match_change_and_cannot_cancel_it(self):
        r = self.c.request("POST", "/api/v1/runs/match", match_request(games=400),
                           token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        run_id = r.json()["id"]
        self.sign_in("viewer")
        self.open_run(run_id)
        first_wdl, first_llr = self.text("#wdl"), self.text("#llr")
        # Games land while the page is open: W/D/L and the LLR move without a reload.
        self.wait(lambda d: self.text("#wdl") != first_wdl and self.text("#llr") != first_llr,
                  240, "W/D/L and LLR change")
        self.wait(lambda d: int(self.text("#games")) >= 8, 240, "a few game pairs")
        self.wait(lambda d: self.count("#llr-chart polyline"), 30, "LLR chart")
        self.assertEqual(self.d.execute_script("return location.hash"), f"#/runs/{run_id}")
        self.assertEqual(self.count("#cancel"), 0, "a viewer sees no cancel button")
        workers = self.c.request("GET", "/api/v1/workers", token=self.c.tokens["viewer"]).json()
        self.assertTrue(any(w["games_per_minute"] > 0 for w in workers["workers"]), workers)
        self.shot("match-live")
        # The API refuses the viewer's cancel, also when the page's own script sends it.
        status = self.d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/api/v1/session').then(r => r.json()).then(s =>
              fetch('/api/v1/runs/%s/cancel', {method: 'POST', headers: {'X-CSRF-Token': s.csrf}}))
              .then(r => done(r.status));""" % run_id)
        self.assertEqual(status, 403)
        self.assertEqual(self.c.run(run_id)["state"], "RUN_STATE_RUNNING")
        # Its owner sees the button and cancels from the page.
        self.d.delete_all_cookies()
        self.sign_in("submitter")
        self.open_run(run_id)
        self.wait(lambda d: self.count("#cancel"), 30, "the owner's cancel button")
        # Cancel asks first (dashboard_verdict_test answers the real dialog); yes here.
        self.d.execute_script("window.confirm = () => true; document.getElementById('cancel').click()")
        self.wait(lambda d: self.text("#run-state") == "cancelled", 60, "cancelled on the page")
        self.assertEqual(self.count("#cancel"), 0)

    def test_submitter_starts_an_sprt_from_the_form_and_downloads_its_pgn(self):
        self.sign_in("submitter")
        self.d.get(self.c.base + "/#/submit/match")
        self.wait(lambda d: d.find_elements(By.ID, "match-form"), 30, "match form")
        f = self.d.find_element
        Select(f(By.ID, "match-engine1")).select_by_value("builtin")
        f(By.ID, "match-options1").send_keys("KnightValueMg=200")
        for field, value in (("match-tc", "0.5+0.01"), ("match-elo1", "150")):
            f(By.ID, field).clear()
            f(By.ID, field).send_keys(value)
        self.shot("submit-match")
        f(By.ID, "match-submit").click()
        self.wait(lambda d: re.match(r"#/runs/\d+$", d.execute_script("return location.hash")), 30,
                  "the new run's page")
        run_id = self.d.execute_script("return location.hash").split("/")[-1]
        self.wait(lambda d: self.text("#run-state") == "finished", 600, "an SPRT decision")
        self.assertRegex(self.text("#run-verdict"), r"^(accepted \(H1\)|rejected \(H0\))$")
        self.shot("match-decided")
        # The page's numbers are the server's (`arbiter runs show --json`).
        run = self.cli_run(run_id)
        st = run["match"]["result"]["stats"]
        self.assertEqual(self.text("#wdl"), "{wins} / {draws} / {losses}".format(
            **{k: st["wdl"].get(k, "0") for k in ("wins", "draws", "losses")}))
        self.assertEqual(self.text("#games"), str(run["match"]["result"]["games"]))
        # As the page formats them: protobuf's JSON gives an infinite Elo (every game won, which
        # a short SPRT at 0.5+0.01 can see) or its NaN error bar as the strings "Infinity", "NaN",
        # which the page shows as "—" (not defined yet).
        def finite(x):
            return isinstance(x, (int, float)) and math.isfinite(x)
        elo, err = st["elo"], st["elo_error95"]
        self.assertEqual(self.text("#elo"), f"{elo:.1f} ± {err:.1f}"
                         if finite(elo) and finite(err) and err > 0 else "—")
        self.assertEqual(self.text("#llr").split(" ")[0], f"{st['sprt']['llr']:.2f}")
        # The PGN link gives every counted game.
        href = self.d.execute_script("return document.getElementById('pgn').href;")
        pgn = self.d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0]).then(r => r.text()).then(done);", href)
        self.assertEqual(pgn.count("[Result "), int(run["match"]["result"]["games"]))
        self.assertIn('[White "', pgn)

    def test_perft_from_the_form_fills_the_divide_of_arbiter_perft(self):
        self.sign_in("submitter")
        self.d.get(self.c.base + "/#/submit/perft")
        self.wait(lambda d: d.find_elements(By.ID, "perft-form"), 30, "perft form")
        depth = self.d.find_element(By.ID, "perft-depth")
        depth.clear()
        depth.send_keys("6")
        self.d.find_element(By.ID, "perft-submit").click()
        self.wait(lambda d: self.text("#run-state") == "finished", 300, "perft(6) done")
        self.assertEqual(self.text("#run-verdict"), "measured")
        rows = self.d.execute_script(
            "return [...document.querySelectorAll('#divide tbody tr')]"
            ".map(r => [r.dataset.move, r.cells[1].innerText]);")
        page = {move: int(nodes.replace(",", "")) for move, nodes in rows}
        self.shot("perft")
        local = self.c.cli("perft", "--fen", STARTPOS, "--depth", "6", "--divide", "--json")
        self.assertEqual(local.returncode, 0, local.stderr)
        want = {d["move"]: int(d["nodes"]) for d in json.loads(local.stdout)["divide"]}
        self.assertEqual(page, want)
        self.assertEqual(int(self.text("#perft-nodes").replace(",", "")), sum(want.values()))

    def test_a_bad_fen_shows_the_api_message_beside_the_field(self):
        bad = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1"
        api = self.c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": bad, "depth": 6},
                             "split_depth": 0, "verify": False}, token=self.c.tokens["submitter"])
        self.assertEqual(api.status, 400)
        self.sign_in("submitter")
        self.d.get(self.c.base + "/#/submit/perft")
        self.wait(lambda d: d.find_elements(By.ID, "perft-form"), 30, "perft form")
        fen = self.d.find_element(By.ID, "perft-fen")
        fen.clear()
        fen.send_keys(bad)
        self.d.find_element(By.ID, "perft-submit").click()
        self.wait(lambda d: self.text("#perft-fen-error"), 30, "the field's error")
        self.assertEqual(self.text("#perft-fen-error"), api.json()["message"])
        self.assertEqual(self.d.switch_to.active_element.get_attribute("id"), "perft-fen")
        self.shot("submit-bad-fen")

    def test_movegen_check_page_shows_the_run(self):
        positions = [{"fen": STARTPOS, "depth": 3},
                     {"fen": "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                      "depth": 2}]
        r = self.c.request("POST", "/api/v1/runs/movegen-check",
                           {"engine": {"name": "stockfish", "path": "/usr/games/stockfish"},
                            "positions": positions}, token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        run_id = r.json()["id"]
        self.c.wait_run(run_id, lambda run: run["state"] != "RUN_STATE_RUNNING" and
                        run["state"] != "RUN_STATE_QUEUED")
        self.sign_in("viewer")
        self.open_run(run_id)
        self.wait(lambda d: self.text("#movegen-checked"), 30, "movegen section")
        result = self.cli_run(run_id)["movegen_check"]["result"]
        self.assertEqual(self.text("#movegen-checked"),
                         f"{result['positions_checked']} / {result['positions']}")
        self.assertEqual(self.text("#movegen-clean"), str(result["positions_clean"]))
        self.assertEqual(self.text("#movegen-failing"), str(len(result.get("failures", []))))
        self.shot("movegen-check")

    def test_lists_show_runs_workers_and_engines(self):
        r = self.c.request("POST", "/api/v1/runs/perft", {"perft": {"fen": STARTPOS, "depth": 4}},
                           token=self.c.tokens["submitter"])
        self.assertEqual(r.status, 200, r.body)
        self.sign_in("viewer")
        self.d.get(self.c.base + "/#/runs")
        self.wait(lambda d: self.count(f"tr[data-run='{r.json()['id']}']"), 30, "the run listed")
        self.shot("runs")
        # A phone's width: the table scrolls inside its box, the page itself does not.
        self.d.set_window_size(390, 844)
        self.assertLessEqual(self.d.execute_script("return document.documentElement.scrollWidth"),
                             390)
        self.shot("runs-phone")
        self.d.set_window_size(1280, 1100)
        self.assertFalse(self.d.find_element(By.ID, "nav-submit").is_displayed(),
                         "a viewer has no submit link")
        self.d.get(self.c.base + "/#/workers")
        self.wait(lambda d: self.count("#workers tbody tr") == 2, 30,
                  "two workers")
        # Each worker names the copy of the perft core it runs (v2, v3 or v4).
        self.assertRegex(self.text("#workers tbody"), r"\(perft v[234]\)")
        # and its engine isolation as the CLI spells it.
        self.assertRegex(self.text("#workers tbody"), r"\b(none|limits|landlock|namespaces)\b")
        self.shot("workers")
        self.d.get(self.c.base + "/#/engines")
        self.wait(lambda d: d.find_elements(By.ID, "engines"), 30, "engines table")


if __name__ == "__main__":
    ARBITER, SHOTS = sys.argv.pop(1), sys.argv.pop(1)
    if webdriver is None or not shutil.which("chromium") or not shutil.which("chromedriver"):
        print("SKIP: chromium, chromium-driver or python3-selenium is not installed "
              "(scripts/install-deps.sh installs them)")
        sys.exit(SKIP)
    unittest.main(verbosity=2)
