// Splits a perft tree into jobs: expand the root to a split depth, merge transpositions by exact
// position (keeping how often each position occurs under each root move), and pack the unique
// positions into jobs of similar estimated cost. total = sum of count x multiplicity.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "engine/packed_position.h"
#include "engine/perft_lane.h"
#include "engine/position.h"

namespace arbiter::coordinator {

// (root move index, multiplicity) pairs; most positions occur under one root move, many deep in
// the tree under a few (at ply 5 from the start position, merging them allocated on the heap for
// a third of the merge's time with room for one inline).
using Weights = absl::InlinedVector<std::pair<uint32_t, uint64_t>, 4>;

// A position at the split depth (packed: 34 bytes) and its multiplicity under each root move.
struct SplitPosition {
  PackedPosition packed;
  Weights weights;
  double estimate = 1;  // relative cost of its subtree
};

struct PerftSplit {
  int depth = 0;                        // the perft's depth
  int split_depth = 0;                  // plies expanded on the coordinator (1..depth)
  std::vector<std::string> root_moves;  // UCI, generation order
  uint64_t split_positions = 0;         // positions at split_depth counting transpositions
  std::vector<SplitPosition> unique;    // after merging transpositions
  Position root = Position::StartPosition();
  // 0, or the ply the split should reach, one below split_depth, when it was deferred
  // (SplitOptions::defer_from_paths): its paths are to be merged as a streamed split's.
  int deferred_ply = 0;
  uint64_t deferred_paths = 0;  // the deferred ply's paths (estimated), or 0

  // unique[i] as a position.
  Position PositionAt(size_t i) const;
};

// The automatic split stops before a ply with more unique positions than this (a memory and
// time bound on the coordinator: ~400 bytes and a few microseconds per position).
inline constexpr size_t kMaxSplitPositions = 1'000'000;
// The automatic split goes at least this close to the leaves (plies left to the workers): the
// split merges every transposition down to its ply exactly, and its order (below) lets each
// worker's hash merge those one ply further, leaving the workers only plies without a hash.
inline constexpr int kWorkerPlies = 3;
// Positions per job the automatic split asks for at least (so packing can balance jobs).
inline constexpr size_t kPositionsPerJob = 8;
// The same when the split merges nothing (SplitOptions::merge false): positions high in the tree
// differ more in size, so more of them make a job.
inline constexpr size_t kSharedPositionsPerJob = 64;

// Up to this many split positions the estimate of each counts two plies below it. Beyond, every
// position counts the same: a job then holds thousands of them and its sum averages out (a
// one-ply proxy, legal moves ^ plies left, was measured no better on perft(8): 3.44-3.51 s of
// jobs against 3.38-3.46 s uniform), and no position has to be unpacked.
inline constexpr size_t kExactEstimatePositions = 100'000;

struct SplitOptions {
  int depth = 1;
  int split_depth = 0;     // 0 = automatic
  int workers = 1;         // connected workers (automatic split depth and job count)
  size_t target_jobs = 0;  // 0 = 16 per worker, at least 16
  // The automatic split stops before a ply with more unique positions than this.
  size_t max_positions = kMaxSplitPositions;
  // Threads for the expansion: 0 = every core for levels of 20,000 positions or more, else one.
  int threads = 0;
  // Merge transpositions down to kWorkerPlies above the leaves: workers with hash tables of
  // their own would each count them again. False when every worker shares one hash (the workers
  // of one process): the split then goes only as deep as the jobs need, and the shared hash
  // merges the rest as it does for the threads of one process.
  bool merge = true;
  // Estimates from two plies below each position up to this many positions, else uniform.
  size_t estimate_positions = kExactEstimatePositions;
  // 0, or: when the split's last ply would have at least this many paths from the ply above
  // (estimated), and they fit in memory as a streamed split's paths (at most
  // kBucketedPathsPerPosition x max_positions), the split stops one ply short and says so in
  // PerftSplit::deferred_ply. The same for a ply short of the last that has more unique
  // positions than max_positions (the automatic split stops there). Merging splits only.
  uint64_t defer_from_paths = 0;
  // Entries of the hash table each worker counts its jobs into (0: none). A ply short of the
  // last that has more positions than max_positions is deferred only when it has at least this
  // many paths: a table with more entries merges that ply's transpositions in each worker's
  // share of the jobs for less than the coordinator's merge costs (perft(10) on 2 workers with
  // 2 GB tables of their own: 936.8 s split at ply 5 against 1,247.6 s merged at ply 6).
  uint64_t table_entries = 0;
};

// The last ply of a split whose paths are worth merging while workers already count (perft(8)
// from the start position: 2.2 M paths from ply 4 to ply 5, merged in ~0.5 s of two cores).
inline constexpr uint64_t kDeferFromPaths = 500'000;

// Jobs the options ask for.
size_t TargetJobs(const SplitOptions& opts);

// Expands `root`. With split_depth 0 the depth is the smallest one that gives at least
// kPositionsPerJob unique positions per target job and leaves at most kWorkerPlies plies to the
// workers; never deeper than depth - 1 (the workers count at least one ply) unless depth is 1,
// and never to a ply with more than opts.max_positions unique positions. The unique positions come
// out sorted by the pieces of the side not to move (then the mover's): positions with a common
// child differ only in the mover's pieces, so they are neighbours and land in the same job.
absl::StatusOr<PerftSplit> SplitPerft(const Position& root, const SplitOptions& opts);

// A streamed split cuts the positions at its split depth into shards by a 63-bit key of the
// pieces of the side not to move (ShardKey, the same in every process): a position and all its
// transpositions have one key, so each unique position lands in exactly one shard and the shards
// together merge every transposition, as the in-memory split does; positions with a common
// child (same pieces of the side not to move, see SplitPerft) land in the same shard too.
// (engine/perft_lane.h: lane jobs cut their ranges by the same key.)
using arbiter::kShardKeyEnd;
using arbiter::ShardKey;

// One shard: the unique positions at `split_depth` with keys in [begin, end), ordered as
// SplitPerft's, and `end` (the shard covers exactly the keys below it).
struct SplitShard {
  PerftSplit split;
  uint64_t end = 0;
};

// The shard of keys from `begin`, found by walking the subtrees of `level` (the merged positions
// at ply level.split_depth, with their weights) down to `split_depth` (>= level.split_depth). It
// asks for the keys [begin, end) but takes fewer when they have more than opts.max_positions
// unique positions: the range then ends at the median key of those found so far (the positions
// above are dropped), so the shard never holds more than the bound, unless its positions share
// one key: those are kept together. A shard is empty only when no position has a key in
// [begin, end). split_positions counts its positions with their multiplicities. root_moves
// stays empty.
SplitShard SplitPerftShard(const PerftSplit& level, int split_depth, uint64_t begin, uint64_t end,
                           const SplitOptions& opts);

// The paths of `plies` moves from the positions of `level`, estimated from a sample of up to
// 1,024 of them (exact for smaller levels).
uint64_t EstimatePaths(const PerftSplit& level, int plies);

// A streamed split's paths may be generated once and kept in memory (8 bytes each, against ~160
// for a merged split position and its job spec) when they number at most this many times the
// split's memory bound: 32 M paths, 256 MB, with the default bound.
inline constexpr uint64_t kBucketedPathsPerPosition = 32;
// The same for paths of more plies than BucketedShards::kMaxPlies, which keep their end
// positions (~40 bytes each).
inline constexpr uint64_t kPackedPathsPerPosition = 3;

// A streamed split's shards from one generation of its paths: every path from the positions of
// `level` (at ply level.split_depth) down to `split_depth`, its end position kept (packed, with
// the index of the level position it starts from) in one of 2^kBucketBits buckets. The buckets
// are ranges of the split's order (SplitPerft's: the pawns of the side not to move, then its
// other pieces), cut at quantiles of a sample of the paths (the same cuts on every run), so a
// shard is a run of buckets merged with no new walk (SplitPerftShard walks the whole level
// again for every shard), holds every position of its range with its transpositions and the
// positions they share children with, and successive shards follow the split's order: a
// worker's jobs keep the locality of the in-memory split's.
class BucketedShards {
 public:
  static constexpr int kBucketBits = 8;
  static constexpr int kBucketShift = 63 - kBucketBits;  // cursor = bucket << kBucketShift
  // Plies from the level to the split a path keeps the moves of (paths of more keep their end
  // positions, whatever their number).
  static constexpr int kMaxPlies = 2;

  // Up to this many paths (estimated) their end positions are kept too (34 bytes more each:
  // 136 MB): making them again costs ~0.1 us a path, a third of perft(8)'s split.
  static constexpr uint64_t kPackedPaths = 4'000'000;

  // Generates the paths on `threads` threads (0: every core for large levels), keeping those in
  // the buckets from `cursor` on (a bucket boundary); their end positions too when there are at
  // most `packed_paths` (estimated). `level` must outlive this object.
  BucketedShards(const PerftSplit& level, int split_depth, uint64_t cursor, int threads,
                 uint64_t packed_paths = kPackedPaths);

  uint64_t paths() const { return paths_; }  // of the whole level, whatever the cursor
  // Paths in the buckets below the cursor.
  uint64_t paths_before() const { return paths_before_; }

  // The next shard, from the cursor: whole buckets until they hold `paths` paths (at least one
  // bucket with paths, or every bucket left), merged and ordered as SplitPerftShard's; shard.end
  // is the new cursor (the next bucket's boundary, or kShardKeyEnd).
  SplitShard Next(uint64_t paths, const SplitOptions& opts);
  // The next shard of a run of `jobs` jobs, job k aiming at JobTargets(paths(), jobs)[k] paths
  // (large first, small last, as the in-memory split's): the buckets that hold the next
  // 1 / `shards` of the run's jobs, counted from the paths before the cursor (the same shards
  // after a restart). `targets` receives those jobs' targets (one when past the last).
  SplitShard NextJobs(size_t jobs, size_t shards, const SplitOptions& opts,
                      std::vector<double>& targets);

 private:
  // A path: its level position and its moves (8 bytes: 25 M paths, perft(9)'s from ply 5, take
  // 200 MB). Its end position is made again when its shard is merged.
  struct Path {
    uint32_t parent;  // index into level_->unique
    std::array<uint16_t, kMaxPlies> moves;
  };
  static_assert(sizeof(Path) == 8);
  // One generation thread's paths of one bucket, in the order of their level positions.
  struct Bucket {
    std::vector<Path> paths;
    std::vector<PackedPosition> packed;  // their end positions, when kept (keep_packed_)
    void Release() {
      std::vector<Path>().swap(paths);
      std::vector<PackedPosition>().swap(packed);
    }
  };
  const PerftSplit* level_;
  int split_depth_;
  int plies_;
  bool keep_packed_ = false;
  uint64_t cursor_;
  uint64_t paths_ = 0, paths_before_ = 0;
  std::vector<std::vector<Bucket>> buckets_;  // [thread][bucket]
};

// Packs the unique positions into at most `jobs` groups, in the order they should be handed
// out. With several positions per job the groups are contiguous runs of the split's order (which
// follows the tree, so a job's positions share move prefixes and the worker's hash is reused
// across them) and their estimates shrink linearly from 1.6x to 0.4x of the mean, so that the
// last jobs of a run are short; with fewer, largest-estimate-first onto the least loaded group.
std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split, size_t jobs);
// The same, with each group's share of the estimates given (`targets`, in any unit: they are
// scaled to the split's total): as many groups as targets at most.
std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split,
                                            const std::vector<double>& targets);

// The estimate each of `jobs` groups aims at, first to last: linearly from 1.6x to 0.4x of the
// mean (all equal for one job); they sum to `total`.
std::vector<double> JobTargets(double total, size_t jobs);

// The same for jobs in `lanes` contiguous lanes (one per worker): each lane's jobs share
// total / lanes and go from 1.6x to 0.4x of its mean, so that every worker starts on large jobs
// and ends its lane, or another's far end, on small ones.
std::vector<double> LaneJobTargets(double total, size_t jobs, size_t lanes);

// The sum of the split positions' estimates.
double TotalEstimate(const PerftSplit& split);

// The lane of each job (packed by PackJobs into `groups`) among `lanes` (>= 1): the lane share
// (total / lanes) that holds the middle of the job's estimate.
std::vector<uint32_t> JobLanes(const PerftSplit& split,
                               const std::vector<std::vector<uint32_t>>& groups, size_t lanes);

}  // namespace arbiter::coordinator
