#include "match/tournament.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "match/summary.h"

namespace arbiter::match {
namespace {

TEST(TournamentPairings, RoundRobinAndGauntlet) {
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(TournamentPairings(3, false), (Pairs{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(TournamentPairings(4, false).size(), 6u);
  EXPECT_EQ(TournamentPairings(4, true), (Pairs{{0, 1}, {0, 2}, {0, 3}}));
  EXPECT_TRUE(TournamentPairings(1, false).empty());
}

TEST(AddStandings, BestFirstAndOnlyWhenConnected) {
  const std::vector<std::string> names = {"a", "b", "c"};
  // b beats a, a beats c: b, a, c.
  std::vector<stats::PairingResult> results = {
      {.first = 0, .second = 1, .counts = {.losses = 8, .draws = 2, .wins = 0}},
      {.first = 0, .second = 2, .counts = {.losses = 0, .draws = 2, .wins = 8}}};
  google::protobuf::RepeatedPtrField<v1::TournamentStanding> out;
  ASSERT_TRUE(AddStandings(names, results, out).ok());
  ASSERT_EQ(out.size(), 3);
  EXPECT_EQ(out[0].name(), "b");
  EXPECT_EQ(out[1].name(), "a");
  EXPECT_EQ(out[2].name(), "c");
  EXPECT_GE(out[1].games(), 20u);
  // c never played: nothing is added.
  google::protobuf::RepeatedPtrField<v1::TournamentStanding> none;
  EXPECT_FALSE(AddStandings(names, {results[0]}, none).ok());
  EXPECT_EQ(none.size(), 0);
}

EngineSpec TestEngine(std::string name, std::vector<std::string> args = {}) {
  return EngineSpec{.name = std::move(name), .cmd = TEST_ENGINE, .args = std::move(args)};
}

MatchOptions Base(uint64_t games) {
  MatchOptions o;
  o.tc = ParseTimeControl("10+0.1").value();
  o.games = games;
  o.settings.adjudication.max_moves = 10;
  return o;
}

// Round by round: the first pair of every pairing, then the second of every pairing, so that a
// run stopped anywhere has played each pairing within one pair of the others.
TEST(RunSchedule, InterleavesThePairingsRoundByRound) {
  const std::vector<std::pair<int, int>> pairs = TournamentPairings(3, false);
  std::vector<EngineSpec> engines = {TestEngine("a"), TestEngine("b"), TestEngine("c")};
  std::vector<MatchOptions> pairings;
  for (auto [i, j] : pairs) {
    MatchOptions o = Base(4);
    o.engines[0] = engines[i];
    o.engines[1] = engines[j];
    pairings.push_back(o);
  }
  std::map<uint64_t, size_t> pairing_of_round;
  auto out = RunSchedule(pairings, {}, [&](size_t k, uint64_t round, const GameRecord&) {
    pairing_of_round[round] = k;
  });
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  for (const MatchSummary& s : *out) EXPECT_EQ(s.games, 4u);
  ASSERT_EQ(pairing_of_round.size(), 12u);
  const size_t want[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
  for (uint64_t round = 1; round <= 12; ++round)
    EXPECT_EQ(pairing_of_round[round], want[round - 1]) << "round " << round;
  EXPECT_EQ((*out)[1].names[0], "a");
  EXPECT_EQ((*out)[1].names[1], "c");
}

TEST(RunTournament, PgnEventNamesTheTournamentAndFaultsAreCounted) {
  MatchOptions base = Base(2);
  base.settings.stop_grace = Millis(200);
  base.pgn_out = testing::TempDir() + "/tournament.pgn";
  std::remove(base.pgn_out.c_str());
  std::vector<std::string> progress;
  TournamentCallbacks callbacks;
  callbacks.progress = [&](const MatchOptions&, const MatchSummary& s) {
    progress.push_back(PairingProgressLine(s, 2));
  };
  auto out = RunTournament(
      base, {TestEngine("a"), TestEngine("b"), TestEngine("crashy", {"--exit-after-move"})}, false,
      callbacks);
  ASSERT_TRUE(out.ok()) << out.status();
  std::stringstream pgn;
  pgn << std::ifstream(base.pgn_out).rdbuf();
  EXPECT_NE(pgn.str().find("[Event \"arbiter round robin of 3 engines\"]"), std::string::npos)
      << pgn.str();
  EXPECT_EQ(pgn.str().find("arbiter match"), std::string::npos);
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[0].rfind("a vs b: Games 2/2", 0), 0u) << progress[0];
  const std::string details = TournamentDetails(*out);
  EXPECT_NE(details.find("Terminations: adjudication 2; disconnect 4;"), std::string::npos)
      << details;
  EXPECT_NE(details.find("crashy: time losses 0, disconnects 4, stalls 0, illegal moves 0"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("a: time losses 0, disconnects 0"), std::string::npos) << details;
}

TEST(TournamentDetails, SumsEachEnginesFaultsOverItsPairings) {
  v1::TournamentResult t;
  for (const char* other : {"b", "c"}) {
    v1::MatchResult& m = *t.add_matches();
    (*m.mutable_terminations())["time forfeit"] = 2;
    (*m.mutable_terminations())["normal"] = 8;
    v1::EngineFaults& a = *m.add_faults();
    a.set_name("a");
    a.set_time_losses(2);
    a.set_illegal_moves(1);
    m.add_faults()->set_name(other);
  }
  EXPECT_EQ(TournamentDetails(t),
            "Terminations: normal 16; time forfeit 4;\n"
            "a: time losses 4, disconnects 0, stalls 0, illegal moves 2\n"
            "b: time losses 0, disconnects 0, stalls 0, illegal moves 0\n"
            "c: time losses 0, disconnects 0, stalls 0, illegal moves 0\n");
}

}  // namespace
}  // namespace arbiter::match
