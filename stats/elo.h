// Elo from match results: score, logistic Elo with its 95% interval, normalized Elo, LOS.
//
//   EloEstimate e = EstimateElo(Pentanomial{{12, 180, 410, 190, 15}});
//   printf("%.2f +/- %.2f\n", e.elo, e.elo_error95);
//
// The error bars follow fastchess/fishtest: the score's standard error is sqrt(var / n) with the
// variance of one game (trinomial) or of one game pair (pentanomial), and the Elo interval is the
// image of score +/- 1.96 standard errors under the logistic curve.
#pragma once

#include <cstdint>

#include "stats/counts.h"

namespace arbiter::stats {

// z such that P(|N(0,1)| < z) = 0.95.
inline constexpr double kZ95 = 1.959963984540054;
// nElo = t * 800/ln(10), t = (s - 1/2) / sigma: chosen so that nElo equals logistic Elo for small
// differences when no game is drawn (sigma = 1/2). Van den Bergh, "Normalized Elo" (fishtest).
inline constexpr double kNeloPerT = 347.43558552260146;

// Logistic Elo of an expected score: elo = -400 log10(1/s - 1) (±infinity at s = 1 and s = 0).
double ScoreToElo(double score);
// Expected score of a logistic Elo difference: s = 1 / (1 + 10^(-elo/400)).
double EloToScore(double elo);

struct EloEstimate {
  // Mean score per game, in [0, 1].
  double score = 0.5;
  // Trinomial: drawn games / games. Pentanomial: pairs scoring exactly 1 (WL or DD) / pairs.
  double draw_ratio = 0;
  // Logistic Elo and half the width of its 95% interval (infinite at a 0% or 100% score).
  double elo = 0, elo_error95 = 0;
  // Normalized Elo (t-value times 800/ln 10) and its 95% half-width.
  double nelo = 0, nelo_error95 = 0;
  // Likelihood of superiority: P(the first engine is stronger), normal approximation.
  double los = 0.5;
  // The 95% interval of logistic Elo itself (not symmetric around elo).
  double elo_lower95 = 0, elo_upper95 = 0;
  // Variance of the mean score of one unit (a game, or a pair's mean game score).
  double variance = 0;
  // Games counted (2 per pair).
  uint64_t games = 0;
};

// From game counts: var = E[x^2] - s^2 over x in {0, 1/2, 1} (one game); n = games;
// nElo = (s - 1/2) / sqrt(var) * 800/ln10; LOS = Phi((s - 1/2) / sqrt(var/n)). (fastchess EloWDL)
EloEstimate EstimateElo(const Trinomial& counts);
// From pair counts: x in {0, 1/4, 1/2, 3/4, 1} (a pair's mean game score); n = pairs;
// nElo = (s - 1/2) / sqrt(2 var) * 800/ln10, the per-game normalisation of the pair variance
// (fastchess EloPentanomial, fishtest stat_util).
EloEstimate EstimateElo(const Pentanomial& counts);

}  // namespace arbiter::stats
