#include "coordinator/ratings.h"

#include <algorithm>
#include <map>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/coordinator.h"
#include "coordinator/match_run.h"
#include "match/tournament.h"

namespace arbiter::coordinator {

std::vector<RunPairing> PairingsOf(const v1::Run& run) {
  std::vector<RunPairing> out;
  auto add = [&out](const v1::MatchResult& m) {
    if (m.engines_size() != 2) return;
    const v1::TrinomialCounts& wdl = m.stats().wdl();
    out.push_back({m.engines(0),
                   m.engines(1),
                   {.losses = wdl.losses(), .draws = wdl.draws(), .wins = wdl.wins()}});
  };
  if (run.has_match()) add(run.match().result());
  if (run.has_tournament())
    for (const v1::MatchResult& p : run.tournament().pairings()) add(p);
  return out;
}

absl::Status ValidateRatingsRequest(const v1::GetRatingsRequest& request) {
  if (request.engines().empty() && request.run_ids().empty())
    return absl::InvalidArgumentError("give the engines to rate, the runs, or both");
  if (request.engines_size() > kMaxTournamentEngines)
    return absl::InvalidArgumentError(
        Cat("at most ", kMaxTournamentEngines, " engines, got ", request.engines_size()));
  if (request.run_ids_size() > 1000)
    return absl::InvalidArgumentError(Cat("at most 1000 runs, got ", request.run_ids_size()));
  for (const std::string& e : request.engines())
    if (e.empty() || e.size() > kMaxEngineNameBytes)
      return absl::InvalidArgumentError(
          Cat("engine names must have 1..", kMaxEngineNameBytes, " bytes"));
  if (request.anchor().size() > kMaxEngineNameBytes)
    return absl::InvalidArgumentError(
        Cat("the anchor must have at most ", kMaxEngineNameBytes, " bytes"));
  return absl::OkStatus();
}

absl::StatusOr<v1::GetRatingsResponse> RateRuns(
    const v1::GetRatingsRequest& request,
    const std::vector<std::pair<uint64_t, std::vector<RunPairing>>>& runs) {
  const std::vector<std::string> chosen(request.engines().begin(), request.engines().end());
  auto wanted = [&chosen](const std::string& name) {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
  };
  // Engines in order of appearance (the chosen ones first, in the order given).
  std::vector<std::string> names = chosen;
  auto index = [&names](const std::string& name) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) return int(it - names.begin());
    names.push_back(name);
    return int(names.size() - 1);
  };
  // One result per pair of engines, combined over runs, from the lower index's side.
  std::map<std::pair<int, int>, stats::Trinomial> combined;
  v1::GetRatingsResponse out;
  for (const auto& [run_id, pairings] : runs) {
    bool counted = false;
    for (const RunPairing& p : pairings) {
      if (p.counts.Games() == 0 || p.first == p.second || !wanted(p.first) || !wanted(p.second))
        continue;
      int a = index(p.first), b = index(p.second);
      stats::Trinomial t = p.counts;
      if (a > b) {
        std::swap(a, b);
        t = t.Reversed();
      }
      stats::Trinomial& c = combined[{a, b}];
      c.wins += t.wins;
      c.draws += t.draws;
      c.losses += t.losses;
      out.set_games(out.games() + t.Games());
      counted = true;
    }
    if (counted) out.add_run_ids(run_id);
  }
  // A chosen name that played no game in any of the runs is named alone (it is unknown, or
  // misspelled), not the others it could not be rated against.
  std::string unknown;
  for (const std::string& name : chosen) {
    bool seen = false;
    for (const auto& [run_id, pairings] : runs)
      for (const RunPairing& p : pairings)
        seen |=
            p.counts.Games() > 0 && p.first != p.second && (p.first == name || p.second == name);
    if (!seen) unknown += Cat(unknown.empty() ? "'" : ", '", name, "'");
  }
  if (!unknown.empty())
    return absl::FailedPreconditionError(
        Cat("no finished games of ", unknown, " in these runs (not one against any engine)"));
  // Engines chosen by name that played none of the others cannot be rated: say which.
  std::vector<bool> played(names.size(), false);
  for (const auto& [pair, counts] : combined) played[pair.first] = played[pair.second] = true;
  std::string idle;
  for (size_t i = 0; i < names.size(); ++i)
    if (!played[i]) idle += Cat(idle.empty() ? "'" : ", '", names[i], "'");
  if (!idle.empty())
    return absl::FailedPreconditionError(
        Cat("no finished games of ", idle, " against the other chosen engines"));
  if (out.games() == 0) return absl::FailedPreconditionError("no finished games in these runs");
  const std::string anchor = request.anchor().empty() ? names[0] : request.anchor();
  auto anchor_it = std::find(names.begin(), names.end(), anchor);
  if (anchor_it == names.end())
    return absl::InvalidArgumentError(Cat("anchor '", anchor, "' is not among the rated engines"));
  // The anchor first: AddStandings fixes the first engine at 0.
  std::rotate(names.begin(), anchor_it, anchor_it + 1);
  const int moved = int(anchor_it - names.begin());
  auto renumber = [moved](int i) { return i == moved ? 0 : (i < moved ? i + 1 : i); };
  std::vector<stats::PairingResult> results;
  for (const auto& [pair, counts] : combined)
    results.push_back({renumber(pair.first), renumber(pair.second), counts});
  if (absl::Status st = match::AddStandings(names, results, *out.mutable_standings()); !st.ok())
    return absl::FailedPreconditionError(
        Cat("cannot rate these games: ", std::string(st.message())));
  out.set_anchor(anchor);
  return out;
}

absl::StatusOr<v1::GetRatingsResponse> Coordinator::GetRatings(
    const v1::GetRatingsRequest& request) {
  RETURN_IF_ERROR(ValidateRatingsRequest(request));
  std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs;
  {
    absl::MutexLock lock(&mu_);
    auto add = [&](const Run& run) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      runs.emplace_back(run.id, run.final ? PairingsOf(*run.final) : run.handler->Pairings());
    };
    if (request.run_ids().empty()) {
      for (const auto& [id, run] : runs_)
        if (run->kind() == v1::RUN_KIND_MATCH || run->kind() == v1::RUN_KIND_TOURNAMENT) add(*run);
    } else {
      std::vector<uint64_t> ids(request.run_ids().begin(), request.run_ids().end());
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (uint64_t id : ids) {
        auto it = runs_.find(id);
        if (it == runs_.end()) return NoRunError(id);
        add(*it->second);
      }
    }
  }
  return RateRuns(request, runs);
}

}  // namespace arbiter::coordinator
