// Elo, nElo, error bars and LOS against fastchess's published values, plus their properties.
#include "stats/elo.h"

#include <cmath>

#include "gtest/gtest.h"

namespace arbiter::stats {
namespace {

Trinomial Wld(uint64_t w, uint64_t l, uint64_t d) { return {.losses = l, .draws = d, .wins = w}; }
Pentanomial Pairs6(uint64_t ll, uint64_t ld, uint64_t wl, uint64_t dd, uint64_t wd, uint64_t ww) {
  return {{ll, ld, wl + dd, wd, ww}};
}

// Within 0.5% (published values carry two decimals; `abs` covers values near zero).
void ExpectClose(double got, double published, double abs = 0.0) {
  EXPECT_NEAR(got, published, std::max(abs, 0.005 * std::abs(published)));
}

TEST(ScoreElo, LogisticCurve) {
  EXPECT_DOUBLE_EQ(ScoreToElo(0.5), 0);
  EXPECT_NEAR(ScoreToElo(0.75), 400 * std::log10(3.0), 1e-12);
  EXPECT_NEAR(EloToScore(ScoreToElo(0.3)), 0.3, 1e-15);
  EXPECT_EQ(ScoreToElo(1), INFINITY);
  EXPECT_EQ(ScoreToElo(0), -INFINITY);
}

// fastchess app/tests/elo_test.cpp.
TEST(EstimateElo, FastchessTrinomial) {
  EloEstimate e = EstimateElo(Wld(76, 89, 123));
  ExpectClose(e.nelo, -20.76);
  ExpectClose(e.nelo_error95, 40.13);
  ExpectClose(100 * e.los, 15.53);

  e = EstimateElo(Wld(136, 96, 111));
  ExpectClose(e.nelo, 49.77);
  ExpectClose(e.nelo_error95, 36.77);
  ExpectClose(e.elo, 40.70);
  ExpectClose(e.elo_error95, 30.43);
  ExpectClose(100 * e.los, 99.60);

  e = EstimateElo(Wld(34, 356, 0));
  ExpectClose(e.nelo, -508.44);
  ExpectClose(e.nelo_error95, 34.48);
}

TEST(EstimateElo, FastchessPentanomial) {
  EloEstimate e = EstimateElo(Pairs6(34, 54, 31, 32, 64, 75));
  ExpectClose(e.nelo, 57.94);
  ExpectClose(e.nelo_error95, 28.28);
  ExpectClose(e.elo, 55.58);
  ExpectClose(e.elo_error95, 27.65);
  EXPECT_GT(e.los, 0.99995);  // "100.00 %"

  e = EstimateElo(Pairs6(332, 433, 457, 41, 333, 334));
  ExpectClose(e.nelo, -9.17);
  ExpectClose(e.nelo_error95, 10.96);
  ExpectClose(e.elo, -8.64);
  ExpectClose(e.elo_error95, 10.33);
  ExpectClose(100 * e.los, 5.05);

  e = EstimateElo(Pairs6(7895, 8757, 5485, 200, 568, 9999));
  ExpectClose(e.nelo, -19.01);
  ExpectClose(e.nelo_error95, 2.65);
  ExpectClose(e.elo, -21.04);
  ExpectClose(e.elo_error95, 2.95);
}

TEST(EstimateElo, ScoreDrawRatioAndInterval) {
  const EloEstimate e = EstimateElo(Wld(30, 20, 50));
  EXPECT_EQ(e.games, 100u);
  EXPECT_DOUBLE_EQ(e.score, 0.55);
  EXPECT_DOUBLE_EQ(e.draw_ratio, 0.5);
  // var = 0.3 * 0.45^2 + 0.5 * 0.05^2 + 0.2 * 0.55^2.
  EXPECT_NEAR(e.variance, 0.3 * 0.2025 + 0.5 * 0.0025 + 0.2 * 0.3025, 1e-15);
  const double se = std::sqrt(e.variance / 100);
  EXPECT_NEAR(e.elo_lower95, ScoreToElo(0.55 - kZ95 * se), 1e-9);
  EXPECT_NEAR(e.elo_upper95, ScoreToElo(0.55 + kZ95 * se), 1e-9);
  EXPECT_LT(e.elo_lower95, e.elo);
  EXPECT_GT(e.elo_upper95, e.elo);

  const EloEstimate p = EstimateElo(Pentanomial{{1, 2, 3, 4, 0}});
  EXPECT_EQ(p.games, 20u);
  EXPECT_DOUBLE_EQ(p.draw_ratio, 0.3);
}

TEST(EstimateEloProperties, SymmetricCountsGiveZeroEloAndHalfLos) {
  for (const Trinomial& t : {Wld(10, 10, 0), Wld(321, 321, 500), Wld(0, 0, 7)}) {
    const EloEstimate e = EstimateElo(t);
    EXPECT_DOUBLE_EQ(e.elo, 0);
    EXPECT_DOUBLE_EQ(e.nelo, 0);
    EXPECT_DOUBLE_EQ(e.los, 0.5);
  }
  const EloEstimate p = EstimateElo(Pentanomial{{5, 80, 200, 80, 5}});
  EXPECT_DOUBLE_EQ(p.elo, 0);
  EXPECT_DOUBLE_EQ(p.nelo, 0);
  EXPECT_DOUBLE_EQ(p.los, 0.5);
}

TEST(EstimateEloProperties, SwappingEnginesNegatesElo) {
  const Trinomial t = Wld(410, 377, 902);
  const Pentanomial p{{13, 190, 420, 230, 17}};
  const EloEstimate a = EstimateElo(t), b = EstimateElo(t.Reversed());
  EXPECT_NEAR(a.elo, -b.elo, 1e-9);
  EXPECT_NEAR(a.nelo, -b.nelo, 1e-9);
  EXPECT_NEAR(a.elo_error95, b.elo_error95, 1e-9);
  EXPECT_NEAR(a.los, 1 - b.los, 1e-12);
  const EloEstimate c = EstimateElo(p), d = EstimateElo(p.Reversed());
  EXPECT_NEAR(c.elo, -d.elo, 1e-9);
  EXPECT_NEAR(c.nelo, -d.nelo, 1e-9);
  EXPECT_NEAR(c.los, 1 - d.los, 1e-12);
  EXPECT_GT(c.elo, 0);
}

// Pairs whose two games are independent have pair variance = game variance / 2: the same error.
TEST(EstimateEloProperties, PentanomialOfIndependentGamesMatchesTrinomial) {
  // No draws, p(win) = 0.6: pairs LL 0.16, WL 0.48, WW 0.36.
  const EloEstimate pen = EstimateElo(Pentanomial{{1600, 0, 4800, 0, 3600}});
  const EloEstimate tri = EstimateElo(Wld(12000, 8000, 0));
  EXPECT_NEAR(pen.elo, tri.elo, 1e-9);
  EXPECT_NEAR(pen.elo_error95, tri.elo_error95, 1e-9);
  EXPECT_NEAR(pen.nelo, tri.nelo, 1e-9);
}

TEST(EstimateEloProperties, DegenerateCountsDoNotProduceNan) {
  const EloEstimate none = EstimateElo(Trinomial{});
  EXPECT_EQ(none.games, 0u);
  EXPECT_EQ(none.los, 0.5);
  const EloEstimate all_wins = EstimateElo(Wld(10, 0, 0));
  EXPECT_EQ(all_wins.elo, INFINITY);
  EXPECT_EQ(all_wins.elo_error95, INFINITY);
  EXPECT_EQ(all_wins.los, 1.0);
  EXPECT_FALSE(std::isnan(all_wins.nelo));
  const EloEstimate near_all = EstimateElo(Wld(10, 0, 1));  // upper bound clipped at score 1
  EXPECT_TRUE(std::isfinite(near_all.elo));
  EXPECT_EQ(near_all.elo_upper95, INFINITY);
  EXPECT_FALSE(std::isnan(near_all.elo_error95));
}

}  // namespace
}  // namespace arbiter::stats
