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

EngineIdentities IdentitiesOf(const v1::Run& run) {
  const google::protobuf::RepeatedPtrField<v1::EngineSpec>* specs = nullptr;
  if (run.has_match()) specs = &run.match().request().settings().engines();
  if (run.has_tournament()) specs = &run.tournament().request().settings().engines();
  EngineIdentities out;
  if (!specs) return out;
  for (const v1::EngineSpec& e : *specs) {
    std::string id;
    for (const v1::RunEngine& r : run.engines()) {
      if (r.name() != e.name()) continue;
      // Every binary the workers ran (more than one: the workers differ, and so does this run).
      std::vector<std::string> hashes(r.sha256s().begin(), r.sha256s().end());
      if (hashes.empty() && !r.sha256().empty()) hashes.push_back(r.sha256());
      std::sort(hashes.begin(), hashes.end());
      for (const std::string& h : hashes) id += Cat(id.empty() ? "sha256 " : "+", h);
    }
    if (id.empty()) id = e.builtin() ? "builtin" : Cat("path ", e.path());
    if (e.args_size() > 0) {
      id += " args";
      for (const std::string& a : e.args()) id += Cat(" ", a);
    }
    // Sorted: the proto map has no order. Names as given (the engine's are case-insensitive).
    std::map<std::string, std::string> options(e.options().begin(), e.options().end());
    std::string opts;
    for (const auto& [k, v] : options) opts += Cat(opts.empty() ? "" : ",", k, "=", v);
    if (!opts.empty()) id += Cat(" options ", opts);
    out[e.name()] = std::move(id);
  }
  return out;
}

namespace {

// One engine as rated: a name and what it is ("" = unknown).
struct RatedEngine {
  std::string name, identity;
  std::vector<uint64_t> runs;  // where it played a counted game
  std::string display;         // the name, or "name#k" when the name covers several
};

std::string RunList(const std::vector<uint64_t>& runs) {
  std::string r = runs.size() == 1 ? "run " : "runs ";
  for (size_t i = 0; i < runs.size(); ++i) r += Cat(i ? ", " : "", runs[i]);
  return r;
}

}  // namespace

absl::StatusOr<v1::GetRatingsResponse> RateRuns(
    const v1::GetRatingsRequest& request,
    const std::vector<std::pair<uint64_t, std::vector<RunPairing>>>& runs,
    const std::map<uint64_t, EngineIdentities>& identities) {
  const std::vector<std::string> chosen(request.engines().begin(), request.engines().end());
  auto wanted = [&chosen](const std::string& name) {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
  };
  auto counted = [&wanted](const RunPairing& p) {
    return p.counts.Games() > 0 && p.first != p.second && wanted(p.first) && wanted(p.second);
  };
  // Engines keyed by name and identity, in order of appearance (the chosen names first, in the
  // order given): one name run with different binaries or options is different engines.
  std::vector<RatedEngine> engines;
  for (const std::string& name : chosen) engines.push_back({name, "", {}, ""});
  auto identity_of = [&identities](uint64_t run, const std::string& name) {
    auto r = identities.find(run);
    if (r == identities.end()) return std::string();
    auto it = r->second.find(name);
    return it == r->second.end() ? std::string() : it->second;
  };
  auto index = [&engines](const std::string& name, const std::string& identity, uint64_t run) {
    auto it = std::find_if(engines.begin(), engines.end(), [&](const RatedEngine& e) {
      return e.name == name && e.identity == identity;
    });
    if (it == engines.end()) {
      // A chosen name's first identity takes its placeholder (kept in the chosen order).
      it = std::find_if(engines.begin(), engines.end(),
                        [&](const RatedEngine& e) { return e.name == name && e.runs.empty(); });
      if (it != engines.end()) {
        it->identity = identity;
      } else {
        engines.push_back({name, identity, {}, ""});
        it = engines.end() - 1;
      }
    }
    if (it->runs.empty() || it->runs.back() != run) it->runs.push_back(run);
    return int(it - engines.begin());
  };
  // One result per pair of engines, combined over runs, from the lower index's side.
  std::map<std::pair<int, int>, stats::Trinomial> combined;
  v1::GetRatingsResponse out;
  for (const auto& [run_id, pairings] : runs) {
    bool any = false;
    for (const RunPairing& p : pairings) {
      if (!counted(p)) continue;
      int a = index(p.first, identity_of(run_id, p.first), run_id);
      int b = index(p.second, identity_of(run_id, p.second), run_id);
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
      any = true;
    }
    if (any) out.add_run_ids(run_id);
  }
  // A chosen name that played no game in any of the runs is named alone (it is unknown, or
  // misspelled), not the others it could not be rated against.
  std::string unknown;
  for (const RatedEngine& e : engines)
    if (e.runs.empty() && std::find(chosen.begin(), chosen.end(), e.name) != chosen.end()) {
      bool seen = false;
      for (const auto& [run_id, pairings] : runs)
        for (const RunPairing& p : pairings)
          seen |= p.counts.Games() > 0 && p.first != p.second &&
                  (p.first == e.name || p.second == e.name);
      if (!seen) unknown += Cat(unknown.empty() ? "'" : ", '", e.name, "'");
    }
  if (!unknown.empty())
    return absl::FailedPreconditionError(
        Cat("no finished games of ", unknown, " in these runs (not one against any engine)"));
  // Names that cover several engines: each is shown as name#k, and a warning says what each is.
  for (size_t i = 0; i < engines.size(); ++i) {
    std::vector<size_t> same;
    for (size_t j = 0; j < engines.size(); ++j)
      if (engines[j].name == engines[i].name) same.push_back(j);
    if (same.size() == 1) {
      engines[i].display = engines[i].name;
      continue;
    }
    if (same[0] != i) continue;
    std::string warning = Cat("'", engines[i].name, "' names ", same.size(),
                              " different engines (binaries, arguments or options), rated apart:");
    for (size_t k = 0; k < same.size(); ++k) {
      RatedEngine& e = engines[same[k]];
      e.display = Cat(e.name, "#", k + 1);
      warning += Cat(k ? "; " : " ", e.display, " = ", e.identity.empty() ? "?" : e.identity, " (",
                     RunList(e.runs), ")");
    }
    out.add_warnings(std::move(warning));
  }
  // Engines chosen by name that played none of the others cannot be rated: say which.
  std::vector<bool> played(engines.size(), false);
  for (const auto& [pair, counts] : combined) played[pair.first] = played[pair.second] = true;
  std::string idle;
  for (size_t i = 0; i < engines.size(); ++i)
    if (!played[i]) idle += Cat(idle.empty() ? "'" : ", '", engines[i].display, "'");
  if (!idle.empty())
    return absl::FailedPreconditionError(
        Cat("no finished games of ", idle, " against the other chosen engines"));
  if (out.games() == 0) return absl::FailedPreconditionError("no finished games in these runs");
  std::vector<std::string> names;
  for (const RatedEngine& e : engines) names.push_back(e.display);
  // The anchor by its shown name, or by its name (the first engine of that name).
  const std::string anchor = request.anchor().empty() ? names[0] : request.anchor();
  auto anchor_it = std::find(names.begin(), names.end(), anchor);
  if (anchor_it == names.end()) {
    auto by_name = std::find_if(engines.begin(), engines.end(),
                                [&](const RatedEngine& e) { return e.name == anchor; });
    if (by_name != engines.end()) anchor_it = names.begin() + (by_name - engines.begin());
  }
  if (anchor_it == names.end())
    return absl::InvalidArgumentError(Cat("anchor '", anchor, "' is not among the rated engines"));
  const std::string anchor_shown = *anchor_it;
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
  out.set_anchor(anchor_shown);
  return out;
}

absl::StatusOr<v1::GetRatingsResponse> Coordinator::GetRatings(
    const v1::GetRatingsRequest& request) {
  RETURN_IF_ERROR(ValidateRatingsRequest(request));
  std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs;
  std::map<uint64_t, EngineIdentities> identities;
  {
    absl::MutexLock lock(&mu_);
    auto add = [&](const Run& run) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      runs.emplace_back(run.id, run.final ? PairingsOf(*run.final) : run.handler->Pairings());
      identities[run.id] = IdentitiesOf(run.final ? *run.final : BuildRunLocked(run));
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
  return RateRuns(request, runs, identities);
}

}  // namespace arbiter::coordinator
