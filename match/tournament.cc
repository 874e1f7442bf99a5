#include "match/tournament.h"

#include <algorithm>

#include "base/status_macros.h"

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

}  // namespace arbiter::match
