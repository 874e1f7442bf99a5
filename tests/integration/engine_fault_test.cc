// A fault is not a game, on a real coordinator and two worker processes on loopback: an engine
// that cannot start (a misspelled path) or take its options (an unknown name, a value out of
// range) fails the run at its first job, naming the engine and the worker's message, and leaves
// no game to count or rate. CECP engines play there too.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {

using testing::NumberAfter;
using testing::Process;
using testing::RunCommand;

class EngineFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-fault-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    server_ = Process::Start({ARBITER_BINARY, "coordinator", "--listen", "127.0.0.1:0", "--data",
                              (dir_ / "data").string(), "--admin-token-file",
                              testing::AdminTokenFile(dir_, admin_secret_)},
                             (dir_ / "coordinator.log").string());
    ASSERT_TRUE(server_);
    auto line = server_->ReadLineWith("listening on port", 60);
    ASSERT_TRUE(line) << "coordinator did not start; see " << (dir_ / "coordinator.log");
    port_ = NumberAfter(*line, "listening on port ");
    ASSERT_GT(port_, 0);
    for (const std::string n : {"1", "2"}) {
      const auto token = dir_ / ("worker" + n + ".token");
      const grpc::Status created =
          testing::CreateTokenFile(Address(), admin_secret_, "w" + n, v1::ROLE_WORKER, token);
      ASSERT_TRUE(created.ok()) << created.error_message();
      workers_.push_back(Process::Start(
          {ARBITER_BINARY, "--token-file", token.string(), "worker", "--coordinator", Address(),
           "--name", "w" + n, "--wait-s", "1", "--grace-s", "2", "--engine-dir", "/usr/games",
           "--engine-dir", std::filesystem::canonical(TEST_ENGINE).parent_path().string()},
          (dir_ / ("worker" + n + ".log")).string()));
      ASSERT_TRUE(workers_.back()->ReadLineWith("health on port", 60));
    }
  }
  void TearDown() override {
    workers_.clear();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  // `arbiter ARGS --coordinator ADDRESS` with stderr into the output.
  testing::CommandOutput Arbiter(const std::string& args) {
    return RunCommand(std::string(ARBITER_BINARY) + " " + args + " --coordinator " + Address() +
                      " 2>&1");
  }

  std::filesystem::path dir_;
  std::string admin_secret_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> workers_;
  int port_ = 0;
};

// The reproduction: before, this run SUCCEEDED with four 0-move "disconnect" games that
// rated 'sf' below the builtin engine.
TEST_F(EngineFaultTest, AMisspelledEnginePathFailsTheRunAndLeavesNoGames) {
  const std::string pgn = (dir_ / "games.pgn").string();
  testing::CommandOutput played = Arbiter(
      "match --quiet --engine name=b,cmd=builtin --engine name=c,cmd=builtin,option.Hash=8 "
      "--tc depth=1 --games 2 --pgn-out " +
      pgn);
  ASSERT_EQ(played.status, 0) << played.text;

  testing::CommandOutput typo = Arbiter(
      "match --quiet --engine name=sf,cmd=/usr/games/stokfish --engine name=b,cmd=builtin "
      "--tc depth=1 --games 4");
  EXPECT_NE(typo.status, 0) << typo.text;
  EXPECT_NE(typo.text.find("FAILED"), std::string::npos) << typo.text;
  EXPECT_NE(typo.text.find("engine 'sf'"), std::string::npos) << typo.text;
  EXPECT_NE(typo.text.find("/usr/games/stokfish"), std::string::npos) << typo.text;
  EXPECT_EQ(typo.text.find("Terminations"), std::string::npos) << "no report of games";

  // No game of 'sf' anywhere: the ratings of 'sf' and 'b' name 'sf' (and only 'sf') as idle.
  testing::CommandOutput ratings = Arbiter("ratings --engines b sf");
  EXPECT_NE(ratings.status, 0) << ratings.text;
  EXPECT_NE(ratings.text.find("no finished games of 'sf'"), std::string::npos) << ratings.text;
  EXPECT_EQ(ratings.text.find("'b'"), std::string::npos) << ratings.text;
  testing::CommandOutput all = Arbiter("ratings --engines b c --json");
  ASSERT_EQ(all.status, 0) << all.text;
  v1::GetRatingsResponse rated;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(all.text, &rated).ok()) << all.text;
  EXPECT_EQ(rated.games(), 2u);
  ASSERT_EQ(rated.run_ids_size(), 1);

  // The same table from the match's PGN, without the coordinator.
  testing::CommandOutput local = RunCommand(std::string(ARBITER_BINARY) +
                                            " ratings --engines b c --json --pgn " + pgn + " 2>&1");
  ASSERT_EQ(local.status, 0) << local.text;
  v1::GetRatingsResponse from_pgn;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(local.text, &from_pgn).ok())
      << local.text;
  EXPECT_EQ(from_pgn.games(), rated.games());
  ASSERT_EQ(from_pgn.standings_size(), rated.standings_size());
  for (int i = 0; i < rated.standings_size(); ++i) {
    EXPECT_EQ(from_pgn.standings(i).name(), rated.standings(i).name());
    EXPECT_DOUBLE_EQ(from_pgn.standings(i).elo(), rated.standings(i).elo());
  }

  // 'c' again with other options is another engine: rated apart, with a warning saying so.
  testing::CommandOutput again = Arbiter(
      "match --quiet --engine name=b,cmd=builtin --engine name=c,cmd=builtin,option.Hash=16 "
      "--tc depth=1 --games 2");
  ASSERT_EQ(again.status, 0) << again.text;
  testing::CommandOutput split = Arbiter("ratings --engines b c");
  ASSERT_EQ(split.status, 0) << split.text;
  EXPECT_NE(split.text.find("warning: 'c' names 2 different engines"), std::string::npos)
      << split.text;
  EXPECT_NE(split.text.find("options Hash=16 (run 3)"), std::string::npos) << split.text;
  EXPECT_NE(split.text.find(" c#1 "), std::string::npos) << split.text;
  EXPECT_NE(split.text.find(" c#2 "), std::string::npos) << split.text;
}

// Options are checked against the engine's own list at the first job's handshake: an unknown
// name and a spin value out of range each fail the run with the list; a name in another case is
// the declared option and plays.
TEST_F(EngineFaultTest, OptionsTheEngineDoesNotTakeFailTheRunAtTheFirstJob) {
  const std::string engine = "name=t,cmd=" + std::filesystem::canonical(TEST_ENGINE).string();
  testing::CommandOutput unknown =
      Arbiter("match --quiet --engine " + engine +
              ",option.Hsh=16 --engine name=b,cmd=builtin --tc depth=1 --games 2");
  EXPECT_NE(unknown.status, 0) << unknown.text;
  EXPECT_NE(unknown.text.find("FAILED"), std::string::npos) << unknown.text;
  EXPECT_NE(unknown.text.find("engine 't'"), std::string::npos) << unknown.text;
  EXPECT_NE(unknown.text.find("no option 'Hsh'"), std::string::npos) << unknown.text;
  EXPECT_NE(unknown.text.find("Hash (spin 1..1024)"), std::string::npos) << unknown.text;

  testing::CommandOutput range =
      Arbiter("match --quiet --engine " + engine +
              ",option.Hash=99999999999 --engine name=b,cmd=builtin --tc depth=1 --games 2");
  EXPECT_NE(range.status, 0) << range.text;
  EXPECT_NE(range.text.find("out of its range 1..1024"), std::string::npos) << range.text;

  // A newline in a value would inject a UCI command: refused before anything is submitted.
  testing::CommandOutput injected =
      Arbiter("match --quiet --engine '" + engine +
              ",option.Hash=16\nquit' --engine name=b,cmd=builtin --tc depth=1 --games 2");
  EXPECT_EQ(injected.status, 2) << injected.text;
  EXPECT_NE(injected.text.find("control character"), std::string::npos) << injected.text;
}

// CECP engines on the cluster: `proto=xboard` reaches the workers (the test engine does not
// answer `uci` at all, so without it the handshake fails), its games are played without faults,
// and its own `resign` is reported as a resignation, which the coordinator's replay accepts.
TEST_F(EngineFaultTest, CecpEnginesPlayOnTheClusterAndTheirResignationsCount) {
  const std::string cecp = std::filesystem::canonical(CECP_TEST_ENGINE).string();
  testing::CommandOutput played =
      Arbiter("match --quiet --engine name=x,cmd=" + cecp +
              ",proto=xboard --engine name=b,cmd=builtin --tc depth=1 --max-moves 15 --games 2");
  ASSERT_EQ(played.status, 0) << played.text;
  EXPECT_NE(played.text.find("x: time losses 0, disconnects 0, stalls 0, illegal moves 0"),
            std::string::npos)
      << played.text;
  EXPECT_NE(played.text.find("Games: 2 "), std::string::npos) << played.text;

  testing::CommandOutput resigned =
      Arbiter("match --quiet --engine 'name=r,cmd=" + cecp +
              ",proto=xboard,args=--resign --after 1' --engine name=b,cmd=builtin --tc depth=1 "
              "--games 2");
  ASSERT_EQ(resigned.status, 0) << resigned.text;
  EXPECT_NE(resigned.text.find("Terminations: resignation 2"), std::string::npos) << resigned.text;
  EXPECT_NE(resigned.text.find("Games: 2 (W 0, D 0, L 2)"), std::string::npos) << resigned.text;

  // proto=xboard for the builtin engine is refused before anything is submitted.
  testing::CommandOutput builtin = Arbiter(
      "match --quiet --engine name=x,cmd=builtin,proto=xboard --engine name=b,cmd=builtin "
      "--tc depth=1 --games 2");
  EXPECT_EQ(builtin.status, 2) << builtin.text;
  EXPECT_NE(builtin.text.find("speaks UCI, not proto=xboard"), std::string::npos) << builtin.text;
}

// Debian's engines on the cluster: Fairy-Max (CECP, no setboard: the book positions go by
// `edit`) plays two games against Stockfish without a fault.
TEST_F(EngineFaultTest, FairyMaxPlaysStockfishOnTheClusterWithoutFaults) {
  for (const char* path : {"/usr/games/fairymax", "/usr/games/stockfish"})
    if (access(path, X_OK) != 0)
      GTEST_FAIL() << path << " not installed (scripts/install-deps.sh installs it)";
  const std::string book = (dir_ / "book.epd").string();
  std::ofstream(book) << "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5\n";
  testing::CommandOutput played = Arbiter(
      "match --quiet --engine name=fairymax,cmd=/usr/games/fairymax,proto=xboard "
      "--engine name=sf,cmd=/usr/games/stockfish --tc 2+0.05 --max-moves 25 --games 2 "
      "--openings " +
      book);
  ASSERT_EQ(played.status, 0) << played.text;
  EXPECT_NE(played.text.find("Games: 2 "), std::string::npos) << played.text;
  for (const char* clean : {"fairymax: time losses 0, disconnects 0, stalls 0, illegal moves 0",
                            "sf: time losses 0, disconnects 0, stalls 0, illegal moves 0"})
    EXPECT_NE(played.text.find(clean), std::string::npos) << played.text;
}

}  // namespace
}  // namespace arbiter
