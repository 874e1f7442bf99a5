#!/usr/bin/env python3
"""A cluster of hosts on one machine: the coordinator and each worker in a network namespace of
its own (`ip netns`), each with its own address, linked to a router namespace (the hosts' network
is never touched) by a wire that can delay, drop and cut packets (tests/deploy/wire.py: a TUN
device at each end and a relay between them; this machine's kernel has no sch_netem, so
`tc netem` cannot be used: it is what netem would do, per packet, under real kernel TCP). Faults:
  latency    50 ms each way + 1 % loss on every worker's link: perft and a match run exact
  partition  a worker cut off (100 % loss) longer than its lease: its job re-leased, its late
             result refused (FAILED_PRECONDITION, not counted), it takes jobs again after healing;
             then the coordinator cut off from all workers for 30 s: the run completes exact
  flap       a worker's link going down and up (`ip link set`: 4 s down, 2 s up) during a match run:
             exact game count, no game counted twice (PGN rounds distinct, counters equal the run)
Each scenario ends with the coordinator's open connections and descriptors back to their baseline
and its memory within 64 MiB of it (baseline taken after a warm-up run). Needs root (network
namespaces, TUN); exits 77 (skipped) with the reason where they cannot be had.
Usage: netns_test.py ARBITER_BINARY latency|partition|flap"""
import json
import os
import re
import secrets
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, check, log, main, skip, wait_for  # noqa: E402

ARBITER, SCENARIO = sys.argv[1], sys.argv[2]
TAG = f"a{os.getpid() % 100000}"  # unique per test process: names of namespaces and links
ROUTER = f"{TAG}r"
WIRE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")
SUBNET = "10.77.0"
COORD_IP = f"{SUBNET}.1"
LEASE_SECONDS = 3
PERFT = {5: 4865609, 6: 119060324, 7: 3195901860, 8: 84998978956}
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
KIWIPETE5 = 193690690


def sh(*argv, ok=True):
    r = subprocess.run(argv, capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise Failure(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


class Net:
    """The router namespace and one namespace per host, each host on a wire to the router."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.namespaces = []
        self.hosts = {}  # name -> (namespace, address)
        self.wires = {}  # name -> wire.py process

    def create(self):
        probe = sh("ip", "netns", "add", ROUTER, ok=False)
        if probe.returncode != 0:
            skip(f"cannot create network namespaces here ({probe.stderr.strip()}); "
                 "the netns tests need root or CAP_NET_ADMIN")
        self.namespaces.append(ROUTER)
        if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
            skip("no /dev/net/tun: the links between the namespaces are TUN devices")
        sh("ip", "-n", ROUTER, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ROUTER, "sysctl", "-qw", "net.ipv4.ip_forward=1")

    def add_host(self, name, index):
        ns = f"{TAG}{name}"
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        wire = subprocess.Popen([sys.executable, WIRE, ns, "eth0", ROUTER, f"h{name}"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=open(os.path.join(self.workdir, f"wire-{name}.log"), "w"))
        self.wires[name] = wire
        if wire.stdout.readline().strip() != "ready":
            raise Failure(f"the wire of {name} did not start (see wire-{name}.log)")
        addr = f"{SUBNET}.{index}"
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ROUTER, "link", "set", f"h{name}", "up")
        sh("ip", "-n", ROUTER, "route", "add", f"{addr}/32", "dev", f"h{name}")
        self.hosts[name] = (ns, addr)
        return ns

    def impair(self, name, delay=0.0, loss=0.0):
        """Each packet of the host's link, both ways, delayed by `delay` s, dropped with `loss`."""
        wire = self.wires[name]
        wire.stdin.write(f"delay {delay} loss {loss}\n")
        wire.stdin.flush()
        if wire.stdout.readline().strip() != "ok":
            raise Failure(f"the wire of {name} did not take the command")

    def link(self, name, up):
        sh("ip", "-n", self.hosts[name][0], "link", "set", "eth0", "up" if up else "down")

    def destroy(self):
        for wire in self.wires.values():
            wire.kill()
            wire.wait()
        for ns in reversed(self.namespaces):
            sh("ip", "netns", "del", ns, ok=False)
        self.namespaces = []


def in_ns(ns, argv):
    return ["ip", "netns", "exec", ns] + list(argv)


def connect_seconds(ns):
    """Seconds to open a TCP connection from namespace ns to the coordinator (None if it fails)."""
    r = subprocess.run(in_ns(ns, ["curl", "-s", "-o", "/dev/null", "--max-time", "10", "-w",
                                  "%{time_connect}", f"http://{COORD_IP}:9090/metrics"]),
                       capture_output=True, text=True)
    return float(r.stdout) if r.returncode == 0 else None


def scrape(ns, port):
    r = subprocess.run(in_ns(ns, ["curl", "-sf", "--max-time", "5", f"http://127.0.0.1:{port}/metrics"]),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"scrape of {ns}:{port} failed (curl exit {r.returncode})")
    return r.stdout


def metric(text, name, **labels):
    """Sum of the series `name` whose labels include `labels`."""
    total, found = 0.0, False
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
            found = True
    return total if found else 0.0


def body(workdir, procs):
    if os.geteuid() != 0:
        skip("the netns tests need root (network namespaces, TUN devices); run as root as CI does")
    net = Net(workdir)
    try:
        net.create()
        scenario(workdir, procs, net)
    finally:
        procs.stop_all()
        net.destroy()


def scenario(workdir, procs, net):
    coord_ns = net.add_host("c", 1)
    workers = {f"w{i}": net.add_host(f"w{i}", 10 + i) for i in (1, 2)}
    admin = os.path.join(workdir, "admin.token")
    with open(admin, "w") as f:
        f.write(f"arb_{secrets.token_hex(32)}\n")
    os.chmod(admin, 0o600)
    coord = procs.start("coordinator", in_ns(coord_ns, [
        ARBITER, "coordinator", "--listen", "0.0.0.0:50051", "--metrics", "0.0.0.0:9090",
        "--data", os.path.join(workdir, "data"), "--admin-token-file", admin,
        "--lease-s", str(LEASE_SECONDS), "--heartbeat-s", "1"]))
    local = "127.0.0.1:50051"

    def cli(args, timeout=600, token=admin):
        r = subprocess.run(in_ns(coord_ns, [ARBITER, "--token-file", token] + args + ["--coordinator", local]),
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise Failure(f"arbiter {' '.join(args)}: exit {r.returncode}: {r.stderr[-1500:]}")
        return r.stdout

    def cli_json(args, **kw):
        return json.loads(cli(args + ["--json"], **kw))

    def cmetrics():
        return scrape(coord_ns, 9090)

    wait_for("the coordinator to answer", lambda: cli(["whoami"]), 60)
    for name, ns in workers.items():
        token = os.path.join(workdir, f"{name}.token")
        secret = cli(["tokens", "create", "--name", name, "--role", "worker"]).splitlines()[0].strip()
        with open(token, "w") as f:
            f.write(secret + "\n")
        os.chmod(token, 0o600)
        procs.start(name, in_ns(ns, [
            ARBITER, "--token-file", token, "worker", "--coordinator", f"{COORD_IP}:50051",
            "--threads", "1", "--hash", "64", "--metrics", "0.0.0.0:9091", "--name", name,
            "--cache", os.path.join(workdir, f"{name}-cache"), "--sandbox", "off"]))
    wait_for("both workers connected",
             lambda: metric(cmetrics(), "arbiter_workers_connected") == 2, 60)
    # Addresses are real: w1 reaches the coordinator's metrics port over its wire and the router.
    check(connect_seconds(workers["w1"]) is not None, f"w1 ({SUBNET}.11) reaches the coordinator at {COORD_IP}")

    def wmetrics(name):
        return scrape(workers[name], 9091)

    def run_perft(args, expected, what):
        out = cli_json(["perft"] + args)
        check(int(out["nodes"]) == expected, f"{what} = {expected} exact (got {out['nodes']})")

    def match_exact(run_id, expect_games, label):
        result = cli_json(["runs", "show", str(run_id)])["match"]["result"]
        st = result["stats"]
        w, d, l = (int(st["wdl"].get(k, 0)) for k in ("wins", "draws", "losses"))
        check(int(result["games"]) == expect_games and w + d + l == expect_games,
              f"{label}: {result['games']} games = {w}+{d}+{l}, {expect_games} asked")
        pgn = cli(["runs", "pgn", str(run_id)])
        rounds = re.findall(r'\[Round "([^"]*)"\]', pgn)
        check(len(rounds) == expect_games and len(set(rounds)) == expect_games,
              f"{label}: PGN has {len(rounds)} games, {len(set(rounds))} distinct rounds")
        return w, d, l

    def coordinator_usage():
        pid = coord.pid
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        rss = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        ss = sh(*in_ns(coord_ns, ["ss", "-Htn", "state", "established", "( sport = :50051 )"]))
        conns = len([l for l in ss.stdout.splitlines() if l.strip()])
        return fds, rss, conns

    # Warm-up on a clean network, then the baseline of the coordinator's resources.
    run_perft(["--startpos", "--depth", "5"], PERFT[5], "warm-up perft(5)")
    wait_for("the warm-up CLI connections closed", lambda: coordinator_usage()[2] == 2, 30)
    base_fds, base_rss, base_conns = coordinator_usage()
    log(f"baseline: {base_fds} fds, {base_rss >> 20} MiB RSS, {base_conns} gRPC connections")

    if SCENARIO == "latency":
        latency(net, workers, cli, cli_json, cmetrics, run_perft, match_exact)
    elif SCENARIO == "partition":
        partition(net, workers, cmetrics, wmetrics, admin, coord_ns, coordinator_usage)
    elif SCENARIO == "flap":
        flap(net, workers, cli_json, cmetrics, wmetrics, match_exact, admin, coord_ns)
    else:
        raise Failure(f"unknown scenario {SCENARIO}")

    # Back to baseline: every worker on one connection again, no descriptors kept, memory flat.
    for name in workers:
        net.impair(name)
    net.impair("c")
    wait_for("both workers connected after the faults",
             lambda: metric(cmetrics(), "arbiter_workers_connected") == 2, 60)
    wait_for(f"the coordinator's gRPC connections back to {base_conns}",
             lambda: coordinator_usage()[2] == base_conns, 120, interval=1)
    wait_for(f"the coordinator's descriptors back to <= {base_fds}",
             lambda: coordinator_usage()[0] <= base_fds, 120, interval=1)
    fds, rss, conns = coordinator_usage()
    log(f"after: {fds} fds, {rss >> 20} MiB RSS, {conns} gRPC connections")
    check(rss <= base_rss + (64 << 20), f"coordinator RSS {rss >> 20} MiB within 64 MiB of {base_rss >> 20} MiB")
    # The faults raise the allocator's high-water mark (buffers of the cut-off connections); what
    # must not happen is growth per run afterwards: two more clean runs, the second adds < 4 MiB.
    run_perft(["--startpos", "--depth", "6", "--jobs", "32"], PERFT[6], "clean perft(6) after the faults")
    rss1 = coordinator_usage()[1]
    run_perft(["--startpos", "--depth", "6", "--jobs", "32"], PERFT[6], "second clean perft(6)")
    rss2 = coordinator_usage()[1]
    check(rss2 < rss1 + (4 << 20), f"coordinator RSS flat across clean runs: {rss1 >> 20} -> {rss2 >> 20} MiB")
    check(coord.poll() is None, "the coordinator is still running")
    for name in workers:
        check(procs.procs[[p.name for p in procs.procs].index(name)].poll() is None, f"{name} is still running")


def latency(net, workers, cli, cli_json, cmetrics, run_perft, match_exact):
    for name in workers:
        net.impair(name, 0.05, 0.01)
    # TCP connect = one round trip: at least 2 x 50 ms now.
    rtt = connect_seconds(workers["w1"])
    check(rtt is not None and rtt >= 0.1, f"50 ms each way in effect: w1 -> coordinator connect {rtt} s")
    before = cmetrics()
    run_perft(["--startpos", "--depth", "6", "--jobs", "64"], PERFT[6], "perft(6) in 64 jobs over 50 ms + 1 % loss")
    run_perft(["--fen", KIWIPETE, "--depth", "5"], KIWIPETE5, "Kiwipete perft(5) over 50 ms + 1 % loss")
    out = cli_json(["match", "--engine", "name=a,cmd=builtin", "--engine",
                    "name=b,cmd=builtin,option.KnightValueMg=150", "--tc", "depth=3", "--games", "8",
                    "--max-moves", "80", "--quiet"])
    check(int(out["games"]) == 8, f"match over 50 ms + 1 % loss: {out['games']} games")
    runs = cli_json(["runs", "list"])["runs"]
    match_id = [r["id"] for r in runs if r["kind"] == "RUN_KIND_MATCH"][0]
    w, d, l = match_exact(match_id, 8, "match over 50 ms + 1 % loss")
    after = cmetrics()
    games = metric(after, "arbiter_games_total") - metric(before, "arbiter_games_total")
    check(games == 8, f"coordinator counted {games} games (8)")
    nodes = metric(after, "arbiter_perft_nodes_total") - metric(before, "arbiter_perft_nodes_total")
    check(nodes == PERFT[6] + KIWIPETE5, f"coordinator counted {nodes:.0f} perft nodes")


def partition(net, workers, cmetrics, wmetrics, admin, coord_ns, usage):
    # perft(8) in 8 jobs: each job lasts seconds even on a fast counter (perft(7)'s 8 jobs took
    # 0.5 s in all on a machine of 2026-12, shorter than one poll and cut), so a worker seen busy
    # still holds its lease when the cut lands. Split at ply 3 (8,902 positions): the automatic
    # split would merge ply 5 in ~100 MB the coordinator's allocator keeps, and the RSS check at
    # the end is for leaks.
    # (1) w1 cut off while it holds a lease, until its lease expired and its job is done.
    perft = subprocess.Popen(in_ns(coord_ns, [ARBITER, "--token-file", admin, "perft",
                                               "--startpos", "--depth", "8", "--split-depth", "3", "--jobs", "8",
                                               "--coordinator", "127.0.0.1:50051", "--json"]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # w1 may finish its job in the moment between the check and the cut: then it holds no lease
    # and nothing expires; heal and try again on its next job (at most 3 times).
    for attempt in range(3):
        wait_for("w1 running a job", lambda: metric(wmetrics("w1"), "arbiter_worker_busy") == 1, 60, 0.05)
        m0 = cmetrics()
        w0 = wmetrics("w1")
        net.impair("w1", loss=1.0)
        log("w1 cut off")
        expired = lambda: metric(cmetrics(), "arbiter_lease_expiries_total") > metric(m0, "arbiter_lease_expiries_total")
        got_through = lambda: (metric(wmetrics("w1"), "arbiter_worker_jobs_total", outcome="completed")
                               > metric(w0, "arbiter_worker_jobs_total", outcome="completed"))
        wait_for("w1's lease expired on the coordinator (or its result got through before the cut)",
                 lambda: expired() or got_through(), 60)
        if not got_through():
            break
        log("w1's result got through just before the cut: again")
        net.impair("w1")
    else:
        raise Failure("w1 never held a lease when it was cut off")
    # w1 cannot be reached over its wire, but its own loopback still answers.
    wait_for("w1 finished its job while cut off", lambda: metric(wmetrics("w1"), "arbiter_worker_busy") == 0, 120)
    check(not got_through(), "w1's result did not get through while it was cut off")
    net.impair("w1")
    log("w1 healed")
    wait_for("w1's late result refused (FAILED_PRECONDITION)",
             lambda: metric(wmetrics("w1"), "arbiter_worker_rpcs_total", method="CompleteJob",
                            code="FAILED_PRECONDITION") >= 1
             or metric(wmetrics("w1"), "arbiter_worker_jobs_total", outcome="stopped") > metric(w0, "arbiter_worker_jobs_total", outcome="stopped"),
             90)
    w1 = wmetrics("w1")
    refused = metric(w1, "arbiter_worker_rpcs_total", method="CompleteJob", code="FAILED_PRECONDITION")
    log(f"w1: {refused:.0f} CompleteJob refused with FAILED_PRECONDITION, "
        f"{metric(w1, 'arbiter_worker_jobs_total', outcome='stopped'):.0f} jobs stopped by the coordinator")
    check(refused >= 1 and metric(cmetrics(), "arbiter_job_completions_total", outcome="rejected") >= 1,
          "the late result was refused by the coordinator (completions{outcome=rejected})")
    done_before = metric(w1, "arbiter_worker_jobs_total", outcome="completed")
    out, err = perft.communicate(timeout=600)
    if perft.returncode != 0:
        raise Failure(f"perft(8) failed: {err[-1500:]}")
    check(int(json.loads(out)["nodes"]) == PERFT[8], "perft(8) exact after w1's partition")
    log(f"coordinator: {usage()[1] >> 20} MiB RSS")

    # (2) The coordinator cut off from every worker for 30 s in the middle of a run. perft(7):
    # the cut lands while both workers are busy (checked), and it outlasts every job, so the
    # run's size only adds time after the heal.
    m1 = cmetrics()
    perft = subprocess.Popen(in_ns(coord_ns, [ARBITER, "--token-file", admin, "perft",
                                               "--startpos", "--depth", "7", "--split-depth", "3", "--jobs", "8",
                                               "--coordinator", "127.0.0.1:50051", "--json"]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for("both workers running jobs",
             lambda: all(metric(wmetrics(n), "arbiter_worker_busy") == 1 for n in workers), 60, 0.05)
    before_cut = {n: wmetrics(n) for n in workers}
    net.impair("c", loss=1.0)
    log("coordinator cut off from all workers for 30 s")
    cut_end = time.monotonic() + 30
    wait_for("leases expiring on the cut-off coordinator",
             lambda: metric(cmetrics(), "arbiter_lease_expiries_total") > metric(m1, "arbiter_lease_expiries_total"),
             30)
    time.sleep(max(0.0, cut_end - time.monotonic()))  # the fault's length, not a wait for anything
    net.impair("c")
    log("coordinator healed")
    for n in workers:  # how the workers saw the cut (calls whose deadline passed in it)
        failed = {c: metric(wmetrics(n), "arbiter_worker_rpcs_total", code=c) -
                  metric(before_cut[n], "arbiter_worker_rpcs_total", code=c)
                  for c in ("DEADLINE_EXCEEDED", "UNAVAILABLE")}
        log(f"{n}: calls failed during the cut and retried: {failed}")
    out, err = perft.communicate(timeout=600)
    if perft.returncode != 0:
        raise Failure(f"perft(8) failed: {err[-1500:]}")
    check(int(json.loads(out)["nodes"]) == PERFT[7], "perft(7) exact after the coordinator's 30 s cut")
    m2 = cmetrics()
    counted = metric(m2, "arbiter_perft_nodes_total") - metric(m1, "arbiter_perft_nodes_total")
    check(counted == PERFT[7], f"the coordinator counted {counted:.0f} nodes for it: nothing twice")
    log(f"coordinator: {usage()[1] >> 20} MiB RSS")
    # Both workers take and complete jobs again (w1 since its own partition in (1)).
    before = {n: metric(wmetrics(n), "arbiter_worker_jobs_total", outcome="completed") for n in workers}
    before["w1"] = min(before["w1"], done_before)
    wait_for("both workers connected after healing",
             lambda: metric(cmetrics(), "arbiter_workers_connected") == 2, 60)
    out = subprocess.run(in_ns(coord_ns, [ARBITER, "--token-file", admin, "perft", "--startpos",
                                          "--depth", "7", "--split-depth", "3", "--jobs", "16", "--coordinator",
                                          "127.0.0.1:50051", "--json"]),
                         capture_output=True, text=True, timeout=300)
    check(out.returncode == 0 and int(json.loads(out.stdout)["nodes"]) == PERFT[7], "perft(7) after healing exact")
    for n in workers:
        done = metric(wmetrics(n), "arbiter_worker_jobs_total", outcome="completed")
        check(done > before[n], f"{n} completed {done - before[n]:.0f} jobs after healing")


def flap(net, workers, cli_json, cmetrics, wmetrics, match_exact, admin, coord_ns):
    # Sized so that the match outlasts both flaps and w1's return on a fast machine (a CI machine
    # played 64 games in 10 s, this one 160 in 13 s with w1 out half the time); the checks below
    # count what happened, not the time.
    games = 240
    m0 = cmetrics()
    match = subprocess.Popen(in_ns(coord_ns, [
        ARBITER, "--token-file", admin, "match", "--engine", "name=a,cmd=builtin", "--engine",
        "name=b,cmd=builtin,option.KnightValueMg=150", "--tc", "depth=5", "--games", str(games),
        "--pairs-per-job", "2", "--max-moves", "100", "--quiet", "--json",
        "--coordinator", "127.0.0.1:50051"]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for("w1 playing", lambda: metric(wmetrics("w1"), "arbiter_worker_busy") == 1, 60, 0.05)
    flaps, back_while_running = 0, False
    while match.poll() is None and flaps < 2:
        net.link("w1", False)
        time.sleep(4)  # the flap itself: 4 s down (longer than the 3 s lease), 2 s up
        net.link("w1", True)
        flaps += 1
        if flaps == 1:
            back_while_running = match.poll() is None
            done_at_up = metric(wmetrics("w1"), "arbiter_worker_jobs_total", outcome="completed")
        time.sleep(2)
    log(f"w1's link went down and up {flaps} times during the match")
    check(flaps >= 1 and back_while_running,
          f"w1's link went down and came back while the match ran ({flaps} flaps)")
    out, err = match.communicate()
    # The match is the only run: a job of w1's accepted after its link first came back is one of
    # the match's, so w1 reconnected (keepalive, however long gRPC's backoff took) and worked on.
    rejoined = metric(wmetrics("w1"), "arbiter_worker_jobs_total", outcome="completed") - done_at_up
    check(rejoined > 0, f"w1 completed {rejoined:.0f} jobs of the match after its link came back")
    if match.returncode != 0:
        raise Failure(f"match failed: {err[-1500:]}")
    result = json.loads(out)
    check(int(result["games"]) == games, f"match under flapping: {result['games']} games ({games})")
    run_id = [r["id"] for r in cli_json(["runs", "list"])["runs"] if r["kind"] == "RUN_KIND_MATCH"][0]
    w, d, l = match_exact(run_id, games, "match under flapping")
    m1 = cmetrics()
    counted = metric(m1, "arbiter_games_total") - metric(m0, "arbiter_games_total")
    check(counted == games, f"the coordinator's games counter grew by {counted:.0f} ({games}: none twice)")
    expiries = metric(m1, "arbiter_lease_expiries_total") - metric(m0, "arbiter_lease_expiries_total")
    refused = metric(m1, "arbiter_job_completions_total", outcome="rejected") - metric(m0, "arbiter_job_completions_total", outcome="rejected")
    check(expiries >= 1, f"the flapping cost w1 leases ({expiries:.0f} expired; {refused:.0f} late results refused)")


main(body)
