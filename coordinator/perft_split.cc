#include "coordinator/perft_split.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <queue>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"

namespace arbiter::coordinator {
namespace {

// Hash of a packed position (the exact identity of a position for perft,
// engine/packed_position.h): two 64x64->128-bit multiplies folded, then one more to mix.
struct PackedHash {
  size_t operator()(const PackedPosition& p) const {
    uint64_t w[4];
    uint16_t tail;
    std::memcpy(w, p.data(), 32);
    std::memcpy(&tail, p.data() + 32, 2);
    const uint64_t h = Fold(w[0] ^ 0x243f6a8885a308d3, w[1] ^ 0x13198a2e03707344) ^
                       Fold(w[2] ^ 0xa4093822299f31d0, w[3] ^ 0x082efa98ec4e6c89 ^ tail);
    return Fold(h ^ 0x452821e638d01377, 0xbe5466cf34e90c6d);
  }
};
// Word-wise comparison (inlined; std::array's == calls memcmp).
struct PackedEq {
  bool operator()(const PackedPosition& a, const PackedPosition& b) const {
    uint64_t x[4], y[4];
    std::memcpy(x, a.data(), 32);
    std::memcpy(y, b.data(), 32);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0 && a[32] == b[32] &&
           a[33] == b[33];
  }
};

void AddWeight(Weights& into, uint32_t root, uint64_t mult) {
  for (auto& [r, m] : into) {
    if (r == root) {
      m += mult;
      return;
    }
  }
  into.emplace_back(root, mult);
}

// Runs fn(begin, end, part) on `parts` threads over [0, n) cut into equal slices.
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

// Threads for a level of `n` positions: as asked, else one below kParallelFrom, else every core
// (at most 16).
constexpr size_t kParallelFrom = 20'000;
int SplitThreads(size_t n, int asked) {
  if (asked > 0) return asked;
  if (n < kParallelFrom) return 1;
  return int(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

// Our own packed positions: unpacking cannot fail.
Position Unpack(const PackedPosition& packed, const Position& root) {
  return *UnpackPosition(AsBytes(packed), root);
}

// Calls f() at the end of every path of `plies` moves from pos (pos is then that position); with
// `moves`, the path's moves are in moves[0..plies) when f is called.
template <class F>
void ForEachPath(Position& pos, int plies, const F& f, Move* moves = nullptr) {
  if (plies == 0) {
    f();
    return;
  }
  MoveList list;
  GenerateLegal(pos, list);
  for (Move m : list) {
    if (moves) moves[0] = m;
    UndoInfo undo;
    pos.DoMove<false>(m, undo);  // the keys of the split read pieces only
    ForEachPath(pos, plies - 1, f, moves ? moves + 1 : nullptr);
    pos.UndoMove<false>(m, undo);
  }
}

// A child found by the first pass of ExpandLevel and the index of its parent.
struct ChildRecord {
  PackedPosition packed;
  uint32_t parent;
};

// A unique child found by the second pass and its multiplicities.
struct UniqueChild {
  PackedPosition packed;
  Weights weights;
};

// Children per shard the first pass aims at: a shard's hash map and its unique children then
// stay in the processor's cache while the shard is merged.
constexpr size_t kChildrenPerShard = 16'384;

// Children generated before they are merged: bounds the first pass's buffers (~40 bytes each).
// A chunk is a run of parents whose children, at the level's mean (from a sample of up to 1,024
// parents), come to this many.
constexpr size_t kChildrenPerChunk = 4'000'000;
constexpr size_t kSampledParents = 1'024;

// The mean number of paths of `plies` moves from the positions of `level`, from a sample of up to
// kSampledParents of them (every one of a smaller level).
double MeanPaths(const std::vector<SplitPosition>& level, const Position& root, int plies) {
  if (level.empty()) return 0;
  const size_t step = std::max<size_t>(1, level.size() / kSampledParents);
  uint64_t sampled = 0, paths = 0;
  for (size_t i = 0; i < level.size(); i += step, ++sampled)
    paths += plies <= 0 ? 1 : PerftCount(Unpack(level[i].packed, root), plies);
  return double(paths) / double(sampled);
}

// One ply deeper, merging equal positions. Gives up (returns false) as soon as the next ply has
// more than `limit` unique positions. The level is taken in chunks of about kChildrenPerChunk
// children, each in two passes on `threads` threads: each thread unpacks the parents of a slice
// of the chunk and generates their children into one buffer per shard (by hash of the packed
// position); then the threads take shards one at a time and merge each into that shard's hash
// map (a child and all its transpositions are in the same shard; a shard's map stays in the
// processor's cache). Shards are concatenated in order and read in chunk and thread order, so
// the result depends only on the number of threads.
bool ExpandLevel(const std::vector<SplitPosition>& level, const Position& root, size_t limit,
                 int threads, std::vector<SplitPosition>& next, uint64_t& with_duplicates) {
  next.clear();
  with_duplicates = 0;
  if (level.empty()) return true;
  const int parts = std::max(1, threads);
  const size_t per_parent = std::max<size_t>(1, size_t(std::ceil(MeanPaths(level, root, 1))));
  const size_t parents_per_chunk = std::max<size_t>(1, kChildrenPerChunk / per_parent);
  const size_t chunk_children = std::min(level.size(), parents_per_chunk) * per_parent;
  const size_t shards = std::clamp<size_t>(chunk_children / kChildrenPerShard, 1, 4096);
  const size_t per_buffer = chunk_children / (size_t(parts) * shards) * 5 / 4 + 16;
  std::vector<absl::flat_hash_map<PackedPosition, uint32_t, PackedHash, PackedEq>> index(shards);
  std::vector<std::vector<UniqueChild>> found(shards);
  std::vector<std::vector<std::vector<ChildRecord>>> buffers(
      parts, std::vector<std::vector<ChildRecord>>(shards));
  std::atomic<size_t> unique{0};
  std::atomic<bool> over{false};
  for (size_t first = 0; first < level.size() && !over; first += parents_per_chunk) {
    const size_t last = std::min(level.size(), first + parents_per_chunk);
    std::vector<uint64_t> with_dup(parts, 0);
    ParallelFor(last - first, parts, [&](size_t begin, size_t end, int t) {
      for (auto& buffer : buffers[t]) buffer.reserve(per_buffer);
      uint64_t paths = 0;  // counted in a local: the threads' slots share a cache line
      for (size_t i = first + begin; i < first + end; ++i) {
        Position pos = Unpack(level[i].packed, root);
        MoveList list;
        GenerateLegal(pos, list);
        uint64_t mult = 0;
        for (const auto& w : level[i].weights) mult += w.second;
        for (Move m : list) {
          UndoInfo undo;
          pos.DoMove<false>(m, undo);  // keys are not needed here
          ChildRecord r{PackPosition(pos), uint32_t(i)};
          buffers[t][(PackedHash()(r.packed) >> 40) % shards].push_back(r);
          pos.UndoMove<false>(m, undo);
        }
        paths += mult * list.size;
      }
      with_dup[t] = paths;
    });
    for (uint64_t p : with_dup) with_duplicates += p;
    std::atomic<size_t> next_shard{0};
    ParallelFor(size_t(parts), parts, [&](size_t, size_t, int) {
      size_t fresh = 0;  // new positions not yet added to `unique`
      for (size_t s; !over && (s = next_shard.fetch_add(1)) < shards;) {
        std::vector<UniqueChild>& out = found[s];
        // Room for half the records as new positions (no rehash on the way in most levels).
        size_t records = 0;
        for (int t = 0; t < parts; ++t) records += buffers[t][s].size();
        index[s].reserve(index[s].size() + records / 2);
        out.reserve(out.size() + records / 2);
        for (int t = 0; t < parts && !over; ++t) {
          for (const ChildRecord& r : buffers[t][s]) {
            auto [it, inserted] = index[s].try_emplace(r.packed, uint32_t(out.size()));
            const Weights& w = level[r.parent].weights;
            if (inserted) {
              // The shared count is updated every 1,024 new positions (not a contended atomic
              // per position); the limit is exact to within that many per thread.
              if (++fresh == 1024) {
                fresh = 0;
                if (unique.fetch_add(1024) + 1024 > limit) {
                  over = true;
                  break;
                }
              }
              out.push_back({r.packed, w});
            } else {
              for (const auto& [root_move, m] : w) AddWeight(out[it->second].weights, root_move, m);
            }
          }
          buffers[t][s].clear();
        }
      }
      if (unique.fetch_add(fresh) + fresh > limit) over = true;
    });
  }
  if (over) return false;
  buffers.clear();
  index.clear();
  // Shards in order, copied on every core.
  std::vector<size_t> offset(shards + 1, 0);
  for (size_t s = 0; s < shards; ++s) offset[s + 1] = offset[s] + found[s].size();
  next.resize(offset[shards]);
  std::atomic<size_t> next_shard{0};
  ParallelFor(size_t(parts), parts, [&](size_t, size_t, int) {
    for (size_t s; (s = next_shard.fetch_add(1)) < shards;) {
      for (size_t j = 0; j < found[s].size(); ++j) {
        UniqueChild& c = found[s][j];
        next[offset[s] + j] = {c.packed, std::move(c.weights), 1};
      }
      std::vector<UniqueChild>().swap(found[s]);
    }
  });
  return true;
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

// Order of the split positions handed to workers. Two positions have a common child only if the
// pieces of the side that is not to move stand on the same squares (the mover changes only its
// own pieces, apart from captures), so sorting by those pieces first puts every position that
// shares children next to each other, in the same job: the worker's hash then counts each such
// child once. The mover's pawns and pieces come next, pawns first (pawn moves are the ones that
// change the most descendants).
// The key is (their pawns, a hash of their other pieces, a hash of the mover's pieces, castling
// rights and en passant): equal pieces give equal keys, and a hash collision between different
// ones only interleaves two groups (the order never changes a count).
using OrderKey = std::array<uint64_t, 3>;

// HashWords (engine/perft_lane.h) is the same in every process: the order survives a restart.

// The key from the pieces of each colour and type, the side to move, castling rights and en
// passant square.
OrderKey KeyOf(const Bitboard (&pieces)[2][6], Color mover, int castling, int ep) {
  const Bitboard* their = pieces[~mover];
  const Bitboard* mine = pieces[mover];
  return {their[kPawn],
          HashWords({their[kKnight], their[kBishop], their[kRook], their[kQueen], their[kKing]}),
          HashWords({mine[kPawn], mine[kKnight], mine[kBishop], mine[kRook], mine[kQueen],
                     mine[kKing], uint64_t(castling), uint64_t(ep)})};
}

OrderKey KeyOf(const Position& pos) {
  Bitboard pieces[2][6];
  for (Color c : {kWhite, kBlack})
    for (int pt = kPawn; pt <= kKing; ++pt) pieces[c][pt] = pos.Pieces(c, PieceType(pt));
  return KeyOf(pieces, pos.SideToMove(), pos.CastlingRights(), int(pos.EpSquare()));
}

// The same key read straight from the packed bytes (engine/packed_position.h).
OrderKey KeyOf(const PackedPosition& p) {
  Bitboard pieces[2][6];
#if defined(__SSE2__)
  // The 64 nibbles as 64 bytes in square order (a byte holds an even square low, the next odd
  // square high), then one comparison per piece: the split orders every position it packs.
  const __m128i low = _mm_set1_epi8(15);
  __m128i squares[4];
  for (int half = 0; half < 2; ++half) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.data() + 16 * half));
    const __m128i even = _mm_and_si128(bytes, low);
    const __m128i odd = _mm_and_si128(_mm_srli_epi16(bytes, 4), low);
    squares[2 * half] = _mm_unpacklo_epi8(even, odd);
    squares[2 * half + 1] = _mm_unpackhi_epi8(even, odd);
  }
  for (Color c : {kWhite, kBlack})
    for (int pt = kPawn; pt <= kKing; ++pt) {
      const __m128i code = _mm_set1_epi8(char(MakePiece(c, PieceType(pt))));
      Bitboard bb = 0;
      for (int q = 0; q < 4; ++q)
        bb |= Bitboard(uint16_t(_mm_movemask_epi8(_mm_cmpeq_epi8(squares[q], code)))) << (16 * q);
      pieces[c][pt] = bb;
    }
#else
  Bitboard by_code[16] = {};
  for (int s = 0; s < 64; ++s) by_code[PackedPieceOn(p.data(), s)] |= SquareBb(Square(s));
  for (Color c : {kWhite, kBlack})
    for (int pt = kPawn; pt <= kKing; ++pt) pieces[c][pt] = by_code[MakePiece(c, PieceType(pt))];
#endif
  return KeyOf(pieces, Color(p[32] & 1), p[32] >> 1, p[33]);
}

// A position's place in the split's order: its key, then (for equal keys, which different
// positions have only by a hash collision) its packed bytes, so that the order is total and the
// same for any number of threads (a streamed split's cursor indexes it across restarts).
struct Keyed {
  OrderKey key;
  const PackedPosition* packed;
  uint32_t index;
  bool operator<(const Keyed& o) const {
    // Word by word: std::array's comparisons call memcmp, the sort's most frequent call.
    for (size_t i = 0; i < key.size(); ++i)
      if (key[i] != o.key[i]) return key[i] < o.key[i];
    return std::memcmp(packed->data(), o.packed->data(), kPackedPositionSize) < 0;
  }
};

// Fills split.unique with `level` in the split's order, with estimates (split.depth and
// split.split_depth set). With `runs` (bounds into `level`, first 0, last level.size()), each
// run is already in place: its positions sort among themselves (their keys lie between the
// previous run's and the next one's), a sort of a few thousand at a time.
void OrderLevel(PerftSplit& split, std::vector<SplitPosition>& level, const SplitOptions& opts,
                const std::vector<size_t>& runs = {}) {
  const Position& root = split.root;
  const int remaining = split.depth - split.split_depth;
  // Order keys and estimates on every core, then the positions in key order.
  const int parts = SplitThreads(level.size(), opts.threads);
  const size_t n = level.size();
  std::vector<Keyed> keyed(n);
  const bool uniform = n > opts.estimate_positions || remaining < 2;
  ParallelFor(n, parts, [&](size_t begin, size_t end, int) {
    for (size_t i = begin; i < end; ++i) {
      if (uniform) {
        keyed[i] = {KeyOf(level[i].packed), &level[i].packed, uint32_t(i)};
        level[i].estimate = 1;
        continue;
      }
      // Leaves two plies down: a fair proxy for the subtree's size.
      const Position pos = Unpack(level[i].packed, root);
      keyed[i] = {KeyOf(pos), &level[i].packed, uint32_t(i)};
      double estimate = double(PerftCount(pos, 2));
      if (remaining > 2) estimate *= std::pow(std::max(1.0, std::sqrt(estimate)), remaining - 2);
      level[i].estimate = std::max(1.0, estimate);
    }
  });
  if (runs.size() < 2) {
    ParallelSort(keyed, parts);
  } else {
    std::atomic<size_t> next_run{0};
    ParallelFor(size_t(parts), parts, [&](size_t, size_t, int) {
      for (size_t r; (r = next_run.fetch_add(1)) + 1 < runs.size();)
        std::sort(keyed.begin() + long(runs[r]), keyed.begin() + long(runs[r + 1]));
    });
  }
  split.unique.resize(n);
  ParallelFor(n, parts, [&](size_t begin, size_t end, int) {
    for (size_t i = begin; i < end; ++i) split.unique[i] = std::move(level[keyed[i].index]);
  });
}

}  // namespace

size_t TargetJobs(const SplitOptions& opts) {
  if (opts.target_jobs > 0) return opts.target_jobs;
  return std::max<size_t>(16, 16 * size_t(std::max(1, opts.workers)));
}

absl::StatusOr<PerftSplit> SplitPerft(const Position& root, const SplitOptions& opts) {
  if (opts.depth < 1 || opts.depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(
        Cat("depth must be in 1..", kMaxPerftDepth, ", got ", opts.depth));
  if (opts.split_depth < 0 || opts.split_depth > opts.depth)
    return absl::InvalidArgumentError(
        Cat("split depth must be in 0..depth (", opts.depth, "), got ", opts.split_depth));
  PerftSplit split;
  split.depth = opts.depth;
  split.root = root;
  MoveList roots;
  GenerateLegal(root, roots);
  std::vector<SplitPosition> level;
  for (int i = 0; i < roots.size; ++i) {
    split.root_moves.push_back(MoveToUci(root, roots.moves[i]));
    Position pos = root;
    UndoInfo undo;
    pos.DoMove(roots.moves[i], undo);
    level.push_back({PackPosition(pos), {{uint32_t(i), 1}}, 1});
  }
  const size_t wanted = (opts.merge ? kPositionsPerJob : kSharedPositionsPerJob) * TargetJobs(opts);
  const int deepest = std::max(1, opts.depth - 1);
  const int merge_to = opts.merge ? opts.depth - kWorkerPlies : 0;
  int plies = 1;
  uint64_t with_duplicates = level.size();
  std::vector<SplitPosition> next;
  for (;;) {
    bool deeper = opts.split_depth > 0 ? plies < opts.split_depth
                                       : plies < deepest && !level.empty() &&
                                             (level.size() < wanted || plies < merge_to);
    if (!deeper) break;
    // The last ply (predicted: the next level is at least as large as this one) with many paths
    // is left to a streamed split when its paths fit in memory.
    const bool last = opts.split_depth > 0 ? plies + 1 == opts.split_depth
                                           : plies + 1 >= deepest ||
                                                 (level.size() >= wanted && plies + 1 >= merge_to);
    // The next ply's paths (estimated) when they may be deferred: whether they are is decided
    // below, for a last ply, or when the next ply has more positions than the bound.
    const bool may_defer = opts.merge && opts.defer_from_paths > 0;
    auto next_paths = [&] {
      split.unique = std::move(level);  // EstimatePaths reads a PerftSplit
      split.split_depth = plies;
      const uint64_t paths = EstimatePaths(split, 1);
      level = std::move(split.unique);
      return paths;
    };
    auto defer = [&](uint64_t paths) {
      if (paths < opts.defer_from_paths ||
          paths > kBucketedPathsPerPosition * uint64_t(opts.max_positions))
        return false;
      split.deferred_ply = plies + 1;
      split.deferred_paths = paths;
      return true;
    };
    if (may_defer && last && defer(next_paths())) break;
    uint64_t dup = 0;
    // An explicit split depth is bounded like the automatic one: beyond the cap it is refused.
    if (!ExpandLevel(level, root, opts.max_positions, SplitThreads(level.size(), opts.threads),
                     next, dup)) {
      if (opts.split_depth > 0)
        return absl::InvalidArgumentError(
            Cat("split_depth ", opts.split_depth, " expands more than ", opts.max_positions,
                " unique positions at ply ", plies + 1,
                " (the coordinator's bound); choose a smaller split depth, 0 for automatic, or a "
                "streamed split (split_memory_positions)"));
      // Short of where it merges, the next ply has more positions than the bound (perft(10)
      // and deeper from the start position: ply 6, 9.4 M positions from 25 M paths): deferred
      // too when its paths fit in memory, to be merged as a streamed split's, unless the
      // workers' tables outnumber them (SplitOptions::table_entries).
      if (may_defer && !last) {
        const uint64_t paths = next_paths();
        if (paths >= opts.table_entries) defer(paths);
      }
      break;
    }
    level.swap(next);
    with_duplicates = dup;
    ++plies;
  }
  split.split_depth = plies;
  split.split_positions = with_duplicates;
  next = {};
  // A deferred split's level is where its streamed split walks from: no estimates needed.
  SplitOptions order = opts;
  if (split.deferred_ply > 0) order.estimate_positions = 0;
  OrderLevel(split, level, order);
  return split;
}

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

uint64_t EstimatePaths(const PerftSplit& level, int plies) {
  return uint64_t(
      std::llround(MeanPaths(level.unique, level.root, plies) * double(level.unique.size())));
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

Position PerftSplit::PositionAt(size_t i) const { return Unpack(unique[i].packed, root); }

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
