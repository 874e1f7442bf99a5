// Match runs on the coordinator: request validation, the job plan (batches of game pairs),
// the replay check of every reported game, and the running score (pentanomial, Elo, SPRT).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/arbiter/v1/cluster.pb.h"
#include "stats/counts.h"
#include "stats/sprt.h"

namespace arbiter::coordinator {

// Largest game count of an SPRT run that gives no `games` (it stops when the SPRT decides).
inline constexpr uint64_t kMaxSprtGames = 20000;

// Checks a match request; `engine_known(sha256)` says whether an upload exists.
absl::Status ValidateMatchRequest(const v1::SubmitMatchRequest& request,
                                  const std::function<bool(const std::string&)>& engine_known);

// The SPRT parameters of a request, if it asks for one.
std::optional<stats::SprtParams> SprtOf(const v1::SubmitMatchRequest& request);

// Jobs of a match run: consecutive pair ranges.
std::vector<v1::MatchJob> PlanMatchJobs(const v1::SubmitMatchRequest& request);

// Replays every game of a result from its start position: every move must be legal, the game
// must not have ended on the board before its last move, a "normal" end must be the board's
// own result, and the pairs must be the job's. Errors name the game and the move.
absl::Status CheckMatchResult(const v1::MatchJob& job, const v1::MatchJobResult& result);

// The score of a match run so far, from the first engine's point of view.
struct MatchTally {
  stats::Pentanomial pentanomial;
  stats::Trinomial trinomial;
  std::map<std::string, uint64_t> terminations;
  uint64_t rejected = 0;

  void Add(const v1::MatchJobResult& result);
  // Fills counts, Elo and (with `sprt`) the SPRT into `out`; returns the SPRT decision.
  stats::SprtDecision Fill(const std::optional<stats::SprtParams>& sprt,
                           v1::MatchRunStatus& out) const;
};

}  // namespace arbiter::coordinator
