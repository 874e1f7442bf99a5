// Perft: counts the leaf nodes of the legal move tree (https://www.chessprogramming.org/Perft).
// Bulk counting at the last ply, templates on side to move, an optional shared hash table with
// 128-bit verified keys, and threads that pull subtrees from a shared queue.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

struct PerftOptions {
  int depth = 1;
  int threads = 1;      // 0 = all hardware threads
  int hash_mb = 0;      // 0 = no hash table
  bool divide = false;  // also count per root move
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
};

// Largest depth Perft accepts; deeper counts do not fit in 64 bits for ordinary positions.
inline constexpr int kMaxPerftDepth = 20;

// Counts leaves at opts.depth (>= 1; perft(0) is 1 by definition and also accepted).
absl::StatusOr<PerftResult> Perft(const Position& pos, const PerftOptions& opts);

// Plain recursive perft with full move generation and make/unmake at every ply: the slow,
// obviously-correct reference the fast path is tested against.
uint64_t PerftReference(Position& pos, int depth);

}  // namespace arbiter
