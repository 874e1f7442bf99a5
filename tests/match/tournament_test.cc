#include "match/tournament.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace arbiter::match
