// Ratings across runs (RunService.GetRatings, `arbiter ratings`): the pairings of every chosen
// match and tournament run, combined by engine (name and identity) and rated together with the
// tournament model (match::AddStandings: Bradley-Terry, anchored, one virtual draw per pairing).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace arbiter::coordinator {

// The pairings of a finished run's status (a match's engines, a tournament's pairings).
std::vector<RunPairing> PairingsOf(const v1::Run& run);

// Bounds of a request (INVALID_ARGUMENT naming the bound).
absl::Status ValidateRatingsRequest(const v1::GetRatingsRequest& request);

// What each engine name of one run is (name -> "sha256 HEX args ... options X=V,..."): the
// binary the workers ran (or the upload, or "builtin") with its arguments and options. A name
// without an entry is only its name.
using EngineIdentities = std::map<std::string, std::string>;

// The identities of a match or tournament run's engines, from its status (the request's
// options and args, RunEngine's sha256s).
EngineIdentities IdentitiesOf(const v1::Run& run);

// Rates the pairings of `runs` (run id and its pairings, oldest first) between engines the
// request chose. Engines are keyed by name and identity (`identities` by run id): one name that
// covers different identities is rated as one engine per identity ("sf#1", "sf#2"), with a
// warning in the response saying what each is. FAILED_PRECONDITION when no games count or they
// do not connect the engines.
absl::StatusOr<v1::GetRatingsResponse> RateRuns(
    const v1::GetRatingsRequest& request,
    const std::vector<std::pair<uint64_t, std::vector<RunPairing>>>& runs,
    const std::map<uint64_t, EngineIdentities>& identities = {});

}  // namespace arbiter::coordinator
