// Issue 17's engine checks and fair clocks with real processes on loopback: a coordinator, workers
// (`arbiter worker`) and the CLI. A declared bench signature that differs on the workers gets the
// job refused and the workers flagged; the right one plays and the run shows the engines' sha256
// and signatures; an engine whose bench hangs or prints garbage is a refusal naming the cause.
// Scaled clocks: two workers of different (injected) speed record different clocks in the PGN;
// a zero, negative or huge reference speed is refused at submit.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "net/client.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/worker.pb.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {

using testing::Count;
using testing::NumberAfter;
using testing::Process;
using testing::ReadFile;

// The test engine's real path: Bazel gives one relative to the runfiles root, through a symlink
// that leaves the engine's folder, and workers resolve symlinks before they check --engine-dir.
std::string EnginePath() { return std::filesystem::canonical(TEST_ENGINE).string(); }

// The test engine as a `path` engine on the cluster, with its bench behaviour in `args`.
std::string TestEngine(const std::string& name, const std::string& args,
                       const std::string& more = "") {
  return "name=" + name + ",cmd=" + EnginePath() + (args.empty() ? "" : " " + args) + more;
}

class FairPlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-fp-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    server_ = Process::Start({ARBITER_BINARY, "coordinator", "--listen", "127.0.0.1:0", "--data",
                              (dir_ / "data").string(), "--lease-s", "10", "--admin-token-file",
                              testing::AdminTokenFile(dir_, admin_secret_)},
                             (dir_ / "coordinator.log").string());
    ASSERT_TRUE(server_);
    auto line = server_->ReadLineWith("listening on port", 60);
    ASSERT_TRUE(line) << "coordinator did not start; see " << (dir_ / "coordinator.log");
    port_ = NumberAfter(*line, "listening on port ");
    ASSERT_GT(port_, 0);
    stub_ = v1::RunService::NewStub(
        net::Dial(Address(), net::ClientCredentials{admin_secret_, "", "", ""}));
  }
  void TearDown() override {
    workers_.clear();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // A worker named wN that may start engines from the test engine's directory; `extra` flags.
  void StartWorker(std::vector<std::string> extra = {}) {
    const std::string n = std::to_string(workers_.size() + 1);
    const auto token = dir_ / ("worker" + n + ".token");
    const grpc::Status created =
        testing::CreateTokenFile(Address(), admin_secret_, "w" + n, v1::ROLE_WORKER, token);
    ASSERT_TRUE(created.ok()) << created.error_message();
    std::vector<std::string> args = {
        ARBITER_BINARY,  "--token-file",
        token.string(),  "worker",
        "--coordinator", Address(),
        "--name",        "w" + n,
        "--wait-s",      "1",
        "--grace-s",     "2",
        "--threads",     "1",
        "--engine-dir",  std::filesystem::path(EnginePath()).parent_path().string(),
        "--cache",       (dir_ / ("cache" + n)).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    workers_.push_back(Process::Start(args, (dir_ / ("worker" + n + ".log")).string()));
    ASSERT_TRUE(workers_.back()->ReadLineWith("health on port", 60));
    // Registered once the coordinator lists it.
    for (int i = 0; i < 600 && Workers().workers_size() < int(workers_.size()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(Workers().workers_size(), int(workers_.size()));
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  v1::ListWorkersResponse Workers() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListWorkersResponse resp;
    (void)stub_->ListWorkers(&ctx, v1::ListWorkersRequest(), &resp);
    return resp;
  }

  // The newest run.
  // The newest run, whole (the list carries summaries only: no refusals or engine reports).
  v1::Run NewestRun() {
    v1::ListRunsResponse resp;
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      EXPECT_TRUE(stub_->ListRuns(&ctx, v1::ListRunsRequest(), &resp).ok());
    }
    if (resp.runs_size() == 0) return v1::Run();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetRunRequest get;
    get.set_run_id(resp.runs(0).id());
    v1::Run run;
    EXPECT_TRUE(stub_->GetRun(&ctx, get, &run).ok());
    return run;
  }

  // Runs the CLI to the end: its exit code, stdout in `out`, stderr in cli.log.
  int Cli(std::vector<std::string> args, std::string& out) {
    args.insert(args.begin(), ARBITER_BINARY);
    auto p = Process::Start(args, (dir_ / "cli.log").string());
    out = p->ReadAll();
    return p->Wait();
  }
  std::vector<std::string> MatchArgs(const std::string& first, const std::string& second) {
    return {"match",   "--engine", first,     "--engine",      second,    "--tc",        "depth=1",
            "--games", "2",        "--quiet", "--coordinator", Address(), "--max-moves", "10"};
  }

  std::filesystem::path dir_;
  std::string admin_secret_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> workers_;
  std::unique_ptr<v1::RunService::Stub> stub_;
  int port_ = 0;
};

// Both workers measure 555 where 999 was declared: each refuses the job and is flagged, and with
// nobody left to play it the run fails naming the numbers. Declared right, the same engine plays
// and the run shows its sha256 and both signatures.
TEST_F(FairPlayTest, DifferentBenchSignatureIsRefusedAndFlagged) {
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  std::string out;
  EXPECT_NE(
      Cli(MatchArgs(TestEngine("dev", "--bench-nodes 555", ",bench=999"), TestEngine("base", "")),
          out),
      0)
      << out << ReadFile(dir_ / "cli.log");
  v1::Run failed = NewestRun();
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED) << failed.DebugString();
  EXPECT_NE(failed.message().find("bench signature 555 differs from the declared 999"),
            std::string::npos)
      << failed.message();
  ASSERT_EQ(failed.refusals_size(), 2) << failed.DebugString();
  std::set<std::string> refused;
  for (const v1::EngineRefusal& r : failed.refusals()) {
    refused.insert(r.worker_name());
    EXPECT_EQ(r.engine(), "dev");
    EXPECT_EQ(r.declared_bench(), 999u);
    EXPECT_EQ(r.measured_bench(), 555u);
  }
  EXPECT_EQ(refused, (std::set<std::string>{"w1", "w2"}));
  const v1::ListWorkersResponse flagged = Workers();
  for (const v1::WorkerStatus& w : flagged.workers()) {
    ASSERT_EQ(w.flags_size(), 1) << w.DebugString();
    EXPECT_NE(w.flags(0).find("engine 'dev': bench signature 555 differs from the declared 999"),
              std::string::npos)
        << w.flags(0);
  }
  EXPECT_EQ(Cli({"workers", "--coordinator", Address()}, out), 0);
  EXPECT_EQ(Count(out, "[flagged]"), 2u) << out;

  // Declared right: it plays, and the run shows what the workers ran.
  ASSERT_EQ(
      Cli(MatchArgs(TestEngine("dev", "--bench-nodes 555", ",bench=555"), TestEngine("base", "")),
          out),
      0)
      << out << ReadFile(dir_ / "cli.log");
  const v1::Run played = NewestRun();
  EXPECT_EQ(played.state(), v1::RUN_STATE_SUCCEEDED) << played.DebugString();
  EXPECT_EQ(played.match().result().games(), 2u);
  ASSERT_EQ(played.engines_size(), 2);
  const v1::RunEngine& dev = played.engines(0);
  EXPECT_EQ(dev.name(), "dev");
  EXPECT_EQ(dev.source(), "path");
  EXPECT_EQ(dev.declared_bench(), 555u);
  EXPECT_EQ(dev.measured_bench(), 555u);
  EXPECT_EQ(dev.sha256().size(), 64u) << dev.DebugString();
  EXPECT_EQ(played.engines(1).declared_bench(), 0u);
  EXPECT_EQ(played.engines(1).sha256(), dev.sha256());  // the same binary
  EXPECT_EQ(Cli({"runs", "show", std::to_string(played.id()), "--coordinator", Address()}, out), 0);
  EXPECT_NE(out.find("Engine dev: path " + EnginePath() + ", sha256 " + dev.sha256() +
                     ", bench declared 555, measured 555"),
            std::string::npos)
      << out;
  EXPECT_EQ(
      Cli({"runs", "show", std::to_string(played.id()), "--json", "--coordinator", Address()}, out),
      0);
  EXPECT_NE(out.find("\"declared_bench\":\"555\""), std::string::npos) << out;
}

// An engine whose bench never finishes is killed at the worker's --bench-timeout-s, one that prints
// garbage is refused as such: clear refusals with their cause, not a hang.
TEST_F(FairPlayTest, HangingOrGarbageBenchIsAClearRefusal) {
  ASSERT_NO_FATAL_FAILURE(StartWorker({"--bench-timeout-s", "2"}));
  std::string out;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(
      Cli(MatchArgs(TestEngine("hang", "--bench-hang", ",bench=1"), TestEngine("b", "")), out), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  v1::Run run = NewestRun();
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'hang': bench did not finish within 2 s (killed)"),
            std::string::npos)
      << run.message();

  EXPECT_NE(
      Cli(MatchArgs(TestEngine("junk", "--bench-garbage", ",bench=1"), TestEngine("b", "")), out),
      0);
  run = NewestRun();
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'junk': bench: bad bench summary line"), std::string::npos)
      << run.message();
  EXPECT_NE(run.message().find("exited with code 3"), std::string::npos) << run.message();
}

// Two workers at half and twice the reference speed: each scales both clocks (10+0.1 at 1 Mnps
// becomes 20+0.2 and 5+0.05), the PGN records the clock used and the scale, the run the spread.
TEST_F(FairPlayTest, ScaledClocksDifferByWorkerSpeed) {
  ASSERT_NO_FATAL_FAILURE(StartWorker({"--measured-nps", "500000"}));
  ASSERT_NO_FATAL_FAILURE(StartWorker({"--measured-nps", "2000000"}));
  const std::string pgn = (dir_ / "games.pgn").string();
  std::string out;
  ASSERT_EQ(Cli({"match",
                 "--engine",
                 TestEngine("a", ""),
                 "--engine",
                 TestEngine("b", ""),
                 "--tc",
                 "10+0.1",
                 "--scale-nps",
                 "1000000",
                 "--games",
                 "8",
                 "--pairs-per-job",
                 "1",
                 "--max-moves",
                 "10",
                 "--quiet",
                 "--coordinator",
                 Address(),
                 "--pgn",
                 pgn},
                out),
            0)
      << out << ReadFile(dir_ / "cli.log");
  const std::string games = ReadFile(pgn);
  EXPECT_EQ(Count(games, "[TimeControl \"20+0.2\"]") + Count(games, "[TimeControl \"5+0.05\"]"), 8u)
      << games;
  EXPECT_GE(Count(games, "[TimeControl \"20+0.2\"]"), 2u) << games;
  EXPECT_GE(Count(games, "[TimeControl \"5+0.05\"]"), 2u) << games;
  EXPECT_NE(games.find("[TimeControlScale \"2.0000 (reference 1000000 nps, measured 500000 nps by "
                       "--measured-nps; unscaled 10+0.1)\"]"),
            std::string::npos)
      << games;
  EXPECT_NE(games.find("[TimeControlScale \"0.5000 (reference 1000000 nps, measured 2000000 nps"),
            std::string::npos);
  const v1::Run run = NewestRun();
  EXPECT_EQ(run.clock_scale().reference_nps(), 1000000);
  EXPECT_EQ(run.clock_scale().workers(), 2u);
  EXPECT_DOUBLE_EQ(run.clock_scale().min_factor(), 0.5);
  EXPECT_DOUBLE_EQ(run.clock_scale().max_factor(), 2.0);
  EXPECT_EQ(Cli({"runs", "show", std::to_string(run.id()), "--coordinator", Address()}, out), 0);
  EXPECT_NE(out.find("Clocks: scaled to 1000000 nodes/s; 2 workers, scale 0.5000..2.0000 "
                     "(measured 500000..2000000 nodes/s)"),
            std::string::npos)
      << out;
}

// A reference speed of zero, below zero or beyond any machine is refused at submit, naming it.
TEST_F(FairPlayTest, BadScaleNpsIsInvalidArgument) {
  for (const char* nps : {"0", "-5", "100000000000000"}) {
    std::string out;
    EXPECT_EQ(
        Cli({"match", "--engine", TestEngine("a", ""), "--engine", TestEngine("b", ""), "--tc",
             "10+0.1", "--scale-nps", nps, "--games", "2", "--quiet", "--coordinator", Address()},
            out),
        2)
        << nps;
    const std::string log = ReadFile(dir_ / "cli.log");
    EXPECT_NE(log.find(std::string("scale_nps (the reference speed of scaled clocks) must be "
                                   "1000..10000000000 nodes/s, got ") +
                       nps),
              std::string::npos)
        << log;  // exit 2: INVALID_ARGUMENT
  }
  // And through the API, a tournament too.
  v1::SubmitTournamentRequest req;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec& e = *req.mutable_settings()->add_engines();
    e.set_name(name);
    e.set_builtin(true);
  }
  req.mutable_settings()->set_tc("10+0.1");
  req.set_games_per_pairing(2);
  req.mutable_settings()->set_scale_nps(0);
  grpc::ClientContext ctx;
  v1::SubmitRunResponse resp;
  const grpc::Status s = stub_->SubmitTournament(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
}

}  // namespace
}  // namespace arbiter
