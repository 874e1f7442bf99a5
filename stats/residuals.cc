#include "stats/residuals.h"

#include <algorithm>
#include <cmath>

namespace arbiter::stats {
namespace {

// Mean and variance of the pair score (0, 1/4, .., 1) over counts `c` (plus `prior` per cell).
void Moments(const Pentanomial& p, double prior, double& n, double& mean, double& var) {
  n = 0;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < 5; ++i) {
    const double c = double(p.counts[i]) + prior, x = i / 4.0;
    n += c;
    sum += c * x;
    sum2 += c * x * x;
  }
  mean = n > 0 ? sum / n : 0;
  var = n > 0 ? std::max(0.0, sum2 / n - mean * mean) : 0;
}

}  // namespace

double PairScoreResidual(const Pentanomial& worker, const Pentanomial& rest) {
  if (worker.Pairs() == 0 || rest.Pairs() == 0) return 0;
  double nw = 0, mw = 0, nr = 0, mr = 0, n = 0, mean = 0, var = 0, ignored = 0;
  Moments(worker, 0, nw, mw, ignored);
  Moments(rest, 0, nr, mr, ignored);
  Pentanomial all = rest;
  for (int i = 0; i < 5; ++i) all.counts[i] += worker.counts[i];
  Moments(all, 0.5, n, mean, var);
  return (mw - mr) / std::sqrt(var * (1 / nw + 1 / nr));
}

double NormalQuantile(double p) {
  // Bisection on the upper tail 0.5 * erfc(z / sqrt 2), exact to double precision in 200 steps.
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

double ResidualThreshold(size_t workers, double alpha) {
  return -NormalQuantile(alpha / (2 * double(std::max<size_t>(1, workers))));
}

}  // namespace arbiter::stats
