// 200 games of Stockfish against itself at 1+0.01, concurrency 2 (label: slow): no time losses,
// no disconnects or stalls, a PGN that pgn-extract and our reader accept, pairs that add up.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "engine/pgn.h"
#include "match/runner.h"

namespace arbiter::match {
namespace {

TEST(SelfPlay, StockfishTwoHundredGamesAtOnePlusOneHundredth) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no stockfish"
                 << " (scripts/install-deps.sh installs it)";
  MatchOptions o;
  for (int i = 0; i < 2; ++i)
    o.engines[i] = EngineSpec{.name = i == 0 ? "sf-a" : "sf-b",
                              .cmd = "/usr/games/stockfish",
                              .options = {{"Hash", "16"}, {"Threads", "1"}}};
  o.tc = ParseTimeControl("1+0.01").value();
  o.games = 200;
  o.concurrency = 2;
  // The shared 2-core test machine runs several times oversubscribed; scheduling jitter there
  // exceeds the default 50 ms margin a few times in 200 games (Stockfish moves in 10-20 ms late
  // in long games). The margin is the arbiter's allowance for exactly that jitter.
  o.settings.margin = Millis(200);
  o.pgn_out = testing::TempDir() + "/selfplay.pgn";
  std::remove(o.pgn_out.c_str());
  auto s = RunMatch(
      o,
      [](const MatchSummary& m) {
        if (m.pairs % 10 == 0) fprintf(stderr, "%s\n", ProgressLine(m, 200).c_str());
      },
      [](uint64_t round, const GameRecord& g) {
        if (g.end != GameEnd::kNormal)
          fprintf(stderr, "game %lu: %s\n", (unsigned long)round, g.reason.c_str());
      });
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->games, 200u);
  EXPECT_EQ(s->pentanomial.Pairs() * 2, s->games);
  EXPECT_EQ(s->trinomial.Games(), s->games);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(s->faults[i].time_losses, 0u);
    EXPECT_EQ(s->faults[i].disconnects, 0u);
    EXPECT_EQ(s->faults[i].stalls, 0u);
    EXPECT_EQ(s->faults[i].illegal_moves, 0u);
  }
  fprintf(stderr, "%s", MatchDetails(ToMatchResult(*s, std::nullopt)).c_str());

  auto games = ReadPgnFile(o.pgn_out);
  ASSERT_TRUE(games.ok()) << games.status();
  EXPECT_EQ(games->size(), 200u);
  if (access("/usr/games/pgn-extract", X_OK) == 0) {
    std::string cmd = "/usr/games/pgn-extract --quiet -o /dev/null " + o.pgn_out + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0);
    EXPECT_EQ(out, "");
  }
}

}  // namespace
}  // namespace arbiter::match
