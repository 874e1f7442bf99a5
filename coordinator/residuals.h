// The residual check of a match run (docs/residuals.md): each worker's games kept apart, so that
// a worker whose score is improbable beside the rest of the run's can be set aside (its games
// out of the run's count) until an admin accepts or voids them.
//
//   WorkerTallies tallies;
//   if (tallies.Count(result)) CountGames(*result.match, run_summary);   // its games count
//   if (auto flagged = tallies.Judge(UnixNow())) run_summary = tallies.Counted();
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "match/summary.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

// Adds `from`'s games to `into` (counts, terminations, faults, moves, times; not Elo or SPRT).
void AddSummary(match::MatchSummary& into, const match::MatchSummary& from);

class WorkerTallies {
 public:
  // Counts a replayed result into its worker's tally; true when its games count in the run's
  // total (the worker is neither set aside nor voided).
  bool Count(const Result& result);
  // The worker whose residual is the largest beyond the bound, set aside now (its verdict), or
  // nothing. Judged: workers without a verdict, once kResidualMinWorkers of them have
  // kResidualMinPairs pairs each; one at a time, since the rest changes without it.
  std::optional<v1::WorkerResidual> Judge(double now_unix);
  // The run's count: the games of every worker but those set aside or voided.
  match::MatchSummary Counted() const;
  // Whether `worker_id`'s games are in the run's count.
  bool Counts(const std::string& worker_id) const;
  // A stored verdict, before the run's results are counted again after a restart.
  void Restore(const v1::WorkerResidual& verdict);
  // An admin's decision on a set-aside worker: ACCEPTED or VOIDED (FAILED_PRECONDITION when it
  // is not set aside, NOT_FOUND when it has no verdict).
  absl::StatusOr<v1::WorkerResidual> Decide(const std::string& worker_id,
                                            v1::ResidualState decision);
  // Every verdict, with its worker's pairs so far, by worker id.
  std::vector<v1::WorkerResidual> Verdicts() const;
  // Whether games wait for an admin (a worker is set aside).
  bool Pending() const;

 private:
  struct Tally {
    std::string name, token;
    match::MatchSummary games;
    std::optional<v1::WorkerResidual> verdict;
  };
  static bool CountsIn(const Tally& t) {
    return !t.verdict || t.verdict->state() == v1::RESIDUAL_STATE_ACCEPTED;
  }
  std::map<std::string, Tally> workers_;  // by worker id
};

}  // namespace arbiter::coordinator
