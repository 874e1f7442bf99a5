// Openings, pairing, the concurrent runner (faulty engines, SPRT stop), and PGN output.
#include "match/runner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "base/strings.h"
#include "engine/notation.h"
#include "engine/pgn.h"

namespace arbiter::match {
namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

const char* kEpd =
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n"
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1\n";

TEST(OpeningBook, SequentialRandomAndStart) {
  std::string path = TempFile("book.epd", kEpd);
  auto seq = OpeningBook::Load({.path = path, .start = 2});
  ASSERT_TRUE(seq.ok()) << seq.status();
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_EQ(seq->ForPair(0).start.Fen().substr(0, 35), "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPP");
  EXPECT_EQ(seq->ForPair(2).start.Fen(), seq->ForPair(5).start.Fen());  // wraps around
  EXPECT_EQ(seq->ForPair(2).start.Fen().substr(0, 31), "rnbqkbnr/pppppppp/8/8/4P3/8/PPP");

  auto r1 = OpeningBook::Load({.path = path, .random = true, .seed = 7});
  auto r2 = OpeningBook::Load({.path = path, .random = true, .seed = 7});
  ASSERT_TRUE(r1.ok() && r2.ok());
  std::set<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r1->ForPair(i).start.Fen(), r2->ForPair(i).start.Fen());
    seen.insert(r1->ForPair(i).start.Fen());
  }
  EXPECT_EQ(seen.size(), 3u);  // a permutation

  EXPECT_FALSE(OpeningBook::Load({.path = path, .start = 4}).ok());
  EXPECT_FALSE(OpeningBook::Load({.path = "/nonexistent.epd"}).ok());
  EXPECT_FALSE(OpeningBook::Load({.path = "book.txt"}).ok());
}

TEST(OpeningBook, PgnWithPlyLimitAndChess960) {
  std::string pgn = TempFile("book.pgn",
                             "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n"
                             "[Event \"b\"]\n\n1. d4 d5 2. c4 *\n");
  auto book = OpeningBook::Load({.path = pgn, .plies = 3});
  ASSERT_TRUE(book.ok()) << book.status();
  ASSERT_EQ(book->size(), 2u);
  EXPECT_EQ(book->ForPair(0).moves.size(), 3u);
  EXPECT_EQ(book->ForPair(1).moves.size(), 3u);
  EXPECT_FALSE(book->chess960());

  std::string epd =
      TempFile("960.epd", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\n");
  auto b960 = OpeningBook::Load({.path = epd});
  ASSERT_TRUE(b960.ok()) << b960.status();
  EXPECT_TRUE(b960->chess960());
}

TEST(GamePgn, CommentsCarryScoreDepthAndTime) {
  MoveRecord m{.score = {.kind = UciScore::kCp, .value = 31}, .depth = 12, .time = Millis(105)};
  EXPECT_EQ(MoveComment(m), "+0.31/12 0.105s");
  m.score = {.kind = UciScore::kMate, .value = -3};
  EXPECT_EQ(MoveComment(m), "-M3/12 0.105s");
  m.score = {};
  EXPECT_EQ(MoveComment(m), "0.105s");
  m.book = true;
  EXPECT_EQ(MoveComment(m), "");
}

TEST(GamePgn, TagsMovesAndTermination) {
  GameRecord g;
  g.white = "A";
  g.black = "B";
  g.start = Position::FromFen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1").value();
  Move m = ParseUciMove(g.start, "a1a8").value();
  g.moves.push_back({.move = m,
                     .san = "Ra8#",
                     .score = {.kind = UciScore::kMate, .value = 1},
                     .depth = 1,
                     .time = Millis(2)});
  g.result = GameResult::kWhiteWins;
  g.end = GameEnd::kNormal;
  g.reason = "White mates";
  g.tc[0] = g.tc[1] = ParseTimeControl("10+0.1").value();
  std::string text = WritePgn(ToPgnGame(g, {.event = "E", .date = "2026.01.02", .round = "7"}));
  for (const char* want : {"[Event \"E\"]", "[Round \"7\"]", "[White \"A\"]", "[Result \"1-0\"]",
                           "[TimeControl \"10+0.1\"]", "[Termination \"normal\"]", "[SetUp \"1\"]",
                           "[FEN \"6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1\"]",
                           "1. Ra8# {+M1/1 0.002s, White mates} 1-0"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

// A Bronstein or delay game's PGN differs from a Fischer game's with the same numbers, and
// a reader finds the exact control; a multi-period tag says each period's increment.
TEST(GamePgn, TimeControlTagsSayTheClockThatWasRun) {
  auto tags = [](const char* white_tc, const char* black_tc) {
    GameRecord g;
    g.tc[kWhite] = ParseTimeControl(white_tc).value();
    g.tc[kBlack] = ParseTimeControl(black_tc).value();
    return ToPgnGame(g, {.date = "2026.01.02"});
  };
  PgnGame fischer = tags("10+0.2", "10+0.2");
  EXPECT_EQ(fischer.time_control, "10+0.2");
  EXPECT_FALSE(fischer.Tag("ArbiterTimeControl"));
  PgnGame bronstein = tags("10+0.2b", "10+0.2b");
  EXPECT_EQ(bronstein.time_control, "?");
  EXPECT_EQ(bronstein.Tag("ArbiterTimeControl").value_or(""), "10+0.2b");
  PgnGame delay = tags("10+0.2d", "10+0.2d");
  EXPECT_EQ(delay.Tag("ArbiterTimeControl").value_or(""), "10+0.2d");
  EXPECT_NE(WritePgn(bronstein), WritePgn(fischer));
  EXPECT_EQ(tags("40/60:30+1", "40/60:30+1").time_control, "40/60+1:30+1");
  PgnGame odds = tags("10+0.1", "movetime=0.5");
  EXPECT_EQ(odds.Tag("WhiteTimeControl").value_or(""), "10+0.1");
  EXPECT_EQ(odds.Tag("BlackTimeControl").value_or(""), "?");
  EXPECT_EQ(odds.Tag("BlackArbiterTimeControl").value_or(""), "movetime=0.5");
  EXPECT_FALSE(odds.Tag("WhiteArbiterTimeControl"));
}

EngineSpec TestEngine(std::string name, std::vector<std::string> args = {}) {
  return EngineSpec{.name = std::move(name), .cmd = TEST_ENGINE, .args = std::move(args)};
}

MatchOptions Options(EngineSpec a, EngineSpec b, uint64_t games) {
  MatchOptions o;
  o.engines[0] = std::move(a);
  o.engines[1] = std::move(b);
  o.tc = ParseTimeControl("10+0.1").value();
  o.games = games;
  o.settings.adjudication.max_moves = 15;
  o.settings.stop_grace = Millis(300);
  return o;
}

TEST(RunMatch, PairsShareTheOpeningWithColoursReversedAndPgnIsWritten) {
  MatchOptions o = Options(TestEngine("A"), TestEngine("B"), 6);
  o.book.path = TempFile("pairs.epd", kEpd);
  o.concurrency = 2;
  o.pgn_out = testing::TempDir() + "/pairs.pgn";
  std::remove(o.pgn_out.c_str());
  std::map<uint64_t, GameRecord> games;
  auto s = RunMatch(o, {}, [&](uint64_t round, const GameRecord& g) { games[round] = g; });
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->games, 6u);
  EXPECT_EQ(s->pentanomial.Pairs(), 3u);
  EXPECT_EQ(s->trinomial.Games(), 6u);
  ASSERT_EQ(games.size(), 6u);
  for (uint64_t pair = 0; pair < 3; ++pair) {
    const GameRecord& g1 = games[2 * pair + 1];
    const GameRecord& g2 = games[2 * pair + 2];
    EXPECT_EQ(g1.start.Fen(), g2.start.Fen());
    EXPECT_EQ(g1.white, "A");
    EXPECT_EQ(g2.white, "B");
  }
  std::set<std::string> starts;
  for (auto& [r, g] : games) starts.insert(g.start.Fen());
  EXPECT_EQ(starts.size(), 3u);  // each opening once

  auto read = ReadPgnFile(o.pgn_out);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 6u);
  for (const PgnGame& g : *read) {
    EXPECT_NE(g.start.Fen(), Position::StartPosition().Fen());  // read back from the FEN tag
    EXPECT_EQ(g.time_control, "10+0.1");
    EXPECT_FALSE(g.termination.empty());
  }
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

TEST(RunMatch, FaultyEngineLosesEveryGameAndTheMatchGoesOn) {
  MatchOptions o =
      Options(TestEngine("good"), TestEngine("crashy", {"--crash", "--after", "2"}), 4);
  auto s = RunMatch(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->games, 4u);
  EXPECT_EQ(s->trinomial.wins, 4u);
  EXPECT_EQ(s->faults[1].disconnects, 4u);
  EXPECT_EQ(s->faults[0].disconnects, 0u);
  EXPECT_EQ(s->pentanomial.counts[4], 2u);
  EXPECT_EQ(s->terminations.at("disconnect"), 4u);
}

// An engine that dies at its first `go` of every game never moves: its games are not games. The
// match stops with the engine's name instead of counting them as its losses.
TEST(RunMatch, AnEngineThatNeverMovesStopsTheMatchAndNoGameCounts) {
  std::vector<uint64_t> rounds;
  auto s = RunMatch(Options(TestEngine("good"), TestEngine("crashy", {"--crash"}), 4), {},
                    [&](uint64_t round, const GameRecord&) { rounds.push_back(round); });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("engine 'crashy' could not play"), std::string::npos)
      << s.status();
  EXPECT_TRUE(rounds.empty()) << "no game was counted";
}

TEST(RunMatch, SprtStopsEarly) {
  MatchOptions o = Options(TestEngine("good"), TestEngine("illegal", {"--illegal"}), 400);
  o.sprt = stats::SprtParams{
      .elo0 = 0, .elo1 = 20, .alpha = 0.05, .beta = 0.05, .model = stats::SprtModel::kLogistic};
  auto s = RunMatch(o);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->sprt.has_value());
  EXPECT_EQ(s->sprt->decision, stats::SprtDecision::kAcceptH1);
  EXPECT_LT(s->games, 400u);
  EXPECT_EQ(s->faults[1].illegal_moves, s->games);
  EXPECT_EQ(s->pentanomial.Games(), s->games);
}

TEST(RunMatch, RejectsBadOptions) {
  EXPECT_FALSE(RunMatch(Options(TestEngine("A"), TestEngine("B"), 3)).ok());  // odd
  EXPECT_FALSE(RunMatch(Options(TestEngine("A"), TestEngine("A"), 2)).ok());  // same name
  auto missing = RunMatch(Options(TestEngine("A"), EngineSpec{.name = "B", .cmd = "/no/such"}, 2));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such"), std::string::npos);
}

TEST(RunMatch, PerEngineTimeControlOverride) {
  EngineSpec slow = TestEngine("odds");
  slow.tc = "movetime=0.05";
  MatchOptions o = Options(TestEngine("A"), slow, 2);
  std::vector<GameRecord> games;
  auto s = RunMatch(o, {}, [&](uint64_t, const GameRecord& g) { games.push_back(g); });
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(games[0].tc[kWhite].ToString(), "10+0.1");
  EXPECT_EQ(games[0].tc[kBlack].ToString(), "movetime=0.05");
  EXPECT_EQ(games[1].tc[kWhite].ToString(), "movetime=0.05");
}

// More engine threads than CPUs is said before the first game; within the CPUs nothing is.
TEST(RunMatch, WarnsWhenTheEnginesThreadsExceedTheCpus) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  EngineSpec heavy = TestEngine("heavy");
  heavy.options.emplace_back("Threads", std::to_string(cpus + 1));
  MatchOptions o = Options(TestEngine("A"), heavy, 2);
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  ASSERT_TRUE(RunMatch(o).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(Cat(cpus + 1, " threads on ", cpus, " CPUs")), std::string::npos)
      << warnings[0];
  warnings.clear();
  o = Options(TestEngine("A"), TestEngine("B"), 2);
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  ASSERT_TRUE(RunMatch(o).ok());
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
// Arbiter CPU per move is reported only when it was measured (a cluster run does not).
TEST(MatchDetails, CpuPerMoveOnlyWhenMeasured) {
  MatchSummary s{.names = {"a", "b"}};
  s.moves = 10;
  std::string text = MatchDetails(ToMatchResult(s, std::nullopt));
  EXPECT_EQ(text.find("arbiter CPU"), std::string::npos) << text;
  s.cpu_ms_per_move = 0.25;
  text = MatchDetails(ToMatchResult(s, std::nullopt));
  EXPECT_NE(text.find("arbiter CPU 0.250 ms/move"), std::string::npos) << text;
}

}  // namespace arbiter::match
