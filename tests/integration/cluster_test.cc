// The cluster with real processes on loopback: `arbiter coordinator` and `arbiter worker`
// started as children, driven through the gRPC API and the `arbiter perft` CLI.
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/cpu.h"
#include "base/strings.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "engine/perft_path.h"
#include "engine/position.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "net/sha256.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "proto/wire_enums.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {

using testing::HttpGet;
using testing::MetricValue;
using testing::NumberAfter;
using testing::Process;

constexpr char kKiwipete[] = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-it-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    workers_.clear();
    coordinator_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts the coordinator (on `port`, 0 = any) and connects the stubs.
  void StartCoordinator(std::vector<std::string> extra = {}, int port = 0) {
    std::vector<std::string> args = {
        ARBITER_BINARY,       "coordinator",   "--listen", "127.0.0.1:" + std::to_string(port),
        "--metrics",          "127.0.0.1:0",   "--data",   (dir_ / "data").string(),
        "--admin-token-file", AdminTokenFile()};
    args.insert(args.end(), extra.begin(), extra.end());
    coordinator_ = Process::Start(args, (dir_ / "coordinator.log").string());
    ASSERT_TRUE(coordinator_);
    auto line = coordinator_->ReadLineWith("listening on port", 60);
    ASSERT_TRUE(line) << "coordinator did not start; see " << (dir_ / "coordinator.log");
    port_ = NumberAfter(*line, "listening on port ");
    metrics_port_ = NumberAfter(*line, "metrics on port ");
    ASSERT_GT(port_, 0);
    auto channel = net::Dial(Address());
    runs_ = v1::RunService::NewStub(channel);
    work_ = v1::WorkService::NewStub(channel);
    channel_ = channel;
  }

  // Starts a worker process (with `extra` flags); returns its metrics port.
  int StartWorker(int threads = 1, std::vector<std::string> extra = {}) {
    const int n = int(workers_.size()) + 1;
    // Each worker its own token: verification needs different ones.
    const auto token = dir_ / ("worker" + std::to_string(n) + ".token");
    const grpc::Status created = testing::CreateTokenFile(
        Address(), admin_secret_, "w" + std::to_string(n), v1::ROLE_WORKER, token);
    EXPECT_TRUE(created.ok()) << created.error_message();
    std::vector<std::string> args = {ARBITER_BINARY,  "--token-file",
                                     token.string(),  "worker",
                                     "--coordinator", Address(),
                                     "--threads",     std::to_string(threads),
                                     "--metrics",     "127.0.0.1:0",
                                     "--name",        "w" + std::to_string(n),
                                     "--wait-s",      "2",
                                     "--grace-s",     "5"};
    args.insert(args.end(), extra.begin(), extra.end());
    workers_.push_back(
        Process::Start(args, (dir_ / ("worker" + std::to_string(n) + ".log")).string()));
    auto line = workers_.back()->ReadLineWith("health on port", 60);
    EXPECT_TRUE(line);
    if (!line) return -1;
    // Its port is printed before it registers: a test that lists the workers at once would find
    // none on a loaded machine.
    const int metrics = NumberAfter(*line, "metrics on port ");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (MetricValue(Metrics(metrics), "arbiter_worker_registered") != 1.0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "worker " << n << " did not register";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return metrics;
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  // The admin's secret in a file, also the token of this test's own calls and CLI children.
  std::string AdminTokenFile() { return testing::AdminTokenFile(dir_, admin_secret_); }
  std::string admin_secret_;

  static std::chrono::system_clock::time_point In(double seconds) {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
  }

  grpc::Status Submit(const std::string& fen, int depth, bool verify, v1::Run& run,
                      uint32_t target_jobs = 0, uint32_t hash_mb = 0) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(fen);
    req.mutable_perft()->set_depth(depth);
    req.mutable_perft()->set_hash_mb(hash_mb);
    req.set_verify(verify);
    req.set_target_jobs(target_jobs);
    v1::SubmitRunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(60));
    grpc::Status s = runs_->SubmitPerft(&ctx, req, &resp);
    run = resp.run();
    return s;
  }

  grpc::Status GetRun(uint64_t id, v1::Run& run) {
    v1::GetRunRequest req;
    req.set_run_id(id);
    grpc::ClientContext ctx;
    ctx.set_deadline(In(10));
    return runs_->GetRun(&ctx, req, &run);
  }

  // Polls until the run is finished (or the time is up); tolerates a restarting coordinator.
  v1::Run WaitFinished(uint64_t id, double seconds = 120) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(int(seconds));
    v1::Run run;
    while (std::chrono::steady_clock::now() < end) {
      if (GetRun(id, run).ok() &&
          (run.state() == v1::RUN_STATE_SUCCEEDED || run.state() == v1::RUN_STATE_FAILED ||
           run.state() == v1::RUN_STATE_CANCELLED))
        return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return run;
  }

  // Once `done` jobs of the run are in (and not all), the coordinator killed with SIGKILL and
  // started again on the same data and `port`; `run` is then the run as it finished. With
  // `expanding`, the run's streamed split must not be complete at the kill.
  void KillAndRestartAfter(uint64_t done, int port, v1::Run& run, bool expanding = false) {
    for (int i = 0; i < 3000 && run.jobs().done() < done; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ASSERT_TRUE(GetRun(run.id(), run).ok());
    }
    ASSERT_GE(run.jobs().done(), done);
    // A streamed split may be behind the workers (each shard walks the tree), not finished.
    if (expanding) {
      ASSERT_LT(run.perft().chunk_positions_expanded(), run.perft().chunk_positions())
          << "the streamed split was complete before the kill";
    } else {
      ASSERT_LT(run.jobs().done(), run.jobs().total()) << "the run finished before the kill";
    }
    coordinator_->Signal(SIGKILL);
    coordinator_->Wait();
    ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "3"}, port));
    run = WaitFinished(run.id());
  }

  std::string Metrics(int port) { return HttpGet(port, "/metrics"); }

  std::filesystem::path dir_;
  std::unique_ptr<Process> coordinator_;
  std::vector<std::unique_ptr<Process>> workers_;
  int port_ = 0, metrics_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RunService::Stub> runs_;
  std::unique_ptr<v1::WorkService::Stub> work_;
};

// What `arbiter perft --startpos --depth N --divide` prints, from the in-process count, ending with
// the total (which must be `total`).
std::string StartposDivideText(int depth, uint64_t total) {
  Position start = Position::StartPosition();
  absl::StatusOr<PerftResult> local = Perft(start, {.depth = depth, .threads = 1, .divide = true});
  if (!local.ok() || local->nodes != total) return "in-process perft failed";
  std::string expected;
  for (const PerftDivide& d : local->divide)
    expected += Cat(MoveToUci(start, d.move), ": ", d.nodes, "\n");
  return Cat(expected, "\nNodes searched: ", total, "\n");
}

// Start position to depth 6 on three workers, through the CLI: the total and the divide
// equal the in-process perft; the metrics of both processes agree with the run.
TEST_F(ClusterTest, StartposDepth6OnThreeWorkersMatchesLocalDivide) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  std::vector<int> worker_metrics;
  for (int i = 0; i < 3; ++i) worker_metrics.push_back(StartWorker());

  auto cli = Process::Start({ARBITER_BINARY, "perft", "--startpos", "--depth", "6", "--divide",
                             "--coordinator", Address()},
                            (dir_ / "cli.log").string());
  std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out;

  const std::string expected = StartposDivideText(6, 119060324);
  EXPECT_EQ(out.substr(0, expected.size()), expected);

  // The coordinator's series for the finished run (gauges refresh within a second).
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text = Metrics(metrics_port_);
    if (MetricValue(text, "arbiter_runs{state=\"SUCCEEDED\"}") == 1.0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(MetricValue(text, "arbiter_runs{state=\"SUCCEEDED\"}"), 1.0) << text;
  EXPECT_EQ(MetricValue(text, "arbiter_perft_nodes_total"), 119060324.0);
  EXPECT_EQ(MetricValue(text, "arbiter_workers_connected"), 3.0);
  EXPECT_EQ(MetricValue(text, "arbiter_lease_expiries_total"), 0.0);
  EXPECT_EQ(MetricValue(text,
                        "arbiter_grpc_server_requests_total{code=\"OK\",method=\"/"
                        "arbiter.v1.RunService/SubmitPerft\"}"),
            1.0);
  v1::ListRunsResponse list;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(runs_->ListRuns(&ctx, v1::ListRunsRequest(), &list).ok());
  }
  ASSERT_EQ(list.runs_size(), 1);
  const double jobs = double(list.runs(0).jobs().total());
  // Each job counted once, plus the spot checks' recounts: a worker's results until its first
  // recount agreed (how many arrive meanwhile depends on the machine's load), then about 3 % of
  // the jobs (docs/security.md; SpotCheckTest counts them exactly in simulated order).
  const double committed =
      MetricValue(text, "arbiter_job_completions_total{outcome=\"committed\"}").value_or(0);
  EXPECT_GT(committed, jobs) << "no spot check";
  EXPECT_LE(committed, jobs + jobs / 4);
  EXPECT_EQ(MetricValue(text, "arbiter_job_duration_seconds_count"), jobs);
  EXPECT_GT(MetricValue(text, "process_open_fds").value_or(0), 0);
  EXPECT_GT(MetricValue(text, "process_resident_memory_bytes").value_or(0), 0);
  // Every job was completed by one of the workers, and their node counts add up to the
  // unique positions' counts (at most the run's total: transpositions are counted once).
  double completed = 0, worker_nodes = 0;
  for (int port : worker_metrics) {
    std::string wt = Metrics(port);
    completed += MetricValue(wt, "arbiter_worker_jobs_total{outcome=\"completed\"}").value_or(0);
    worker_nodes += MetricValue(wt, "arbiter_worker_perft_nodes_total").value_or(0);
    EXPECT_EQ(MetricValue(wt, "arbiter_worker_registered"), 1.0);
    // The worker runs the copy of the perft core this test process would (same build, same CPU).
    EXPECT_EQ(MetricValue(
                  wt, Cat("arbiter_worker_perft_path_info{path=\"", ActivePerftPath().name, "\"}")),
              1.0);
    EXPECT_GT(MetricValue(wt, "process_cpu_seconds_total").value_or(-1), 0);
  }
  EXPECT_EQ(completed, committed);
  EXPECT_GT(worker_nodes, 0);
  EXPECT_LE(worker_nodes, 119060324.0 * (committed / jobs));
}

// Kiwipete to depth 5 with every job computed twice; JSON output through the CLI.
TEST_F(ClusterTest, KiwipeteDepth5Verified) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  for (int i = 0; i < 3; ++i) StartWorker();
  auto cli = Process::Start({ARBITER_BINARY, "perft", "--fen", kKiwipete, "--depth", "5", "--hash",
                             "16", "--verify", "--json", "--coordinator", Address()},
                            (dir_ / "cli.log").string());
  std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out;
  EXPECT_NE(out.find("\"nodes\":\"193690690\""), std::string::npos) << out;
  v1::Run run;
  ASSERT_TRUE(testing::OnlyRun(*runs_, run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(run.perft().result().nodes(), 193690690u);
  EXPECT_EQ(run.perft().disagreements_size(), 0);
  std::string text = Metrics(metrics_port_);
  // Two results per job.
  EXPECT_EQ(MetricValue(text, "arbiter_job_completions_total{outcome=\"committed\"}"),
            2.0 * run.jobs().total());
}

// A worker keeps its perft hash across runs. Two Chess960 roots with the same pieces whose
// king-side right belongs to different rooks (h1 in one, f1 in the other: castling is legal
// only with f1) give positions with equal keys and different counts; the worker must not
// answer the second run from the first run's entries. Both totals equal the local perft.
TEST_F(ClusterTest, WorkerHashNotSharedAcrossDifferentCastlingRooks) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  StartWorker();
  for (const char* fen : {"4k3/8/8/8/8/8/P7/3K1R1R w H - 0 1", "4k3/8/8/8/8/8/P7/3K1R1R w F - 0 1",
                          "4k3/8/8/8/8/8/P7/3K1R1R w H - 0 1"}) {
    absl::StatusOr<Position> root = Position::FromFen(fen);
    ASSERT_TRUE(root.ok());
    absl::StatusOr<PerftResult> local = Perft(*root, {.depth = 5, .threads = 1});
    ASSERT_TRUE(local.ok());
    // Split at ply 2: the worker counts 3 plies and keeps the counts of ply 3 in its hash.
    auto cli = Process::Start({ARBITER_BINARY, "perft", "--fen", fen, "--depth", "5", "--hash",
                               "16", "--split-depth", "2", "--coordinator", Address()},
                              (dir_ / "cli.log").string());
    std::string out = cli->ReadAll();
    ASSERT_EQ(cli->Wait(), 0) << out;
    EXPECT_NE(out.find("Nodes searched: " + std::to_string(local->nodes) + "\n"), std::string::npos)
        << fen << "\n"
        << out;
  }
}

// Ctrl-C on `arbiter perft --coordinator` cancels the run it submitted (it does not leave it
// running on the cluster) and exits with 130.
TEST_F(ClusterTest, InterruptedClientCancelsItsRun) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  StartWorker();
  auto cli = Process::Start({ARBITER_BINARY, "perft", "--startpos", "--depth", "7", "--hash", "0",
                             "--coordinator", Address()},
                            (dir_ / "cli.log").string());
  v1::Run run;
  for (int i = 0;
       i < 300 && !(testing::OnlyRun(*runs_, run).ok() && run.state() == v1::RUN_STATE_RUNNING);
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(run.state(), v1::RUN_STATE_RUNNING);
  cli->Signal(SIGINT);
  EXPECT_EQ(cli->Wait(), 130);
  ASSERT_TRUE(GetRun(run.id(), run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_CANCELLED);
  EXPECT_NE(run.message().find("SIGINT"), std::string::npos) << run.message();
}

// A worker killed with SIGKILL in the middle of a job: its lease expires, the job is re-queued,
// another worker computes it, and the total is exact.
TEST_F(ClusterTest, WorkerKilledMidJobStillExact) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "1.5"}));
  StartWorker();
  v1::Run run;
  ASSERT_TRUE(Submit(kKiwipete, 5, false, run, /*target_jobs=*/6).ok());
  // Wait until the only worker holds a lease, then kill it.
  for (int i = 0; i < 200 && run.jobs().leased() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(GetRun(run.id(), run).ok());
  }
  ASSERT_GT(run.jobs().leased(), 0u);
  ASSERT_LT(run.jobs().done(), run.jobs().total());
  workers_[0]->Signal(SIGKILL);
  workers_[0]->Wait();
  StartWorker();
  run = WaitFinished(run.id());
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), 193690690u);
  EXPECT_GE(MetricValue(Metrics(metrics_port_), "arbiter_lease_expiries_total").value_or(0), 1.0);
}

// The coordinator killed with SIGKILL mid-run and restarted on the same data: the run resumes
// and its total is exact (nothing acknowledged lost, nothing counted twice).
TEST_F(ClusterTest, CoordinatorRestartResumesExactly) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "3"}));
  const int port = port_;
  StartWorker();
  StartWorker();
  v1::Run run;
  ASSERT_TRUE(Submit(kKiwipete, 5, false, run, /*target_jobs=*/24).ok());
  ASSERT_NO_FATAL_FAILURE(KillAndRestartAfter(3, port, run));
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), 193690690u);
  uint64_t divide = 0;
  for (const auto& d : run.perft().result().divide()) divide += d.nodes();
  EXPECT_EQ(divide, 193690690u);
}

// A streamed split forced with a tiny memory bound (start position perft(6) through the CLI, at
// most 1,000 split positions in the coordinator's memory at once): the total and the divide
// equal the in-process perft, and the split's paths add up to perft(3).
TEST_F(ClusterTest, StreamedSplitStartposDepth6MatchesLocalDivide) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  StartWorker();
  StartWorker();
  auto cli = Process::Start({ARBITER_BINARY, "perft", "--startpos", "--depth", "6", "--divide",
                             "--split-memory-positions", "1000", "--coordinator", Address()},
                            (dir_ / "cli.log").string());
  std::string out = cli->ReadAll();
  ASSERT_EQ(cli->Wait(), 0) << out;
  const std::string expected = StartposDivideText(6, 119060324);
  EXPECT_EQ(out.substr(0, expected.size()), expected);
  v1::Run run;
  ASSERT_TRUE(testing::OnlyRun(*runs_, run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_TRUE(run.perft().streamed());
  EXPECT_EQ(run.perft().split_depth(), 3u);
  EXPECT_EQ(run.perft().split_positions(), 8902u);
  EXPECT_EQ(run.perft().chunk_positions_expanded(), run.perft().chunk_positions());
  EXPECT_GT(run.perft().chunks(), 5u);
}

// Kiwipete perft(5) with a streamed split (ply 3, at most 500 split positions a chunk), the
// coordinator killed with SIGKILL in the middle of the expansion and restarted on the same data:
// it goes on from the stored cursor. The total and divide are exact, and the jobs, chunks and
// unique positions are those of the same run without a kill (no chunk redone or lost).
TEST_F(ClusterTest, StreamedSplitSurvivesACoordinatorKilledMidExpansion) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "3"}));
  const int port = port_;
  StartWorker();
  StartWorker();
  auto submit = [&](v1::Run& run) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(kKiwipete);
    req.mutable_perft()->set_depth(5);
    req.set_split_depth(3);
    req.set_target_jobs(24);
    req.set_split_memory_positions(500);
    v1::SubmitRunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(60));
    grpc::Status s = runs_->SubmitPerft(&ctx, req, &resp);
    run = resp.run();
    return s;
  };
  v1::Run plain;
  ASSERT_TRUE(submit(plain).ok());
  plain = WaitFinished(plain.id());
  ASSERT_EQ(plain.state(), v1::RUN_STATE_SUCCEEDED) << plain.message();
  EXPECT_EQ(plain.perft().result().nodes(), 193690690u);
  ASSERT_GT(plain.perft().chunks(), 50u);

  v1::Run run;
  ASSERT_TRUE(submit(run).ok());
  ASSERT_NO_FATAL_FAILURE(KillAndRestartAfter(3, port, run, /*expanding=*/true));
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), 193690690u);
  uint64_t divide = 0;
  for (int i = 0; i < run.perft().result().divide_size(); ++i) {
    divide += run.perft().result().divide(i).nodes();
    EXPECT_EQ(run.perft().result().divide(i).nodes(), plain.perft().result().divide(i).nodes());
  }
  EXPECT_EQ(divide, 193690690u);
  EXPECT_EQ(run.jobs().total(), plain.jobs().total());
  EXPECT_EQ(run.perft().chunks(), plain.perft().chunks());
  EXPECT_EQ(run.perft().unique_positions(), plain.perft().unique_positions());
  EXPECT_EQ(run.perft().split_positions(), plain.perft().split_positions());
}

// A movegen-check run whose deep position is split into parts spread over jobs, the coordinator
// killed with SIGKILL once some jobs are in and restarted on the same data: the parts that came
// before and after the restart add up to the one position, exact, counted once.
TEST_F(ClusterTest, MovegenCheckWithSplitPositionsSurvivesACoordinatorRestart) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "stockfish is not installed"
                 << " (scripts/install-deps.sh installs it)";
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "3"}));
  const int port = port_;
  StartWorker();
  StartWorker();
  for (int i = 0; i < 500; ++i) {  // both connected: eight jobs
    if (MetricValue(Metrics(metrics_port_), "arbiter_workers_connected").value_or(0) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  v1::SubmitMovegenCheckRequest req;
  req.mutable_engine()->set_name("stockfish");
  req.mutable_engine()->set_path("/usr/games/stockfish");
  for (const char* fen : {kKiwipete, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}) {
    v1::MovegenPosition* p = req.add_positions();
    p->set_fen(fen);
    p->set_depth(5);
  }
  req.mutable_positions(0)->set_estimate_nodes(193690690);
  req.mutable_positions(1)->set_estimate_nodes(4865609);
  v1::SubmitRunResponse resp;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(60));
    grpc::Status s = runs_->SubmitMovegenCheck(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::Run run = resp.run();
  ASSERT_EQ(run.jobs().total(), 8u);
  ASSERT_NO_FATAL_FAILURE(KillAndRestartAfter(2, port, run));
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  const v1::MovegenCheckResult& r = run.movegen_check().result();
  EXPECT_EQ(r.positions(), 2u);
  EXPECT_EQ(r.positions_checked(), 2u);
  EXPECT_EQ(r.positions_clean(), 2u);
  EXPECT_EQ(r.positions_faulted(), 0u);
  EXPECT_EQ(r.nodes_compared(), 193690690u + 4865609u);
  EXPECT_EQ(r.positions_split(), 1u);
  EXPECT_EQ(r.parts(), 48u);
}

// A match between two settings of Stockfish: a forged game from a test client is refused, the
// SPRT stops the run, and every counted game is in the run's PGN.
TEST_F(ClusterTest, MatchRunStoppedBySprtWithForgedGameRefused) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "stockfish is not installed"
                 << " (scripts/install-deps.sh installs it)";
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "5"}));
  v1::SubmitMatchRequest req;
  for (int i = 0; i < 2; ++i) {
    v1::EngineSpec* e = req.mutable_settings()->add_engines();
    e->set_name(i == 0 ? "sf-strong" : "sf-weak");
    e->set_path("/usr/games/stockfish");
    (*e->mutable_options())["Skill Level"] = i == 0 ? "20" : "0";
    (*e->mutable_options())["Threads"] = "1";
  }
  req.mutable_settings()->set_tc("nodes=3000");
  req.set_games(200);
  req.mutable_settings()->set_pairs_per_job(2);
  req.mutable_sprt()->set_elo0(0);
  req.mutable_sprt()->set_elo1(300);
  req.mutable_sprt()->set_alpha(0.1);
  req.mutable_sprt()->set_beta(0.1);
  req.mutable_sprt()->set_model(v1::SPRT_MODEL_LOGISTIC);
  v1::SubmitRunResponse submitted;
  {
    grpc::ClientContext ctx;
    grpc::Status s = runs_->SubmitMatch(&ctx, req, &submitted);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const uint64_t run_id = submitted.run().id();
  // A test client leases the first job and reports a game with an illegal move.
  v1::RegisterResponse reg;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(work_->Register(&ctx, v1::RegisterRequest(), &reg).ok());
  }
  v1::AcquireJobResponse leased;
  {
    grpc::ClientContext ctx;
    v1::AcquireJobRequest acquire;
    acquire.set_worker_id(reg.worker_id());
    ASSERT_TRUE(work_->AcquireJob(&ctx, acquire, &leased).ok());
    ASSERT_TRUE(leased.job().has_match());
  }
  {
    v1::CompleteJobRequest forged;
    forged.set_worker_id(reg.worker_id());
    forged.set_job_id(leased.job().job_id());
    forged.set_lease_id(leased.job().lease_id());
    for (uint32_t p = 0; p < leased.job().match().pairs(); ++p) {
      for (int g = 0; g < 2; ++g) {
        v1::ReportedGame* game = forged.mutable_match()->add_games();
        game->set_pair(leased.job().match().first_pair() + p);
        game->set_game(g);
        game->set_start_fen(std::string(Position::kStartFen));
        game->add_moves("e2e4");
        game->add_moves("e7e5");
        game->add_moves("e1e3");  // the king cannot move two squares up
        game->set_result(v1::GAME_RESULT_WHITE_WINS);
        game->set_end(v1::GAME_END_ILLEGAL_MOVE);
      }
    }
    grpc::ClientContext ctx;
    v1::CompleteJobResponse resp;
    grpc::Status s = work_->CompleteJob(&ctx, forged, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("move 3 'e1e3' refused"), std::string::npos)
        << s.error_message();
  }
  StartWorker();
  StartWorker();
  v1::Run run = WaitFinished(run_id, 300);
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  const v1::MatchResult& m = run.match().result();
  EXPECT_EQ(m.stats().sprt().decision(), v1::SPRT_DECISION_ACCEPT_H1) << run.message();
  EXPECT_LT(m.games(), 200u) << "the SPRT stopped the run early";
  EXPECT_GT(run.jobs().cancelled(), 0u);
  EXPECT_EQ(run.match().rejected_results(), 1u);
  const v1::PentanomialCounts& p = m.stats().penta();
  EXPECT_EQ(2 * (p.ll() + p.ld() + p.d() + p.wd() + p.ww()), m.games());
  const v1::TrinomialCounts& wdl = m.stats().wdl();
  EXPECT_EQ(wdl.wins() + wdl.draws() + wdl.losses(), m.games());
  EXPECT_GT(wdl.wins(), wdl.losses());
  EXPECT_FALSE(m.has_cpu_ms_per_move()) << "not measured on the cluster";
  v1::GetPgnResponse pgn;
  {
    grpc::ClientContext ctx;
    v1::GetPgnRequest preq;
    preq.set_run_id(run_id);
    ASSERT_TRUE(runs_->GetPgn(&ctx, preq, &pgn).ok());
  }
  EXPECT_EQ(pgn.games(), m.games());
  size_t tags = 0;
  for (size_t at = 0; (at = pgn.pgn().find("[White \"", at)) != std::string::npos; ++at) ++tags;
  EXPECT_EQ(tags, m.games());
  EXPECT_NE(pgn.pgn().find("sf-strong"), std::string::npos);
  std::string text = Metrics(metrics_port_);
  double counted = MetricValue(text, "arbiter_games_total{result=\"1-0\"}").value_or(0) +
                   MetricValue(text, "arbiter_games_total{result=\"0-1\"}").value_or(0) +
                   MetricValue(text, "arbiter_games_total{result=\"1/2-1/2\"}").value_or(0);
  EXPECT_EQ(counted, double(m.games()));
}

// `arbiter workers` shows each worker's isolation and engine directories; a match whose path
// engine no connected worker allows is refused at submit, naming the path and the directories.
TEST_F(ClusterTest, WorkersShowTheirEngineDirsAndPathEnginesOutsideThemAreRefused) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  StartWorker();  // --engine-dir defaults to /usr/games
  auto list = Process::Start({ARBITER_BINARY, "workers", "--json", "--coordinator", Address()},
                             (dir_ / "workers.log").string());
  const std::string json = list->ReadAll();
  ASSERT_EQ(list->Wait(), 0) << json;
  EXPECT_NE(json.find("\"w1\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"/usr/games\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"isolation\""), std::string::npos) << json;
  // The enum by name in `worker`; its spelling for people in the deprecated copy.
  EXPECT_NE(json.find(Cat("\"perft_core_path\":\"",
                          v1::PerftPath_Name(PerftPathFromString(ActivePerftPath().name)), "\"")),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(Cat("\"perft_path\":\"", ActivePerftPath().name, "\"")), std::string::npos)
      << json;
  // And `arbiter workers` prints the spellings people know.
  auto text = Process::Start({ARBITER_BINARY, "workers", "--coordinator", Address()},
                             (dir_ / "workers-text.log").string());
  const std::string table = text->ReadAll();
  ASSERT_EQ(text->Wait(), 0) << table;
  EXPECT_NE(table.find(Cat("  perft ", ActivePerftPath().name)), std::string::npos) << table;
  EXPECT_TRUE(table.find(" landlock ") != std::string::npos ||
              table.find(" namespaces ") != std::string::npos ||
              table.find(" limits ") != std::string::npos ||
              table.find(" none ") != std::string::npos)
      << table;
  auto match = Process::Start(
      {ARBITER_BINARY, "match", "--engine", "name=x,cmd=/opt/nowhere/engine", "--engine",
       "name=b,cmd=builtin", "--tc", "1+0.01", "--games", "2", "--coordinator", Address()},
      (dir_ / "match.log").string());
  const std::string out = match->ReadAll();
  EXPECT_EQ(match->Wait(), 1) << out;
  std::ifstream in(dir_ / "match.log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("/opt/nowhere/engine"), std::string::npos) << log;
  EXPECT_NE(log.find("--engine-dir: /usr/games"), std::string::npos) << log;
}

// A run that requires a CPU level no connected worker has waits, `arbiter runs show` says why
// (the worker and its level), and it runs as soon as a worker of that level registers; a
// worker declares a lower level than its CPU's with --cpu-level, never a higher one.
TEST_F(ClusterTest, RunRequiringACpuLevelWaitsForSuchAWorker) {
  const int level = DetectedCpuLevel();
  if (level < 2) GTEST_SKIP() << "this CPU is x86-64 v1: no lower level to declare";
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string below = "v" + std::to_string(level - 1), at = "v" + std::to_string(level);
  StartWorker(1, {"--cpu-level", below, "--label", "zone=a,rack=7"});
  auto submit = Process::Start({ARBITER_BINARY, "perft", "--startpos", "--depth", "4",
                                "--coordinator", Address(), "--require", "cpu=" + at, "--json"},
                               (dir_ / "perft.log").string());
  // The run waits, naming the worker's level (polled: the worker registers on its own time).
  v1::Run run;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end &&
         run.waiting().find("'w1'") == std::string::npos) {
    v1::ListRunsRequest req;
    v1::ListRunsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(10));
    if (runs_->ListRuns(&ctx, req, &resp).ok() && resp.runs_size() == 1) run = resp.runs(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(run.waiting(), "no connected worker can take its jobs (1): 'w1': cpu level " + below +
                               ", the run needs " + at);
  EXPECT_EQ(run.jobs().leased(), 0u);
  auto show = Process::Start(
      {ARBITER_BINARY, "runs", "show", std::to_string(run.id()), "--coordinator", Address()},
      (dir_ / "show.log").string());
  const std::string shown = show->ReadAll();
  EXPECT_EQ(show->Wait(), 0);
  EXPECT_NE(shown.find("requires cpu=" + at), std::string::npos) << shown;
  EXPECT_NE(shown.find("Waiting: no connected worker"), std::string::npos) << shown;
  auto workers = Process::Start({ARBITER_BINARY, "workers", "--coordinator", Address()},
                                (dir_ / "workers.log").string());
  const std::string listed = workers->ReadAll();
  EXPECT_EQ(workers->Wait(), 0);
  EXPECT_NE(listed.find(" " + below + " "), std::string::npos) << listed;
  EXPECT_NE(listed.find("labels rack=7 zone=a"), std::string::npos) << listed;

  StartWorker(1);  // this CPU's own level
  const std::string out = submit->ReadAll();
  ASSERT_EQ(submit->Wait(), 0) << out;
  EXPECT_NE(out.find("\"nodes\":\"197281\""), std::string::npos) << out;
  EXPECT_EQ(WaitFinished(run.id()).state(), v1::RUN_STATE_SUCCEEDED);

  // Abuse: a level above the CPU's, a malformed label, an unknown requirement value.
  auto high = Process::Start({ARBITER_BINARY, "worker", "--coordinator", Address(), "--cpu-level",
                              "v" + std::to_string(level + 1)},
                             (dir_ / "high.log").string());
  high->ReadAll();
  EXPECT_EQ(high->Wait(), 2);
  auto label =
      Process::Start({ARBITER_BINARY, "worker", "--coordinator", Address(), "--label", "zone"},
                     (dir_ / "label.log").string());
  label->ReadAll();
  EXPECT_EQ(label->Wait(), 2);
  auto bad = Process::Start({ARBITER_BINARY, "perft", "--startpos", "--depth", "3", "--coordinator",
                             Address(), "--require", "cpu=v9"},
                            (dir_ / "bad.log").string());
  bad->ReadAll();
  EXPECT_NE(bad->Wait(), 0);
  std::ifstream in(dir_ / "bad.log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("cpu='v9' is not an x86-64 level"), std::string::npos) << log;
}

// Bad requests get specific codes and messages, each case its own test, and the coordinator
// keeps serving after each.
class BadRequestTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--lease-s", "1", "--max-upload-mb", "1"}));
  }
  void TearDown() override {
    v1::Run run;
    EXPECT_EQ(GetRun(424242, run).error_code(), grpc::StatusCode::NOT_FOUND)
        << "the coordinator still serves";
    ClusterTest::TearDown();
  }
  grpc::Status SubmitMatch(const v1::SubmitMatchRequest& req) {
    v1::SubmitRunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(30));
    return runs_->SubmitMatch(&ctx, req, &resp);
  }
  // Uploads `chunks` parts of `chunk_bytes` each as engine `name`.
  grpc::Status Upload(const std::string& name, const std::string& chunk, int chunks,
                      v1::UploadEngineResponse& resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(30));
    auto writer = runs_->UploadEngine(&ctx, &resp);
    v1::UploadEngineRequest part;
    part.set_name(name);
    std::string all;
    for (int i = 0; i < chunks; ++i) all += chunk;
    part.set_sha256(net::Sha256Hex(all));
    writer->Write(part);
    part.clear_name();
    part.clear_sha256();
    part.set_chunk(chunk);
    for (int i = 0; i < chunks && writer->Write(part); ++i) {
    }
    writer->WritesDone();
    return writer->Finish();
  }
};

TEST_F(BadRequestTest, MalformedFen) {
  v1::Run run;
  grpc::Status s = Submit("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", 3, false, run);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("malformed FEN"), std::string::npos) << s.error_message();
}

TEST_F(BadRequestTest, DepthZero) {
  v1::Run run;
  grpc::Status s = Submit(std::string(Position::kStartFen), 0, false, run);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("depth must be in 1..20, got 0"), std::string::npos)
      << s.error_message();
}

TEST_F(BadRequestTest, DepthTooLarge) {
  v1::Run run;
  grpc::Status s = Submit(std::string(Position::kStartFen), 40, false, run);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("depth must be in 1..20, got 40"), std::string::npos)
      << s.error_message();
}

TEST_F(BadRequestTest, MatchWithoutEngines) {
  v1::SubmitMatchRequest req;
  req.mutable_settings()->set_tc("10+0.1");
  grpc::Status s = SubmitMatch(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("engine list is empty"), std::string::npos) << s.error_message();
}

TEST_F(BadRequestTest, MatchWithAnEngineNeverUploaded) {
  v1::SubmitMatchRequest req;
  req.mutable_settings()->set_tc("10+0.1");
  auto* a = req.mutable_settings()->add_engines();
  a->set_name("a");
  a->set_sha256(std::string(64, 'a'));
  auto* b = req.mutable_settings()->add_engines();
  b->set_name("b");
  b->set_builtin(true);
  grpc::Status s = SubmitMatch(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("no engine with sha256 aaaa"), std::string::npos)
      << s.error_message();
}

TEST_F(BadRequestTest, UploadOverTheLimit) {
  v1::UploadEngineResponse resp;
  grpc::Status s = Upload("big", std::string(512 << 10, 'x'), 4, resp);  // 2 MiB, limit 1 MiB
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("exceeds the limit"), std::string::npos) << s.error_message();
}

// The use beside the abuse: a small upload is stored by its sha256.
TEST_F(BadRequestTest, SmallUploadIsStoredBySha256) {
  v1::UploadEngineResponse resp;
  grpc::Status s = Upload("tiny", "abc", 1, resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.engine().sha256(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(resp.engine().size_bytes(), 3u);
}

// Fencing and idempotency as a worker sees them, in real time: the lease (1 s) expires while the
// test long-polls for the job, so no sleep has to be long enough.
TEST_F(BadRequestTest, StaleAndForgedLeasesAreRefusedAndCompletionIsIdempotent) {
  v1::RegisterResponse reg;
  {
    grpc::ClientContext ctx;
    v1::RegisterRequest req;
    req.mutable_worker()->set_name("test-client");
    req.mutable_worker()->set_threads(2);  // may ask for a second lease while it holds one
    ASSERT_TRUE(work_->Register(&ctx, req, &reg).ok());
  }
  v1::Run run;
  ASSERT_TRUE(Submit(std::string(Position::kStartFen), 3, false, run, /*target_jobs=*/1).ok());
  ASSERT_EQ(run.jobs().total(), 1u);
  auto acquire = [&](v1::AcquireJobResponse& resp) {
    grpc::ClientContext ctx;
    v1::AcquireJobRequest req;
    req.set_worker_id(reg.worker_id());
    req.set_wait_seconds(30);
    return work_->AcquireJob(&ctx, req, &resp);
  };
  auto complete = [&](uint64_t job, uint64_t lease, int counts) {
    grpc::ClientContext ctx;
    v1::CompleteJobRequest req;
    req.set_worker_id(reg.worker_id());
    req.set_job_id(job);
    req.set_lease_id(lease);
    for (int i = 0; i < counts; ++i) req.mutable_perft()->add_counts(0);
    v1::CompleteJobResponse resp;
    grpc::Status st = work_->CompleteJob(&ctx, req, &resp);
    return std::make_pair(st, resp.duplicate());
  };
  v1::AcquireJobResponse first;
  ASSERT_TRUE(acquire(first).ok());
  ASSERT_TRUE(first.has_job());
  const uint64_t job = first.job().job_id();
  auto [forged, dup0] = complete(job, first.job().lease_id() ^ 0x5a5a, 1);
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(forged.error_message().find("never issued"), std::string::npos)
      << forged.error_message();
  auto [unknown, dup1] = complete(job + 1000000, 1, 1);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  // The only job is leased: this long poll returns when the lease has expired and the job is
  // leased again.
  v1::AcquireJobResponse second;
  grpc::Status polled = acquire(second);
  ASSERT_TRUE(polled.ok()) << polled.error_message();
  ASSERT_TRUE(second.has_job()) << "the lease did not expire within the long poll";
  ASSERT_EQ(second.job().job_id(), job) << "the expired job is re-queued";
  ASSERT_NE(second.job().lease_id(), first.job().lease_id());
  const int n = int(first.job().perft().packed_positions().size() / 34);
  auto [stale, dup2] = complete(job, first.job().lease_id(), n);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(stale.error_message().find("stale"), std::string::npos) << stale.error_message();
  auto [wrong_size, dup3] = complete(job, second.job().lease_id(), n + 1);
  EXPECT_EQ(wrong_size.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  auto [ok, dup4] = complete(job, second.job().lease_id(), n);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_FALSE(dup4);
  auto [again, dup5] = complete(job, second.job().lease_id(), n);
  EXPECT_TRUE(again.ok());
  EXPECT_TRUE(dup5);
}

TEST_F(BadRequestTest, CancellingTwiceIsRefused) {
  v1::Run run;
  ASSERT_TRUE(Submit(std::string(Position::kStartFen), 3, false, run, /*target_jobs=*/2).ok());
  for (grpc::StatusCode want : {grpc::StatusCode::OK, grpc::StatusCode::FAILED_PRECONDITION}) {
    grpc::ClientContext ctx;
    v1::CancelRunRequest req;
    req.set_run_id(run.id());
    v1::Run cancelled;
    grpc::Status s = runs_->CancelRun(&ctx, req, &cancelled);
    EXPECT_EQ(s.error_code(), want) << s.error_message();
    if (s.ok()) {
      EXPECT_EQ(cancelled.state(), v1::RUN_STATE_CANCELLED);
    }
  }
}

TEST_F(BadRequestTest, UnknownRunIsNotFound) {
  v1::Run run;
  EXPECT_EQ(GetRun(424242, run).error_code(), grpc::StatusCode::NOT_FOUND);
}

// grpc.health.v1 answers SERVING (an empty request; the reply is field 1 = 1).
TEST_F(ClusterTest, HealthServiceAnswersServing) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  grpc::GenericStub generic(channel_);
  grpc::ClientContext ctx;
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status health;
  generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                    [&](grpc::Status st) {
                      std::lock_guard<std::mutex> lock(mu);
                      health = st;
                      done = true;
                      cv.notify_all();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  ASSERT_TRUE(health.ok()) << health.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (auto& sl : slices)
    bytes += std::string(reinterpret_cast<const char*>(sl.begin()), sl.size());
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

}  // namespace
}  // namespace arbiter
