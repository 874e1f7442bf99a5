// Ratings of several engines from all their games (tournaments, gauntlets).
//
//   std::vector<PairingResult> games = {{0, 1, {.losses = 40, .draws = 90, .wins = 70}}, ...};
//   absl::StatusOr<RatingTable> t = ComputeRatings({"A", "B", "C"}, games, {});
//
// Model: Bradley-Terry on the logistic Elo scale with each draw counted as half a win for both
// sides, P(i scores against j) = 1 / (1 + 10^(-(r_i - r_j)/400)); the ratings maximise
// sum over pairings of points_ij ln P_ij + points_ji ln P_ji (Newton's method on the concave
// log-likelihood). For two engines this is exactly the match formula Elo(score). (Bradley and
// Terry 1952; the same model Ordo and BayesElo without its draw parameter fit.)
// Intervals: the sandwich (robust) covariance H^-1 J H^-1 (Huber 1967, White 1980), with H the
// Fisher information and J the observed per-game score variance, so draws narrow the intervals
// as they do in the trinomial match error. One engine is anchored at 0 (default the first), or the
// mean is 0.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "stats/counts.h"

namespace arbiter::stats {

// The games of `first` against `second` (engine indices), from `first`'s point of view.
struct PairingResult {
  int first = 0, second = 0;
  Trinomial counts;
};

struct RatingOptions {
  // The engine whose rating is fixed at 0; -1 anchors the mean of all ratings at 0.
  int anchor = 0;
  // Virtual draws added to every pairing that played (a prior). 0 keeps the pure MLE, which
  // does not exist when some group of engines lost every game to the rest.
  double prior_draws = 0;
};

struct EngineRating {
  std::string name;
  // Elo relative to the anchor and half the width of its 95% interval (0 for the anchor).
  double elo = 0, error95 = 0;
  uint64_t games = 0;
  // Points and mean score over all the engine's games.
  double points = 0, score = 0;
};

// One pairing's combined games, first < second, counts from `first`'s side.
struct HeadToHead {
  int first = 0, second = 0;
  Trinomial counts;
  // Mean score of `first`, its match Elo and 95% half-width (EstimateElo of counts).
  double score = 0, elo = 0, elo_error95 = 0;
};

struct RatingTable {
  // In input order (not sorted).
  std::vector<EngineRating> ratings;
  std::vector<HeadToHead> head_to_head;
  int newton_iterations = 0;
};

// Errors: fewer than two engines, a bad anchor or engine index, an engine pairing with itself,
// a negative prior, engines not connected by games, or ratings that are unbounded (a group of
// engines scored no points at all against the others) without a prior.
absl::StatusOr<RatingTable> ComputeRatings(const std::vector<std::string>& engines,
                                           const std::vector<PairingResult>& results,
                                           const RatingOptions& options = {});

}  // namespace arbiter::stats
