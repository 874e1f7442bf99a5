// The `arbiter` binary's habits as a command line: usage errors exit 2 naming the unknown option
// (with a hint for cutechess/fastchess spellings), --help and --version exit 0, every command
// takes a bare engine path, and progress written into a file has no carriage returns.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/strings.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace arbiter {
namespace {

struct Output {
  int exit_code;
  std::string text;  // stdout, and stderr unless redirected by `args`
};

Output RunArbiter(const std::string& args, bool with_stderr = true) {
  const std::string cmd = Cat(ARBITER_BINARY, " ", args, with_stderr ? " 2>&1" : "");
  FILE* pipe = popen(cmd.c_str(), "r");
  Output out{-1, ""};
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(needle, at)) != std::string::npos; at += needle.size()) ++n;
  return n;
}

std::string TestEngine() { return std::filesystem::absolute(TEST_ENGINE).string(); }

TEST(UsageCli, AnUnknownOptionExitsTwoNamingIt) {
  Output o = RunArbiter("match --engine builtin --engine name=b,cmd=builtin --games 2 --rounds 2");
  EXPECT_EQ(o.exit_code, 2) << o.text;
  EXPECT_NE(o.text.find("error: unknown option --rounds"), std::string::npos) << o.text;
  EXPECT_EQ(o.text.find("not expected"), std::string::npos) << o.text;
  // Named also when CLI11 stops first at a required option it misses.
  Output first = RunArbiter("match --rounds 2");
  EXPECT_EQ(first.exit_code, 2) << first.text;
  EXPECT_NE(first.text.find("error: unknown option --rounds"), std::string::npos) << first.text;
  Output value = RunArbiter("match --engine builtin --engine name=b,cmd=builtin --games two");
  EXPECT_EQ(value.exit_code, 2) << value.text;
  EXPECT_NE(value.text.find("--games"), std::string::npos) << value.text;
}

TEST(UsageCli, MalformedSandboxFlagsStopTheStartNamingTheFlag) {
  // Each is refused before the worker dials anyone (the address refuses connections: a start
  // that got past the flags would retry forever, and the test would time out).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--engine-uids 5-3", "--engine-uids '5-3'"},
      {"--engine-uids 2000000000-", "is not FIRST-LAST or none"},
      {"--engine-uids 1000-999999", "at most 65536 users"},
      {"--engine-memory-mb -1", "--engine-memory-mb"},
      {"--engine-disk-mb -1", "--engine-disk-mb"},
      {"--engine-processes 99999999999", "--engine-processes"},
      {"--engine-read-dir relative/dir", "must be an absolute path"},
  };
  for (const auto& [flag, cause] : cases) {
    Output o = RunArbiter(Cat("worker --coordinator 127.0.0.1:1 --wait-s 1 ", flag));
    EXPECT_EQ(o.exit_code, 2) << flag << "\n" << o.text;
    EXPECT_NE(o.text.find(cause), std::string::npos) << flag << "\n" << o.text;
    EXPECT_EQ(o.text.find("register with"), std::string::npos) << flag << "\n" << o.text;
  }
}

TEST(UsageCli, CutechessSpellingsGetTheirArbiterCounterparts) {
  Output o = RunArbiter(
      "match -engine cmd=builtin -engine cmd=builtin -each tc=1+0.1 -rounds 2 "
      "-concurrency 2");
  EXPECT_EQ(o.exit_code, 2) << o.text;
  EXPECT_NE(o.text.find("error: unknown option -engine -each -rounds -concurrency"),
            std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("hint: use --engine for cutechess/fastchess's -engine"), std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("hint: arbiter has no -each: give the options in each --engine"),
            std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("hint: use --games for cutechess/fastchess's -rounds"), std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("hint: use --concurrency for cutechess/fastchess's -concurrency"),
            std::string::npos)
      << o.text;
  EXPECT_EQ(Count(o.text, "for cutechess/fastchess's -engine"), 1u) << "one hint per spelling";
}

// Duration flags name their unit; the old names still work, each with a warning, and are not
// in the help.
TEST(UsageCli, OldDurationFlagNamesWarnAndStillWork) {
  Output o = RunArbiter(
      "match --quiet --engine name=a,cmd=builtin --engine name=b,cmd=builtin --tc depth=1 "
      "--games 2 --max-moves 5 --margin 60 --handshake-timeout=5000 --move-timeout-ms 9000");
  EXPECT_EQ(o.exit_code, 0) << o.text;
  EXPECT_EQ(Count(o.text, "warning: --margin is deprecated, use --margin-ms"), 1u) << o.text;
  EXPECT_EQ(Count(o.text, "warning: --handshake-timeout is deprecated, use --handshake-timeout-ms"),
            1u)
      << o.text;
  EXPECT_EQ(Count(o.text, "deprecated"), 2u) << "the new names do not warn\n" << o.text;
  Output help = RunArbiter("match --help");
  EXPECT_NE(help.text.find("--margin-ms"), std::string::npos) << help.text;
  EXPECT_EQ(help.text.find("  --margin "), std::string::npos) << help.text;
  // The rename runs before the parse: an old name beside --help still warns, and the help
  // shows only the new one.
  Output worker = RunArbiter("worker --help --wait-seconds 1");
  EXPECT_EQ(worker.exit_code, 0) << worker.text;
  EXPECT_NE(worker.text.find("--wait-s "), std::string::npos) << worker.text;
  EXPECT_EQ(worker.text.find("  --wait-seconds"), std::string::npos) << worker.text;
  EXPECT_NE(worker.text.find("warning: --wait-seconds is deprecated"), std::string::npos)
      << worker.text;
}

TEST(UsageCli, HelpAndVersionExitZero) {
  Output help = RunArbiter("--help");
  EXPECT_EQ(help.exit_code, 0) << help.text;
  EXPECT_NE(help.text.find("match"), std::string::npos) << help.text;
  Output match_help = RunArbiter("match --help");
  EXPECT_EQ(match_help.exit_code, 0) << match_help.text;
  EXPECT_NE(match_help.text.find("--engine"), std::string::npos) << match_help.text;
  Output version = RunArbiter("--version");
  EXPECT_EQ(version.exit_code, 0) << version.text;
  EXPECT_NE(version.text.find("arbiter "), std::string::npos) << version.text;
}

// `--engine /path` is `cmd=/path` named by the file's base name, for match and tournament as for
// movegen-check.
TEST(UsageCli, MatchAndTournamentTakeABareEnginePath) {
  const std::string name = std::filesystem::path(TEST_ENGINE).filename().string();
  Output match = RunArbiter(Cat("match --json --engine ", TestEngine(),
                                " --engine name=b,cmd=builtin --tc depth=1 --games 2"),
                            /*with_stderr=*/false);
  ASSERT_EQ(match.exit_code, 0) << match.text;
  EXPECT_NE(match.text.find(Cat("\"", name, "\"")), std::string::npos) << match.text;
  Output tournament = RunArbiter(
      Cat("tournament --engine ", TestEngine(),
          " --engine builtin --engine name=c,cmd=builtin,option.Hash=8 --tc depth=1 --games 2"));
  ASSERT_EQ(tournament.exit_code, 0) << tournament.text;
  EXPECT_NE(tournament.text.find(name), std::string::npos) << tournament.text;
  EXPECT_NE(tournament.text.find("builtin"), std::string::npos) << tournament.text;
}

TEST(UsageCli, ProgressIntoAFileHasNoCarriageReturns) {
  const std::string log = ::testing::TempDir() + "movegen-progress-" + std::to_string(getpid());
  Output o = RunArbiter(Cat("movegen-check --engine ", TestEngine(),
                            " --fen 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1' "
                            "--fen '4k3/8/8/8/8/8/8/4K2R w K - 0 1' --depth 2 2>",
                            log),
                        /*with_stderr=*/false);
  EXPECT_EQ(o.exit_code, 0) << o.text;
  std::ifstream in(log);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  std::remove(log.c_str());
}

// `arbiter ratings --pgn` rates the results of PGN files without a coordinator; a game abandoned
// before any move (an engine that could not start) is not a game, and an unknown name is named
// alone.
TEST(UsageCli, RatingsReadLocalPgnAndCountOnlyPlayedGames) {
  const std::string pgn = ::testing::TempDir() + "ratings-" + std::to_string(getpid()) + ".pgn";
  {
    std::ofstream out(pgn);
    auto game = [&](const char* white, const char* black, const char* result, const char* moves,
                    const char* termination = "normal") {
      out << "[White \"" << white << "\"]\n[Black \"" << black << "\"]\n[Result \"" << result
          << "\"]\n[Termination \"" << termination << "\"]\n\n"
          << moves << " " << result << "\n\n";
    };
    game("a", "b", "1-0", "1. e4 e5");
    game("b", "a", "1/2-1/2", "1. d4 d5");
    game("a", "b", "0-1", "1. c4 c5");
    game("sf", "a", "0-1", "", "abandoned");
  }
  Output rated = RunArbiter(Cat("ratings --json --pgn ", pgn), /*with_stderr=*/false);
  ASSERT_EQ(rated.exit_code, 0) << rated.text;
  v1::GetRatingsResponse list;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(rated.text, &list).ok()) << rated.text;
  EXPECT_EQ(list.games(), 3u);
  ASSERT_EQ(list.standings_size(), 2) << "'sf' has only an abandoned 0-move game";
  for (const v1::TournamentStanding& st : list.standings()) EXPECT_EQ(st.games(), 3u);
  Output table = RunArbiter(Cat("ratings --pgn ", pgn));
  ASSERT_EQ(table.exit_code, 0) << table.text;
  EXPECT_NE(table.text.find("3 games in 1 PGN files"), std::string::npos) << table.text;
  Output unknown = RunArbiter(Cat("ratings --engines a nosuch --pgn ", pgn));
  EXPECT_EQ(unknown.exit_code, 1) << unknown.text;
  EXPECT_NE(unknown.text.find("no finished games of 'nosuch' in these runs"), std::string::npos)
      << unknown.text;
  EXPECT_EQ(unknown.text.find("'a'"), std::string::npos) << unknown.text;
  std::remove(pgn.c_str());
}

}  // namespace
}  // namespace arbiter
