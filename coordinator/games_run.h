// Match and tournament runs: the plan (batches of game pairs, a tournament's pairings
// interleaved) and the handler that replays every reported game, counts it (pentanomial, Elo,
// SPRT; a tournament's pairings and ratings) and stops a match when its SPRT decides.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

absl::StatusOr<RunPlan> PlanMatchRun(const v1::SubmitMatchRequest& request,
                                     const PlanContext& context);
absl::StatusOr<RunPlan> PlanTournamentRun(const v1::SubmitTournamentRequest& request,
                                          const PlanContext& context);

absl::StatusOr<std::unique_ptr<RunHandler>> LoadMatchRun(const std::string& spec);
absl::StatusOr<std::unique_ptr<RunHandler>> LoadTournamentRun(const std::string& spec);

// What the PGN export of a games run needs from its handler, taken under the coordinator's lock.
struct PgnSource {
  std::vector<std::pair<uint64_t, uint64_t>> counted;        // (job, lease) of counted results
  std::vector<std::pair<std::string, std::string>> engines;  // per pairing: first, second
  std::vector<uint32_t> pairing_of_job;                      // by job index (tournaments)
  uint64_t games_per_pairing = 0;                            // tournaments; 0 for a match
};

// The PGN source of `handler` when it is a games run.
std::optional<PgnSource> PgnSourceOf(const RunHandler& handler);

}  // namespace arbiter::coordinator
