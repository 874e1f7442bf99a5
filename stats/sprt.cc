#include "stats/sprt.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/strings.h"

namespace arbiter::stats {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The Lagrange multiplier of the constrained multinomial MLE: the root of
// f(theta) = sum w_i d_i / (1 + theta d_i) on the interval where every 1 + theta d_i > 0.
// f falls strictly from +inf to -inf there, so Newton's method kept inside a shrinking bracket
// (bisecting whenever a Newton step would leave it) always converges. NaN if some d_i is not
// of each sign (then no distribution with positive weights meets the constraint).
double SolveLagrangeMultiplier(std::span<const double> w, std::span<const double> d) {
  const auto [min_it, max_it] = std::minmax_element(d.begin(), d.end());
  if (!(*min_it < 0 && *max_it > 0)) return kNan;
  double lo = -1.0 / *max_it, hi = -1.0 / *min_it;
  double theta = 0;
  for (int iter = 0; iter < 400; ++iter) {
    double f = 0, df = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      const double q = d[i] / (1.0 + theta * d[i]);
      f += w[i] * q;
      df -= w[i] * q * q;
    }
    if (f == 0) return theta;
    (f > 0 ? lo : hi) = theta;
    double next = theta - f / df;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - theta) <= 1e-15 * std::max(1.0, std::abs(theta))) return next;
    theta = next;
  }
  return theta;
}

// phat_i = counts_i / N.
std::vector<double> Frequencies(std::span<const double> counts, double* total) {
  double n = 0;
  for (double c : counts) n += c;
  std::vector<double> p(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) p[i] = counts[i] / n;
  *total = n;
  return p;
}

// N sum phat_i ln(p1_i / p0_i).
double Llr(double total, std::span<const double> phat, std::span<const double> p0,
           std::span<const double> p1) {
  double sum = 0;
  for (size_t i = 0; i < phat.size(); ++i) sum += phat[i] * std::log(p1[i] / p0[i]);
  return total * sum;
}

// MLE of the distribution on `scores` with mean s, nearest (in likelihood) to phat.
std::vector<double> MleMean(std::span<const double> scores, std::span<const double> phat,
                            double s) {
  std::vector<double> d(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) d[i] = scores[i] - s;
  const double theta = SolveLagrangeMultiplier(phat, d);
  std::vector<double> p(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) p[i] = phat[i] / (1.0 + theta * d[i]);
  return p;
}

// Mean and standard deviation of the distribution p on `scores`.
void Moments(std::span<const double> scores, std::span<const double> p, double& mu, double& sigma) {
  mu = 0;
  double var = 0;
  for (size_t i = 0; i < p.size(); ++i) mu += p[i] * scores[i];
  for (size_t i = 0; i < p.size(); ++i) var += p[i] * (scores[i] - mu) * (scores[i] - mu);
  sigma = std::sqrt(var);
}

// The fixed-point iteration of Van den Bergh section 4.1 for "(mu - 1/2) / sigma = t", from p
// (updated in place): each step solves the constraint linearised at p, sum q_i phi_i = 0. False
// if it breaks down (the linearised constraint has no positive solution) or does not settle.
bool NormalizedFixedPoint(std::span<const double> scores, std::span<const double> phat, double t,
                          std::vector<double>& p) {
  const size_t k = scores.size();
  std::vector<double> phi(k);
  for (int iter = 0; iter < 20000; ++iter) {
    double mu = 0, sigma = 0;
    Moments(scores, p, mu, sigma);
    for (size_t i = 0; i < k; ++i) {
      const double z = (scores[i] - mu) / sigma;
      phi[i] = scores[i] - 0.5 - 0.5 * t * sigma * (1.0 + z * z);
    }
    const double theta = SolveLagrangeMultiplier(phat, phi);
    if (!std::isfinite(theta)) return false;
    double change = 0;
    for (size_t i = 0; i < k; ++i) {
      const double next = phat[i] / (1.0 + theta * phi[i]);
      change = std::max(change, std::abs(next - p[i]));
      p[i] = next;
    }
    if (!(change >= 1e-14)) return std::isfinite(change);
  }
  return false;
}

// MLE of the distribution on `scores` with (mu - 1/2) / sigma = t. The fixed point is followed
// from the data's own t (where phat itself is the answer) towards the target, halving the step
// whenever the iteration breaks down, so distant targets (large nElo bounds) stay solvable.
std::vector<double> MleNormalized(std::span<const double> scores, std::span<const double> phat,
                                  double t) {
  std::vector<double> p(phat.begin(), phat.end());
  double mu = 0, sigma = 0;
  Moments(scores, p, mu, sigma);
  double t_now = (mu - 0.5) / sigma;
  double step = t - t_now;
  for (int attempt = 0; attempt < 400 && t_now != t; ++attempt) {
    const double target = std::abs(step) >= std::abs(t - t_now) ? t : t_now + step;
    std::vector<double> q = p;
    if (NormalizedFixedPoint(scores, phat, target, q)) {
      p = std::move(q);
      t_now = target;
      step *= 2;
    } else {
      step /= 2;
    }
  }
  if (t_now != t) std::fill(p.begin(), p.end(), kNan);
  return p;
}

// Game counts implied by pair counts, a pair scoring 1 taken as two draws.
Trinomial GamesOfPairs(const Pentanomial& c) {
  const uint64_t* n = c.counts;
  return {.losses = 2 * n[0] + n[1], .draws = n[1] + 2 * n[2] + n[3], .wins = 2 * n[4] + n[3]};
}

SprtResult Finish(double llr, const SprtParams& params) {
  const SprtBounds bounds = SprtLlrBounds(params.alpha, params.beta);
  return {.llr = llr,
          .lower = bounds.lower,
          .upper = bounds.upper,
          .decision = DecideSprt(llr, bounds)};
}

}  // namespace

std::string_view SprtModelName(SprtModel model) {
  switch (model) {
    case SprtModel::kLogistic:
      return "logistic";
    case SprtModel::kNormalized:
      return "normalized";
    case SprtModel::kBayesElo:
      return "bayeselo";
  }
  return "?";
}

absl::StatusOr<SprtModel> ParseSprtModel(std::string_view name) {
  for (SprtModel m : {SprtModel::kLogistic, SprtModel::kNormalized, SprtModel::kBayesElo}) {
    if (name == SprtModelName(m)) return m;
  }
  return absl::InvalidArgumentError(
      Cat("unknown SPRT model '", name, "' (expected logistic, normalized or bayeselo)"));
}

std::string_view SprtDecisionName(SprtDecision decision) {
  switch (decision) {
    case SprtDecision::kContinue:
      return "continue";
    case SprtDecision::kAcceptH0:
      return "H0 accepted";
    case SprtDecision::kAcceptH1:
      return "H1 accepted";
  }
  return "?";
}

absl::Status ValidateSprtParams(const SprtParams& p) {
  if (!std::isfinite(p.elo0) || !std::isfinite(p.elo1)) {
    return absl::InvalidArgumentError("SPRT: elo0 and elo1 must be finite numbers");
  }
  if (p.elo0 >= p.elo1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SPRT: elo0 (%g) must be less than elo1 (%g)", p.elo0, p.elo1));
  }
  if (!(p.alpha > 0 && p.alpha < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SPRT: alpha (%g) must be in (0, 1)", p.alpha));
  }
  if (!(p.beta > 0 && p.beta < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("SPRT: beta (%g) must be in (0, 1)", p.beta));
  }
  if (p.alpha + p.beta >= 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SPRT: alpha + beta (%g) must be less than 1", p.alpha + p.beta));
  }
  return absl::OkStatus();
}

SprtBounds SprtLlrBounds(double alpha, double beta) {
  return {.lower = std::log(beta / (1 - alpha)), .upper = std::log((1 - beta) / alpha)};
}

SprtDecision DecideSprt(double llr, const SprtBounds& bounds) {
  if (llr >= bounds.upper) return SprtDecision::kAcceptH1;
  if (llr <= bounds.lower) return SprtDecision::kAcceptH0;
  return SprtDecision::kContinue;
}

double RegularizedCount(uint64_t count) { return count == 0 ? 1e-3 : static_cast<double>(count); }

double GeneralizedLlrLogistic(std::span<const double> scores, std::span<const double> counts,
                              double s0, double s1) {
  double total = 0;
  const std::vector<double> phat = Frequencies(counts, &total);
  return Llr(total, phat, MleMean(scores, phat, s0), MleMean(scores, phat, s1));
}

double GeneralizedLlrNormalized(std::span<const double> scores, std::span<const double> counts,
                                double t0, double t1) {
  double total = 0;
  const std::vector<double> phat = Frequencies(counts, &total);
  return Llr(total, phat, MleNormalized(scores, phat, t0), MleNormalized(scores, phat, t1));
}

BayesEloFit FitBayesElo(const Trinomial& c) {
  const double n = static_cast<double>(c.Games());
  const double pw = c.wins / n, pl = c.losses / n;
  return {.elo = 200 * std::log10(pw / pl * (1 - pl) / (1 - pw)),
          .draw_elo = 200 * std::log10((1 - pl) / pl * (1 - pw) / pw)};
}

double BayesEloLlr(const Trinomial& c, double elo0, double elo1) {
  if (c.wins == 0 || c.losses == 0 || c.draws == 0) return 0;
  const double draw_elo = FitBayesElo(c).draw_elo;
  const double x = std::pow(10.0, -draw_elo / 400);
  const double scale = 4 * x / ((1 + x) * (1 + x));
  // Win, loss and draw probabilities of a BayesElo difference at this draw_elo.
  auto probabilities = [draw_elo](double elo) {
    const double win = 1 / (1 + std::pow(10.0, (draw_elo - elo) / 400));
    const double loss = 1 / (1 + std::pow(10.0, (draw_elo + elo) / 400));
    return std::array<double, 3>{win, loss, 1 - win - loss};
  };
  const std::array<double, 3> p0 = probabilities(elo0 / scale);
  const std::array<double, 3> p1 = probabilities(elo1 / scale);
  return c.wins * std::log(p1[0] / p0[0]) + c.losses * std::log(p1[1] / p0[1]) +
         c.draws * std::log(p1[2] / p0[2]);
}

SprtResult EvaluateSprt(const Trinomial& c, const SprtParams& params) {
  if (!ValidateSprtParams(params).ok()) return {};
  static constexpr double kScores[3] = {0.0, 0.5, 1.0};
  const double counts[3] = {RegularizedCount(c.losses), RegularizedCount(c.draws),
                            RegularizedCount(c.wins)};
  double llr = 0;
  switch (params.model) {
    case SprtModel::kLogistic:
      llr =
          GeneralizedLlrLogistic(kScores, counts, EloToScore(params.elo0), EloToScore(params.elo1));
      break;
    case SprtModel::kNormalized:
      llr = GeneralizedLlrNormalized(kScores, counts, params.elo0 / kNeloPerT,
                                     params.elo1 / kNeloPerT);
      break;
    case SprtModel::kBayesElo:
      llr = BayesEloLlr(c, params.elo0, params.elo1);
      break;
  }
  return Finish(llr, params);
}

SprtResult EvaluateSprt(const Pentanomial& c, const SprtParams& params) {
  if (!ValidateSprtParams(params).ok()) return {};
  if (params.model == SprtModel::kBayesElo) return EvaluateSprt(GamesOfPairs(c), params);
  static constexpr double kScores[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
  double counts[5];
  for (int i = 0; i < 5; ++i) counts[i] = RegularizedCount(c.counts[i]);
  double llr = 0;
  if (params.model == SprtModel::kLogistic) {
    llr = GeneralizedLlrLogistic(kScores, counts, EloToScore(params.elo0), EloToScore(params.elo1));
  } else {
    const double per_pair = std::sqrt(2.0) / kNeloPerT;
    llr = GeneralizedLlrNormalized(kScores, counts, params.elo0 * per_pair, params.elo1 * per_pair);
  }
  return Finish(llr, params);
}

}  // namespace arbiter::stats
