// Engines of their own users (match/engine_users.h): the range parses; users are held against
// this and other processes; as root, one engine's fork bomb leaves another engine free to start,
// and an engine's leftover processes die with its user.
#include "match/engine_users.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "base/strings.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"

namespace arbiter::match {
namespace {

TEST(EngineUsers, RangesParseAndBadOnesAreRefused) {
  absl::StatusOr<UidRange> r = ParseUidRange("2000000000-2000000255");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, 2000000000u);
  EXPECT_EQ(r->count, 256u);
  EXPECT_EQ(UidRangeText(*r), "2000000000-2000000255");
  EXPECT_EQ(ParseUidRange("none")->count, 0u);
  for (const char* bad : {"", "5", "0-10", "20-10", "1000-70000", "x-y", "1000-4294967295"})
    EXPECT_FALSE(ParseUidRange(bad).ok()) << bad;
}

// The number of processes of `uid` on this host.
int ProcessesOf(uid_t uid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    struct stat st;
    if (std::isdigit(static_cast<unsigned char>(e.path().filename().string()[0])) &&
        stat(e.path().c_str(), &st) == 0 && st.st_uid == uid)
      ++n;
  }
  return n;
}

class EngineUsersAsRoot : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "engine users are a root worker's";
    // A range of this test's own: other tests' engines use the default one at the same time.
    range_ = UidRange{2100000000u + uint32_t(getpid() % 100000) * 4, 4};
    ConfigureEngineUsers(range_);
  }
  void TearDown() override { ConfigureEngineUsers(kDefaultEngineUids); }
  UidRange range_;
};

TEST_F(EngineUsersAsRoot, UsersAreHeldUntilReleasedAlsoAgainstAnotherProcess) {
  std::vector<uid_t> held;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::optional<uid_t>> u = AcquireEngineUser();
    ASSERT_TRUE(u.ok() && u->has_value()) << u.status();
    held.push_back(**u);
  }
  EXPECT_EQ(held, (std::vector<uid_t>{range_.first, range_.first + 1, range_.first + 2,
                                      range_.first + 3}));
  EXPECT_EQ(AcquireEngineUser().status().code(), absl::StatusCode::kResourceExhausted);
  // Another process with the same range finds them all taken too.
  const pid_t child = fork();
  if (child == 0) {
    ConfigureEngineUsers(range_);
    _exit(AcquireEngineUser().status().code() == absl::StatusCode::kResourceExhausted ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "another process got a user this one holds";
  ReleaseEngineUser(held[2]);
  absl::StatusOr<std::optional<uid_t>> again = AcquireEngineUser();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(**again, held[2]);
  for (uid_t u : held) ReleaseEngineUser(u);
}

// With one user for every engine, RLIMIT_NPROC counts them all: while one engine's fork bomb
// held the limit, the next engine could not fork or start a thread.
TEST_F(EngineUsersAsRoot, OneEnginesForkBombLeavesTheNextEngineFreeToFork) {
  SandboxOptions box{.isolation = Isolation::kLimits};
  box.limits.processes = 16;
  box.limits.memory_mb = kSanitizerBuild ? 0 : 256;
  UciEngine bomb(EngineSpec{.name = "bomb", .cmd = TEST_ENGINE, .args = {"--fork-bomb", "64"}}, {},
                 {}, {}, box);
  ASSERT_TRUE(bomb.Start().ok());
  ASSERT_TRUE(bomb.NewGame(false).ok());
  (void)bomb.Send("position startpos");
  (void)bomb.Send("go wtime 10000 btime 10000");
  std::vector<OutputLine> lines;
  ASSERT_NE(bomb.ReadUntilBestmove(SteadyClock::now() + std::chrono::seconds(20), lines),
            ReadResult::kEof);
  const uid_t bomb_uid = range_.first;
  EXPECT_GE(ProcessesOf(bomb_uid), 10) << "the bomb's sleepers hold its user's processes";

  // The next engine forks (as Stockfish starts its search threads, which count too).
  UciEngine next(EngineSpec{.name = "next", .cmd = TEST_ENGINE, .args = {"--fork-bomb", "2"}}, {},
                 {}, {}, box);
  ASSERT_TRUE(next.Start().ok());
  ASSERT_TRUE(next.NewGame(false).ok());
  (void)next.Send("position startpos");
  (void)next.Send("go wtime 10000 btime 10000");
  lines.clear();
  ASSERT_NE(next.ReadUntilBestmove(SteadyClock::now() + std::chrono::seconds(20), lines),
            ReadResult::kEof);
  std::string forked = "no report";
  for (const OutputLine& l : lines)
    if (l.text.starts_with("info string fork-bomb ")) forked = l.text.substr(22);
  EXPECT_EQ(forked, "ok") << "the next engine could not fork: its user is not its own";
  EXPECT_GE(ProcessesOf(range_.first + 1), 3) << "the next engine runs as a user of its own";
  next.Quit();

  // Its user's processes (the sleepers, whatever session they made) die with the engine.
  bomb.Quit();
  EXPECT_EQ(ProcessesOf(bomb_uid), 0);
}

}  // namespace
}  // namespace arbiter::match
