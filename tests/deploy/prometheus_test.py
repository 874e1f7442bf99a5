#!/usr/bin/env python3
"""A real Prometheus (Debian's `prometheus`) scrapes a real `arbiter local`, with the shipped
rules (k8s/monitoring/arbiter.rules.yml) loaded. After a perft and a match run on the cluster:
Prometheus's perft node counter and games by result equal the runs' results as
`arbiter runs show --json` prints them; rate() of nodes is > 0 and below the run's whole count
per second; every rule evaluates without error; every PromQL query of the Grafana dashboard
(k8s/monitoring/grafana-dashboard.json) parses and returns data; the ArbiterCoordinatorDown expression is
empty while the coordinator is up and not after it stops.
Usage: prometheus_test.py ARBITER_BINARY SOURCE_DIR"""
import json
import os
import shutil
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Failure, check, free_port, http_get, json_out, log, main, run_cli, skip,  # noqa: E402
                     wait_for)

ARBITER, SOURCE = sys.argv[1], sys.argv[2]
RULES = os.path.join(SOURCE, "k8s/monitoring/arbiter.rules.yml")
DASHBOARD = os.path.join(SOURCE, "k8s/monitoring/grafana-dashboard.json")
PERFT_DEPTH, PERFT_NODES = 6, 119060324


def body(workdir, procs):
    prometheus = shutil.which("prometheus")
    if not prometheus:
        skip("Debian's prometheus is not installed (scripts/install-deps.sh installs it)")
    grpc_port, metrics_port, prom_port = free_port(), free_port(), free_port()
    address = f"127.0.0.1:{grpc_port}"
    env = dict(os.environ, XDG_RUNTIME_DIR=workdir)
    cli = [ARBITER]
    procs.start("local", cli + ["local", "--workers", "2", "--listen", address,
                                "--metrics", f"127.0.0.1:{metrics_port}",
                                "--data", os.path.join(workdir, "data")], env=env)
    wait_for("the coordinator's /metrics",
             lambda: "arbiter_perft_nodes_total" in http_get(f"http://127.0.0.1:{metrics_port}/metrics"),
             60)
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [{json.dumps(RULES)}]
scrape_configs:
  - job_name: arbiter
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
        labels: {{component: coordinator}}
""")
    procs.start("prometheus", [prometheus, f"--config.file={config}",
                               f"--storage.tsdb.path={workdir}/tsdb",
                               f"--web.listen-address=127.0.0.1:{prom_port}"])
    api = f"http://127.0.0.1:{prom_port}/api/v1"

    def query(expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        r = json.loads(http_get(f"{api}/query?" + urllib.parse.urlencode(params)))
        if r["status"] != "success":
            raise Failure(f"query {expr!r}: {r}")
        return r["data"]["result"]

    def scalar(expr):
        res = query(expr)
        return None if not res else float(res[0]["value"][1])

    wait_for("Prometheus ready", lambda: "Ready" in http_get(f"http://127.0.0.1:{prom_port}/-/ready"), 60)
    wait_for("the coordinator target up", lambda: scalar('up{job="arbiter"}') == 1.0, 60)
    start = time.time()

    # A perft on the cluster; its run id from `runs list --json` (the only perft run).
    out = json_out(cli + ["perft", "--startpos", "--depth", str(PERFT_DEPTH), "--coordinator",
                          address, "--json"], env=env)
    check(int(out["nodes"]) == PERFT_NODES, f"perft({PERFT_DEPTH}) on the cluster = {PERFT_NODES}")
    out = json_out(cli + ["match", "--coordinator", address, "--engine", "name=base,cmd=builtin",
                          "--engine", "name=weak,cmd=builtin,option.KnightValueMg=250",
                          "--tc", "depth=3", "--games", "12", "--max-moves", "80", "--json",
                          "--sprt", "elo0=0,elo1=300",
                          "--quiet"], env=env)
    runs = json_out(cli + ["runs", "list", "--json", "--coordinator", address], env=env)["runs"]
    check(len(runs) == 2, "two runs on the coordinator")
    shown = {}
    for r in runs:
        shown[r["kind"]] = json_out(cli + ["runs", "show", str(r["id"]), "--json",
                                           "--coordinator", address], env=env)
    perft_run, match_run = shown["RUN_KIND_PERFT"], shown["RUN_KIND_MATCH"]
    check(perft_run["state"] == "RUN_STATE_SUCCEEDED" and match_run["state"] == "RUN_STATE_SUCCEEDED",
          "both runs succeeded")
    run_nodes = int(perft_run["perft"]["result"]["nodes"])
    check(run_nodes == PERFT_NODES, f"runs show: perft nodes {run_nodes}")
    result = match_run["match"]["result"]
    stats = result["stats"]
    wins, draws, losses = (int(stats["wdl"].get(k, 0)) for k in ("wins", "draws", "losses"))
    games = int(result["games"])
    # The SPRT may stop the match before its 12 games.
    check(0 < games <= 12 and wins + draws + losses == games, f"runs show: {games} games = {wins}+{draws}+{losses}")
    finished = max(perft_run["finished_unix"], match_run["finished_unix"])

    # Wait for a scrape taken after both runs finished; then the numbers must be exact.
    wait_for("a scrape after the runs finished",
             lambda: (v := scalar("timestamp(arbiter_perft_nodes_total)")) is not None and v > finished + 1,
             60)
    prom_nodes = scalar("arbiter_perft_nodes_total")
    check(prom_nodes == run_nodes, f"Prometheus arbiter_perft_nodes_total {prom_nodes} == run's {run_nodes}")
    by_result = {s["metric"]["result"]: float(s["value"][1]) for s in query("arbiter_games_total")}
    # Results are from the first engine's (base's) side; the counter is by the game's result
    # (1-0 / 0-1 / 1/2-1/2) whatever colour base had: draws equal, decisive games add up.
    check(by_result.get("1/2-1/2", 0) == draws, f"Prometheus draws {by_result.get('1/2-1/2', 0)} == {draws}")
    decisive = by_result.get("1-0", 0) + by_result.get("0-1", 0)
    check(decisive == wins + losses, f"Prometheus decisive games {decisive} == {wins + losses}")
    check(sum(by_result.values()) == games, f"Prometheus games {sum(by_result.values())} == {games}")
    ends = sum(float(s["value"][1]) for s in query("arbiter_game_endings_total"))
    check(ends == games, f"Prometheus game endings {ends} == {games}")
    # White/black wins per game from the PGN the coordinator keeps: the counter by result.
    pgn = run_cli(cli + ["runs", "pgn", str(match_run["id"]), "--coordinator", address], env=env)
    for tag in ("1-0", "0-1", "1/2-1/2"):
        n = pgn.count(f'[Result "{tag}"]')
        check(by_result.get(tag, 0) == n, f"Prometheus games {tag} {by_result.get(tag, 0)} == PGN's {n}")

    rate = scalar("max_over_time(rate(arbiter_perft_nodes_total[1m])[5m:1s])")
    check(rate is not None and 0 < rate <= PERFT_NODES, f"max rate() of perft nodes {rate} in (0, {PERFT_NODES}]")
    recorded = scalar("max_over_time(arbiter:perft_nodes:rate1m[5m])")
    check(recorded is not None and recorded > 0, f"recording rule arbiter:perft_nodes:rate1m peaked at {recorded}")

    # Every shipped rule loaded and evaluated without error.
    def rules():
        return [r for g in json.loads(http_get(f"{api}/rules"))["data"]["groups"] for r in g["rules"]]

    wait_for("every rule evaluated once",
             lambda: all(not r["lastEvaluation"].startswith("0001") for r in rules()), 30)
    rules = rules()
    bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    check(len(rules) >= 10 and not bad, f"{len(rules)} rules healthy (unhealthy: {bad})")
    firing = [a["labels"]["alertname"] for a in json.loads(http_get(f"{api}/alerts"))["data"]["alerts"]]
    check(not firing, f"no alert pending or firing on a healthy cluster ({firing})")

    # The dashboard's queries: each parses and returns data over the test's time range.
    dash = json.load(open(DASHBOARD))
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    check(len(exprs) >= 9, f"{len(exprs)} dashboard queries")
    # Up to now, polled: a rate() has data at a step only once its series has two samples
    # before that step, and a series born with the last games may have one sample yet when the
    # scrape waited for above is taken (one scrape a second, steps of a second).
    for e in exprs:
        def returns_data(e=e):
            params = {"query": e, "start": f"{start:.3f}", "end": f"{time.time():.3f}", "step": "1"}
            r = json.loads(http_get(f"{api}/query_range?" + urllib.parse.urlencode(params)))
            if r["status"] != "success":
                raise Failure(f"dashboard query fails: {e}: {r}")
            return bool(r["data"]["result"])
        check(wait_for(f"dashboard query {e} to return data", returns_data, 30),
              f"dashboard query returns data: {e}")

    # Coordinator down: the alert's expression is empty now, and not once the target is gone.
    down = 'absent(up{component="coordinator"} == 1)'
    check(query(down) == [], "ArbiterCoordinatorDown's expression is empty while it is up")
    procs.stop(procs.procs[0])
    wait_for("ArbiterCoordinatorDown's expression after the coordinator stopped",
             lambda: query(down) != [], 30)
    log("coordinator down detected by the alert expression")


main(body)
