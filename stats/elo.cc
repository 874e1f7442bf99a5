#include "stats/elo.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace arbiter::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Shared by both count kinds: `x` are per-unit mean game scores, `n` their counts, and
// `games_per_unit` is 1 for games and 2 for pairs (the nElo variance is per game).
template <int K>
EloEstimate Estimate(const double (&x)[K], const uint64_t (&n)[K], int games_per_unit) {
  EloEstimate e;
  uint64_t units = 0;
  for (int i = 0; i < K; ++i) units += n[i];
  e.games = units * games_per_unit;
  if (units == 0) return e;
  const double total = static_cast<double>(units);
  double mean = 0;
  for (int i = 0; i < K; ++i) mean += x[i] * (n[i] / total);
  double var = 0;
  for (int i = 0; i < K; ++i) var += (n[i] / total) * (x[i] - mean) * (x[i] - mean);
  e.score = mean;
  e.variance = var;
  e.draw_ratio = n[K / 2] / total;

  const double std_error = std::sqrt(var / total);
  const double lo = std::clamp(mean - kZ95 * std_error, 0.0, 1.0);
  const double hi = std::clamp(mean + kZ95 * std_error, 0.0, 1.0);
  e.elo = ScoreToElo(mean);
  e.elo_lower95 = ScoreToElo(lo);
  e.elo_upper95 = ScoreToElo(hi);
  e.elo_error95 = std::isfinite(e.elo) ? (e.elo_upper95 - e.elo_lower95) / 2 : kInf;

  // nElo is linear in the score, so its half-width is z * sqrt(var/n) / sqrt(g var) * 800/ln10.
  const double game_sigma = std::sqrt(games_per_unit * var);
  const double diff = mean - 0.5;
  if (game_sigma > 0) {
    e.nelo = diff / game_sigma * kNeloPerT;
  } else {
    e.nelo = diff == 0 ? 0 : std::copysign(kInf, diff);
  }
  e.nelo_error95 = kZ95 * kNeloPerT / std::sqrt(games_per_unit * total);

  if (std_error > 0) {
    e.los = 0.5 * (1 + std::erf(diff / (std::sqrt(2.0) * std_error)));
  } else {
    e.los = diff > 0 ? 1.0 : diff < 0 ? 0.0 : 0.5;
  }
  return e;
}

}  // namespace

double ScoreToElo(double score) {
  if (score <= 0) return -kInf;
  if (score >= 1) return kInf;
  return -400.0 * std::log10(1.0 / score - 1.0) + 0.0;  // + 0.0: no "-0" at score 1/2
}

double EloToScore(double elo) { return 1.0 / (1.0 + std::pow(10.0, -elo / 400.0)); }

EloEstimate EstimateElo(const Trinomial& c) {
  static constexpr double kScores[3] = {0.0, 0.5, 1.0};
  const uint64_t n[3] = {c.losses, c.draws, c.wins};
  return Estimate(kScores, n, 1);
}

EloEstimate EstimateElo(const Pentanomial& c) {
  static constexpr double kScores[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
  return Estimate(kScores, c.counts, 2);
}

}  // namespace arbiter::stats
