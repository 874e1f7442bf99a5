// Engines built from source on `arbiter local` (a coordinator and two workers): a C tree with a
// Makefile plays a match under its name, plays again from the workers' build cache, and a tree
// that does not compile fails the run with the compiler's error and no game. Also a git work
// tree at a revision, and the local `arbiter match` without a coordinator.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

const fs::path kTrees = fs::path(ARBITER_PERFT_DATA).parent_path() / "source_engines";

class SourceEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / Cat("arbiter-source-", getpid()));
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
    if (RunCommand("command -v cc && command -v make").status != 0)
      GTEST_FAIL() << "no cc or make here"
                   << " (scripts/install-deps.sh installs it)";
  }

  static testing::CommandOutput Arbiter(const std::string& args, bool cluster = true) {
    return RunCommand(Cat(ARBITER_BINARY, " ", args,
                          cluster ? Cat(" --coordinator 127.0.0.1:", port_) : std::string(),
                          " 2>&1"));
  }

  static inline fs::path* dir_ = nullptr;
  static inline Process* server_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(SourceEngineTest, ATreePlaysUnderItsNameThenFromTheCacheAndABrokenTreeFails) {
  const std::string good = (kTrees / "good").string();
  const fs::path pgn = *dir_ / "tiny.pgn";
  const std::string match = Cat("match --engine name=tiny,source=", good,
                                ",build=make,binary=engine --engine name=b,cmd=builtin "
                                "--tc depth=1 --games 4 --pgn-out ",
                                pgn.string());
  testing::CommandOutput first = Arbiter(match);
  ASSERT_EQ(first.status, 0) << first.text;
  EXPECT_NE(first.text.find("Games: 4"), std::string::npos) << first.text;
  const std::string games = ReadFile(pgn);
  EXPECT_EQ(Count(games, "[White \"tiny\"]") + Count(games, "[Black \"tiny\"]"), 4u) << games;

  // Again: the same archive, built before on the workers that play it.
  testing::CommandOutput again = Arbiter(match);
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_NE(again.text.find("Games: 4"), std::string::npos) << again.text;
  const std::string log = ReadFile(*dir_ / "local.log");
  EXPECT_GE(Count(log, "built source"), 1u) << log;
  EXPECT_LE(Count(log, "built source"), 2u) << "at most once per worker: " << log;

  testing::CommandOutput broken =
      Arbiter(Cat("match --engine name=broken,source=", (kTrees / "broken").string(),
                  ",build=make,binary=engine --engine name=b,cmd=builtin --tc depth=1 --games 4"));
  EXPECT_NE(broken.status, 0) << broken.text;
  EXPECT_NE(broken.text.find("FAILED"), std::string::npos) << broken.text;
  EXPECT_NE(broken.text.find("engine 'broken'"), std::string::npos) << broken.text;
  EXPECT_NE(broken.text.find("'moves_played' undeclared"), std::string::npos) << broken.text;
  EXPECT_EQ(broken.text.find("Terminations"), std::string::npos) << "no report of games";
  // No game of it anywhere.
  testing::CommandOutput ratings = Arbiter("ratings --engines b broken");
  EXPECT_NE(ratings.text.find("no finished games of 'broken'"), std::string::npos) << ratings.text;
}

// The first run id a command's progress lines name ("run 7 running ...").
uint64_t RunIdIn(const std::string& text) {
  for (size_t at = text.find("run "); at != std::string::npos; at = text.find("run ", at + 1))
    if ((at == 0 || text[at - 1] == '\n') && std::isdigit(static_cast<unsigned char>(text[at + 4])))
      return std::strtoull(text.c_str() + at + 4, nullptr, 10);
  return 0;
}

TEST_F(SourceEngineTest, ArchivesOfTheSameFilesAreOneSourceAndPlayInATournament) {
  if (RunCommand("command -v zstd").status != 0)
    GTEST_FAIL() << "no zstd here"
                 << " (scripts/install-deps.sh installs it)";
  // The same files as a .tar.gz and a .tar.zst, each under a top directory.
  const fs::path pack = *dir_ / "pack";
  fs::create_directories(pack);
  fs::copy(kTrees / "good", pack / "tiny-1.0", fs::copy_options::recursive);
  ASSERT_EQ(std::system(Cat("cd '", pack.string(), "' && tar -czf tiny.tar.gz tiny-1.0 && ",
                            "tar --zstd -cf tiny.tar.zst tiny-1.0")
                            .c_str()),
            0);
  testing::CommandOutput played =
      Arbiter(Cat("tournament --engine name=gz,source=", (pack / "tiny.tar.gz").string(),
                  " --engine name=zst,source=", (pack / "tiny.tar.zst").string(),
                  " --engine name=b,cmd=builtin --tc depth=1 --games 2"));
  ASSERT_EQ(played.status, 0) << played.text;
  EXPECT_NE(played.text.find("gz vs zst"), std::string::npos) << played.text;
  const uint64_t run = RunIdIn(played.text);
  ASSERT_GT(run, 0u) << played.text;
  testing::CommandOutput shown = Arbiter(Cat("runs show ", run));
  ASSERT_EQ(shown.status, 0) << shown.text;
  std::vector<std::string> archives;
  for (size_t at = shown.text.find(", archive "); at != std::string::npos;
       at = shown.text.find(", archive ", at + 1))
    archives.push_back(shown.text.substr(at + 10, 64));
  ASSERT_EQ(archives.size(), 2u) << shown.text;
  EXPECT_EQ(archives[0], archives[1]) << "one content, one archive, whatever the compression";
}

TEST_F(SourceEngineTest, AGitRevisionIsTheTreeOfThatCommit) {
  // A repository whose HEAD does not compile and whose first commit does.
  const fs::path repo = *dir_ / "repo";
  fs::create_directories(repo);
  fs::copy(kTrees / "good", repo, fs::copy_options::recursive);
  const std::string commit = "git -c user.name=t -c user.email=t@t commit -q";
  ASSERT_EQ(
      std::system(Cat("cd '", repo.string(), "' && git init -q && git add -A && ", commit, "m good")
                      .c_str()),
      0);
  fs::copy_file(kTrees / "broken" / "engine.c", repo / "engine.c",
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(std::system(Cat("cd '", repo.string(), "' && ", commit, "am broken").c_str()), 0);
  testing::CommandOutput played =
      Arbiter(Cat("match --engine name=old,source=", repo.string(),
                  "@HEAD~1 --engine name=b,cmd=builtin --tc depth=1 --games 2 --json"));
  ASSERT_EQ(played.status, 0) << played.text;
  testing::CommandOutput head =
      Arbiter(Cat("match --engine name=new,source=", repo.string(),
                  "@HEAD --engine name=b,cmd=builtin --tc depth=1 --games 2"));
  EXPECT_NE(head.status, 0) << head.text;
  EXPECT_NE(head.text.find("'moves_played' undeclared"), std::string::npos) << head.text;
}

TEST_F(SourceEngineTest, ALocalMatchBuildsOnceIntoTheStateDirectory) {
  const fs::path state = *dir_ / "state";
  setenv("XDG_STATE_HOME", state.c_str(), 1);
  const std::string match = Cat("match --engine name=tiny,source=", (kTrees / "good").string(),
                                " --engine name=b,cmd=builtin --tc depth=1 --games 2");
  testing::CommandOutput first = Arbiter(match, /*cluster=*/false);
  ASSERT_EQ(first.status, 0) << first.text;
  EXPECT_NE(first.text.find("engine 'tiny': built in"), std::string::npos) << first.text;
  testing::CommandOutput again = Arbiter(match, /*cluster=*/false);
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_NE(again.text.find("engine 'tiny': built before, from the cache"), std::string::npos)
      << again.text;
  size_t binaries = 0;
  for (const auto& e : fs::directory_iterator(state / "arbiter" / "builds"))
    binaries += e.path().extension() != ".lock";
  EXPECT_EQ(binaries, 1u);
  unsetenv("XDG_STATE_HOME");
}

}  // namespace
}  // namespace arbiter
