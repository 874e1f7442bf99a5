// Tournament schedule and standings, shared by `arbiter tournament` and the coordinator's
// tournament runs, and the local tournament itself.
//
//   for (auto [i, j] : TournamentPairings(int(names.size()), gauntlet)) ...play i vs j...
//   RETURN_IF_ERROR(AddStandings(names, results, *result.mutable_standings()));
//   ASSIGN_OR_RETURN(v1::TournamentResult t, RunTournament(options, engines, gauntlet, play));
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "match/runner.h"
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

// What the caller sees of a local tournament as it runs: each pairing's progress and games, and
// each pairing's result before it is added (to fill in what the caller shows).
struct TournamentCallbacks {
  std::function<void(const MatchOptions& pairing, const MatchSummary& so_far)> progress;
  std::function<void(const MatchOptions& pairing, uint64_t round, const GameRecord& game)> game;
  std::function<void(const MatchOptions& pairing, v1::MatchResult& result)> finished;
};

// The PGN Event of a tournament without --event: "arbiter round robin of 4 engines".
std::string TournamentEvent(bool gauntlet, size_t engines);

// A local tournament of `engines` on `base`'s settings: every engine is started and handshaken
// once before the first game (a bad one is reported at once, by name), then the pairings of
// TournamentPairings are played as one schedule interleaved round by round (RunSchedule: a
// stopped tournament has played every pairing about as often), the PGN Event is `base`'s or
// TournamentEvent, and all engines are rated. The seconds are the wall time of the whole
// tournament.
absl::StatusOr<v1::TournamentResult> RunTournament(const MatchOptions& base,
                                                   const std::vector<EngineSpec>& engines,
                                                   bool gauntlet,
                                                   const TournamentCallbacks& callbacks = {});

}  // namespace arbiter::match
