// movegen-check and perft-diff of an engine built from source: a C perft engine
// (tests/data/source_engines/perft) checked locally and on `arbiter local` (a coordinator and two
// workers). The same tree built with `make BUG=1` has no underpromotions, and each check must
// name exactly those missing moves.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "tests/integration/process.h"

namespace arbiter {
namespace {
namespace fs = std::filesystem;

using testing::Count;
using testing::Process;
using testing::ReadFile;
using testing::RunCommand;

const std::string kTree =
    (fs::path(ARBITER_PERFT_DATA).parent_path() / "source_engines" / "perft").string();
const std::string kSuite = Cat(ARBITER_PERFT_DATA, "/standard.epd");
const std::string kGood = Cat("name=cperft,source=", kTree, ",binary=engine");
const std::string kBuggy = Cat("name=cperft,source=", kTree, ",build=make BUG=1,binary=engine");

// standard.epd at depth 3 goes wrong without underpromotions in its eight promotion positions
// (lines 119-126), each already at depth 1; every other position agrees.
const char kSuiteClean[] = "Positions: 128 asked, 128 checked, 128 clean, 0 wrong, 0 engine faults";
const char kSuiteBuggy[] = "Positions: 128 asked, 128 checked, 120 clean, 8 wrong, 0 engine faults";
const char kPromotionFailure[] =
    "  FEN:   n1n5/1Pk5/8/8/8/8/5Kp1/5N1N w - - 0 1\n"
    "  depth: 1\n"
    "  missing moves (legal, not reported): b7a8b b7a8n b7a8r b7b8b b7b8n b7b8r b7c8b b7c8n "
    "b7c8r\n"
    "  extra moves (reported, not legal): (none)\n";

// Kiwipete's descent with the bug build: the first differing move at each depth, in arbiter's
// move order, down to a black pawn on g2 that may promote on g1 or capture on h1.
const char kKiwipeteDiff[] =
    "depth 1  arbiter 52  engine 46  "
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q2/PPPBBPpP/R1K4R b kq - 1 2\n"
    "\n"
    "First difference\n"
    "  FEN:   r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q2/PPPBBPpP/R1K4R b kq - 1 2\n"
    "  depth: 1\n"
    "  path:  e1d1 h3g2 d1c1\n"
    "  missing moves (legal, not reported): g2g1b g2g1n g2g1r g2h1b g2h1n g2h1r\n"
    "  extra moves (reported, not legal): (none)\n";

class SourceMovegenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / Cat("arbiter-source-mg-", getpid()));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    unsetenv("ARBITER_TOKEN_FILE");
    // The workers' caches (engines and builds) in this test's directory, not the user's.
    setenv("TMPDIR", dir_->c_str(), 1);
    server_ = testing::StartLocal(*dir_, 2, port_).release();
    ASSERT_GT(port_, 0) << "arbiter local did not start; see " << (*dir_ / "local.log");
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override {
    // A machine that cannot build the tree has not tested anything: fail, do not skip.
    ASSERT_EQ(RunCommand("command -v cc && command -v make").status, 0) << "no cc or make here";
    ASSERT_GT(port_, 0) << "arbiter local did not start";
    // A local build cache of each test's own: each test sees its builds happen.
    state_ = *dir_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    setenv("XDG_STATE_HOME", state_.c_str(), 1);
  }

  static testing::CommandOutput Arbiter(const std::string& args, bool cluster) {
    return RunCommand(Cat(ARBITER_BINARY, " ", args,
                          cluster ? Cat(" --coordinator 127.0.0.1:", port_) : std::string(),
                          " 2>&1"));
  }
  static testing::CommandOutput MovegenCheck(const std::string& engine, bool cluster) {
    return Arbiter(
        Cat("movegen-check --engine '", engine, "' --suite ", kSuite, " --depth 3 --quiet"),
        cluster);
  }

  fs::path state_;
  static inline fs::path* dir_ = nullptr;
  static inline Process* server_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(SourceMovegenTest, ALocalCheckOfTheTreeAgreesAndItsBugBuildMissesUnderpromotions) {
  testing::CommandOutput good = MovegenCheck(kGood, /*cluster=*/false);
  ASSERT_EQ(good.status, 0) << good.text;
  EXPECT_NE(good.text.find("engine 'cperft': built in"), std::string::npos) << good.text;
  EXPECT_NE(good.text.find("Engine: cperft (dialect go-perft"), std::string::npos) << good.text;
  EXPECT_NE(good.text.find(kSuiteClean), std::string::npos) << good.text;
  EXPECT_NE(good.text.find("Clean: every count agrees"), std::string::npos) << good.text;

  testing::CommandOutput buggy = MovegenCheck(kBuggy, /*cluster=*/false);
  ASSERT_EQ(buggy.status, 1) << buggy.text;
  // Built again: another build command is another binary, not the cached good one.
  EXPECT_NE(buggy.text.find("engine 'cperft': built in"), std::string::npos) << buggy.text;
  EXPECT_NE(buggy.text.find("Engine: cperft (no underpromotion)"), std::string::npos) << buggy.text;
  EXPECT_NE(buggy.text.find(kSuiteBuggy), std::string::npos) << buggy.text;
  EXPECT_EQ(Count(buggy.text, "\nFailure "), 8u) << buggy.text;
  EXPECT_NE(buggy.text.find(kPromotionFailure), std::string::npos) << buggy.text;
  EXPECT_EQ(Count(buggy.text, "extra moves (reported, not legal): (none)"), 8u) << buggy.text;
  EXPECT_EQ(buggy.text.find("Clean:"), std::string::npos) << buggy.text;

  size_t binaries = 0;
  for (const auto& e : fs::directory_iterator(state_ / "arbiter" / "builds"))
    binaries += e.path().extension() != ".lock";
  EXPECT_EQ(binaries, 2u) << "one binary per build command";
}

// Kiwipete at depth 4: no promotion at the root, so perft-diff must descend to the position where
// a pawn promotes and name the underpromotions the buggy build leaves out.
TEST_F(SourceMovegenTest, PerftDiffDescendsToTheMissingUnderpromotionsOfTheBugBuild) {
  const std::string kiwipete =
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
  const std::string diff = Cat("perft-diff --fen '", kiwipete, "' --depth 4 --engine ");
  testing::CommandOutput good = Arbiter(Cat(diff, "'", kGood, "'"), /*cluster=*/false);
  ASSERT_EQ(good.status, 0) << good.text;
  EXPECT_NE(good.text.find("engine 'cperft': built in"), std::string::npos) << good.text;
  EXPECT_NE(good.text.find(Cat("depth 4  arbiter 4085603  engine 4085603  ", kiwipete)),
            std::string::npos)
      << good.text;
  EXPECT_NE(good.text.find("Identical: every divide count agrees at depth 4"), std::string::npos)
      << good.text;

  testing::CommandOutput buggy = Arbiter(Cat(diff, "'", kBuggy, "'"), /*cluster=*/false);
  ASSERT_EQ(buggy.status, 1) << buggy.text;
  EXPECT_NE(buggy.text.find("engine 'cperft': built in"), std::string::npos) << buggy.text;
  EXPECT_NE(buggy.text.find("Engine: cperft (no underpromotion)"), std::string::npos) << buggy.text;
  EXPECT_NE(buggy.text.find("depth 4  arbiter 4085603  engine 4074224  "), std::string::npos)
      << buggy.text;
  EXPECT_NE(buggy.text.find(kKiwipeteDiff), std::string::npos) << buggy.text;
}

TEST_F(SourceMovegenTest, OnTheClusterEachWorkerBuildsOnceAndTheBugBuildFails) {
  testing::CommandOutput good = MovegenCheck(kGood, /*cluster=*/true);
  ASSERT_EQ(good.status, 0) << good.text;
  EXPECT_NE(good.text.find("Engine: cperft (dialect go-perft"), std::string::npos) << good.text;
  EXPECT_NE(good.text.find(kSuiteClean), std::string::npos) << good.text;
  EXPECT_NE(good.text.find("Clean: every count agrees"), std::string::npos) << good.text;
  const size_t good_builds = Count(ReadFile(*dir_ / "local.log"), "('make', ");
  EXPECT_GE(good_builds, 1u);
  EXPECT_LE(good_builds, 2u) << "at most once per worker";

  // Again: each worker runs the binary it built before.
  testing::CommandOutput again = MovegenCheck(kGood, /*cluster=*/true);
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_NE(again.text.find(kSuiteClean), std::string::npos) << again.text;

  testing::CommandOutput buggy = MovegenCheck(kBuggy, /*cluster=*/true);
  ASSERT_EQ(buggy.status, 1) << buggy.text;
  EXPECT_NE(buggy.text.find("Engine: cperft (no underpromotion)"), std::string::npos) << buggy.text;
  EXPECT_NE(buggy.text.find(kSuiteBuggy), std::string::npos) << buggy.text;
  EXPECT_EQ(Count(buggy.text, "\nFailure "), 8u) << buggy.text;
  EXPECT_NE(buggy.text.find(kPromotionFailure), std::string::npos) << buggy.text;

  const std::string log = ReadFile(*dir_ / "local.log");
  EXPECT_EQ(Count(log, "('make', "), good_builds) << "built before, not again: " << log;
  EXPECT_GE(Count(log, "('make BUG=1', "), 1u) << log;
  EXPECT_LE(Count(log, "('make BUG=1', "), 2u) << "at most once per worker: " << log;
}

}  // namespace
}  // namespace arbiter
