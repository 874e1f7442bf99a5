// A streamed split's shards: the positions a ply below a stored level, by range of keys, walked
// again for each shard (SplitPerftShard) or generated once and kept in buckets (BucketedShards).
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "base/parallel.h"
#include "coordinator/perft_split.h"
#include "coordinator/perft_split_internal.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft_lane.h"

namespace arbiter::coordinator {

using split_detail::AddWeight;
using split_detail::ChildRecord;
using split_detail::ForEachPath;
using split_detail::OrderLevel;
using split_detail::PackedEq;
using split_detail::PackedHash;
using split_detail::SplitThreads;

namespace {

// Most positions a shard's map makes room for at once (~40 bytes each).
constexpr size_t kShardReserve = 1 << 21;

// The unique positions with keys in [begin, end) met by a walk, with their weights; `end` comes
// down (dropping the positions above it) whenever they outgrow the bound.
class ShardCollector {
 public:
  struct Entry {
    PackedPosition packed;
    Weights weights;
    uint64_t key;
  };
  // Keeps the keys k in [begin, end) with k % classes == cls.
  ShardCollector(uint64_t begin, uint64_t end, size_t bound, uint64_t classes, uint64_t cls)
      : begin_(begin),
        end_(end),
        bound_(std::max<size_t>(1, bound)),
        classes_(classes),
        cls_(cls) {}

  uint64_t end() const { return end_; }
  std::vector<Entry>& entries() { return entries_; }

  // Every path of `plies` moves from `pos`, each adding `weights` to the position it reaches.
  void Walk(Position& pos, int plies, const Weights& weights) {
    ForEachPath(pos, plies, [&] {
      const uint64_t key = ShardKey(pos);
      if (key >= begin_ && key < end_ && key % classes_ == cls_)
        Add(PackPosition(pos), weights, key);
    });
  }

  void Add(const PackedPosition& packed, const Weights& weights, uint64_t key) {
    // Room for the bound at once: growing a map of this size costs more than filling it.
    if (index_.empty()) index_.reserve(std::min<size_t>(bound_, kShardReserve) + 1);
    auto [it, inserted] = index_.try_emplace(packed, uint32_t(entries_.size()));
    if (!inserted) {
      for (const auto& [root_move, m] : weights)
        AddWeight(entries_[it->second].weights, root_move, m);
      return;
    }
    entries_.push_back({packed, weights, key});
    if (entries_.size() > bound_ && key != lone_key_) Shrink();
  }

  // Ends the range at the median key (keeping at most half the positions), or just above the
  // lowest key when that is the median: its positions are kept together, over the bound.
  void Shrink() {
    std::vector<uint64_t> keys(entries_.size());
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = entries_[i].key;
    auto mid = keys.begin() + ptrdiff_t(keys.size() / 2);
    std::nth_element(keys.begin(), mid, keys.end());
    const uint64_t median = *mid, lowest = *std::min_element(keys.begin(), mid + 1);
    if (median > lowest) {
      Lower(median);
    } else {
      Lower(lowest + 1);
      lone_key_ = lowest;
    }
  }

  // Drops the positions at or above `end`.
  void Lower(uint64_t end) {
    if (end >= end_) return;
    end_ = end;
    size_t kept = 0;
    for (Entry& e : entries_)
      if (e.key < end_) entries_[kept++] = std::move(e);
    entries_.resize(kept);
    index_.clear();
    index_.reserve(std::min<size_t>(bound_, kShardReserve) + 1);
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].packed, uint32_t(i));
  }

 private:
  uint64_t begin_, end_;
  size_t bound_;
  uint64_t classes_, cls_;
  uint64_t lone_key_ = ~uint64_t{0};  // keys are below 2^63
  std::vector<Entry> entries_;
  absl::flat_hash_map<PackedPosition, uint32_t, PackedHash, PackedEq> index_;
};

}  // namespace

SplitShard SplitPerftShard(const PerftSplit& level, int split_depth, uint64_t begin, uint64_t end,
                           const SplitOptions& opts) {
  const size_t n = level.unique.size();
  const int plies = std::max(0, split_depth - level.split_depth);
  // Each thread walks the whole level but keeps only the keys of its class (key % parts), at most
  // its share of the bound: the classes never share a position, so no merge is needed, and each
  // thread's range end depends only on its class (the same shards on every run with as many
  // threads). The shard is the keys below the lowest end.
  const int parts = int(std::clamp<size_t>(opts.threads > 0 ? size_t(opts.threads)
                                           : n < 64         ? 1
                                                            : std::thread::hardware_concurrency(),
                                           1, 16));
  std::vector<ShardCollector> collectors;
  for (int t = 0; t < parts; ++t)
    collectors.emplace_back(begin, end, std::max<size_t>(1, opts.max_positions / size_t(parts)),
                            uint64_t(parts), uint64_t(t));
  ParallelFor(size_t(parts), parts, [&](size_t, size_t, int t) {
    for (size_t i = 0; i < n; ++i) {
      Position pos = level.PositionAt(i);
      collectors[t].Walk(pos, plies, level.unique[i].weights);
    }
  });
  SplitShard shard;
  shard.end = end;
  for (const ShardCollector& c : collectors) shard.end = std::min(shard.end, c.end());
  shard.split.depth = opts.depth;
  shard.split.split_depth = split_depth;
  shard.split.root = level.root;
  std::vector<SplitPosition> found;
  for (ShardCollector& c : collectors) {
    for (ShardCollector::Entry& e : c.entries()) {
      if (e.key >= shard.end) continue;
      for (const auto& w : e.weights) shard.split.split_positions += w.second;
      found.push_back({e.packed, std::move(e.weights), 1});
    }
    std::vector<ShardCollector::Entry>().swap(c.entries());
  }
  collectors.clear();
  OrderLevel(shard.split, found, opts);
  return shard;
}

namespace {

// The leading part of a position's place in the split's order (OrderKey): the pawns of the side
// not to move, then a hash of its other pieces. Positions with a common child have the same.
using GroupKey = std::pair<uint64_t, uint64_t>;
GroupKey GroupKeyOf(const Position& pos) {
  const Color them = ~pos.SideToMove();
  return {pos.Pieces(them, kPawn),
          HashWords({pos.Pieces(them, kKnight), pos.Pieces(them, kBishop), pos.Pieces(them, kRook),
                     pos.Pieces(them, kQueen), pos.Pieces(them, kKing)})};
}

// Paths whose keys the bucket cuts are taken from.
constexpr uint64_t kSampledPaths = 65'536;

// The number of cuts at or below `key` (std::upper_bound's index), without branches: the search
// runs for every path, and its comparisons are a coin toss each.
size_t BucketOf(const std::vector<GroupKey>& cuts, const GroupKey& key) {
  const GroupKey* base = cuts.data();
  size_t n = cuts.size();
  if (n == 0) return 0;
  while (n > 1) {
    const size_t half = n / 2;
    const GroupKey& c = base[half - 1];
    const bool le = c.first < key.first || (c.first == key.first && c.second <= key.second);
    base = le ? base + half : base;
    n -= half;
  }
  const bool le =
      base->first < key.first || (base->first == key.first && base->second <= key.second);
  return size_t(base - cuts.data()) + le;
}

}  // namespace

BucketedShards::BucketedShards(const PerftSplit& level, int split_depth, uint64_t cursor,
                               int threads, uint64_t packed_paths)
    : level_(&level),
      split_depth_(split_depth),
      plies_(std::max(0, split_depth - level.split_depth)),
      cursor_(cursor) {
  const size_t n = level.unique.size();
  const int plies = plies_;
  constexpr size_t kBuckets = size_t{1} << kBucketBits;
  const uint64_t estimate = EstimatePaths(level, plies);
  // The cuts: quantiles of the keys of the paths from every step-th level position, in the
  // level's order (the same on every run).
  const size_t step =
      n == 0 ? 1 : std::max<size_t>(1, size_t(estimate / std::max<uint64_t>(1, kSampledPaths)));
  std::vector<GroupKey> sample;
  for (size_t i = 0; i < n; i += step) {
    Position pos = level.PositionAt(i);
    ForEachPath(pos, plies, [&] { sample.push_back(GroupKeyOf(pos)); });
  }
  std::sort(sample.begin(), sample.end());
  std::vector<GroupKey> cuts;  // bucket b holds the keys in [cuts[b - 1], cuts[b])
  for (size_t b = 1; b < kBuckets && !sample.empty(); ++b)
    cuts.push_back(sample[b * sample.size() / kBuckets]);
  const size_t first = cursor >= kShardKeyEnd ? kBuckets : size_t(cursor >> kBucketShift);
  const int parts = SplitThreads(n, threads);
  // Room in each bucket for its share of the estimated paths and a quarter more.
  const size_t reserve = size_t(estimate / (uint64_t(parts) * kBuckets)) * 5 / 4 + 4;
  buckets_.assign(size_t(parts), std::vector<Bucket>(kBuckets));
  // Paths of more plies than a Path holds moves for keep their end positions whatever their
  // number.
  keep_packed_ = estimate <= packed_paths || plies > kMaxPlies;
  std::vector<uint64_t> all(size_t(parts), 0), below(size_t(parts), 0);
  ParallelFor(n, parts, [&](size_t begin, size_t end, int t) {
    std::vector<Bucket>& mine = buckets_[size_t(t)];
    const bool packed = keep_packed_;
    for (size_t b = first; b < kBuckets; ++b) {
      mine[b].paths.reserve(reserve);
      if (packed) mine[b].packed.reserve(reserve);
    }
    // Counted in locals: the threads' slots of `all` share a cache line.
    uint64_t paths = 0, skipped = 0;
    Path path{};
    Move moves[kMaxPlies];
    Move* const record = plies <= kMaxPlies ? moves : nullptr;
    for (size_t i = begin; i < end; ++i) {
      Position pos = level.PositionAt(i);
      path.parent = uint32_t(i);
      ForEachPath(
          pos, plies,
          [&] {
            ++paths;
            const size_t b = BucketOf(cuts, GroupKeyOf(pos));
            if (b < first) {
              ++skipped;
              return;
            }
            if (record)
              for (int m = 0; m < plies; ++m) path.moves[size_t(m)] = moves[m].Raw();
            mine[b].paths.push_back(path);
            if (packed) mine[b].packed.push_back(PackPosition(pos));
          },
          record);
    }
    all[size_t(t)] = paths;
    below[size_t(t)] = skipped;
  });
  for (int t = 0; t < parts; ++t) {
    paths_ += all[size_t(t)];
    paths_before_ += below[size_t(t)];
  }
}

SplitShard BucketedShards::Next(uint64_t paths, const SplitOptions& opts) {
  SplitShard shard;
  shard.split.depth = opts.depth;
  shard.split.split_depth = split_depth_;
  shard.split.root = level_->root;
  constexpr size_t kBuckets = size_t{1} << kBucketBits;
  const size_t b = cursor_ >= kShardKeyEnd ? kBuckets : size_t(cursor_ >> kBucketShift);
  // Whole buckets until they hold `paths` (at least one with any).
  uint64_t taken = 0;
  size_t end = b;
  for (; end < kBuckets && (taken == 0 || taken < paths); ++end)
    for (const auto& mine : buckets_) taken += mine[end].paths.size();
  // The paths' end positions: kept, or made again from their level positions, bucket by bucket
  // (each bucket's paths of every generation thread together: see the merge below). A
  // generation thread's paths start from its own range of level positions and each of its
  // buckets lists them in that order: its buckets of the shard are walked together, level
  // position by level position, so that each is unpacked once for all its paths in the shard.
  const size_t parts = buckets_.size();
  std::vector<size_t> at((end - b) * parts + 1, 0);  // [bucket - b][thread]: first record
  for (size_t k = b; k < end; ++k)
    for (size_t t = 0; t < parts; ++t) {
      const size_t slot = (k - b) * parts + t;
      at[slot + 1] = at[slot] + buckets_[t][k].paths.size();
    }
  std::vector<ChildRecord> children(at.back());
  const int threads = int(std::min<size_t>(parts, size_t(SplitThreads(children.size(), 0))));
  ParallelFor(parts, threads, [&](size_t from, size_t to, int) {
    for (size_t t = from; t < to; ++t) {
      if (keep_packed_) {
        for (size_t k = b; k < end; ++k) {
          Bucket& bucket = buckets_[t][k];
          size_t out = at[(k - b) * parts + t];
          for (size_t j = 0; j < bucket.paths.size(); ++j)
            children[out++] = {bucket.packed[j], bucket.paths[j].parent};
          bucket.Release();
        }
        continue;
      }
      // What is left of each bucket that has paths (a last shard takes every bucket left, most
      // of them empty: each head is looked at once per level position), and where it goes.
      struct Head {
        const Path* at;
        const Path* stop;
        size_t out;
      };
      std::vector<Head> heads;
      for (size_t k = b; k < end; ++k) {
        const std::vector<Path>& paths_here = buckets_[t][k].paths;
        if (!paths_here.empty())
          heads.push_back(
              {paths_here.data(), paths_here.data() + paths_here.size(), at[(k - b) * parts + t]});
      }
      for (;;) {
        uint32_t next = std::numeric_limits<uint32_t>::max();
        for (const Head& h : heads)
          if (h.at != h.stop) next = std::min(next, h.at->parent);
        if (next == std::numeric_limits<uint32_t>::max()) break;
        Position pos = level_->PositionAt(next);
        for (Head& h : heads) {
          for (; h.at != h.stop && h.at->parent == next; ++h.at) {
            UndoInfo undo[kMaxPlies];
            for (int m = 0; m < plies_; ++m)
              pos.DoMove<false>(Move(h.at->moves[size_t(m)]), undo[m]);
            children[h.out++] = {PackPosition(pos), next};
            for (int m = plies_ - 1; m >= 0; --m)
              pos.UndoMove<false>(Move(h.at->moves[size_t(m)]), undo[m]);
          }
        }
      }
      for (size_t k = b; k < end; ++k) buckets_[t][k].Release();
    }
  });
  // Merged by exact position, each path adding its level position's weights, one bucket at a
  // time: a position and its transpositions share their bucket (its key is the pieces of the
  // side not to move), so each bucket's merge is whole with a table of a few thousand entries
  // that stays in the processor's cache, and the buckets' positions are runs of the split's
  // order (OrderLevel sorts each run alone).
  std::vector<SplitPosition> found;
  found.reserve(children.size() / 2 + 1);
  std::vector<size_t> runs{0};
  absl::flat_hash_map<PackedPosition, uint32_t, PackedHash, PackedEq> index;
  size_t largest = 0;
  for (size_t k = b; k < end; ++k)
    largest = std::max(largest, at[(k + 1 - b) * parts] - at[(k - b) * parts]);
  index.reserve(largest);
  // Paths reach their level positions in little order: each one's weights are fetched ahead.
  constexpr size_t kAhead = 8;
  for (size_t k = b; k < end; ++k) {
    const size_t first = at[(k - b) * parts], last = at[(k + 1 - b) * parts];
    if (first == last) continue;
    index.clear();
    for (size_t j = first; j < last; ++j) {
      if (j + kAhead < last)
        __builtin_prefetch(&level_->unique[children[j + kAhead].parent].weights);
      const ChildRecord& c = children[j];
      const Weights& w = level_->unique[c.parent].weights;
      for (const auto& [root_move, m] : w) shard.split.split_positions += m;
      auto [it, inserted] = index.try_emplace(c.packed, uint32_t(found.size()));
      if (inserted) {
        found.push_back({c.packed, w, 1});
      } else {
        for (const auto& [root_move, m] : w) AddWeight(found[it->second].weights, root_move, m);
      }
    }
    runs.push_back(found.size());
  }
  children = {};
  index = {};
  paths_before_ += taken;
  // The last paths taken: the buckets left (empty) go with them.
  if (paths_before_ == paths_) end = kBuckets;
  cursor_ = end >= kBuckets ? kShardKeyEnd : uint64_t(end) << kBucketShift;
  shard.end = cursor_;
  OrderLevel(shard.split, found, opts, runs);
  return shard;
}

SplitShard BucketedShards::NextJobs(size_t jobs, size_t shards, const SplitOptions& opts,
                                    std::vector<double>& targets) {
  jobs = std::max<size_t>(1, jobs);
  const std::vector<double> all = JobTargets(double(paths_), jobs);
  const double before = double(paths_before_);
  size_t k = 0;
  double covered = 0;
  while (k < jobs && covered + all[k] <= before + 0.5) covered += all[k++];  // done
  targets.clear();
  const size_t per_shard = (jobs + shards - 1) / std::max<size_t>(1, shards);
  for (size_t j = k; j < std::min(jobs, k + per_shard); ++j) {
    covered += all[j];
    targets.push_back(all[j]);
  }
  if (targets.empty()) targets.push_back(1.0);  // the paths left past the last target
  // Rounded up: the shard ends at or past its last job's target, which the next one skips.
  const uint64_t want = k < jobs ? uint64_t(std::max(1.0, std::ceil(covered - before)))
                                 : std::numeric_limits<uint64_t>::max();
  return Next(want, opts);
}

}  // namespace arbiter::coordinator
