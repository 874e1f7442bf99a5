// Splits a perft tree into jobs: expand the root to a split depth, merge transpositions by exact
// position (keeping how often each position occurs under each root move), and pack the unique
// positions into jobs of similar estimated cost. total = sum of count x multiplicity.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter::coordinator {

// A position at the split depth and its multiplicity under each root move.
struct SplitPosition {
  Position pos;
  std::vector<std::pair<uint32_t, uint64_t>> weights;  // (root move index, multiplicity)
  double estimate = 1;                                 // relative cost of its subtree
};

struct PerftSplit {
  int depth = 0;                        // the perft's depth
  int split_depth = 0;                  // plies expanded on the coordinator (1..depth)
  std::vector<std::string> root_moves;  // UCI, generation order
  uint64_t split_positions = 0;         // positions at split_depth counting transpositions
  std::vector<SplitPosition> unique;    // after merging transpositions
};

struct SplitOptions {
  int depth = 1;
  int split_depth = 0;     // 0 = automatic
  int workers = 1;         // connected workers (automatic split depth and job count)
  size_t target_jobs = 0;  // 0 = 16 per worker, at least 16
};

// Stop expanding beyond this many unique positions (memory bound on the coordinator).
inline constexpr size_t kMaxSplitPositions = 4'000'000;

// Jobs the options ask for.
size_t TargetJobs(const SplitOptions& opts);

// Expands `root`. With split_depth 0 the depth is the smallest one that gives at least 8
// unique positions per target job, never deeper than depth - 1 (the workers count at least one
// ply) unless depth is 1, and never past kMaxSplitPositions.
absl::StatusOr<PerftSplit> SplitPerft(const Position& root, const SplitOptions& opts);

// Packs the unique positions into at most `jobs` groups of similar total estimate (largest
// first onto the least loaded group); groups come out largest first, each listing indices.
std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split, size_t jobs);

}  // namespace arbiter::coordinator
