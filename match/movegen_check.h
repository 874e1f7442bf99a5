// movegen-check: an engine's own perft against arbiter's over many positions. For each position
// both count; on a difference the shallowest wrong depth is found and the divide descent
// (perft_diff.h) gives the smallest failing example. Failures are deduplicated by that example.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/perft.h"
#include "match/perft_diff.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/movegen.pb.h"

namespace arbiter::match {

inline constexpr int kMaxMovegenDepth = 10;
inline constexpr size_t kMaxMovegenPositions = 100000;

v1::PerftDialectSpec DialectToProto(const PerftDialect& d);
absl::StatusOr<PerftDialect> DialectFromProto(const v1::PerftDialectSpec& d);

// Checks positions one after the other with one engine. An engine that crashes, hangs, prints
// garbage or no total is a fault of that position (`fault` set, the engine killed so that the
// next position restarts it); an error comes back only for a bad position or an engine that does
// not speak the dialect at all. Between positions it keeps what need not be done again: the
// dialect probe and `ucinewgame` (again only after a restart or a change of Chess960 mode), and
// arbiter's perft hash table (its entries hold for any root). Arbiter's count runs on a thread of
// its own while the engine counts.
class MovegenChecker {
 public:
  MovegenChecker(UciEngine& engine, PerftDialect dialect, Millis timeout);
  // A part (`moves` set) is the subtree after those moves; its failure is reported from the
  // position (`root_fen`) with the moves at the head of the path.
  absl::StatusOr<v1::MovegenPositionResult> Check(const v1::MovegenPosition& p);

 private:
  UciEngine& engine_;
  PerftDialect dialect_;
  Millis timeout_;
  std::shared_ptr<PerftTable> table_;
  int ready_starts_ = -1;  // the engine start that was probed and set up
  int chess960_ = -1;
};

// One position with a fresh checker.
absl::StatusOr<v1::MovegenPositionResult> CheckMovegenPosition(UciEngine& engine,
                                                               const v1::MovegenPosition& p,
                                                               const PerftDialect& dialect,
                                                               Millis timeout);

// The parts of a position split by root move (MovegenPosition.moves), each with its estimate (the
// position's, shared by the sizes of the subtrees two plies deep). Empty when the position has no
// legal move or depth < 2.
std::vector<v1::MovegenPosition> SplitMovegenPosition(const v1::MovegenPosition& p, uint32_t index);

// Adds up the parts of a split position as they come (in any order) into the position's result:
// counts and times summed, the first fault, the failure with the shortest path.
class MovegenParts {
 public:
  // Returns the position's result when `r` was its last part.
  std::optional<v1::MovegenPositionResult> Add(const v1::MovegenPosition& part,
                                               const v1::MovegenPositionResult& r);

 private:
  struct Pending {
    uint32_t seen = 0;
    v1::MovegenPositionResult sum;
  };
  std::map<uint32_t, Pending> pending_;
};

// Adds up position results into a MovegenCheckResult.
class MovegenAggregate {
 public:
  void Add(const v1::MovegenPositionResult& r);
  // `positions` is the number asked for.
  v1::MovegenCheckResult Result(uint32_t positions) const;

 private:
  v1::MovegenCheckResult sum_;
  std::map<std::string, int> failure_index_;  // dedup key -> index in sum_.failures
};

// Positions of a perft suite (EPD with ";D<n> count" fields, or plain FENs): at `depth`, or with
// `max_nodes`, the deepest depth up to `depth` (default 6) whose count (from the file, else
// arbiter's) is at most max_nodes.
absl::StatusOr<std::vector<v1::MovegenPosition>> MovegenSuitePositions(const std::string& path,
                                                                       int depth,
                                                                       uint64_t max_nodes);

// Text report of a result (the CLI's output).
std::string MovegenReportText(const v1::MovegenCheckResult& r);

}  // namespace arbiter::match
