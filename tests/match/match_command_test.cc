// `arbiter match` and `arbiter tournament` end to end with the test engine.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

std::pair<int, std::string> RunArbiter(const std::string& args) {
  std::string cmd = std::string(ARBITER_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

const std::string kEngine = std::string("cmd=") + TEST_ENGINE;

TEST(MatchCommand, JsonSummary) {
  auto [rc, out] = RunArbiter("match --engine name=a," + kEngine + " --engine 'name=b," + kEngine +
                              " --illegal --after 3' --tc 10+0.1 --games 4 --quiet --json");
  ASSERT_EQ(rc, 0) << out;
  for (const char* want :
       {"\"engines\":[\"a\",\"b\"]", "\"games\":\"4\"", "\"time_control\":\"10+0.1\"",
        "\"illegal_moves\":\"4\"", "\"terminations\":{\"illegal move\":\"4\"}", "\"ww\":\"2\"",
        "\"game_list\":[", "\"end\":\"GAME_END_ILLEGAL_MOVE\"", "\"termination\":\"illegal move\""})
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
}

TEST(MatchCommand, TextReportAndErrors) {
  auto [rc, out] = RunArbiter("match --engine name=a," + kEngine + " --engine name=b," + kEngine +
                              " --tc depth=1 --games 2 --max-moves 5");
  ASSERT_EQ(rc, 0) << out;
  for (const char* want : {"Finished game 1 (a vs b)", "Results of a vs b (depth=1)",
                           "Ptnml(0-2):", "Elo:", "LOS:", "Terminations: adjudication 2;",
                           "a: time losses 0, disconnects 0", "games/min"})
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  EXPECT_EQ(RunArbiter("match --engine name=a," + kEngine + " --engine name=b," + kEngine +
                       " --tc 10+x --games 2")
                .first,
            2);
  auto [rc2, err] = RunArbiter("match --engine name=a," + kEngine + " --engine name=b," + kEngine +
                               " --tc 1 --games 3");
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(err.find("odd"), std::string::npos) << err;
  auto [rc3, err3] = RunArbiter("match --engine name=a," + kEngine + " --engine name=b," + kEngine +
                                " --tc 1 --sprt elo0=2,elo1=0");
  EXPECT_EQ(rc3, 2);
  EXPECT_NE(err3.find("--sprt"), std::string::npos) << err3;
}

TEST(TournamentCommand, RoundRobinAndGauntlet) {
  std::string engines = " --engine name=a," + kEngine + " --engine 'name=b," + kEngine +
                        " --illegal --after 5' --engine 'name=c," + kEngine + " --none --after 9'";
  auto [rc, out] =
      RunArbiter("tournament" + engines + " --tc 10+0.1 --games 2 --max-moves 20 --quiet");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("a vs b"), std::string::npos) << out;
  EXPECT_NE(out.find("b vs c"), std::string::npos) << out;
  EXPECT_NE(out.find("round robin"), std::string::npos) << out;
  auto [rc2, out2] = RunArbiter("tournament --gauntlet" + engines +
                                " --tc 10+0.1 --games 2 --max-moves 20 --quiet");
  ASSERT_EQ(rc2, 0) << out2;
  EXPECT_EQ(out2.find("b vs c"), std::string::npos) << out2;
  EXPECT_NE(out2.find("gauntlet"), std::string::npos) << out2;
}

// cmd=builtin is arbiter's own engine (`arbiter uci`) in a local run too, as on the cluster.
TEST(TournamentCommand, BuiltinEngineLocally) {
  auto [rc, out] = RunArbiter("tournament --engine name=own,cmd=builtin --engine name=a," +
                              kEngine + " --tc depth=1 --games 2 --max-moves 10 --quiet");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("own vs a"), std::string::npos) << out;
  EXPECT_EQ(out.find("cannot start"), std::string::npos) << out;
  auto [rc2, out2] = RunArbiter("match --engine name=own,cmd=builtin --engine name=a," + kEngine +
                                " --tc depth=1 --games 2 --max-moves 10");
  ASSERT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("Results of own vs a"), std::string::npos) << out2;
}

// An engine that does not start, or does not speak UCI, stops a tournament before its first
// game, with the engine's name, whichever pairing it is in.
TEST(TournamentCommand, BadEngineFailsBeforeTheFirstGame) {
  const std::string good = " --engine name=a," + kEngine + " --engine name=b," + kEngine;
  const std::string rest = " --tc depth=1 --games 2 --max-moves 10 --handshake-timeout-ms 2000";
  auto [rc, out] =
      RunArbiter("tournament" + good + " --engine name=ghost,cmd=/nonexistent/engine" + rest);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("ghost: cannot start engine"), std::string::npos) << out;
  EXPECT_EQ(out.find("Finished game"), std::string::npos) << out;
  auto [rc2, out2] = RunArbiter("tournament" + good + " --engine name=mute,cmd=/bin/true" + rest);
  EXPECT_NE(rc2, 0) << out2;
  EXPECT_NE(out2.find("error: mute: "), std::string::npos) << out2;  // exited, or closed stdin
  EXPECT_EQ(out2.find("Finished game"), std::string::npos) << out2;
  auto [rc3, out3] = RunArbiter("match --engine name=a," + kEngine +
                                " --engine name=ghost,cmd=/nonexistent" + rest);
  EXPECT_NE(rc3, 0) << out3;
  EXPECT_NE(out3.find("ghost: cannot start engine"), std::string::npos) << out3;
}

}  // namespace
