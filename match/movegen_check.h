// movegen-check: an engine's own perft against arbiter's over many positions. For each position
// both count; on a difference the shallowest wrong depth is found and the divide descent
// (perft_diff.h) gives the smallest failing example. Failures are deduplicated by that example.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "match/perft_diff.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/movegen.pb.h"

namespace arbiter::match {

inline constexpr int kMaxMovegenDepth = 10;
inline constexpr size_t kMaxMovegenPositions = 100000;

v1::PerftDialectSpec DialectToProto(const PerftDialect& d);
absl::StatusOr<PerftDialect> DialectFromProto(const v1::PerftDialectSpec& d);

// Checks one position. An engine that crashes, hangs, prints garbage or no total is a fault of
// this position (`fault` set, the engine killed so the next position restarts it); an error
// comes back only for a bad position or an engine that does not speak the dialect at all.
absl::StatusOr<v1::MovegenPositionResult> CheckMovegenPosition(UciEngine& engine,
                                                               const v1::MovegenPosition& p,
                                                               const PerftDialect& dialect,
                                                               Millis timeout);

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
