// `arbiter ratings --pgn FILE...`: the rating list of the coordinator's `ratings`, computed from
// the results of PGN files without a coordinator (each file counts as one run).
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/commands.h"
#include "coordinator/ratings.h"
#include "engine/pgn.h"

namespace arbiter::cli {

absl::StatusOr<v1::GetRatingsResponse> RatePgnFiles(const std::vector<std::string>& files,
                                                    const v1::GetRatingsRequest& request) {
  std::vector<std::pair<uint64_t, std::vector<coordinator::RunPairing>>> runs;
  for (size_t i = 0; i < files.size(); ++i) {
    absl::StatusOr<std::vector<PgnGame>> games = ReadPgnFile(files[i]);
    if (!games.ok())
      return absl::Status(games.status().code(),
                          Cat("--pgn '", files[i], "': ", std::string(games.status().message())));
    std::vector<coordinator::RunPairing> pairings;
    for (const PgnGame& g : *games) {
      // Only played games: a result, and not abandoned before a move was made (an engine that
      // could not start is not a game).
      if (g.result != "1-0" && g.result != "0-1" && g.result != "1/2-1/2") continue;
      if (g.termination == "abandoned" && g.moves.empty()) continue;
      coordinator::RunPairing p{g.white, g.black, {}};
      (g.result == "1-0" ? p.counts.wins : g.result == "0-1" ? p.counts.losses : p.counts.draws)++;
      pairings.push_back(std::move(p));
    }
    runs.emplace_back(i + 1, std::move(pairings));
  }
  return coordinator::RateRuns(request, runs);
}

}  // namespace arbiter::cli
