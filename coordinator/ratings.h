// Ratings across runs (RunService.GetRatings, `arbiter ratings`): the pairings of every chosen
// match and tournament run, combined by engine name and rated together with the tournament
// model (match::AddStandings: Bradley-Terry, anchored, one virtual draw per pairing).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/cluster.pb.h"

namespace arbiter::coordinator {

// The pairings of a finished run's status (a match's engines, a tournament's pairings).
std::vector<RunPairing> PairingsOf(const v1::Run& run);

// Bounds of a request (INVALID_ARGUMENT naming the bound).
absl::Status ValidateRatingsRequest(const v1::GetRatingsRequest& request);

// Rates the pairings of `runs` (run id and its pairings, oldest first) between engines the
// request chose. FAILED_PRECONDITION when no games count or they do not connect the engines.
absl::StatusOr<v1::GetRatingsResponse> RateRuns(
    const v1::GetRatingsRequest& request,
    const std::vector<std::pair<uint64_t, std::vector<RunPairing>>>& runs);

}  // namespace arbiter::coordinator
