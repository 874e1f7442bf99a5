// Whether one worker's games look drawn from the same match as the rest of a run's: the
// standardized difference between its mean pair score and the other workers', with the
// pentanomial variance of a game pair (the idea of fishtest's per-worker residuals; our own
// statistic and threshold).
//
//   const double z = PairScoreResidual(worker, rest);
//   if (std::abs(z) > ResidualThreshold(workers)) ...  // improbable for an honest worker
#pragma once

#include <cstddef>

#include "stats/counts.h"

namespace arbiter::stats {

// Chance that an honest run flags one of its workers at any one check (two-sided,
// divided among the workers judged, Bonferroni). Small because the check is repeated after every
// result of a run: over a whole run the false flags stay rare (docs/residuals.md gives the
// measured rate).
inline constexpr double kResidualFamilyAlpha = 1e-6;
// Pairs a worker, and the rest of the run, must have played before the worker is judged.
inline constexpr uint64_t kResidualMinPairs = 16;
// Workers (with kResidualMinPairs each) a run needs before any is judged: of two that disagree,
// nothing says which one lies.
inline constexpr size_t kResidualMinWorkers = 3;

// (mean_w - mean_r) / sqrt(var * (1/n_w + 1/n_r)), in pair scores 0, 1/4, .., 1: `worker`'s
// mean against `rest`'s, with the variance of a pair's score over both (the run's pentanomial,
// as if every worker played the same match) after half a pair is added to each of its five
// cells, so that a run of identical pairs still has some spread. 0 when either side has no pair.
double PairScoreResidual(const Pentanomial& worker, const Pentanomial& rest);

// The |residual| beyond which a worker is flagged when `workers` are judged at once: the normal
// quantile of 1 - alpha / (2 * workers) (alpha: kResidualFamilyAlpha).
double ResidualThreshold(size_t workers, double alpha = kResidualFamilyAlpha);

// The standard normal quantile: Phi^-1(p), for p in (0, 1).
double NormalQuantile(double p);

}  // namespace arbiter::stats
