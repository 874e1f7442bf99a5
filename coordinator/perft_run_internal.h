// What the perft run's plan (perft_plan.cc) and its handler (perft_run.cc) share. Internal to the
// coordinator: the interface is perft_run.h.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/perft_split.h"
#include "coordinator/run_handler.h"
#include "engine/position.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator::perft_detail {

inline double Seconds(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The stored spec of one job: the split's positions `group`, packed, with their weights.
store::v1::StoredPerftJob BuildJobSpec(const PerftSplit& split, const std::vector<uint32_t>& group,
                                       const v1::SubmitPerftRequest& request,
                                       const std::string& root_fen);

// The positions at a streamed split's chunk ply (where each shard's walk starts), merged, in the
// split's order (the same at every restart).
absl::StatusOr<PerftSplit> ChunkLevel(const Position& root, const store::v1::StoredPerftRun& run);

// The handler of a planned perft run: its jobs' specs (none for a streamed split, whose jobs come
// from its JobSource) and, for a streamed split, the chunk-ply positions the planner computed.
std::unique_ptr<RunHandler> NewPerftRun(store::v1::StoredPerftRun run,
                                        std::vector<store::v1::StoredPerftJob> specs,
                                        std::optional<PerftSplit> planned_level = std::nullopt);

}  // namespace arbiter::coordinator::perft_detail
