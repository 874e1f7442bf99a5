// The in-memory split: the root expanded ply by ply with transpositions merged (ExpandLevel), and
// the split's order of positions (OrderLevel), which every part of the split shares.
#include "coordinator/perft_split.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <initializer_list>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "coordinator/perft_split_internal.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"

namespace arbiter::coordinator {
namespace split_detail {
namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

// Fills split.unique with `level` in the split's order, with estimates (split.depth and
// split.split_depth set). With `runs` (bounds into `level`, first 0, last level.size()), each
// run is already in place: its positions sort among themselves (their keys lie between the
// previous run's and the next one's), a sort of a few thousand at a time.
void OrderLevel(PerftSplit& split, std::vector<SplitPosition>& level, const SplitOptions& opts,
                const std::vector<size_t>& runs) {
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

}  // namespace split_detail

using split_detail::ExpandLevel;
using split_detail::OrderLevel;
using split_detail::SplitThreads;

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

uint64_t EstimatePaths(const PerftSplit& level, int plies) {
  return uint64_t(std::llround(split_detail::MeanPaths(level.unique, level.root, plies) *
                               double(level.unique.size())));
}

Position PerftSplit::PositionAt(size_t i) const {
  return split_detail::Unpack(unique[i].packed, root);
}

}  // namespace arbiter::coordinator
