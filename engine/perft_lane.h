// A lane of a merged level (docs/scaling.md, "The workers' merge"): a job's positions are the
// parents of a level, and the job counts only those of their children whose ShardKey lies in its
// range, each child once however many of the parents reach it. Every path to a child, and every
// transposition of the child's subtree one ply down, has the child's ShardKey (the pieces of the
// side not to move), so jobs of disjoint ranges never count one position twice, and the job whose
// range holds a child merges all of its paths: workers with tables of their own then count
// nothing twice at that level, and nothing of the level crosses the network.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/perft.h"
#include "engine/position.h"

namespace arbiter {

// A 64x64 -> 128-bit multiply with its halves folded: the mixing step of the hashes below.
inline uint64_t Fold(uint64_t a, uint64_t b) {
  const unsigned __int128 p = (unsigned __int128)a * b;
  return uint64_t(p) ^ uint64_t(p >> 64);
}

// A hash of `words` that is the same in every process (absl::Hash is seeded per process; a
// streamed split's order, and a lane's range, must mean the same on every machine).
uint64_t HashWords(std::initializer_list<uint64_t> words);

// A 63-bit key of the pieces of the side not to move: a position and all its transpositions have
// one key; the split cuts shards, and lane jobs their ranges, by it.
inline constexpr uint64_t kShardKeyEnd = uint64_t{1} << 63;
uint64_t ShardKey(const Position& pos);

// For each parent packed in `packed` (as for PerftPackedBatch, in the game of `game`), the leaves
// at opts.depth below it through its children with ShardKey in [begin, end) (begin < end <=
// kShardKeyEnd, opts.depth >= 1): each such child is counted once, at opts.depth - 1, into the
// batch's table, and its count added to every parent that reaches it (once per move that does).
// The counts of all lanes of [0, kShardKeyEnd) add up to PerftPackedBatch's.
absl::StatusOr<std::vector<uint64_t>> PerftLaneBatch(std::string_view packed, const Position& game,
                                                     uint64_t begin, uint64_t end,
                                                     const PerftBatchOptions& opts);

}  // namespace arbiter
