// Jobs from a split's positions: the estimates jobs aim at (large first, so that workers finish
// together), and the positions packed into jobs, as contiguous runs of the split's order (a
// worker's hash then sees one region of the tree) or largest first when there are few.
#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "coordinator/perft_split.h"

namespace arbiter::coordinator {

std::vector<double> JobTargets(double total, size_t jobs) {
  std::vector<double> out(jobs, jobs > 0 ? total / double(jobs) : 0);
  if (jobs < 2) return out;
  // Linear from 1.6 to 0.4 times the mean: the mean stays total / jobs.
  for (size_t k = 0; k < jobs; ++k)
    out[k] = total / double(jobs) * (1.6 - 1.2 * double(k) / double(jobs - 1));
  return out;
}

std::vector<double> LaneJobTargets(double total, size_t jobs, size_t lanes) {
  lanes = std::clamp<size_t>(lanes, 1, std::max<size_t>(1, jobs));
  std::vector<double> out;
  for (size_t l = 0; l < lanes; ++l) {
    const size_t here = jobs * (l + 1) / lanes - jobs * l / lanes;
    for (double t : JobTargets(total / double(lanes), here)) out.push_back(t);
  }
  return out;
}

double TotalEstimate(const PerftSplit& split) {
  double total = 0;
  for (const SplitPosition& sp : split.unique) total += sp.estimate;
  return total;
}

std::vector<uint32_t> JobLanes(const PerftSplit& split,
                               const std::vector<std::vector<uint32_t>>& groups, size_t lanes) {
  const double total = TotalEstimate(split);
  std::vector<uint32_t> out;
  out.reserve(groups.size());
  double before = 0;
  for (const std::vector<uint32_t>& group : groups) {
    double here = 0;
    for (uint32_t i : group) here += split.unique[i].estimate;
    const double mid = total > 0 ? (before + here / 2) / total : 0;
    out.push_back(uint32_t(std::min<double>(double(lanes) - 1, mid * double(lanes))));
    before += here;
  }
  return out;
}

namespace {

// Largest estimate first onto the least loaded group; groups come out largest first.
std::vector<std::vector<uint32_t>> PackLargestFirst(const PerftSplit& split, size_t jobs) {
  const size_t n = split.unique.size();
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return split.unique[a].estimate > split.unique[b].estimate;
  });
  using Load = std::pair<double, size_t>;  // (estimate, group)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> heap;
  std::vector<std::vector<uint32_t>> groups(jobs);
  std::vector<double> load(jobs, 0);
  for (size_t g = 0; g < jobs; ++g) heap.push({0.0, g});
  for (uint32_t i : order) {
    auto [l, g] = heap.top();
    heap.pop();
    groups[g].push_back(i);
    load[g] = l + split.unique[i].estimate;
    heap.push({load[g], g});
  }
  std::vector<size_t> by_load(jobs);
  for (size_t g = 0; g < jobs; ++g) by_load[g] = g;
  std::stable_sort(by_load.begin(), by_load.end(),
                   [&](size_t a, size_t b) { return load[a] > load[b]; });
  std::vector<std::vector<uint32_t>> out;
  for (size_t g : by_load)
    if (!groups[g].empty()) out.push_back(std::move(groups[g]));
  return out;
}

// Contiguous runs of the split's order: position i goes to the group whose share of the
// cumulative estimate contains the midpoint of i's own estimate, so no group is off its target
// by more than one position's estimate. `targets` sum to the split's total estimate.
std::vector<std::vector<uint32_t>> PackContiguous(const PerftSplit& split,
                                                  const std::vector<double>& targets) {
  const size_t jobs = targets.size();
  std::vector<std::vector<uint32_t>> out(1);
  double before = 0, bound = targets[0];
  size_t k = 0;
  for (size_t i = 0; i < split.unique.size(); ++i) {
    const double mid = before + split.unique[i].estimate / 2;
    while (mid >= bound && k + 1 < jobs) {
      bound += targets[++k];
      if (!out.back().empty()) out.emplace_back();
    }
    out.back().push_back(uint32_t(i));
    before += split.unique[i].estimate;
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split, size_t jobs) {
  const size_t n = split.unique.size();
  if (n == 0) return {};
  jobs = std::max<size_t>(1, std::min(jobs, n));
  // Contiguous runs need enough positions per job to be balanced.
  if (n >= 4 * jobs) return PackContiguous(split, JobTargets(TotalEstimate(split), jobs));
  return PackLargestFirst(split, jobs);
}

std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split,
                                            const std::vector<double>& targets) {
  const size_t n = split.unique.size();
  if (n == 0 || targets.empty()) return {};
  if (n < 4 * targets.size()) return PackJobs(split, targets.size());
  double sum = 0;
  for (double t : targets) sum += t;
  const double scale = sum > 0 ? TotalEstimate(split) / sum : 0;
  std::vector<double> scaled(targets);
  for (double& t : scaled) t = sum > 0 ? t * scale : TotalEstimate(split) / double(targets.size());
  return PackContiguous(split, scaled);
}

}  // namespace arbiter::coordinator
