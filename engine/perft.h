// Perft: counts the leaf nodes of the legal move tree (https://www.chessprogramming.org/Perft).
// Bulk counting at the last ply, templates on side to move, an optional shared hash table with
// 128-bit verified keys, and threads that pull subtrees from a shared queue.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/perft_lane.h"
#include "engine/position.h"

namespace arbiter {

class PerftTable;

struct PerftOptions {
  int depth = 1;
  int threads = 1;      // 0 = all hardware threads
  int hash_mb = 0;      // 0 = no hash table
  bool divide = false;  // also count per root move
  // Use this table (kept across counts, engine/perft_hash.h) instead of allocating hash_mb.
  PerftTable* table = nullptr;
};

struct PerftDivide {
  Move move;
  uint64_t nodes = 0;
};

struct PerftResult {
  uint64_t nodes = 0;
  std::vector<PerftDivide> divide;  // root moves in generation order, when asked
  double seconds = 0;
  int threads = 1;
  const char* path = "";  // the copy of the counting core that ran (engine/perft_path.h)
};

// Largest depth Perft accepts; deeper counts do not fit in 64 bits for ordinary positions.
inline constexpr int kMaxPerftDepth = 20;

// Counts leaves at opts.depth (>= 1; perft(0) is 1 by definition and also accepted).
absl::StatusOr<PerftResult> Perft(const Position& pos, const PerftOptions& opts);

// A perft hash table that can outlive one count (engine/perft_hash.h keeps one across counts): an
// entry (128-bit key, which names the rook of each castling right too, and depth) is valid for
// any root. Zeroed on `threads` threads; null if the memory cannot be had.
std::shared_ptr<PerftTable> MakePerftTable(int hash_mb, int threads = 1);

struct PerftBatchOptions {
  int depth = 1;
  int threads = 1;  // 0 = all hardware threads
  int hash_mb = 0;  // one table shared by every position of the batch
  // Use this table (of any size) instead of allocating hash_mb; may be null.
  PerftTable* table = nullptr;
  // The positions are distinct (a coordinator's split merged their transpositions): their own
  // counts are neither looked up nor stored (they would only miss, and crowd out entries that
  // hit); their descendants' are.
  bool distinct = false;
  // Checked between subtrees: when it becomes true the batch stops with CANCELLED.
  const std::atomic<bool>* stop = nullptr;
  // Leaves counted so far (updated as subtrees finish), for progress reports.
  std::atomic<uint64_t>* nodes_done = nullptr;
  // With a lane, lane_end > 0 (engine/perft_lane.h), each count is of the leaves below only
  // those positions kLanePlies below it whose ShardKey is in [lane_begin, lane_end) (depth >=
  // kLanePlies); the counts of lanes that cover [0, kShardKeyEnd) once add up to the whole counts.
  uint64_t lane_begin = 0;
  uint64_t lane_end = 0;
  PerftLane lane() const { return {lane_begin, lane_end}; }
};

// Counts every position to the same depth (a distributed perft job): one count per position,
// in order. Threads pull subtrees of all positions from one queue and share one hash table.
absl::StatusOr<std::vector<uint64_t>> PerftBatch(std::span<const Position> positions,
                                                 const PerftBatchOptions& opts);
// The same over positions packed 34 bytes each (engine/packed_position.h) in the game of `game`
// (any of its positions: castling rooks, Chess960): each is unpacked and checked as its count
// starts, so that no list of them is built (a worker's job holds up to ~50,000). A bad one stops
// the batch with INVALID_ARGUMENT naming its index.
absl::StatusOr<std::vector<uint64_t>> PerftPackedBatch(std::string_view packed,
                                                       const Position& game,
                                                       const PerftBatchOptions& opts);

// The fast count of one position on the calling thread without a hash (depth >= 0): cheap enough
// to estimate subtree sizes with a shallow depth.
uint64_t PerftCount(const Position& pos, int depth);

// An upper bound of any position's count at `depth`: 218 (the most legal moves of any position)
// to the power of the plies, saturated. Checks counts that arrive from outside.
uint64_t PerftCountBound(uint32_t depth);
// Plain recursive perft with full move generation and make/unmake at every ply: the slow,
// obviously-correct reference the fast path is tested against.
uint64_t PerftReference(Position& pos, int depth);

}  // namespace arbiter
