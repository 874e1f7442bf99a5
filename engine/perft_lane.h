// Lanes of keys (docs/scaling.md, "Lanes"): workers with hash tables of their own
// each count one lane of the positions two plies below their jobs' positions, chosen by a key of
// the pieces of the side not to move (ShardKey). Every path to a position, and every transposition
// of it one ply further down (which differs only in the other side's last move), has that key, so
// they all fall into one lane and one worker's table: two workers then count no position of
// those plies twice, where plain jobs of a shallow split let each worker's table count the
// transpositions between its jobs and the other's again (+10-25 % of their CPU on perft(8)).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"
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
// one key, and so have the positions one ply below it that transpose into each other. The
// streamed split cuts its shards, and lanes their ranges, by it.
inline constexpr uint64_t kShardKeyEnd = uint64_t{1} << 63;
uint64_t ShardKey(const Position& pos);
// ShardKey of the position `m` (legal in `pos`) leads to, from the mover's pieces and the move
// alone: a lane's walk keys every child of the ply above its ply without making the move.
uint64_t ShardKeyAfter(const Position& pos, Move m);

// A lane: the positions kLanePlies below each of a job's positions whose ShardKey is in
// [begin, end); end == 0: no lane (every position counted).
struct PerftLane {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool active() const { return end != 0; }
  bool Contains(uint64_t key) const { return key >= begin && key < end; }
};
inline constexpr int kLanePlies = 2;

// OK for no lane, or a non-empty range of keys below 2^63 counted at least kLanePlies below a
// job's positions (`depth`); otherwise INVALID_ARGUMENT naming the lane.
absl::Status CheckPerftLane(PerftLane lane, int depth);

}  // namespace arbiter
