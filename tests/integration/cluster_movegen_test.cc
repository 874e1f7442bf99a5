// movegen-check on the cluster: `arbiter movegen-check --coordinator` against `arbiter local`
// (an embedded coordinator and two workers), with the test engine's movegen bugs as path engines.
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/movegen.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"
#include "tests/integration/process.h"

namespace arbiter {
namespace {

using testing::Process;

using Output = testing::CommandOutput;
using testing::RunCommand;

// The engine as an absolute path: `--coordinator` refuses relative ones (workers resolve no
// paths), and Bazel passes it relative to the runfiles root.
const std::string& Engine() {
  static const std::string path = std::filesystem::absolute(TEST_ENGINE).string();
  return path;
}

class ClusterMovegenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     Cat("arbiter-mg-", getpid()));
    std::filesystem::remove_all(*dir_);
    std::filesystem::create_directories(*dir_);
    unsetenv("ARBITER_TOKEN_FILE");
    server_ = testing::StartLocal(*dir_, 2, port_).release();
    ASSERT_GT(port_, 0) << "arbiter local did not start; see " << (*dir_ / "local.log");
  }
  static void TearDownTestSuite() {
    delete server_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  // The result of a movegen-check run of the test engine with `args` over `suite`.
  v1::MovegenCheckResult Check(const std::string& args, const std::string& suite, uint64_t budget,
                               int expected_status) {
    Output out =
        RunCommand(Cat(ARBITER_BINARY, " movegen-check --json --coordinator 127.0.0.1:", port_,
                       " --engine '", Engine(), " ", args, "' --suite ", ARBITER_PERFT_DATA, "/",
                       suite, " --max-nodes ", budget));
    EXPECT_EQ(out.status, expected_status) << out.text;
    v1::MovegenCheckResult r;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(out.text, &r).ok()) << out.text;
    return r;
  }

  static inline std::filesystem::path* dir_ = nullptr;
  static inline Process* server_ = nullptr;
  static inline int port_ = 0;
};

struct Bug {
  std::string name, suite;
  uint64_t budget;
  std::string fen, missing, extra;  // the smallest example and its moves (space separated)
};

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::vector<std::string> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  std::string out;
  for (const auto& m : s) out += Cat(out.empty() ? "" : " ", m);
  return out;
}

TEST_F(ClusterMovegenTest, EveryBugIsFoundWithItsSmallestExample) {
  const Bug bugs[] = {
      {"no-ep-evasion", "standard.epd", 3000000, "8/8/3p4/1Pp4r/1K3p2/6k1/4P1P1/1R6 w - c6 0 3",
       "b5c6", ""},
      {"castle-through-check", "standard.epd", 200000, "r3k2r/8/8/8/8/8/8/3RK2R b Kkq - 1 1", "",
       "e8c8"},
      {"keep-castling-rights", "standard.epd", 200000, "K3k3/8/8/8/8/8/8/8 b - - 0 1", "", "e8c8"},
      {"no-underpromotion", "standard.epd", 200000, "k7/8/8/3p4/8/8/4p3/6K1 b - - 1 3",
       "e2e1b e2e1n e2e1r", ""},
      {"ep-rank-pin", "standard.epd", 200000, "8/2p5/3p4/KP5r/1R2Pp1k/8/6P1/8 b - e3 0 1", "",
       "f4e3"},
      {"c960-king-on-rook-square", "fischer960.epd", 20000,
       "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", "f1g1", ""},
  };
  for (const Bug& b : bugs) {
    v1::MovegenCheckResult r = Check(Cat("--movegen-bug ", b.name), b.suite, b.budget, 1);
    EXPECT_EQ(r.positions_checked(), r.positions()) << b.name;
    EXPECT_EQ(r.positions_faulted(), 0u) << b.name;
    bool found = false;
    for (const v1::MovegenFailure& f : r.failures())
      if (f.fen() == b.fen) {
        found = true;
        EXPECT_EQ(Join(f.missing_moves()), b.missing) << b.name;
        EXPECT_EQ(Join(f.extra_moves()), b.extra) << b.name;
        EXPECT_EQ(f.depth(), 1u);
      }
    EXPECT_TRUE(found) << b.name << ": no failure at " << b.fen;
  }
}

TEST_F(ClusterMovegenTest, CorrectEngineIsClean) {
  for (const char* suite : {"standard.epd", "fischer960.epd"}) {
    v1::MovegenCheckResult r = Check("", suite, 20000, 0);
    EXPECT_GT(r.positions(), 100u);
    EXPECT_EQ(r.positions_clean(), r.positions());
    EXPECT_GT(r.nodes_compared(), 0u);
  }
}

// One deep position: the coordinator splits it by root move over the workers and adds the parts
// up into the one position, exact.
TEST_F(ClusterMovegenTest, ADeepPositionIsSplitAndCountedWhole) {
  Output out = RunCommand(Cat(
      ARBITER_BINARY, " movegen-check --json --coordinator 127.0.0.1:", port_, " --engine '",
      Engine(),
      "' --fen 'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1' --depth 4"));
  ASSERT_EQ(out.status, 0) << out.text;
  v1::MovegenCheckResult r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.text, &r).ok()) << out.text;
  EXPECT_EQ(r.positions(), 1u);
  EXPECT_EQ(r.positions_checked(), 1u);
  EXPECT_EQ(r.positions_clean(), 1u);
  EXPECT_EQ(r.nodes_compared(), 4085603u);  // Kiwipete perft(4)
  EXPECT_EQ(r.positions_split(), 1u);
  EXPECT_EQ(r.parts(), 48u);
}

// A bug under a split position is reported from the position itself (its FEN, and the path
// from it through the part's move), as the unsplit local check reports it.
TEST_F(ClusterMovegenTest, ABugInASplitPositionIsReportedFromThePosition) {
  const std::string fen = "r3k2r/8/1N6/8/8/8/8/4K3 w kq - 0 1";
  v1::MovegenCheckResult results[2];
  for (int cluster = 0; cluster < 2; ++cluster) {
    Output out = RunCommand(
        Cat(ARBITER_BINARY, " movegen-check --json ",
            cluster ? Cat("--coordinator 127.0.0.1:", port_) : std::string(), " --engine '",
            Engine(), " --movegen-bug keep-castling-rights' --fen '", fen, "' --depth 3"));
    ASSERT_EQ(out.status, 1) << out.text;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.text, &results[cluster]).ok())
        << out.text;
  }
  const v1::MovegenCheckResult& local = results[0];
  const v1::MovegenCheckResult& split = results[1];
  EXPECT_EQ(local.parts(), 0u);
  EXPECT_EQ(split.positions_split(), 1u);
  EXPECT_EQ(split.positions(), 1u);
  EXPECT_EQ(split.positions_checked(), 1u);
  EXPECT_EQ(split.positions_clean(), 0u);
  EXPECT_EQ(split.nodes_compared(), local.nodes_compared());
  ASSERT_EQ(split.failures_size(), 1);
  ASSERT_EQ(local.failures_size(), 1);
  const v1::MovegenFailure& f = split.failures(0);
  EXPECT_EQ(f.root_fen(), fen);
  EXPECT_EQ(f.positions(), 1u);
  ASSERT_GE(f.path_size(), 1);
  // Smallest example: no longer a path than the unsplit descent's, and the same kind of bug.
  EXPECT_LE(f.path_size(), local.failures(0).path_size());
  EXPECT_EQ(Join(f.extra_moves()), Join(local.failures(0).extra_moves()));
  EXPECT_EQ(Join(f.missing_moves()), Join(local.failures(0).missing_moves()));
}

// The worker keeps the engine running from one job of a run to the next: a run of eight jobs on
// two workers starts it at most twice (a wrapper script notes each start).
TEST_F(ClusterMovegenTest, TheEngineStartsOncePerWorkerNotOncePerJob) {
  const std::filesystem::path starts = *dir_ / "starts";
  const std::filesystem::path wrapper = *dir_ / "counted-engine.sh";
  {
    FILE* f = fopen(wrapper.c_str(), "w");
    ASSERT_TRUE(f);
    fprintf(f, "#!/bin/sh\necho started >> '%s'\nexec '%s' \"$@\"\n", starts.c_str(),
            Engine().c_str());
    fclose(f);
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  }
  v1::MovegenCheckResult r;
  Output out = RunCommand(
      Cat(ARBITER_BINARY, " movegen-check --json --coordinator 127.0.0.1:", port_, " --engine '",
          wrapper.string(), "' --suite ", ARBITER_PERFT_DATA, "/standard.epd --max-nodes 20000"));
  ASSERT_EQ(out.status, 0) << out.text;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.text, &r).ok()) << out.text;
  EXPECT_EQ(r.positions_clean(), r.positions());
  Output lines = RunCommand(Cat("wc -l < '", starts.string(), "'"));
  const int started = std::atoi(lines.text.c_str());
  EXPECT_GE(started, 1);
  EXPECT_LE(started, 2) << "the engine was started for each job";
  // The run had more jobs than that (four per connected worker): the newest run's counts.
  Output list =
      RunCommand(Cat(ARBITER_BINARY, " runs list --json --coordinator 127.0.0.1:", port_));
  v1::ListRunsResponse runs;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(list.text, &runs).ok()) << list.text;
  const v1::Run* newest = nullptr;
  for (const v1::Run& run : runs.runs())
    if (!newest || run.id() > newest->id()) newest = &run;
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->jobs().total(), 8u);
}

TEST_F(ClusterMovegenTest, AnEngineThatDoesNotSpeakTheDialectFailsTheRunAtOnce) {
  Output out =
      RunCommand(Cat(ARBITER_BINARY, " movegen-check --quiet --coordinator 127.0.0.1:", port_,
                     " --engine '", Engine(),
                     " --perft-dialect search' --fen '4k3/8/8/8/8/8/8/4K3 w - - 0 1' "
                     "--depth 3 --timeout-s 3600 2>&1"));
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_NE(out.text.find("FAILED"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("answered `bestmove"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("--dialect perft, custom"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace arbiter
