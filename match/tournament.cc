#include "match/tournament.h"

#include <algorithm>
#include <chrono>

#include "base/status_macros.h"
#include "base/strings.h"
#include "match/uci_engine.h"

namespace arbiter::match {

std::vector<std::pair<int, int>> TournamentPairings(int engines, bool gauntlet) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < engines; ++i)
    for (int j = i + 1; j < engines; ++j)
      if (!gauntlet || i == 0) out.emplace_back(i, j);
  return out;
}

absl::Status AddStandings(const std::vector<std::string>& names,
                          const std::vector<stats::PairingResult>& results,
                          google::protobuf::RepeatedPtrField<v1::TournamentStanding>& out) {
  ASSIGN_OR_RETURN(
      stats::RatingTable table,
      stats::ComputeRatings(names, results, stats::RatingOptions{.anchor = 0, .prior_draws = 1}));
  std::vector<stats::EngineRating> ratings = table.ratings;
  std::stable_sort(ratings.begin(), ratings.end(),
                   [](const auto& a, const auto& b) { return a.elo > b.elo; });
  for (const stats::EngineRating& e : ratings) {
    v1::TournamentStanding* st = out.Add();
    st->set_name(e.name);
    st->set_elo(e.elo);
    st->set_elo_error95(e.error95);
    st->set_games(e.games);
    st->set_points(e.points);
    st->set_score(e.score);
  }
  return absl::OkStatus();
}

std::string TournamentEvent(bool gauntlet, size_t engines) {
  return Cat("arbiter ", gauntlet ? "gauntlet" : "round robin", " of ", engines, " engines");
}

absl::StatusOr<v1::TournamentResult> RunTournament(const MatchOptions& base,
                                                   const std::vector<EngineSpec>& engines,
                                                   bool gauntlet,
                                                   const TournamentCallbacks& callbacks) {
  // A pairing starts only its two engines: every engine is checked first.
  for (const EngineSpec& e : engines) RETURN_IF_ERROR(CheckEngine(e, base.timeouts, base.sandbox));
  v1::TournamentResult out;
  out.set_format(gauntlet ? "gauntlet" : "round robin");
  const std::vector<std::pair<int, int>> schedule =
      TournamentPairings(int(engines.size()), gauntlet);
  std::vector<MatchOptions> pairings;
  for (auto [i, j] : schedule) {
    MatchOptions o = base;
    o.engines[0] = engines[i];
    o.engines[1] = engines[j];
    if (o.pgn.event == PgnContext().event) o.pgn.event = TournamentEvent(gauntlet, engines.size());
    pairings.push_back(std::move(o));
  }
  const auto start = std::chrono::steady_clock::now();
  ScheduleProgressFn progress;
  if (callbacks.progress)
    progress = [&](size_t k, const MatchSummary& s) { callbacks.progress(pairings[k], s); };
  ScheduleGameFn on_game;
  if (callbacks.game)
    on_game = [&](size_t k, uint64_t round, const GameRecord& g) {
      callbacks.game(pairings[k], round, g);
    };
  ASSIGN_OR_RETURN(std::vector<MatchSummary> summaries, RunSchedule(pairings, progress, on_game));
  std::vector<stats::PairingResult> results;
  for (size_t k = 0; k < pairings.size(); ++k) {
    v1::MatchResult m = ToMatchResult(summaries[k], std::nullopt);
    if (callbacks.finished) callbacks.finished(pairings[k], m);
    const stats::Trinomial& wdl = summaries[k].trinomial;
    results.push_back({schedule[k].first,
                       schedule[k].second,
                       {.losses = wdl.losses, .draws = wdl.draws, .wins = wdl.wins}});
    *out.add_matches() = std::move(m);
  }
  std::vector<std::string> names;
  for (const EngineSpec& e : engines) names.push_back(e.name);
  if (absl::Status st = AddStandings(names, results, *out.mutable_standings()); !st.ok())
    return absl::Status(st.code(), Cat("ratings: ", std::string(st.message())));
  out.set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return out;
}

}  // namespace arbiter::match
