// What the three parts of the perft split share (perft_split.cc: the in-memory expansion and the
// split's order; perft_shards.cc: a streamed split's shards; perft_packing.cc: jobs from
// positions). Internal to the coordinator: the interface is perft_split.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "coordinator/perft_split.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft_lane.h"
#include "engine/position.h"

namespace arbiter::coordinator::split_detail {

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

inline void AddWeight(Weights& into, uint32_t root, uint64_t mult) {
  for (auto& [r, m] : into) {
    if (r == root) {
      m += mult;
      return;
    }
  }
  into.emplace_back(root, mult);
}

// Threads for a level of `n` positions: as asked, else one below kParallelFrom, else every core
// (at most 16).
inline constexpr size_t kParallelFrom = 20'000;
inline int SplitThreads(size_t n, int asked) {
  if (asked > 0) return asked;
  if (n < kParallelFrom) return 1;
  return int(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

// Our own packed positions: unpacking cannot fail.
inline Position Unpack(const PackedPosition& packed, const Position& root) {
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

// The mean number of paths of `plies` moves from the positions of `level`, from a sample of up to
// kSampledParents of them (every one of a smaller level).
double MeanPaths(const std::vector<SplitPosition>& level, const Position& root, int plies);

// Fills split.unique with `level` in the split's order, with estimates (split.depth and
// split.split_depth set). With `runs` (bounds into `level`, first 0, last level.size()), each
// run is already in place: its positions sort among themselves (their keys lie between the
// previous run's and the next one's), a sort of a few thousand at a time.
void OrderLevel(PerftSplit& split, std::vector<SplitPosition>& level, const SplitOptions& opts,
                const std::vector<size_t>& runs = {});

}  // namespace arbiter::coordinator::split_detail
