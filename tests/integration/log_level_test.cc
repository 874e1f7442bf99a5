// The global `--log-level` flag on the real binary: `arbiter local` runs a small distributed perft
// at each level and its log (stderr) shows what the level lets through; an unknown level is
// refused before anything runs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "tests/integration/process.h"

namespace arbiter {
namespace {

using testing::NumberAfter;
using testing::Process;

using Output = testing::CommandOutput;
using testing::ReadFile;
using testing::RunCommand;

class LogLevelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / Cat("arbiter-log-level-", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    unsetenv("ARBITER_TOKEN_FILE");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The whole log of `arbiter LEVEL_ARGS local` (one worker) that ran a perft(3) of the start
  // position in 16 jobs and was then stopped with SIGTERM.
  std::string LocalLog(const std::vector<std::string>& level_args) {
    const std::filesystem::path data = dir_ / "data", log = dir_ / "local.log";
    std::filesystem::remove_all(data);
    std::vector<std::string> args = {ARBITER_BINARY};
    args.insert(args.end(), level_args.begin(), level_args.end());
    for (const char* a : {"local", "--workers", "1", "--listen", "127.0.0.1:0", "--data"})
      args.emplace_back(a);
    args.push_back(data.string());
    std::unique_ptr<Process> local = Process::Start(args, log.string());
    EXPECT_TRUE(local) << "arbiter local did not start";
    if (!local) return "";
    std::optional<std::string> line = local->ReadLineWith("coordinator on 127.0.0.1:", 60);
    EXPECT_TRUE(line) << "arbiter local did not come up:\n" << ReadFile(log);
    if (line) {
      const int port = NumberAfter(*line, "coordinator on 127.0.0.1:");
      Output perft = RunCommand(Cat(ARBITER_BINARY, " perft --coordinator 127.0.0.1:", port,
                                    " --startpos --depth 3 --jobs 16 2>&1"));
      EXPECT_EQ(perft.status, 0) << perft.text;
      EXPECT_NE(perft.text.find("8902"), std::string::npos) << perft.text;
    }
    local->Signal(SIGTERM);
    EXPECT_EQ(local->Wait(), 0);
    return ReadFile(log);
  }

  std::filesystem::path dir_;
};

// The workers' per-job lines are debug: absent by default, there with `--log-level debug`.
TEST_F(LogLevelTest, DebugShowsTheJobLinesThatTheDefaultLeavesOut) {
  const std::string normal = LocalLog({});
  EXPECT_NE(normal.find("[info] coordinator listening on port"), std::string::npos) << normal;
  EXPECT_NE(normal.find("[info] run 1: succeeded, 8902 nodes"), std::string::npos) << normal;
  EXPECT_EQ(normal.find("[debug]"), std::string::npos) << normal;

  const std::string debug = LocalLog({"--log-level", "debug"});
  EXPECT_NE(debug.find("[info] coordinator listening on port"), std::string::npos) << debug;
  EXPECT_NE(debug.find("[debug] job 1: "), std::string::npos) << debug;
  EXPECT_NE(debug.find("[debug] job 16: "), std::string::npos) << debug;
}

// `--log-level error` leaves out the info lines that the default prints (the test above).
TEST_F(LogLevelTest, ErrorLeavesOutTheInfoLines) {
  const std::string error = LocalLog({"--log-level", "error"});
  EXPECT_EQ(error.find("[info]"), std::string::npos) << error;
  EXPECT_EQ(error.find("[debug]"), std::string::npos) << error;
}

// An unknown level: a non-zero exit with the flag, the value and the levels there are on stderr,
// and the command does not run.
TEST_F(LogLevelTest, AnUnknownLevelIsRefusedWithTheLevelsThereAre) {
  const std::filesystem::path err = dir_ / "stderr";
  Output o = RunCommand(
      Cat(ARBITER_BINARY, " --log-level loud perft --startpos --depth 1 2>", err.string()));
  const std::string stderr_text = ReadFile(err);
  EXPECT_NE(o.status, 0) << stderr_text;
  EXPECT_NE(stderr_text.find("--log-level: loud not in {trace,debug,info,warn,error,off}"),
            std::string::npos)
      << stderr_text;
  EXPECT_EQ(o.text, "") << "perft ran anyway";
}

}  // namespace
}  // namespace arbiter
