// Tournament schedule and standings, shared by `arbiter tournament` and the coordinator's
// tournament runs.
//
//   for (auto [i, j] : TournamentPairings(int(names.size()), gauntlet)) ...play i vs j...
//   RETURN_IF_ERROR(AddStandings(names, results, *result.mutable_standings()));
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/arbiter/v1/match.pb.h"
#include "stats/ratings.h"

namespace arbiter::match {

// Pairings of a tournament of `engines` engines as indices (first < second), in schedule order:
// every pair of engines (round robin) or the first engine against each of the others (gauntlet).
std::vector<std::pair<int, int>> TournamentPairings(int engines, bool gauntlet);

// Rates `names` (engine indices in `results`) by maximum likelihood, anchored at 0 with one
// prior draw, and appends their standings to `out`, best first. Fails (adding nothing) when the
// games do not connect every engine.
absl::Status AddStandings(const std::vector<std::string>& names,
                          const std::vector<stats::PairingResult>& results,
                          google::protobuf::RepeatedPtrField<v1::TournamentStanding>& out);

}  // namespace arbiter::match
