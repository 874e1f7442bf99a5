// Fork-join helpers on plain threads: a loop cut into equal slices and a sort of slices merged
// pairwise. For the coordinator's one-off bulk work (a perft split), where a thread pool would
// sit idle between calls.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace arbiter {

// Runs fn(begin, end, part) on `parts` threads over [0, n) cut into equal slices (on the calling
// thread alone when parts <= 1).
template <class Fn>
void ParallelFor(size_t n, int parts, const Fn& fn) {
  if (parts <= 1) {
    fn(size_t(0), n, 0);
    return;
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < parts; ++t)
    threads.emplace_back([&, t] { fn(n * t / parts, n * (t + 1) / parts, t); });
  for (std::thread& th : threads) th.join();
}

// Sorts on `parts` threads: slices sorted in parallel, then merged pairwise in parallel.
template <class T>
void ParallelSort(std::vector<T>& v, int parts) {
  parts = std::max(1, parts);
  std::vector<size_t> bounds;
  for (int t = 0; t <= parts; ++t) bounds.push_back(v.size() * size_t(t) / size_t(parts));
  ParallelFor(size_t(parts), parts, [&](size_t, size_t, int t) {
    std::sort(v.begin() + bounds[t], v.begin() + bounds[t + 1]);
  });
  while (bounds.size() > 2) {
    std::vector<size_t> merged;
    const size_t pairs = (bounds.size() - 1) / 2;
    ParallelFor(pairs, int(pairs), [&](size_t begin, size_t end, int) {
      for (size_t k = begin; k < end; ++k)
        std::inplace_merge(v.begin() + bounds[2 * k], v.begin() + bounds[2 * k + 1],
                           v.begin() + bounds[2 * k + 2]);
    });
    for (size_t k = 0; k < bounds.size(); k += 2) merged.push_back(bounds[k]);
    if (merged.back() != bounds.back()) merged.push_back(bounds.back());
    bounds.swap(merged);
  }
}

}  // namespace arbiter
