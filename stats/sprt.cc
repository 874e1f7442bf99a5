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

// The exponentially tilted multinomial of the constrained MLE: p_i = w_i / (1 + theta d_i),
// theta the root of f(theta) = sum w_i d_i / (1 + theta d_i) (so that sum p_i d_i = 0 and
// sum p_i = sum w_i) on the interval where every 1 + theta d_i > 0 (only outcomes with w_i > 0
// count; the others get p_i = 0). False if the d_i of those outcomes are not of both signs (then
// no distribution with positive weights meets the constraint) or are not finite.
//
// Far from the data the root lies next to a pole, 1 + theta d_j ~ 1e-7 for the extreme d_j
// carrying the probability the data lack; solving for theta and forming 1 + theta d_j would lose
// most digits of p_j (enough to make a fixed point built on it wander in the last ~10 digits).
// So the unknown is x = 1 + theta d_j itself, the denominator of that pole (j the extreme d on
// the side of the root): every denominator is then D_i(x) = (1 - r_i) + x r_i with
// r_i = d_i / d_j <= 1, a sum of non-negative terms for x in (0, 1], computed without
// cancellation. The root is the zero of k(x) = x f / d_j = sum w_i r_i x / D_i(x), which is
// smooth at the pole (k(0+) = w_j > 0, k(1) = f(0) / d_j < 0): Newton's method inside a shrinking
// bracket, bisecting (geometrically near 0) whenever a step would leave it, stopping when the
// step is within a few ulps. The iteration count is bounded; the answer is always in the bracket.
bool SolveLagrangeMultiplier(std::span<const double> w, std::span<const double> d,
                             std::span<double> p) {
  const size_t k = w.size();
  size_t lo_i = k, hi_i = k;
  double f0 = 0;
  for (size_t i = 0; i < k; ++i) {
    if (!(w[i] > 0)) continue;
    f0 += w[i] * d[i];
    if (lo_i == k || d[i] < d[lo_i]) lo_i = i;
    if (hi_i == k || d[i] > d[hi_i]) hi_i = i;
  }
  if (lo_i == k || !std::isfinite(f0) || !(d[lo_i] < 0 && d[hi_i] > 0)) return false;
  if (f0 == 0) {  // theta = 0: the weights already meet the constraint.
    for (size_t i = 0; i < k; ++i) p[i] = w[i] > 0 ? w[i] : 0;
    return true;
  }
  // f falls with theta, so f(0) > 0 puts the root at theta > 0, next to the pole of the most
  // negative d; f(0) < 0 next to the pole of the most positive d.
  const double dj = f0 > 0 ? d[lo_i] : d[hi_i];
  std::vector<double> r(k);
  for (size_t i = 0; i < k; ++i) r[i] = d[i] / dj;
  auto denominator = [&r](size_t i, double x) { return (1 - r[i]) + x * r[i]; };
  double lo = 0, hi = 1, x = 1;
  for (int iter = 0; iter < 200; ++iter) {
    double value = 0, slope = 0;
    for (size_t i = 0; i < k; ++i) {
      if (!(w[i] > 0)) continue;
      const double den = denominator(i, x);
      value += w[i] * r[i] * (x / den);
      slope += w[i] * r[i] * (1 - r[i]) / (den * den);
    }
    if (value == 0) break;
    (value > 0 ? lo : hi) = x;
    double next = x - value / slope;
    if (!(next > lo && next < hi)) {
      next = lo > 0 && hi > 4 * lo ? std::sqrt(lo * hi) : lo > 0 ? 0.5 * (lo + hi) : 0.125 * hi;
    }
    const bool settled = std::abs(next - x) <= 4 * std::numeric_limits<double>::epsilon() * next;
    x = next;
    if (settled || hi - lo <= 4 * std::numeric_limits<double>::epsilon() * hi) break;
  }
  for (size_t i = 0; i < k; ++i) p[i] = w[i] > 0 ? w[i] / denominator(i, x) : 0;
  return true;
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
  for (size_t i = 0; i < phat.size(); ++i) {
    if (phat[i] > 0) sum += phat[i] * std::log(p1[i] / p0[i]);
  }
  return total * sum;
}

// MLE of the distribution on `scores` with mean s, nearest (in likelihood) to phat.
std::vector<double> MleMean(std::span<const double> scores, std::span<const double> phat,
                            double s) {
  std::vector<double> d(scores.size()), p(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) d[i] = scores[i] - s;
  if (!SolveLagrangeMultiplier(phat, d, p)) std::fill(p.begin(), p.end(), kNan);
  return p;
}

// Mean and standard deviation of a distribution on `scores`.
struct MeanSd {
  double mu = 0, sigma = 0;
};
MeanSd Moments(std::span<const double> scores, std::span<const double> p) {
  double mu = 0, var = 0;
  for (size_t i = 0; i < p.size(); ++i) mu += p[i] * scores[i];
  for (size_t i = 0; i < p.size(); ++i) var += p[i] * (scores[i] - mu) * (scores[i] - mu);
  return {mu, std::sqrt(var)};
}

// The MLE for "(mu - 1/2) / sigma = t" is a fixed point (Van den Bergh section 4.1): with the
// constraint linearised at a distribution of mean mu and sd sigma, phi_i = a_i - 1/2 - t sigma
// (1 + ((a_i - mu)/sigma)^2) / 2, the linearised MLE q_i = phat_i / (1 + theta phi_i) must have
// mean mu and sd sigma again. The map depends on the distribution only through (mu, sigma), so
// the fixed point is a root of the 2-D residual R(mu, sigma) = moments(q) - (mu, sigma), and at a
// residual r the q found meets the true constraint up to O(r^2) (its linearisation is exact to
// first order), which is what makes a tolerance on r safe.
class NormalizedFixedPoint {
 public:
  NormalizedFixedPoint(std::span<const double> scores, std::span<const double> phat, double t)
      : scores_(scores), phat_(phat), t_(t), phi_(scores.size()) {}

  // The fixed point from the start (mu, sigma), written to p. Newton's method on R with a
  // finite-difference Jacobian, each step kept only if it shrinks |R|, else the plain fixed-point
  // step (the classic iteration). Stops at |R| <= kTolerance; if rounding noise keeps |R| above
  // that (ill-conditioned, nearly one-outcome data), the best iterate is taken once it stops
  // improving, provided |R| <= kAcceptable. False if the linearised problem has no solution on
  // the way or the iteration does not get within kAcceptable.
  bool Solve(MeanSd start, std::vector<double>& p) {
    std::vector<double> q(phat_.size()), trial(phat_.size());
    MeanSd y = start, r;
    if (!Evaluate(y, q, r)) return false;
    double best = Norm(r);
    std::vector<double> best_q = q;
    int stalled = 0;
    for (int iter = 0; iter < kMaxIterations && best > kTolerance; ++iter) {
      MeanSd next = {y.mu + r.mu, y.sigma + r.sigma}, r_next;  // The plain step.
      if (MeanSd newton;
          NewtonStep(y, r, newton) && Evaluate(newton, trial, r_next) && Norm(r_next) < Norm(r)) {
        next = newton;
        q.swap(trial);
      } else if (!Evaluate(next, q, r_next)) {
        return false;
      }
      y = next;
      r = r_next;
      if (Norm(r) < best) {
        best = Norm(r);
        best_q = q;
        stalled = 0;
      } else if (++stalled >= kMaxStalled) {
        break;
      }
    }
    if (!(best <= kAcceptable)) return false;
    p = std::move(best_q);
    return true;
  }

 private:
  static constexpr double kTolerance = 1e-13, kAcceptable = 1e-8;
  static constexpr int kMaxIterations = 200, kMaxStalled = 8;

  static double Norm(MeanSd r) { return std::max(std::abs(r.mu), std::abs(r.sigma)); }

  // q for the constraint linearised at y, and R(y). False if there is none.
  bool Evaluate(MeanSd y, std::span<double> q, MeanSd& r) {
    if (!(y.sigma > 0) || !std::isfinite(y.mu) || !std::isfinite(y.sigma)) return false;
    for (size_t i = 0; i < scores_.size(); ++i) {
      const double z = (scores_[i] - y.mu) / y.sigma;
      phi_[i] = scores_[i] - 0.5 - 0.5 * t_ * y.sigma * (1.0 + z * z);
    }
    if (!SolveLagrangeMultiplier(phat_, phi_, q)) return false;
    const MeanSd m = Moments(scores_, q);
    r = {m.mu - y.mu, m.sigma - y.sigma};
    return std::isfinite(r.mu) && std::isfinite(r.sigma);
  }

  // y - J^-1 R(y), J by forward differences on the scale of sigma. False if J is unavailable.
  bool NewtonStep(MeanSd y, MeanSd r, MeanSd& out) {
    std::vector<double> scratch(phat_.size());
    const double h = 1e-7 * y.sigma;
    MeanSd r_mu, r_sigma;
    if (!Evaluate({y.mu + h, y.sigma}, scratch, r_mu)) return false;
    if (!Evaluate({y.mu, y.sigma + h}, scratch, r_sigma)) return false;
    const double a = (r_mu.mu - r.mu) / h, b = (r_sigma.mu - r.mu) / h;
    const double c = (r_mu.sigma - r.sigma) / h, d = (r_sigma.sigma - r.sigma) / h;
    const double det = a * d - b * c;
    if (!(std::abs(det) > 0) || !std::isfinite(det)) return false;
    out = {y.mu - (d * r.mu - b * r.sigma) / det, y.sigma - (a * r.sigma - c * r.mu) / det};
    return true;
  }

  std::span<const double> scores_, phat_;
  double t_;
  std::vector<double> phi_;
};

// sum phat_i ln p_i, the log-likelihood per observation (outcomes the data lack do not count).
double LogLikelihood(std::span<const double> phat, std::span<const double> p) {
  double sum = 0;
  for (size_t i = 0; i < phat.size(); ++i) {
    if (phat[i] > 0) sum += phat[i] * std::log(p[i]);
  }
  return sum;
}

// The fixed point followed from the data's own t (where phat itself is the answer) towards the
// target t, halving the step whenever a solve fails, so distant targets (large nElo bounds) stay
// solvable. False if the target is not reached.
bool FollowFromData(std::span<const double> scores, std::span<const double> phat, double t,
                    std::vector<double>& p) {
  p.assign(phat.begin(), phat.end());
  MeanSd m = Moments(scores, p);
  if (!(m.sigma > 0)) return false;
  double t_now = (m.mu - 0.5) / m.sigma;
  double step = t - t_now;
  for (int attempt = 0; attempt < 100 && t_now != t; ++attempt) {
    const double target = std::abs(step) >= std::abs(t - t_now) ? t : t_now + step;
    if (NormalizedFixedPoint(scores, phat, target).Solve(m, p)) {
      m = Moments(scores, p);
      t_now = target;
      step *= 2;
    } else {
      step /= 2;
    }
  }
  return t_now == t;
}

// MLE of the distribution on `scores` with (mu - 1/2) / sigma = t. The constrained likelihood
// can have more than one local maximum when the data sit (nearly) on one outcome (several unseen
// outcomes can carry the missing mass; which is best is decided by the regularised counts), so
// the fixed point is solved from two starts, the data's moments and the uniform distribution's
// (fishtest's start), and the solution of higher likelihood is taken (the data's on a tie). Only
// if neither converges is the target reached by FollowFromData. NaN if nothing works.
std::vector<double> MleNormalized(std::span<const double> scores, std::span<const double> phat,
                                  double t) {
  const size_t k = scores.size();
  const std::vector<double> uniform(k, 1.0 / static_cast<double>(k));
  std::vector<double> best, p;
  double best_ll = -std::numeric_limits<double>::infinity();
  for (std::span<const double> start : {phat, std::span<const double>(uniform)}) {
    if (!NormalizedFixedPoint(scores, phat, t).Solve(Moments(scores, start), p)) continue;
    const double ll = LogLikelihood(phat, p);
    if (best.empty() || ll > best_ll) {
      best = p;
      best_ll = ll;
    }
  }
  if (best.empty() && !FollowFromData(scores, phat, t, best)) best.assign(k, kNan);
  return best;
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
