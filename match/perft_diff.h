// Finds where another engine's move generator is wrong: asks it for `go perft N` divide output
// (Stockfish's "move: count" lines), compares with arbiter's perft, descends into the first move
// whose count differs, and stops at the position where the legal move lists differ.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "match/uci_engine.h"

namespace arbiter::match {

struct PerftDiffStep {
  std::string fen;
  int depth = 0;
  uint64_t expected = 0, reported = 0;
  std::string move;  // the move descended into ("" at the last step)
};

struct PerftDiffReport {
  std::string engine;  // id name
  bool identical = false;
  std::string fen;  // where the difference shows
  int depth = 0;
  std::vector<std::string> path;          // moves from the root (UCI)
  std::vector<std::string> missing;       // legal moves the engine did not list
  std::vector<std::string> extra;         // moves the engine listed that are not legal
  std::vector<std::string> wrong_counts;  // same moves, different counts, at depth 1
  std::vector<PerftDiffStep> steps;
};

// Parses divide output ("e2e4: 20" lines) until "Nodes searched"; fails on a timeout or exit.
absl::StatusOr<std::vector<std::pair<std::string, uint64_t>>> ReadDivide(UciEngine& engine,
                                                                         Millis timeout);

absl::StatusOr<PerftDiffReport> PerftDiff(UciEngine& engine, std::string_view fen, int depth,
                                          Millis timeout);

}  // namespace arbiter::match
