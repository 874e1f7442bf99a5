// Operating characteristics of the pentanomial SPRT on simulated game pairs: run at elo0 it
// must accept H1 in at most ~alpha of the runs, run at elo1 accept H0 in at most ~beta.
#include <cmath>
#include <cstdio>
#include <random>

#include "gtest/gtest.h"
#include "stats/elo.h"
#include "stats/sprt.h"

namespace arbiter::stats {
namespace {

constexpr double kScores[5] = {0, 0.25, 0.5, 0.75, 1};

// A pair-score distribution with plenty of draws, tilted by `e` towards the first engine.
std::array<double, 5> Tilted(double e) {
  return {0.02 - e, 0.20 - 3 * e, 0.56, 0.20 + 3 * e, 0.02 + e};
}

// Normalized Elo (per game) or logistic Elo of a pair distribution.
double EloOf(const std::array<double, 5>& p, SprtModel model) {
  double mu = 0, var = 0;
  for (int i = 0; i < 5; ++i) mu += p[i] * kScores[i];
  for (int i = 0; i < 5; ++i) var += p[i] * (kScores[i] - mu) * (kScores[i] - mu);
  return model == SprtModel::kLogistic ? ScoreToElo(mu)
                                       : (mu - 0.5) / std::sqrt(2 * var) * kNeloPerT;
}

// The tilt whose Elo is `elo`, by bisection (Elo grows with the tilt).
std::array<double, 5> WithElo(double elo, SprtModel model) {
  double lo = -0.0066, hi = 0.0066;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (EloOf(Tilted(mid), model) < elo ? lo : hi) = mid;
  }
  return Tilted((lo + hi) / 2);
}

struct Outcome {
  int h0 = 0, h1 = 0, undecided = 0;
};

// Runs the SPRT `runs` times on pairs drawn from p, looking at the LLR every `batch` pairs.
Outcome Simulate(const std::array<double, 5>& p, const SprtParams& params, int runs,
                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> pair_score(p.begin(), p.end());
  Outcome out;
  const int kBatch = 32, kMaxPairs = 400000;
  for (int run = 0; run < runs; ++run) {
    Pentanomial counts;
    SprtDecision decision = SprtDecision::kContinue;
    while (decision == SprtDecision::kContinue && counts.Pairs() < kMaxPairs) {
      for (int i = 0; i < kBatch; ++i) ++counts.counts[pair_score(rng)];
      decision = EvaluateSprt(counts, params).decision;
    }
    if (decision == SprtDecision::kAcceptH0) ++out.h0;
    if (decision == SprtDecision::kAcceptH1) ++out.h1;
    if (decision == SprtDecision::kContinue) ++out.undecided;
  }
  return out;
}

class SprtErrorRates : public testing::TestWithParam<SprtModel> {};

TEST_P(SprtErrorRates, StayNearAlphaAndBeta) {
  const SprtModel model = GetParam();
  const SprtParams params{.elo0 = 0, .elo1 = 10, .alpha = 0.05, .beta = 0.05, .model = model};
  const int kRuns = 400;
  const Outcome at_elo0 = Simulate(WithElo(params.elo0, model), params, kRuns, 1);
  const Outcome at_elo1 = Simulate(WithElo(params.elo1, model), params, kRuns, 2);
  std::printf("%s, %d runs each: at elo0 H1 accepted %.1f%%, at elo1 H0 accepted %.1f%%\n",
              std::string(SprtModelName(model)).c_str(), kRuns, 100.0 * at_elo0.h1 / kRuns,
              100.0 * at_elo1.h0 / kRuns);
  EXPECT_EQ(at_elo0.undecided + at_elo1.undecided, 0);
  // Wald: error rates at most about alpha and beta (overshoot makes them smaller); margin for
  // 400 runs (one standard deviation is about 1.1%).
  EXPECT_LE(at_elo0.h1, (params.alpha + 0.035) * kRuns);
  EXPECT_LE(at_elo1.h0, (params.beta + 0.035) * kRuns);
  // And the test does decide the right way most of the time.
  EXPECT_GE(at_elo0.h0, 0.9 * kRuns);
  EXPECT_GE(at_elo1.h1, 0.9 * kRuns);
}

INSTANTIATE_TEST_SUITE_P(Models, SprtErrorRates,
                         testing::Values(SprtModel::kNormalized, SprtModel::kLogistic),
                         [](const testing::TestParamInfo<SprtModel>& info) {
                           return std::string(SprtModelName(info.param));
                         });

}  // namespace
}  // namespace arbiter::stats
