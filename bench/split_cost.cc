// The coordinator's cost of splitting start-position perft(DEPTH) for 2 workers with hashes of
// their own, two ways, alternately in one run (bench/split_cost.sh):
//   at once:   SplitPerft merges the last ply of the split in memory, then the jobs are packed
//              (the whole split merged before the first job existed);
//   in shards: SplitPerft stops a ply short (its last ply has many paths), BucketedShards
//              generates the paths once and merges them shard by shard, each packed into its
//              jobs as it comes (the first shard's jobs can go out while the rest is merged).
// Prints wall and CPU seconds of each (CPU: this process, every thread) and, for the shards, the
// wall time to the first shard's jobs; both must find the same unique positions and paths.
// Both split at the ply the shards reach (perft(8): 5; perft(9): 6, where the merge at once
// exceeds the coordinator's memory bound and is measured as a reference only).
// Usage: arbiter_split_cost [DEPTH=8] [ROUNDS=3]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "coordinator/perft_split.h"
#include "engine/position.h"

namespace {

using arbiter::Position;
using namespace arbiter::coordinator;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Cost {
  double wall = 0, cpu = 0, first = 0;
  size_t unique = 0, jobs = 0;
  uint64_t paths = 0;
};

// The split depth the shards reach (perft(8): ply 5; perft(9): ply 6).
int ShardsSplitDepth(int depth) {
  const SplitOptions so{.depth = depth, .workers = 2, .defer_from_paths = kDeferFromPaths};
  return SplitPerft(Position::StartPosition(), so)->deferred_ply;
}

// Merged at once to `split_depth`, whatever the coordinator's memory bound (perft(9)'s ply 6 has
// 9.4 M unique positions, more than the bound: the coordinator would stop at ply 5).
Cost AtOnce(int depth, int split_depth) {
  Cost c;
  const double w0 = WallSeconds(), c0 = CpuSeconds();
  const SplitOptions so{
      .depth = depth, .split_depth = split_depth, .workers = 2, .max_positions = 1u << 25};
  PerftSplit split = *SplitPerft(Position::StartPosition(), so);
  c.jobs = PackJobs(split, TargetJobs(so)).size();
  c.unique = split.unique.size();
  c.paths = split.split_positions;
  c.wall = WallSeconds() - w0;
  c.cpu = CpuSeconds() - c0;
  c.first = c.wall;
  return c;
}

Cost InShards(int depth) {
  Cost c;
  const double w0 = WallSeconds(), c0 = CpuSeconds();
  const SplitOptions so{.depth = depth, .workers = 2, .defer_from_paths = kDeferFromPaths};
  PerftSplit level = *SplitPerft(Position::StartPosition(), so);
  if (level.deferred_ply == 0) {
    std::fprintf(stderr, "perft(%d): the split was not deferred\n", depth);
    std::exit(1);
  }
  BucketedShards bucketed(level, level.deferred_ply, 0, 0);
  const SplitOptions shard_opts{.depth = depth, .estimate_positions = 0};
  std::vector<double> targets;
  for (uint64_t at = 0; at < kShardKeyEnd;) {
    // As the coordinator: each shard the next sixteenth of the run's jobs.
    SplitShard shard = bucketed.NextJobs(TargetJobs(so), 16, shard_opts, targets);
    c.jobs += PackJobs(shard.split, targets).size();
    c.unique += shard.split.unique.size();
    c.paths += shard.split.split_positions;
    if (c.first == 0) c.first = WallSeconds() - w0;
    at = shard.end;
  }
  c.wall = WallSeconds() - w0;
  c.cpu = CpuSeconds() - c0;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int depth = argc > 1 ? std::atoi(argv[1]) : 8;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  std::vector<double> once_cpu, shards_cpu, once_wall, first_wall;
  const int split_depth = ShardsSplitDepth(depth);
  if (split_depth == 0) {
    std::fprintf(stderr, "perft(%d): the split is not deferred\n", depth);
    return 1;
  }
  for (int r = 1; r <= rounds; ++r) {
    const Cost a = AtOnce(depth, split_depth);
    const Cost b = InShards(depth);
    if (a.unique != b.unique || a.paths != b.paths) {
      std::fprintf(stderr, "MISMATCH: at once %zu unique, %lu paths; in shards %zu, %lu\n",
                   a.unique, (unsigned long)a.paths, b.unique, (unsigned long)b.paths);
      return 1;
    }
    std::printf(
        "round %d: at once %.3f s wall, %.3f s CPU (%zu jobs); in shards: first jobs after "
        "%.3f s, all %.3f s wall, %.3f s CPU (%zu jobs); %zu unique positions, %lu paths\n",
        r, a.wall, a.cpu, a.jobs, b.first, b.wall, b.cpu, b.jobs, a.unique, (unsigned long)a.paths);
    once_cpu.push_back(a.cpu);
    shards_cpu.push_back(b.cpu);
    once_wall.push_back(a.wall);
    first_wall.push_back(b.first);
  }
  auto least = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  std::printf(
      "perft(%d) split, least of %d rounds: at once %.3f s CPU, first jobs after %.3f s; in "
      "shards %.3f s CPU (%.2fx), first jobs after %.3f s (%.2fx sooner)\n",
      depth, rounds, least(once_cpu), least(once_wall), least(shards_cpu),
      least(shards_cpu) / least(once_cpu), least(first_wall), least(once_wall) / least(first_wall));
  return 0;
}
