// Multi-engine maximum-likelihood ratings: agreement with the match formula, recovery of known
// Elo differences from simulated games, and clear errors on unusable input.
#include "stats/ratings.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "stats/elo.h"

namespace arbiter::stats {
namespace {

Trinomial Wld(uint64_t w, uint64_t l, uint64_t d) { return {.losses = l, .draws = d, .wins = w}; }

TEST(Ratings, TwoEnginesGiveTheMatchFormula) {
  for (const Trinomial& c : {Wld(1477, 1351, 2942), Wld(60, 20, 20), Wld(3, 9, 1)}) {
    const EloEstimate match = EstimateElo(c);
    absl::StatusOr<RatingTable> t = ComputeRatings({"new", "base"}, {{0, 1, c}});
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ratings[0].elo, 0);
    EXPECT_EQ(t->ratings[0].error95, 0);
    EXPECT_NEAR(t->ratings[1].elo, -match.elo, 1e-6);
    // Delta-method interval vs the image of the score interval: equal to first order, so
    // close once there are enough games.
    if (c.Games() >= 100) {
      EXPECT_NEAR(t->ratings[1].error95, match.elo_error95, 0.03 * match.elo_error95);
    }
    // Anchoring the mean splits the difference.
    absl::StatusOr<RatingTable> mean =
        ComputeRatings({"new", "base"}, {{1, 0, c.Reversed()}}, {.anchor = -1});
    ASSERT_TRUE(mean.ok()) << mean.status();
    EXPECT_NEAR(mean->ratings[0].elo - mean->ratings[1].elo, match.elo, 1e-6);
    EXPECT_NEAR(mean->ratings[0].elo, -mean->ratings[1].elo, 1e-9);
    EXPECT_NEAR(mean->ratings[0].error95, t->ratings[1].error95 / 2, 1e-6);
  }
}

TEST(Ratings, HeadToHeadTableCombinesBothDirections) {
  absl::StatusOr<RatingTable> t = ComputeRatings(
      {"A", "B", "C"},
      {{0, 1, Wld(10, 5, 5)}, {1, 0, Wld(2, 3, 4)}, {2, 0, Wld(4, 6, 10)}, {1, 2, Wld(7, 7, 6)}});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->head_to_head.size(), 3u);
  const HeadToHead& ab = t->head_to_head[0];
  EXPECT_EQ(ab.first, 0);
  EXPECT_EQ(ab.second, 1);
  EXPECT_EQ(ab.counts, Wld(13, 7, 9));
  EXPECT_DOUBLE_EQ(ab.score, (13 + 4.5) / 29);
  EXPECT_NEAR(ab.elo, ScoreToElo(ab.score), 1e-9);
  const HeadToHead& ac = t->head_to_head[1];
  EXPECT_EQ(ac.first, 0);
  EXPECT_EQ(ac.second, 2);
  EXPECT_EQ(ac.counts, Wld(6, 4, 10));
  EXPECT_EQ(t->ratings[0].games, 49u);
  EXPECT_DOUBLE_EQ(t->ratings[0].points, 17.5 + 11);
  EXPECT_EQ(t->ratings[2].name, "C");
  // A scored 58% overall: rated above both others.
  EXPECT_GT(t->ratings[0].elo, t->ratings[1].elo);
  EXPECT_GT(t->ratings[0].elo, t->ratings[2].elo);
}

// A full round robin where everyone scores 50% against everyone: all ratings 0.
TEST(Ratings, BalancedRoundRobinRatesEveryoneEqually) {
  std::vector<PairingResult> games;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) games.push_back({i, j, Wld(30, 30, 40)});
  absl::StatusOr<RatingTable> t = ComputeRatings({"a", "b", "c", "d"}, games, {.anchor = -1});
  ASSERT_TRUE(t.ok()) << t.status();
  for (const EngineRating& r : t->ratings) {
    EXPECT_NEAR(r.elo, 0, 1e-9);
    EXPECT_GT(r.error95, 0);
  }
}

// Games drawn from the logistic model with known ratings: the 95% intervals cover the truth.
TEST(Ratings, RecoverKnownEloDifferencesFromSimulatedGames) {
  const std::vector<double> truth = {0, 40, -60, 110};
  const std::vector<std::string> names = {"e0", "e1", "e2", "e3"};
  const int kTrials = 300, kGamesPerPairing = 300;
  const double kDraw = 0.35;
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> uniform(0, 1);
  int covered[2][4] = {}, checks = 0, covered_all = 0;
  double mean_abs_error = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<PairingResult> games;
    for (int i = 0; i < 4; ++i) {
      for (int j = i + 1; j < 4; ++j) {
        const double s = EloToScore(truth[i] - truth[j]);
        const double win = s - kDraw / 2;
        Trinomial c;
        for (int g = 0; g < kGamesPerPairing; ++g) {
          const double u = uniform(rng);
          if (u < win) {
            ++c.wins;
          } else if (u < win + kDraw) {
            ++c.draws;
          } else {
            ++c.losses;
          }
        }
        games.push_back({i, j, c});
      }
    }
    for (int mode = 0; mode < 2; ++mode) {
      const RatingOptions options{.anchor = mode == 0 ? 0 : -1};
      absl::StatusOr<RatingTable> t = ComputeRatings(names, games, options);
      ASSERT_TRUE(t.ok()) << t.status();
      double truth_mean = 0;
      for (double x : truth) truth_mean += x / 4;
      for (int k = mode == 0 ? 1 : 0; k < 4; ++k) {
        const double expected = mode == 0 ? truth[k] : truth[k] - truth_mean;
        const double miss = std::abs(t->ratings[k].elo - expected);
        mean_abs_error += miss;
        const bool in = miss <= t->ratings[k].error95;
        covered[mode][k] += in;
        covered_all += in;
        ++checks;
      }
    }
  }
  for (int mode = 0; mode < 2; ++mode) {
    for (int k = mode == 0 ? 1 : 0; k < 4; ++k) {
      SCOPED_TRACE(testing::Message() << "anchor mode " << mode << " engine " << k);
      EXPECT_GE(covered[mode][k], 0.90 * kTrials);
    }
  }
  std::printf("95%% interval coverage over %d checks: %.1f%%, mean |error| %.2f Elo\n", checks,
              100.0 * covered_all / checks, mean_abs_error / checks);
  // Not vacuous: the intervals are not so wide that they always cover.
  EXPECT_LE(covered_all, 0.985 * checks);
  EXPECT_LT(mean_abs_error / checks, 20.0);
}

TEST(Ratings, UnboundedRatingsAreAnErrorUnlessAPriorIsGiven) {
  const std::vector<PairingResult> games = {
      {0, 1, Wld(5, 5, 5)}, {2, 0, Wld(0, 8, 0)}, {2, 1, Wld(0, 3, 0)}};
  absl::StatusOr<RatingTable> t = ComputeRatings({"A", "B", "Loser"}, games);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      std::string(t.status().message()).find("{Loser} scored no points against engines {A, B}"),
      std::string::npos)
      << t.status();
  absl::StatusOr<RatingTable> with_prior =
      ComputeRatings({"A", "B", "Loser"}, games, {.prior_draws = 1});
  ASSERT_TRUE(with_prior.ok()) << with_prior.status();
  EXPECT_LT(with_prior->ratings[2].elo, -200);
  EXPECT_TRUE(std::isfinite(with_prior->ratings[2].elo));
}

TEST(Ratings, BadInputIsRejectedWithAReason) {
  const Trinomial c = Wld(1, 1, 1);
  auto message = [](const absl::StatusOr<RatingTable>& t) {
    return t.ok() ? std::string("ok") : std::string(t.status().message());
  };
  EXPECT_NE(message(ComputeRatings({"A"}, {})).find("at least 2 engines"), std::string::npos);
  EXPECT_NE(message(ComputeRatings({"A", "B"}, {{0, 2, c}})).find("out of range"),
            std::string::npos);
  EXPECT_NE(message(ComputeRatings({"A", "B"}, {{1, 1, c}})).find("'B' paired with itself"),
            std::string::npos);
  EXPECT_NE(message(ComputeRatings({"A", "B"}, {{0, 1, c}}, {.anchor = 5})).find("anchor"),
            std::string::npos);
  EXPECT_NE(message(ComputeRatings({"A", "B", "C", "D"}, {{0, 1, c}, {2, 3, c}}))
                .find("no games connect engines {A, B} with engines {C, D}"),
            std::string::npos);
}

}  // namespace
}  // namespace arbiter::stats
