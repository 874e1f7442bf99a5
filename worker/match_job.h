// Runs a match job on a worker: game pairs between two UCI engines, arbitrated by the match
// library's game loop (clocks, illegal moves, crashes), on `concurrency` engine pairs at once.
#pragma once

#include <atomic>

#include "absl/status/statusor.h"
#include "match/sandbox.h"
#include "proto/arbiter/v1/cluster.pb.h"
#include "worker/engine_cache.h"

namespace arbiter::worker {

// The games in pair order (both games of each pair). CANCELLED when `stop` became true.
// Every engine process runs in `sandbox`.
absl::StatusOr<v1::MatchJobResult> RunMatchJob(const v1::MatchJob& job, EngineCache& cache,
                                               int concurrency, const std::atomic<bool>* stop,
                                               const match::SandboxOptions& sandbox = {});

}  // namespace arbiter::worker
