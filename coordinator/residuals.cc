#include "coordinator/residuals.h"

#include <cmath>

#include "base/strings.h"
#include "coordinator/match_run.h"
#include "stats/residuals.h"

namespace arbiter::coordinator {

void AddSummary(match::MatchSummary& into, const match::MatchSummary& from) {
  into.trinomial.losses += from.trinomial.losses;
  into.trinomial.draws += from.trinomial.draws;
  into.trinomial.wins += from.trinomial.wins;
  for (int i = 0; i < 5; ++i) into.pentanomial.counts[i] += from.pentanomial.counts[i];
  for (const auto& [end, games] : from.terminations) into.terminations[end] += games;
  for (int e = 0; e < 2; ++e) {
    into.faults[e].time_losses += from.faults[e].time_losses;
    into.faults[e].disconnects += from.faults[e].disconnects;
    into.faults[e].stalls += from.faults[e].stalls;
    into.faults[e].illegal_moves += from.faults[e].illegal_moves;
  }
  into.games += from.games;
  into.pairs += from.pairs;
  into.moves += from.moves;
  into.aborted_games += from.aborted_games;
  into.think_seconds += from.think_seconds;
  into.game_loop_seconds += from.game_loop_seconds;
}

bool WorkerTallies::Count(const Result& result) {
  Tally& t = workers_[result.worker_id];
  t.name = result.worker_name;
  t.token = result.token_name;
  if (result.match) CountGames(*result.match, t.games);
  return CountsIn(t);
}

std::optional<v1::WorkerResidual> WorkerTallies::Judge(double now_unix) {
  stats::Pentanomial counted;
  size_t judged = 0;
  for (const auto& [id, t] : workers_) {
    if (!CountsIn(t)) continue;
    for (int i = 0; i < 5; ++i) counted.counts[i] += t.games.pentanomial.counts[i];
    if (!t.verdict && t.games.pairs >= stats::kResidualMinPairs) ++judged;
  }
  if (judged < stats::kResidualMinWorkers) return std::nullopt;
  const double bound = stats::ResidualThreshold(judged);
  Tally* worst = nullptr;
  std::string worst_id;
  double worst_z = 0;
  for (auto& [id, t] : workers_) {
    if (t.verdict || t.games.pairs < stats::kResidualMinPairs) continue;
    stats::Pentanomial rest = counted;
    for (int i = 0; i < 5; ++i) rest.counts[i] -= t.games.pentanomial.counts[i];
    if (rest.Pairs() < stats::kResidualMinPairs) continue;
    const double z = stats::PairScoreResidual(t.games.pentanomial, rest);
    if (std::abs(z) > bound && std::abs(z) > std::abs(worst_z)) {
      worst = &t;
      worst_id = id;
      worst_z = z;
    }
  }
  if (!worst) return std::nullopt;
  v1::WorkerResidual& v = worst->verdict.emplace();
  v.set_worker_id(worst_id);
  v.set_worker_name(worst->name);
  v.set_token(worst->token);
  v.set_state(v1::RESIDUAL_STATE_SET_ASIDE);
  v.set_residual(worst_z);
  v.set_threshold(bound);
  v.set_flagged_unix(now_unix);
  v1::WorkerResidual out = v;
  for (uint64_t c : worst->games.pentanomial.counts) out.add_pentanomial(c);
  return out;
}

match::MatchSummary WorkerTallies::Counted() const {
  match::MatchSummary out;
  for (const auto& [id, t] : workers_)
    if (CountsIn(t)) AddSummary(out, t.games);
  return out;
}

bool WorkerTallies::Counts(const std::string& worker_id) const {
  auto it = workers_.find(worker_id);
  return it == workers_.end() || CountsIn(it->second);
}

void WorkerTallies::Restore(const v1::WorkerResidual& verdict) {
  Tally& t = workers_[verdict.worker_id()];
  t.name = verdict.worker_name();
  t.token = verdict.token();
  t.verdict = verdict;
}

absl::StatusOr<v1::WorkerResidual> WorkerTallies::Decide(const std::string& worker_id,
                                                         v1::ResidualState decision) {
  if (decision != v1::RESIDUAL_STATE_ACCEPTED && decision != v1::RESIDUAL_STATE_VOIDED)
    return absl::InvalidArgumentError("the decision is to accept or to void the games");
  auto it = workers_.find(worker_id);
  if (it == workers_.end() || !it->second.verdict)
    return absl::NotFoundError(Cat("worker ", worker_id, " has no games set aside in this run"));
  v1::WorkerResidual& v = *it->second.verdict;
  if (v.state() != v1::RESIDUAL_STATE_SET_ASIDE)
    return absl::FailedPreconditionError(
        Cat("worker ", worker_id, "'s games were already ",
            v.state() == v1::RESIDUAL_STATE_ACCEPTED ? "accepted" : "voided"));
  v.set_state(decision);
  return v;
}

std::vector<v1::WorkerResidual> WorkerTallies::Verdicts() const {
  std::vector<v1::WorkerResidual> out;
  for (const auto& [id, t] : workers_) {
    if (!t.verdict) continue;
    v1::WorkerResidual& v = out.emplace_back(*t.verdict);
    v.clear_pentanomial();
    for (uint64_t c : t.games.pentanomial.counts) v.add_pentanomial(c);
  }
  return out;
}

bool WorkerTallies::Pending() const {
  for (const auto& [id, t] : workers_)
    if (t.verdict && t.verdict->state() == v1::RESIDUAL_STATE_SET_ASIDE) return true;
  return false;
}

}  // namespace arbiter::coordinator
