// Perft runs: the plan (the root expanded to a split depth, transpositions merged, unique
// positions packed into jobs, lanes for workers with hashes of their own) and the handler that
// checks counts, votes among verified results and sums total and divide.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

// Validates and splits a perft request; slow for deep splits (uses every core).
absl::StatusOr<RunPlan> PlanPerftRun(const v1::SubmitPerftRequest& request,
                                     const PlanContext& context);

// The handler of a stored perft run.
absl::StatusOr<std::unique_ptr<RunHandler>> LoadPerftRun(const std::string& spec);

}  // namespace arbiter::coordinator
