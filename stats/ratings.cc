#include "stats/ratings.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "base/strings.h"
#include "stats/elo.h"

namespace arbiter::stats {
namespace {

// d/dr of the logistic curve in Elo units: P' = kSlope P (1 - P).
constexpr double kSlope = 2.302585092994046 / 400;

using Matrix = std::vector<std::vector<double>>;

Matrix Zeros(size_t n) { return Matrix(n, std::vector<double>(n, 0.0)); }

// Inverse by Gauss-Jordan elimination with partial pivoting; false when singular.
bool Invert(Matrix a, Matrix& inverse) {
  const size_t n = a.size();
  inverse = Zeros(n);
  for (size_t i = 0; i < n; ++i) inverse[i][i] = 1;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (!(std::abs(a[pivot][col]) > 1e-300)) return false;
    std::swap(a[pivot], a[col]);
    std::swap(inverse[pivot], inverse[col]);
    const double inv = 1 / a[col][col];
    for (size_t c = 0; c < n; ++c) {
      a[col][c] *= inv;
      inverse[col][c] *= inv;
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == col || a[r][col] == 0) continue;
      const double f = a[r][col];
      for (size_t c = 0; c < n; ++c) {
        a[r][c] -= f * a[col][c];
        inverse[r][c] -= f * inverse[col][c];
      }
    }
  }
  return true;
}

Matrix Multiply(const Matrix& a, const Matrix& b) {
  const size_t n = a.size();
  Matrix out = Zeros(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < n; ++k) {
      if (a[i][k] == 0) continue;
      for (size_t j = 0; j < n; ++j) out[i][j] += a[i][k] * b[k][j];
    }
  }
  return out;
}

// A pairing's games with the prior applied: points of i and j, and the draws to weigh in J.
struct Pair {
  int i = 0, j = 0;
  Trinomial counts;  // from i's side, without the prior
  double points_i = 0, points_j = 0, draws = 0;
  double Games() const { return points_i + points_j; }
};

double Expected(const std::vector<double>& r, const Pair& p) {
  return 1 / (1 + std::pow(10.0, -(r[p.i] - r[p.j]) / 400));
}

double LogLikelihood(const std::vector<double>& r, const std::vector<Pair>& pairs) {
  double sum = 0;
  for (const Pair& p : pairs) {
    const double e = Expected(r, p);
    if (p.points_i > 0) sum += p.points_i * std::log(e);
    if (p.points_j > 0) sum += p.points_j * std::log1p(-e);
  }
  return sum;
}

// Adds w (e_i - e_j)(e_i - e_j)^T to m.
void AddOuter(Matrix& m, int i, int j, double w) {
  m[i][i] += w;
  m[j][j] += w;
  m[i][j] -= w;
  m[j][i] -= w;
}

std::string Names(const std::vector<std::string>& engines, const std::vector<bool>& pick,
                  bool value) {
  std::string out;
  for (size_t i = 0; i < engines.size(); ++i) {
    if (pick[i] != value) continue;
    if (!out.empty()) out += ", ";
    out += engines[i];
  }
  return out;
}

// Engines reachable from engine 0 along edges(i, j).
template <typename Edge>
std::vector<bool> Reachable(int n, Edge edge) {
  std::vector<bool> seen(n, false);
  std::vector<int> stack = {0};
  seen[0] = true;
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    for (int j = 0; j < n; ++j) {
      if (!seen[j] && edge(i, j)) {
        seen[j] = true;
        stack.push_back(j);
      }
    }
  }
  return seen;
}

}  // namespace

absl::StatusOr<RatingTable> ComputeRatings(const std::vector<std::string>& engines,
                                           const std::vector<PairingResult>& results,
                                           const RatingOptions& options) {
  const int n = static_cast<int>(engines.size());
  if (n < 2) return absl::InvalidArgumentError(Cat("ratings need at least 2 engines, got ", n));
  if (options.anchor < -1 || options.anchor >= n) {
    return absl::InvalidArgumentError(
        Cat("rating anchor ", options.anchor, " is not an engine index (0..", n - 1, ") or -1"));
  }
  if (!(options.prior_draws >= 0) || !std::isfinite(options.prior_draws)) {
    return absl::InvalidArgumentError("rating prior_draws must be a finite number >= 0");
  }

  // Combine all results per unordered pairing, from the lower index's side.
  std::vector<Trinomial> table(n * n);
  for (size_t k = 0; k < results.size(); ++k) {
    const PairingResult& r = results[k];
    if (r.first < 0 || r.first >= n || r.second < 0 || r.second >= n) {
      return absl::InvalidArgumentError(Cat("result ", k, ": engine index out of range (", r.first,
                                            " vs ", r.second, ", ", n, " engines)"));
    }
    if (r.first == r.second) {
      return absl::InvalidArgumentError(
          Cat("result ", k, ": engine '", engines[r.first], "' paired with itself"));
    }
    const bool flip = r.first > r.second;
    const Trinomial c = flip ? r.counts.Reversed() : r.counts;
    Trinomial& t = table[std::min(r.first, r.second) * n + std::max(r.first, r.second)];
    t.losses += c.losses;
    t.draws += c.draws;
    t.wins += c.wins;
  }
  std::vector<Pair> pairs;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const Trinomial& c = table[i * n + j];
      if (c.Games() == 0) continue;
      Pair p{.i = i, .j = j, .counts = c};
      p.draws = c.draws + options.prior_draws;
      p.points_i = c.wins + 0.5 * p.draws;
      p.points_j = c.losses + 0.5 * p.draws;
      pairs.push_back(p);
    }
  }

  // The MLE exists iff every split of the engines has points scored across it both ways.
  std::vector<double> scored(n * n, 0.0);  // scored[i*n+j]: points of i against j
  for (const Pair& p : pairs) {
    scored[p.i * n + p.j] = p.points_i;
    scored[p.j * n + p.i] = p.points_j;
  }
  const std::vector<bool> connected = Reachable(
      n, [&](int i, int j) { return table[std::min(i, j) * n + std::max(i, j)].Games() > 0; });
  if (std::find(connected.begin(), connected.end(), false) != connected.end()) {
    return absl::FailedPreconditionError(Cat("ratings: no games connect engines {",
                                             Names(engines, connected, true), "} with engines {",
                                             Names(engines, connected, false), "}"));
  }
  const std::vector<bool> losers =
      Reachable(n, [&](int i, int j) { return scored[i * n + j] > 0; });
  const std::vector<bool> winners =
      Reachable(n, [&](int i, int j) { return scored[j * n + i] > 0; });
  for (const std::vector<bool>* group : {&losers, &winners}) {
    if (std::find(group->begin(), group->end(), false) == group->end()) continue;
    const bool lost = group == &losers;
    return absl::FailedPreconditionError(
        Cat("ratings are unbounded: engines {", Names(engines, *group, lost),
            "} scored no points against engines {", Names(engines, *group, !lost),
            "}; play more games or set a prior (virtual draws)"));
  }

  // Newton's method on the ratings other than `fixed`, which stays 0.
  const int fixed = options.anchor >= 0 ? options.anchor : 0;
  std::vector<int> free_index;  // position of each engine in the reduced system, -1 if fixed
  int m = 0;
  for (int i = 0; i < n; ++i) free_index.push_back(i == fixed ? -1 : m++);
  std::vector<double> r(n, 0.0);
  auto information = [&](const std::vector<double>& at, Matrix& info, std::vector<double>& grad) {
    Matrix full = Zeros(n);
    std::vector<double> g(n, 0.0);
    for (const Pair& p : pairs) {
      const double e = Expected(at, p);
      const double residual = kSlope * (p.points_i - p.Games() * e);
      g[p.i] += residual;
      g[p.j] -= residual;
      AddOuter(full, p.i, p.j, kSlope * kSlope * p.Games() * e * (1 - e));
    }
    info = Zeros(m);
    grad.assign(m, 0.0);
    for (int i = 0; i < n; ++i) {
      if (free_index[i] < 0) continue;
      grad[free_index[i]] = g[i];
      for (int j = 0; j < n; ++j) {
        if (free_index[j] >= 0) info[free_index[i]][free_index[j]] = full[i][j];
      }
    }
  };

  RatingTable out;
  Matrix info, inverse;
  std::vector<double> grad;
  for (int iter = 0; iter < 200; ++iter) {
    information(r, info, grad);
    if (!Invert(info, inverse)) {
      return absl::InternalError("ratings: singular information matrix");
    }
    std::vector<double> step(n, 0.0);
    double largest = 0;
    for (int i = 0; i < n; ++i) {
      if (free_index[i] < 0) continue;
      for (int j = 0; j < m; ++j) step[i] += inverse[free_index[i]][j] * grad[j];
      largest = std::max(largest, std::abs(step[i]));
    }
    out.newton_iterations = iter + 1;
    // Halve the step until the likelihood does not fall (it is concave, so this terminates).
    const double before = LogLikelihood(r, pairs);
    std::vector<double> next(n);
    for (double t = 1; t > 1e-12; t /= 2) {
      for (int i = 0; i < n; ++i) next[i] = r[i] + t * step[i];
      if (LogLikelihood(next, pairs) >= before - 1e-12 * std::abs(before)) break;
    }
    r = next;
    if (largest < 1e-10) break;
  }

  // Sandwich covariance of the free ratings: H^-1 J H^-1 at the optimum.
  information(r, info, grad);
  if (!Invert(info, inverse)) return absl::InternalError("ratings: singular information matrix");
  Matrix observed = Zeros(n);
  for (const Pair& p : pairs) {
    const double e = Expected(r, p);
    const double q = p.counts.wins * (1 - e) * (1 - e) + p.draws * (0.5 - e) * (0.5 - e) +
                     p.counts.losses * e * e;
    AddOuter(observed, p.i, p.j, kSlope * kSlope * q);
  }
  Matrix j_reduced = Zeros(m);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (free_index[i] >= 0 && free_index[j] >= 0) {
        j_reduced[free_index[i]][free_index[j]] = observed[i][j];
      }
    }
  }
  const Matrix reduced = Multiply(Multiply(inverse, j_reduced), inverse);
  Matrix cov = Zeros(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (free_index[i] >= 0 && free_index[j] >= 0) {
        cov[i][j] = reduced[free_index[i]][free_index[j]];
      }
    }
  }
  if (options.anchor < 0) {
    // Centre: r' = (I - 11^T/n) r, cov' = A cov A^T.
    double mean = 0;
    for (double x : r) mean += x / n;
    for (double& x : r) x -= mean;
    std::vector<double> row_mean(n, 0.0), col_mean(n, 0.0);
    double all_mean = 0;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        row_mean[i] += cov[i][j] / n;
        col_mean[j] += cov[i][j] / n;
        all_mean += cov[i][j] / n / n;
      }
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) cov[i][j] += all_mean - row_mean[i] - col_mean[j];
    }
  }

  for (int i = 0; i < n; ++i) {
    EngineRating e{.name = engines[i], .elo = r[i]};
    e.error95 = kZ95 * std::sqrt(std::max(0.0, cov[i][i]));
    out.ratings.push_back(e);
  }
  for (const Pair& p : pairs) {
    const Trinomial& c = p.counts;
    for (int side : {p.i, p.j}) {
      EngineRating& e = out.ratings[side];
      e.games += c.Games();
      e.points += side == p.i ? c.wins + 0.5 * c.draws : c.losses + 0.5 * c.draws;
    }
    const EloEstimate est = EstimateElo(c);
    out.head_to_head.push_back({.first = p.i,
                                .second = p.j,
                                .counts = c,
                                .score = est.score,
                                .elo = est.elo,
                                .elo_error95 = est.elo_error95});
  }
  for (EngineRating& e : out.ratings) e.score = e.games ? e.points / e.games : 0;
  return out;
}

}  // namespace arbiter::stats
