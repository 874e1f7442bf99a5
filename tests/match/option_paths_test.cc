// String options that name files: under the limits-only box (no filesystem confinement) a value
// may name only the engine's own directory or a directory the worker allows; under the confining
// boxes and without a box it is the engine's business. With Debian's Stockfish, whose `Debug Log
// File` writes wherever it is told: a host path is refused before any option is sent, and nothing
// is written; a name inside its directory works.
#include "match/option_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/strings.h"
#include "match/uci_engine.h"

namespace arbiter::match {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStockfish = "/usr/games/stockfish";

class OptionPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            Cat("arbiter-option-paths-", getpid(), "-",
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "engine");
    fs::create_directories(root_ / "tables" / "6");
  }
  void TearDown() override { fs::remove_all(root_); }
  // `allowed`: besides the engine's own directory, which is its working directory.
  absl::Status Check(std::string_view value, Isolation isolation = Isolation::kLimits,
                     std::vector<std::string> allowed = {}) {
    allowed.push_back((root_ / "engine").string());
    return CheckOptionPath(log_, value, isolation, (root_ / "engine").string(), allowed);
  }

  fs::path root_;
  const UciOption log_{.name = "Debug Log File", .type = "string"};
};

TEST_F(OptionPathsTest, NamesInsideTheEnginesDirectoryAreAllowed) {
  EXPECT_TRUE(Check("").ok());
  EXPECT_TRUE(Check("<empty>").ok());
  EXPECT_TRUE(Check("engine.log").ok());
  EXPECT_TRUE(Check("logs/engine.log").ok());
  EXPECT_TRUE(Check((root_ / "engine" / "x.log").string()).ok());
  EXPECT_TRUE(Check("GM Carlsen, 2850").ok()) << "a string that is no path names a file inside";
}

TEST_F(OptionPathsTest, HostPathsAreRefusedUnderLimitsOnly) {
  const absl::Status st = Check("/tmp/x");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Debug Log File"), std::string::npos) << st;
  EXPECT_NE(st.message().find("--sandbox limits"), std::string::npos) << st;
  EXPECT_FALSE(Check("../x").ok());
  EXPECT_FALSE(Check("logs/../../x").ok());
  EXPECT_FALSE(Check((root_ / "engine-other" / "x").string()).ok()) << "a prefix is no parent";
  EXPECT_FALSE(Check("engine.log:/etc").ok()) << "each part of a path list";
  // A working directory of its own (EngineSpec.dir) is not the engine's to write.
  EXPECT_FALSE(CheckOptionPath(log_, "x.log", Isolation::kLimits, (root_ / "tables").string(),
                               {(root_ / "engine").string()})
                   .ok());
  // A symlink inside that leads outside is followed.
  fs::create_directory_symlink("/etc", root_ / "engine" / "out");
  EXPECT_FALSE(Check("out/passwd").ok());
}

TEST_F(OptionPathsTest, AllowedDirectoriesAndOtherBoxesAndTypes) {
  const std::string tables = (root_ / "tables").string();
  EXPECT_TRUE(Check(Cat(tables, ":", tables, "/6"), Isolation::kLimits, {tables}).ok());
  EXPECT_FALSE(Check(Cat(tables, ":/etc"), Isolation::kLimits, {tables}).ok());
  for (Isolation confined : {Isolation::kNone, Isolation::kLandlock, Isolation::kNamespaces})
    EXPECT_TRUE(Check("/tmp/x", confined).ok()) << IsolationName(confined);
  const UciOption hash{.name = "Hash", .type = "spin"};
  EXPECT_TRUE(
      CheckOptionPath(hash, "/16", Isolation::kLimits, (root_ / "engine").string(), {}).ok());
}

TEST_F(OptionPathsTest, StockfishsDebugLogFileUnderLimitsOnly) {
  if (access(kStockfish, X_OK) != 0) GTEST_SKIP() << kStockfish << " is not installed";
  const fs::path outside = root_ / "written-by-the-engine.log";
  const SandboxOptions box{.isolation = Isolation::kLimits, .root_drops_to = -1};
  UciEngine refused(
      EngineSpec{
          .name = "sf", .cmd = kStockfish, .options = {{"Debug Log File", outside.string()}}},
      {}, {}, {}, box);
  const absl::Status st = refused.Start();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("sf: option Debug Log File="), std::string::npos) << st;
  refused.Quit();
  EXPECT_FALSE(fs::exists(outside)) << "the engine wrote a host file";

  // Inside its own directory the option works (the engine writes its log there).
  UciEngine kept(
      EngineSpec{.name = "sf", .cmd = kStockfish, .options = {{"Debug Log File", "sf.log"}}}, {},
      {}, {}, box);
  ASSERT_TRUE(kept.Start().ok());
  kept.Quit();
  EXPECT_FALSE(fs::exists(outside));
}

}  // namespace
}  // namespace arbiter::match
